-- The reporting currencies of marts.revenue_daily: every location's company currency and every
-- currency sold (or kept as cancellation compensation) on a night of the reporting range. A model
-- of its own so that revenue_daily, maintained by night, reads the whole set: the refresh reads
-- revenue_daily's stay nights for the affected nights only (docs/incremental.md).

with stay_nights as (
    select * from core.fct_stay_nights
),

locations as (
    select * from core.dim_locations
),

dates as (
    select * from core.dim_dates
),

in_range as (
    select stay_nights.*,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where dates.is_in_reporting_range
),

sold as (
    select distinct currency_code from in_range where is_sold
),

cancelled as (
    select currency_code
    from in_range
    where is_cancelled
        and is_guest_stay
    group by night_date, location_id, accommodation_type_id, currency_code
    having sum(cancellation_revenue) <> 0
),

final as (
    select currency_code from locations where currency_code is not null
    union
    select currency_code from sold where currency_code is not null
    union
    select currency_code from cancelled where currency_code is not null
)

select * from final
