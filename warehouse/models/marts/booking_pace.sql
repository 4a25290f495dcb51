-- Booking pace per stay date x as-of date x currency: on-the-books nights and room revenue of
-- guest stays as of weekly snapshots (the build's as_of and the 52 weeks before it) for stay
-- dates from the snapshot to 365 days after it within the reporting range; pickup vs the
-- previous snapshot (7 days earlier) and same time last year (stay date - 364 days, as-of date -
-- 364 days: the same weekday and days before arrival). Revenue is today's bill-line allocation.

with settings as (
    select * from meta.build_settings
),

dates as (
    select * from core.dim_dates
),

stay_nights as (
    select * from core.fct_stay_nights
),

-- 106 weekly snapshots: 53 reported, plus the ones pickup and STLY look back to
snapshots as (
    select
        cast(settings.as_of - cast(7 * weeks.k as integer) as date) as as_of_date,
        weeks.k as weeks_back,
    from settings
    cross join range(0, 106) as weeks(k)
),

candidates as (
    select * from stay_nights
    where is_stay_night
        and is_guest_stay
        and (is_on_the_books or is_cancelled)
),

otb as (
    select
        snapshots.as_of_date,
        candidates.night_date as stay_date,
        candidates.currency_code,
        count(*) as otb_nights,
        sum(candidates.room_revenue) as otb_room_revenue,
    from snapshots
    inner join candidates
        on candidates.night_date between snapshots.as_of_date and snapshots.as_of_date + 372
        and candidates.booking_date <= snapshots.as_of_date
        and (candidates.is_on_the_books or candidates.cancelled_on > snapshots.as_of_date)
    group by all
),

currencies as (
    select distinct currency_code from candidates
),

grid as (
    select
        dates.date_day as stay_date,
        snapshots.as_of_date,
        currencies.currency_code,
    from snapshots
    inner join dates
        on dates.date_day between snapshots.as_of_date and snapshots.as_of_date + 365
    cross join currencies
    where snapshots.weeks_back <= 52
        and dates.is_in_reporting_range
),

final as (
    select
        grid.stay_date,
        grid.as_of_date,
        grid.currency_code,
        grid.stay_date - grid.as_of_date as days_before_arrival,
        coalesce(cur.otb_nights, 0) as otb_nights,
        cast(coalesce(cur.otb_room_revenue, 0) as decimal(18, 2)) as otb_room_revenue,
        coalesce(cur.otb_nights, 0) - coalesce(prev.otb_nights, 0) as pickup_nights,
        cast(coalesce(cur.otb_room_revenue, 0) - coalesce(prev.otb_room_revenue, 0)
            as decimal(18, 2)) as pickup_room_revenue,
        cast(grid.stay_date - 364 as date) as stly_stay_date,
        cast(grid.as_of_date - 364 as date) as stly_as_of_date,
        coalesce(stly.otb_nights, 0) as stly_otb_nights,
        cast(coalesce(stly.otb_room_revenue, 0) as decimal(18, 2)) as stly_otb_room_revenue,
        coalesce(cur.otb_nights, 0) - coalesce(stly.otb_nights, 0) as pace_nights,
        cast(coalesce(cur.otb_room_revenue, 0) - coalesce(stly.otb_room_revenue, 0)
            as decimal(18, 2)) as pace_room_revenue,
    from grid
    left join otb as cur
        on grid.as_of_date = cur.as_of_date
        and grid.stay_date = cur.stay_date
        and grid.currency_code is not distinct from cur.currency_code
    left join otb as prev
        on grid.as_of_date - 7 = prev.as_of_date
        and grid.stay_date = prev.stay_date
        and grid.currency_code is not distinct from prev.currency_code
    left join otb as stly
        on grid.as_of_date - 364 = stly.as_of_date
        and grid.stay_date - 364 = stly.stay_date
        and grid.currency_code is not distinct from stly.currency_code
)

select * from final
