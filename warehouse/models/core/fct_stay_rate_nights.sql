-- incremental by reservation_id from core.fct_reservations: reservation_id
-- incremental by reservation_id from staging.stg_rates: unnest((select list(r.reservation_id) from core.fct_reservations as r where r.accommodation_type_id = changed.accommodation_type_id))
-- incremental narrows its inputs
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

-- the active rates of the types x rate types the reservations have (the joins below pair a rate
-- with a stay of its type and rate type only): a refresh's few reservations list their own
-- types' rates by month, not all 177,000 active rates' (an hour's 2,000 stay nights met 500,000
-- rate months; docs/benchmarks.md, session 21)
active_rates as (
    select
        rates.*,
        coalesce(rates.quantifier, 'OVERRIDE') as rate_quantifier,
    from rates
    semi join (
        select distinct accommodation_type_id, rate_type_id from reservations
    ) as held
        on rates.accommodation_type_id = held.accommodation_type_id
        and rates.rate_type_id = held.rate_type_id
    where coalesce(rates.rate_status, 1) = 1
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

-- each active rate listed under every month its nights window touches within the stays' nights,
-- so that a stay night meets only the rates of its type, rate type and month (an equality join)
-- instead of every rate of its type with the window checked pair by pair; rate_applies then
-- checks each pair in full, so the candidates are the same
stay_span as (
    select
        min(night_date) as first_night,
        max(night_date) as last_night,
    from stay_nights
),

rate_months as (
    select
        active_rates.*,
        unnest(range(
            date_trunc('month', greatest(
                coalesce(active_rates.nights_from, stay_span.first_night), stay_span.first_night
            )),
            least(coalesce(active_rates.nights_to, stay_span.last_night), stay_span.last_night)
            + interval 1 day,
            interval 1 month
        )) as night_month,
    from active_rates
    cross join stay_span
    where active_rates.nights_from is not null
        or active_rates.nights_to is not null
),

-- the rates open to every night (no nights window) would be listed under every month and meet
-- every stay night of their type; each is met instead with the stays the rule's stay-level
-- conditions let it price (arrival, booking date, length: rate_applies without the night's
-- conditions), then with those stays' nights (about a third of the pairs to check at large;
-- docs/benchmarks.md, session 13)
stays as (
    select
        reservation_id,
        accommodation_type_id,
        rate_type_id,
        arrival_date,
        departure_date - arrival_date as stay_nights,
        booking_date,
    from reservations
    where departure_date > arrival_date
        and accommodation_type_id is not null
        and rate_type_id is not null
),

open_stay_rates as (
    select
        stays.reservation_id,
        active_rates.*,
    from stays
    inner join active_rates
        on stays.accommodation_type_id = active_rates.accommodation_type_id
        and stays.rate_type_id = active_rates.rate_type_id
    where active_rates.nights_from is null
        and active_rates.nights_to is null
        and rate_applies(
            stays.arrival_date, stays.arrival_date, stays.stay_nights, stays.booking_date,
            null, null,
            active_rates.arrival_from, active_rates.arrival_to,
            active_rates.bookdate_from, active_rates.bookdate_to,
            active_rates.min_duration, active_rates.max_duration,
            null
        )
),

candidates as (
    select
        stay_nights.reservation_id,
        stay_nights.night_date,
        rate_months.rate_id,
        rate_months.priority,
        rate_months.rate_quantifier,
        rate_months.rate_value,
    from stay_nights
    inner join rate_months
        on stay_nights.accommodation_type_id = rate_months.accommodation_type_id
        and stay_nights.rate_type_id = rate_months.rate_type_id
        and date_trunc('month', stay_nights.night_date) = rate_months.night_month
    where rate_applies(
        stay_nights.night_date, stay_nights.arrival_date, stay_nights.stay_nights,
        stay_nights.booking_date,
        rate_months.nights_from, rate_months.nights_to,
        rate_months.arrival_from, rate_months.arrival_to,
        rate_months.bookdate_from, rate_months.bookdate_to,
        rate_months.min_duration, rate_months.max_duration,
        rate_months.applicable_days
    )
    union all
    select
        stay_nights.reservation_id,
        stay_nights.night_date,
        open_stay_rates.rate_id,
        open_stay_rates.priority,
        open_stay_rates.rate_quantifier,
        open_stay_rates.rate_value,
    from stay_nights
    inner join open_stay_rates
        on stay_nights.reservation_id = open_stay_rates.reservation_id
    where rate_applies(
        stay_nights.night_date, stay_nights.arrival_date, stay_nights.stay_nights,
        stay_nights.booking_date,
        open_stay_rates.nights_from, open_stay_rates.nights_to,
        open_stay_rates.arrival_from, open_stay_rates.arrival_to,
        open_stay_rates.bookdate_from, open_stay_rates.bookdate_to,
        open_stay_rates.min_duration, open_stay_rates.max_duration,
        open_stay_rates.applicable_days
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
