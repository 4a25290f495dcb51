-- incremental sums over core.fct_cancellation_reservations by month_start, location_id, currency_code
-- The cells of marts.cancellations_monthly: what the guest reservations of
-- core.fct_cancellation_reservations add per month x location x currency. Every measure is a
-- sum over reservations, so a refresh adds the changed reservations' new rows and subtracts
-- their old ones.

with reservation_months as (
    select * from core.fct_cancellation_reservations
),

final as (
    select
        month_start,
        location_id,
        currency_code,
        cast(sum(reservations_created) as bigint) as reservations_created,
        cast(sum(reservations_cancelled) as bigint) as reservations_cancelled,
        cast(sum(reservations_declined) as bigint) as reservations_declined,
        cast(sum(reservations_expired) as bigint) as reservations_expired,
        cast(sum(reservations_on_the_books) as bigint) as reservations_on_the_books,
        sum(lead_time_days) as lead_time_days,
        cast(sum(lead_times) as bigint) as lead_times,
        cast(sum(arrivals) as bigint) as arrivals,
        sum(arrival_stay_nights) as arrival_stay_nights,
        cast(sum(arrival_nights_known) as bigint) as arrival_nights_known,
        cast(sum(cancellations) as bigint) as cancellations,
        sum(cancelled_value) as cancelled_value,
        sum(retained_cancellation_revenue) as retained_cancellation_revenue,
    from reservation_months
    group by month_start, location_id, currency_code
)

select * from final
