-- Bookings and cancellations per month x location. Creation columns count guest reservations
-- by booking month (cancellation rate = now CANCELLED / DEF_CANCELLED over created; declines and
-- expiries beside it; lead time averaged over on-the-books bookings). Arrival columns count
-- on-the-books guest stays by arrival month (ALOS = stay nights / reservations).

with reservations as (
    select * from core.fct_reservations
),

guest as (
    select * from reservations
    where is_guest_stay
),

created as (
    select
        cast(date_trunc('month', booking_date) as date) as month_start,
        location_id,
        count(*) as reservations_created,
        count(*) filter (where is_cancelled) as reservations_cancelled,
        count(*) filter (where is_declined) as reservations_declined,
        count(*) filter (where is_expired) as reservations_expired,
        count(*) filter (where is_on_the_books) as reservations_on_the_books,
        avg(lead_time_days) filter (where is_on_the_books) as avg_lead_time_days,
    from guest
    -- INIT (0) is an unconfirmed basket and DELETED (-99) never existed for the guest: neither
    -- counts as a reservation created (docs/contracts.md section 2).
    where booking_date is not null
        and status_code not in (0, -99)
    group by all
),

arrivals as (
    select
        cast(date_trunc('month', arrival_date) as date) as month_start,
        location_id,
        count(*) as arrivals,
        sum(nights) as arrival_stay_nights,
    from guest
    where is_on_the_books
    group by all
),

final as (
    select
        month_start,
        location_id,
        coalesce(created.reservations_created, 0) as reservations_created,
        coalesce(created.reservations_cancelled, 0) as reservations_cancelled,
        coalesce(created.reservations_declined, 0) as reservations_declined,
        coalesce(created.reservations_expired, 0) as reservations_expired,
        coalesce(created.reservations_on_the_books, 0) as reservations_on_the_books,
        safe_ratio(created.reservations_cancelled, created.reservations_created)
            as cancellation_rate,
        safe_ratio(created.reservations_declined, created.reservations_created) as decline_rate,
        safe_ratio(created.reservations_expired, created.reservations_created) as expiry_rate,
        created.avg_lead_time_days,
        coalesce(arrivals.arrivals, 0) as arrivals,
        coalesce(arrivals.arrival_stay_nights, 0) as arrival_stay_nights,
        safe_ratio(arrivals.arrival_stay_nights, arrivals.arrivals) as alos,
    from created
    full outer join arrivals
        using (month_start, location_id)
)

select * from final
