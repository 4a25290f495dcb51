-- Calendar of every date the models use. is_in_reporting_range marks the nights of the nightly
-- grain: from the earliest arrival to the night before the latest departure (or the build's
-- reporting_range setting), so supply and sold nights cover the same dates.

with settings as (
    select * from meta.build_settings
),

reservations as (
    select * from staging.stg_reservations
),

journal_entries as (
    select * from staging.stg_journal_entries
),

cash_clearances as (
    select * from staging.stg_cash_clearances
),

reporting_range as (
    select
        coalesce(settings.range_start, (select min(arrival_date) from reservations)) as range_start,
        coalesce(
            settings.range_end, (select max(departure_date) - 1 from reservations)
        ) as range_end,
        settings.as_of,
    from settings
),

-- the earliest and the latest booking date: a date is monotone in its instant, so the cast of
-- the min is the min of the casts (casting each of a million instants cost ~0.08 CPU s an hour)
other_dates as (
    select cast(min(reserved_at) as date) as date_day from reservations
    union all
    select cast(max(reserved_at) as date) from reservations
    union all
    select mutation_date from journal_entries
    union all
    select clearance_date from cash_clearances
),

bounds as (
    select
        least(range_start, (select min(date_day) from other_dates)) as first_date,
        greatest(range_end, (select max(date_day) from other_dates)) as last_date,
        range_start,
        range_end,
    from reporting_range
),

spine as (
    select cast(unnest(range(first_date, last_date + 1, interval 1 day)) as date) as date_day
    from bounds
    where first_date is not null
),

final as (
    select
        spine.date_day,
        cast(date_trunc('month', spine.date_day) as date) as month_start,
        cast(date_trunc('week', spine.date_day) as date) as week_start,
        year(spine.date_day) as year_number,
        quarter(spine.date_day) as quarter_number,
        month(spine.date_day) as month_number,
        isodow(spine.date_day) as iso_weekday,
        weekday_code(spine.date_day) as weekday_code,
        isodow(spine.date_day) >= 6 as is_weekend,
        coalesce(
            spine.date_day between bounds.range_start and bounds.range_end, false
        ) as is_in_reporting_range,
    from spine
    cross join bounds
)

select * from final
