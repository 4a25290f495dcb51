-- incremental by currency_code from core.fct_stay_nights: select c.currency_code from changed_rows as c where c.currency_code is not null and c.currency_code not in (select s.currency_code from core.fct_stay_nights as s inner join core.dim_dates as d on s.night_date = d.date_day where d.is_in_reporting_range and s.is_sold and s.reservation_id in (select r.reservation_id from changed_rows as r) and s.currency_code in (select currency_code from core.dim_reporting_currencies))
-- incremental by currency_code from core.dim_locations: currency_code
-- incremental narrows core.fct_stay_nights: currency_code in (select k from affected_keys)
-- incremental narrows core.dim_locations: currency_code in (select k from affected_keys)
-- The reporting currencies of marts.revenue_daily: every location's company currency and every
-- currency sold (or kept as cancellation compensation) on a night of the reporting range. A model
-- of its own so that revenue_daily, maintained by night, reads the whole set: the refresh reads
-- revenue_daily's stay nights for the affected nights only (docs/incremental.md).

-- Maintained by currency: a currency the changed stay nights carry is affected unless it was
-- in the set and a night of those stays still sells in it within the range (then it stays in
-- the set); an hour's stays keep the currencies they had, so the set is not read again
-- (docs/benchmarks.md, session 15: ~0.3 CPU s an hour rebuilt whole). A calendar that moved
-- rebuilds it whole.

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
