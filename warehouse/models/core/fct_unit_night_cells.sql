-- incremental sums over core.fct_unit_nights by night_date, location_id, accommodation_type_id
-- Supply per night x location x accommodation type: the unit nights of core.fct_unit_nights
-- (the reporting range), those available (nights_available) and those available but out of
-- order and not an owner hold (out_of_order_nights): the supply of marts.occupancy_daily. Sums
-- over unit nights, so a refresh adds the changed unit nights' new rows and subtracts their old
-- ones, and the mart reads a few thousand of these cells rather than every unit night of the
-- nights x types it keys (4.8 M at large scale).

with unit_nights as (
    select * from core.fct_unit_nights
),

final as (
    select
        night_date,
        location_id,
        accommodation_type_id,
        count(*) as unit_nights,
        count(*) filter (where is_available) as nights_available,
        count(*) filter (
            where is_available and is_out_of_order and not is_owner_hold
        ) as out_of_order_nights,
    from unit_nights
    group by all
)

select * from final
