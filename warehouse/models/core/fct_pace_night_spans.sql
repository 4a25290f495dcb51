-- incremental by reservation_id
-- Booking pace's facts: one row per reservation night that can be on the books as of some date,
-- with the as-of dates over which it counts (first_as_of_date to last_as_of_date, both
-- inclusive; 9999-12-31 when open). Two kinds (is_from_history): a night an on-the-books guest
-- version held (core.fct_reservation_versions), counted as of the dates at whose end that version
-- was in force; and today's status of a guest stay night on the books or cancelled
-- (core.fct_stay_nights), counted from its booking date while on the books or until the day
-- before its cancellation. history_start_date is the first day of the reservation's recorded
-- history: today's status judges only the as-of dates before it. Room revenue is today's
-- bill-line allocation. Per reservation, so maintained by reservation; core.fct_pace_on_the_books
-- sums it over the weekly snapshots.

with stay_nights as (
    select * from core.fct_stay_nights
),

reservations as (
    select * from core.fct_reservations
),

versions as (
    select * from core.fct_reservation_versions
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

-- nights each on-the-books guest version held
history_nights as (
    select
        version_spans.reservation_id,
        version_spans.first_as_of_date,
        coalesce(version_spans.last_as_of_date, date '9999-12-31') as last_as_of_date,
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
        history_nights.reservation_id,
        history_nights.night_date,
        reservations.currency_code,
        coalesce(stay_nights.room_revenue, 0) as room_revenue,
        true as is_from_history,
        history_nights.first_as_of_date,
        history_nights.last_as_of_date,
    from history_nights
    inner join reservations
        on history_nights.reservation_id = reservations.reservation_id
    left join stay_nights
        on history_nights.reservation_id = stay_nights.reservation_id
        and history_nights.night_date = stay_nights.night_date
),

-- today's status: on the books from the booking date on; cancelled, until the day before
-- (a cancelled night without a cancellation date never counts: its last date is null)
current_candidates as (
    select
        stay_nights.reservation_id,
        stay_nights.night_date,
        stay_nights.currency_code,
        coalesce(stay_nights.room_revenue, 0) as room_revenue,
        false as is_from_history,
        stay_nights.booking_date as first_as_of_date,
        case
            when stay_nights.is_on_the_books then date '9999-12-31'
            else cast(stay_nights.cancelled_on - 1 as date)
        end as last_as_of_date,
    from stay_nights
    where stay_nights.is_stay_night
        and stay_nights.is_guest_stay
        and (stay_nights.is_on_the_books or stay_nights.is_cancelled)
),

candidates as (
    select * from history_candidates
    union all
    select * from current_candidates
),

final as (
    select
        candidates.*,
        coalesce(history_starts.history_start_date, date '9999-12-31') as history_start_date,
    from candidates
    left join history_starts
        on candidates.reservation_id = history_starts.reservation_id
)

select * from final
