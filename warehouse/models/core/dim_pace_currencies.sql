-- The currencies of marts.booking_pace's grid: those of the stay nights it counts by today's
-- status (guest stays on the books or cancelled) and of the reservations whose recorded history
-- holds an on-the-books guest version with nights. A model of its own so that booking_pace,
-- maintained by stay date, reads the whole set: the refresh reads booking_pace's stay nights and
-- reservation versions for the affected stay dates only.

with stay_nights as (
    select * from core.fct_stay_nights
),

reservations as (
    select * from core.fct_reservations
),

versions as (
    select * from core.fct_reservation_versions
),

held as (
    select distinct reservation_id
    from versions
    where is_on_the_books
        and is_guest_stay
        and departure_date > arrival_date
        and (effective_to is null
            or cast(effective_to - interval 1 day as date) >= cast(effective_from as date))
),

final as (
    select distinct currency_code
    from stay_nights
    where is_stay_night
        and is_guest_stay
        and (is_on_the_books or is_cancelled)
    union
    select distinct reservations.currency_code
    from held
    inner join reservations
        on held.reservation_id = reservations.reservation_id
)

select * from final
