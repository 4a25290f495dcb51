-- incremental by as_of_date, stay_date from core.fct_pace_on_the_books: select c.as_of_date, c.stay_date from changed_rows as c union select cast(c.as_of_date + 7 as date), c.stay_date from changed_rows as c union select cast(c.as_of_date + 364 as date), cast(c.stay_date + 364 as date) from changed_rows as c
-- incremental by as_of_date, stay_date from core.dim_pace_currencies: select s.as_of_date, d.date_day from (select cast(b.as_of - cast(7 * w.k as integer) as date) as as_of_date from meta.build_settings as b cross join range(0, 53) as w(k)) as s inner join core.dim_dates as d on d.date_day between s.as_of_date and s.as_of_date + 365 where d.is_in_reporting_range and exists (select 1 from changed_rows as c group by c.currency_code having count(*) <> 2)
-- incremental narrows core.fct_pace_on_the_books: select c.* from core.fct_pace_on_the_books as c semi join (select k.as_of_date, k.stay_date from affected_keys as k union all select cast(k.as_of_date - 7 as date), k.stay_date from affected_keys as k union all select cast(k.as_of_date - 364 as date), cast(k.stay_date - 364 as date) from affected_keys as k) as n on n.as_of_date = c.as_of_date and n.stay_date = c.stay_date
-- incremental narrows core.dim_dates: date_day in (select stay_date from affected_keys)
-- incremental narrows grid: exists (select 1 from affected_keys as k where k.as_of_date = grid.as_of_date and k.stay_date = grid.stay_date)
-- incremental stored as built
-- Booking pace per stay date x as-of date x currency: on-the-books nights and room revenue of
-- guest stays as of weekly snapshots (the build's as_of and the 52 weeks before it) for stay
-- dates from the snapshot to 365 days after it within the reporting range; pickup vs the
-- previous snapshot (7 days earlier) and same time last year (stay date - 364 days, as-of date -
-- 364 days: the same weekday and days before arrival). Revenue is today's bill-line allocation.
--
-- On the books as of A is judged from history: the reservation's version valid at the end of
-- day A (core.fct_reservation_versions) decides whether it was on the books and which nights it
-- held. Before a reservation's history starts (its first recorded version; a fresh full load
-- records one version, the current one), today's status decides: booked on or before A and on
-- the books now, or cancelled after A. The mart says which rule gave each night
-- (otb_nights_from_history, otb_nights_from_current_status), and keeps the path-independent
-- figure that uses today's status for every A (otb_nights_by_current_status). The counts and
-- sums per snapshot, stay date and currency are core.fct_pace_on_the_books (maintained by adding
-- the changed reservations' nights); this mart lays them on its grid, three times.
--
-- Maintained by as-of date x stay date: a changed cell keys its own grid row, the row a week
-- later (its pickup) and the row 364 days later in both dates (same time last year); an hour
-- changes ~200 of ~39,000. The currencies' span counts (core.dim_pace_currencies) move every
-- hour and key nothing; a currency that appears or goes (its old or its new row alone among the
-- changed rows) keys every row of the grid. A move of the as-of date moves the whole grid: rebuilt whole then,
-- stored as built (the table is one row group at large: an order by the key would skip nothing).

with settings as (
    select * from meta.build_settings
),

dates as (
    select * from core.dim_dates
),

-- the currencies of every night booking pace counts, over every stay date
currencies as (
    select * from core.dim_pace_currencies
),

cells as (
    select * from core.fct_pace_on_the_books
),

-- the 53 reported weekly snapshots (the cells hold the ones pickup and STLY look back to)
snapshots as (
    select cast(settings.as_of - cast(7 * weeks.k as integer) as date) as as_of_date,
    from settings
    cross join range(0, 53) as weeks(k)
),

otb as (
    select
        as_of_date,
        stay_date,
        currency_code,
        nights_from_history + nights_before_history as otb_nights,
        room_revenue_from_history + room_revenue_before_history as otb_room_revenue,
        nights_from_history as otb_nights_from_history,
        nights_before_history as otb_nights_from_current_status,
        nights_by_current_status as otb_nights_by_current_status,
        room_revenue_by_current_status as otb_room_revenue_by_current_status,
    from cells
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
    where dates.is_in_reporting_range
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
        coalesce(cur.otb_nights_from_history, 0) as otb_nights_from_history,
        coalesce(cur.otb_nights_from_current_status, 0) as otb_nights_from_current_status,
        coalesce(cur.otb_nights_by_current_status, 0) as otb_nights_by_current_status,
        cast(coalesce(cur.otb_room_revenue_by_current_status, 0) as decimal(18, 2))
            as otb_room_revenue_by_current_status,
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
