-- Nightly list price per accommodation type x rate type x night of the reporting range: the
-- value of the active rate with the highest priority whose valid_from <= night <= valid_to and
-- whose applicable_days is null or holds the night's weekday (ties: highest rate_id).

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

winning as (
    select
        rates.accommodation_type_id,
        rates.rate_type_id,
        dates.date_day as night_date,
        rates.rate_id,
        rates.priority,
        rates.nightly_price,
    from rates
    inner join dates
        on dates.date_day between rates.valid_from and rates.valid_to
    where dates.is_in_reporting_range
        and coalesce(rates.rate_status, 1) = 1
        and (rates.applicable_days is null
            or list_contains(rates.applicable_days, dates.weekday_code))
    qualify row_number() over (
        partition by rates.accommodation_type_id, rates.rate_type_id, dates.date_day
        order by rates.priority desc nulls last, rates.rate_id desc
    ) = 1
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
        winning.nightly_price as list_price,
    from winning
    left join rate_types
        on winning.rate_type_id = rate_types.rate_type_id
    left join accommodation_types
        on winning.accommodation_type_id = accommodation_types.accommodation_type_id
)

select * from final
