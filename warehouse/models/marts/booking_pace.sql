-- incremental by stay_date from core.fct_stay_nights: [night_date, night_date + 364]
-- incremental by stay_date from core.fct_reservation_versions: cast(unnest(list_concat(generate_series(changed.arrival_date, changed.departure_date - 1, interval 1 day), generate_series(changed.arrival_date + 364, changed.departure_date + 363, interval 1 day), (select list(cast(s.night_date as timestamp)) || list(cast(s.night_date + 364 as timestamp)) from core.fct_stay_nights as s where s.reservation_id = changed.reservation_id))) as date)
-- incremental by stay_date from core.fct_reservations: cast(unnest((select flatten(list(list_concat(generate_series(v.arrival_date, v.departure_date - 1, interval 1 day), generate_series(v.arrival_date + 364, v.departure_date + 363, interval 1 day)))) from core.fct_reservation_versions as v where v.reservation_id = changed.reservation_id)) as date)
-- incremental by stay_date from core.dim_dates: date_day
-- incremental narrows core.fct_stay_nights: night_date in affected_keys or night_date + 364 in affected_keys
-- incremental narrows core.fct_reservation_versions: reservation_id in (select v.reservation_id from core.fct_reservation_versions as v inner join (select k as d from affected_keys union all select k - 364 from affected_keys) as a on a.d >= v.arrival_date and a.d < v.departure_date union select s.reservation_id from core.fct_stay_nights as s where s.night_date in affected_keys or s.night_date + 364 in affected_keys)
-- incremental narrows core.dim_dates: date_day in affected_keys
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
-- figure that uses today's status for every A (otb_nights_by_current_status).

with settings as (
    select * from meta.build_settings
),

dates as (
    select * from core.dim_dates
),

stay_nights as (
    select * from core.fct_stay_nights
),

reservations as (
    select * from core.fct_reservations
),

versions as (
    select * from core.fct_reservation_versions
),

-- the currencies of current_candidates and history_candidates over every stay date
currencies as (
    select * from core.dim_pace_currencies
),

-- 106 weekly snapshots: 53 reported, plus the ones pickup and STLY look back to
snapshots as (
    select
        cast(settings.as_of - cast(7 * weeks.k as integer) as date) as as_of_date,
        weeks.k as weeks_back,
    from settings
    cross join range(0, 106) as weeks(k)
),

-- a version holds from effective_from to effective_to (core.fct_reservation_versions)
timed_versions as (
    select
        *,
        min(effective_from) over (partition by reservation_id) as history_starts_at,
    from versions
),

-- the as-of dates at whose end each version was the one in force
version_spans as (
    select
        *,
        cast(effective_from as date) as first_as_of_date,
        cast(effective_to - interval 1 day as date) as last_as_of_date,
    from timed_versions
),

history_starts as (
    select distinct
        reservation_id,
        cast(history_starts_at as date) as history_start_date,
    from timed_versions
),

-- nights each on-the-books guest version held, with today's allocation of their room revenue
history_nights as (
    select
        version_spans.reservation_id,
        version_spans.first_as_of_date,
        version_spans.last_as_of_date,
        cast(unnest(range(version_spans.arrival_date, version_spans.departure_date,
            interval 1 day)) as date) as night_date,
    from version_spans
    where version_spans.is_on_the_books
        and version_spans.is_guest_stay
        and version_spans.departure_date > version_spans.arrival_date
        and (version_spans.last_as_of_date is null
            or version_spans.last_as_of_date >= version_spans.first_as_of_date)
),

history_candidates as (
    select
        history_nights.*,
        reservations.currency_code,
        coalesce(stay_nights.room_revenue, 0) as room_revenue,
    from history_nights
    inner join reservations
        on history_nights.reservation_id = reservations.reservation_id
    left join stay_nights
        on history_nights.reservation_id = stay_nights.reservation_id
        and history_nights.night_date = stay_nights.night_date
),

otb_from_history as (
    select
        snapshots.as_of_date,
        history_candidates.night_date as stay_date,
        history_candidates.currency_code,
        count(*) as otb_nights,
        sum(history_candidates.room_revenue) as otb_room_revenue,
    from snapshots
    inner join history_candidates
        on history_candidates.night_date between snapshots.as_of_date
            and snapshots.as_of_date + 372
        and snapshots.as_of_date >= history_candidates.first_as_of_date
        and (history_candidates.last_as_of_date is null
            or snapshots.as_of_date <= history_candidates.last_as_of_date)
    group by all
),

-- today's status for every as-of date, and which of those dates precede the history
current_candidates as (
    select
        stay_nights.*,
        coalesce(history_starts.history_start_date, date '9999-12-31') as history_start_date,
    from stay_nights
    left join history_starts
        on stay_nights.reservation_id = history_starts.reservation_id
    where stay_nights.is_stay_night
        and stay_nights.is_guest_stay
        and (stay_nights.is_on_the_books or stay_nights.is_cancelled)
),

otb_by_current_status as (
    select
        snapshots.as_of_date,
        current_candidates.night_date as stay_date,
        current_candidates.currency_code,
        count(*) as otb_nights,
        sum(current_candidates.room_revenue) as otb_room_revenue,
        count(*) filter (where snapshots.as_of_date < current_candidates.history_start_date)
            as otb_nights_before_history,
        coalesce(
            sum(current_candidates.room_revenue) filter (
                where snapshots.as_of_date < current_candidates.history_start_date
            ),
            0
        ) as otb_room_revenue_before_history,
    from snapshots
    inner join current_candidates
        on current_candidates.night_date between snapshots.as_of_date
            and snapshots.as_of_date + 372
        and current_candidates.booking_date <= snapshots.as_of_date
        and (current_candidates.is_on_the_books
            or current_candidates.cancelled_on > snapshots.as_of_date)
    group by all
),

otb as (
    select
        coalesce(hist.as_of_date, cur.as_of_date) as as_of_date,
        coalesce(hist.stay_date, cur.stay_date) as stay_date,
        coalesce(hist.currency_code, cur.currency_code) as currency_code,
        coalesce(hist.otb_nights, 0) + coalesce(cur.otb_nights_before_history, 0) as otb_nights,
        coalesce(hist.otb_room_revenue, 0) + coalesce(cur.otb_room_revenue_before_history, 0)
            as otb_room_revenue,
        coalesce(hist.otb_nights, 0) as otb_nights_from_history,
        coalesce(cur.otb_nights_before_history, 0) as otb_nights_from_current_status,
        coalesce(cur.otb_nights, 0) as otb_nights_by_current_status,
        coalesce(cur.otb_room_revenue, 0) as otb_room_revenue_by_current_status,
    from otb_from_history as hist
    full outer join otb_by_current_status as cur
        on hist.as_of_date = cur.as_of_date
        and hist.stay_date = cur.stay_date
        and hist.currency_code is not distinct from cur.currency_code
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
