-- incremental by reservation_id
-- Reservation x stay night (arrival <= night < departure) of every reservation with an
-- accommodation type and rate type: what the rates charge for that night of that stay, arriving
-- arrival_date for stay_nights nights, booked on booking_date (docs/metrics.md, "List prices";
-- the rule of core.fct_rate_nights, there for a reference stay). The price of the stay as it is
-- now: after an extension the earlier nights are priced as nights of the longer stay, while
-- their bill lines keep the price they were booked at.

with reservations as (
    select * from core.fct_reservations
),

rates as (
    select * from staging.stg_rates
),

active_rates as (
    select
        *,
        coalesce(quantifier, 'OVERRIDE') as rate_quantifier,
    from rates
    where coalesce(rate_status, 1) = 1
),

stay_nights as (
    select
        reservation_id,
        accommodation_type_id,
        location_id,
        rate_type_id,
        currency_code,
        arrival_date,
        departure_date - arrival_date as stay_nights,
        booking_date,
        is_sold,
        cast(unnest(range(arrival_date, departure_date, interval 1 day)) as date) as night_date,
    from reservations
    where departure_date > arrival_date
        and accommodation_type_id is not null
        and rate_type_id is not null
),

-- the rates that hold for a night whatever the stay (its nights window and weekday), found once
-- per accommodation type x rate type x night rather than once per stay night: the stays then
-- meet only those few rates in an equality join (the same candidates as joining every stay night
-- to every rate of its type, at a fraction of the pairs)
type_nights as (
    select distinct
        accommodation_type_id,
        rate_type_id,
        night_date,
    from stay_nights
),

night_rates as (
    select
        type_nights.accommodation_type_id,
        type_nights.rate_type_id,
        type_nights.night_date,
        active_rates.rate_id,
        active_rates.priority,
        active_rates.rate_quantifier,
        active_rates.rate_value,
        active_rates.nights_from,
        active_rates.nights_to,
        active_rates.arrival_from,
        active_rates.arrival_to,
        active_rates.bookdate_from,
        active_rates.bookdate_to,
        active_rates.min_duration,
        active_rates.max_duration,
        active_rates.applicable_days,
    from type_nights
    inner join active_rates
        on type_nights.accommodation_type_id = active_rates.accommodation_type_id
        and type_nights.rate_type_id = active_rates.rate_type_id
        and type_nights.night_date between coalesce(active_rates.nights_from, date '0001-01-01')
        and coalesce(active_rates.nights_to, date '9999-12-31')
    where active_rates.applicable_days is null
        or list_contains(active_rates.applicable_days, weekday_code(type_nights.night_date))
),

candidates as (
    select
        stay_nights.reservation_id,
        stay_nights.night_date,
        night_rates.rate_id,
        night_rates.priority,
        night_rates.rate_quantifier,
        night_rates.rate_value,
    from stay_nights
    inner join night_rates
        on stay_nights.accommodation_type_id = night_rates.accommodation_type_id
        and stay_nights.rate_type_id = night_rates.rate_type_id
        and stay_nights.night_date = night_rates.night_date
    where rate_applies(
        stay_nights.night_date, stay_nights.arrival_date, stay_nights.stay_nights,
        stay_nights.booking_date,
        night_rates.nights_from, night_rates.nights_to,
        night_rates.arrival_from, night_rates.arrival_to,
        night_rates.bookdate_from, night_rates.bookdate_to,
        night_rates.min_duration, night_rates.max_duration,
        night_rates.applicable_days
    )
),

winning as (
    select
        reservation_id,
        night_date,
        rate_id,
        priority,
        to_cents(rate_value) as base_cents,
    from candidates
    where rate_quantifier = 'OVERRIDE'
    qualify row_number() over (
        partition by reservation_id, night_date
        order by priority desc nulls last, rate_id desc
    ) = 1
),

adjustments as (
    select
        winning.reservation_id,
        winning.night_date,
        sum(
            case candidates.rate_quantifier
                when 'ABSOLUTE' then to_cents(candidates.rate_value)
                else relative_cents(winning.base_cents, candidates.rate_value)
            end
        ) as adjustment_cents,
        list(candidates.rate_id order by candidates.rate_id) as adjustment_rate_ids,
    from winning
    inner join candidates
        on winning.reservation_id = candidates.reservation_id
        and winning.night_date = candidates.night_date
    where candidates.rate_quantifier in ('ABSOLUTE', 'RELATIVE')
        and rate_ranks_above(
            candidates.priority, candidates.rate_id, winning.priority, winning.rate_id
        )
    group by all
),

final as (
    select
        stay_nights.reservation_id,
        stay_nights.night_date,
        stay_nights.accommodation_type_id,
        stay_nights.location_id,
        stay_nights.rate_type_id,
        stay_nights.currency_code,
        stay_nights.arrival_date,
        stay_nights.stay_nights,
        stay_nights.booking_date,
        stay_nights.is_sold,
        winning.rate_id,
        winning.priority,
        from_cents(winning.base_cents) as base_price,
        case
            when winning.rate_id is not null
                then coalesce(adjustments.adjustment_rate_ids, cast([] as bigint[]))
        end as adjustment_rate_ids,
        from_cents(greatest(winning.base_cents + coalesce(adjustments.adjustment_cents, 0), 0))
            as list_price,
    from stay_nights
    left join winning
        on stay_nights.reservation_id = winning.reservation_id
        and stay_nights.night_date = winning.night_date
    left join adjustments
        on stay_nights.reservation_id = adjustments.reservation_id
        and stay_nights.night_date = adjustments.night_date
)

select * from final
