-- incremental by month_start from core.fct_cancellation_cells: month_start
-- incremental narrows its inputs
-- Bookings and cancellations per month x location x currency (the distribution channel's).
-- Creation columns count guest reservations by booking month (cancellation rate = now
-- CANCELLED / DEF_CANCELLED over created; declines and expiries beside it; lead time averaged
-- over on-the-books bookings). Arrival columns count on-the-books guest stays by arrival month
-- (ALOS = stay nights / reservations). Cancellation columns count guest reservations now
-- cancelled by the month of their cancelDate, with the value their bills had when cancelled
-- (the booked revenue the journals reversed, VAT included, tourist tax left out) and the
-- cancellation compensation retained (bill line 190, revenue of its own, never room revenue).
--
-- The sums of core.fct_cancellation_cells (what each reservation adds, maintained by
-- reservation), maintained by month from the cells that moved.

with cells as (
    select * from core.fct_cancellation_cells
),

final as (
    select
        month_start,
        location_id,
        currency_code,
        reservations_created,
        reservations_cancelled,
        reservations_declined,
        reservations_expired,
        reservations_on_the_books,
        safe_ratio(reservations_cancelled, reservations_created) as cancellation_rate,
        safe_ratio(reservations_declined, reservations_created) as decline_rate,
        safe_ratio(reservations_expired, reservations_created) as expiry_rate,
        safe_ratio(lead_time_days, lead_times) as avg_lead_time_days,
        arrivals,
        arrival_stay_nights,
        safe_ratio(
            case when arrival_nights_known > 0 then arrival_stay_nights end, arrivals
        ) as alos,
        cancellations,
        cast(cancelled_value as decimal(18, 2)) as cancelled_value,
        cast(retained_cancellation_revenue as decimal(18, 2)) as retained_cancellation_revenue,
        safe_ratio(
            case when cancellations > 0 then retained_cancellation_revenue end, cancelled_value
        ) as retained_share,
    from cells
)

select * from final
