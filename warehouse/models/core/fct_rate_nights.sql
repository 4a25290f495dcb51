-- incremental by accommodation_type_id from staging.stg_rates: accommodation_type_id
-- incremental by accommodation_type_id from core.dim_accommodation_types: unnest(case when (select count(*) <> 2 or count(distinct row(c.location_id)) <> 1 from changed_rows as c where c.accommodation_type_id = changed.accommodation_type_id) then [changed.accommodation_type_id] else [] end)
-- incremental by accommodation_type_id from staging.stg_rate_types: unnest(case when (select count(*) <> 2 or count(distinct row(c.rate_type_code, c.currency_code)) <> 1 from changed_rows as c where c.rate_type_id = changed.rate_type_id) then (select list(distinct n.accommodation_type_id) from core.fct_rate_nights as n where n.rate_type_id = changed.rate_type_id) else [] end)
-- incremental narrows its inputs
-- incremental stored by night_date, accommodation_type_id, rate_type_id
-- Nightly list price per accommodation type x rate type x night D of the reporting range: what
-- the rates charge for night D of the reference stay, arriving on D for 7 nights, booked on D
-- (docs/metrics.md, "List prices"). The applicable OVERRIDE rate ranking highest (priority,
-- then rate_id; null priority lowest) sets base_price; each applicable ABSOLUTE (+/- amount) and
-- RELATIVE (+/- percent of base_price, rounded half away from zero to the cent on its own) rate
-- ranking above it is added; list_price = base_price + those, never below 0. Rates without
-- validFrom / validTo hold for every arrival. Core.fct_stay_rate_nights prices booked stays.

with rates as (
    select * from staging.stg_rates
),

rate_types as (
    select * from staging.stg_rate_types
),

accommodation_types as (
    select * from core.dim_accommodation_types
),

dates as (
    select * from core.dim_dates
),

-- rate_rank orders the rates as the rule ranks them (priority, then rate_id, highest first; a
-- null priority lowest): the winning OVERRIDE of a night is the one of least rank among its
-- candidates, found by one aggregate where a window over every candidate ranked them per night
-- (the window took half the statement; docs/benchmarks.md, session 16). A subset of the rates
-- (a refresh narrowed by type) keeps their order, so a night's winner is the same; rate_id is
-- the rates' key, so each rank is one rate.
active_rates as (
    select
        *,
        coalesce(quantifier, 'OVERRIDE') as rate_quantifier,
        row_number() over (order by priority desc nulls last, rate_id desc) as rate_rank,
    from rates
    where coalesce(rate_status, 1) = 1
),

-- the reference stay of night D: arrival D, 7 nights, booked on D
candidates as (
    select
        active_rates.accommodation_type_id,
        active_rates.rate_type_id,
        dates.date_day as night_date,
        active_rates.rate_id,
        active_rates.priority,
        active_rates.rate_quantifier,
        active_rates.rate_value,
        active_rates.rate_rank,
    from active_rates
    inner join dates
        -- the reference stay arrives, is booked and starts on D: D within the rate's nights,
        -- arrival and booking windows at once (rate_applies checks each pair in full, so the
        -- candidates are the same as those of the nights window alone, at fewer pairs;
        -- docs/benchmarks.md, session 13)
        on dates.date_day between greatest(
            coalesce(active_rates.nights_from, date '0001-01-01'),
            coalesce(active_rates.arrival_from, date '0001-01-01'),
            coalesce(active_rates.bookdate_from, date '0001-01-01')
        )
        and least(
            coalesce(active_rates.nights_to, date '9999-12-31'),
            coalesce(active_rates.arrival_to, date '9999-12-31'),
            coalesce(active_rates.bookdate_to, date '9999-12-31')
        )
    where dates.is_in_reporting_range
        and rate_applies(
            dates.date_day, dates.date_day, 7, dates.date_day,
            active_rates.nights_from, active_rates.nights_to,
            active_rates.arrival_from, active_rates.arrival_to,
            active_rates.bookdate_from, active_rates.bookdate_to,
            active_rates.min_duration, active_rates.max_duration,
            active_rates.applicable_days
        )
),

best_ranks as (
    select
        accommodation_type_id,
        rate_type_id,
        night_date,
        min(rate_rank) as rate_rank,
    from candidates
    where rate_quantifier = 'OVERRIDE'
    group by accommodation_type_id, rate_type_id, night_date
),

winning as (
    select
        best_ranks.accommodation_type_id,
        best_ranks.rate_type_id,
        best_ranks.night_date,
        active_rates.rate_id,
        active_rates.priority,
        to_cents(active_rates.rate_value) as base_cents,
    from best_ranks
    inner join active_rates
        on best_ranks.rate_rank = active_rates.rate_rank
),

adjustments as (
    select
        winning.accommodation_type_id,
        winning.rate_type_id,
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
        on winning.accommodation_type_id = candidates.accommodation_type_id
        and winning.rate_type_id = candidates.rate_type_id
        and winning.night_date = candidates.night_date
    where candidates.rate_quantifier in ('ABSOLUTE', 'RELATIVE')
        and rate_ranks_above(
            candidates.priority, candidates.rate_id, winning.priority, winning.rate_id
        )
    group by all
),

final as (
    select
        winning.night_date,
        winning.accommodation_type_id,
        accommodation_types.location_id,
        winning.rate_type_id,
        rate_types.rate_type_code,
        rate_types.currency_code,
        winning.rate_id,
        winning.priority,
        from_cents(winning.base_cents) as base_price,
        coalesce(adjustments.adjustment_rate_ids, cast([] as bigint[])) as adjustment_rate_ids,
        from_cents(greatest(winning.base_cents + coalesce(adjustments.adjustment_cents, 0), 0))
            as list_price,
    from winning
    left join adjustments
        on winning.accommodation_type_id = adjustments.accommodation_type_id
        and winning.rate_type_id = adjustments.rate_type_id
        and winning.night_date = adjustments.night_date
    left join rate_types
        on winning.rate_type_id = rate_types.rate_type_id
    left join accommodation_types
        on winning.accommodation_type_id = accommodation_types.accommodation_type_id
)

select * from final
