-- incremental by reservation_id from core.fct_stay_nights: reservation_id
-- incremental by reservation_id from staging.stg_allotments: select distinct s.reservation_id from core.fct_stay_nights as s inner join (select c.* from changed_rows as c where c.allotment_id in (select m.allotment_id from changed_rows as m group by m.allotment_id having count(*) <> 2 or count(distinct row(m.distribution_channel_id, m.accommodation_type_id, m.start_date, m.end_date)) <> 1)) as c on s.distribution_channel_id = c.distribution_channel_id and s.accommodation_type_id = c.accommodation_type_id and s.night_date >= c.start_date and s.night_date < c.end_date
-- incremental narrows its inputs
-- The guest stay nights marts.allotment_pickup counts: on the books or cancelled, on a night an
-- allotment of their channel and accommodation type covers (start_date <= night < end_date,
-- whatever its quantity). A model of its own so that the mart's refresh reads these few nights
-- (under a tenth of the stay nights at large) rather than every stay night of the nights it
-- recomputes: after a new business date, the nights of every allotment released or booked on
-- one of its 13 snapshot dates. Per reservation, so maintained by reservation; an allotment
-- whose channel, type or dates moved keys the reservations with a night in its old or new
-- range.

with stay_nights as (
    select * from core.fct_stay_nights
),

allotments as (
    select * from staging.stg_allotments
),

final as (
    select
        stay_nights.reservation_id,
        stay_nights.night_date,
        stay_nights.accommodation_type_id,
        stay_nights.distribution_channel_id,
        stay_nights.booking_date,
        stay_nights.cancelled_on,
        stay_nights.is_on_the_books,
    from stay_nights
    where stay_nights.is_stay_night
        and stay_nights.is_guest_stay
        and (stay_nights.is_on_the_books or stay_nights.is_cancelled)
        and exists (
            select 1
            from allotments
            where allotments.distribution_channel_id = stay_nights.distribution_channel_id
                and allotments.accommodation_type_id = stay_nights.accommodation_type_id
                and stay_nights.night_date >= allotments.start_date
                and stay_nights.night_date < allotments.end_date
        )
)

select * from final
