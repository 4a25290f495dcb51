-- incremental by date_day, accommodation_type_id from core.fct_stay_nights: night_date, accommodation_type_id
-- incremental by date_day, accommodation_type_id from core.fct_unit_nights: night_date, accommodation_type_id
-- incremental by date_day, accommodation_type_id from core.dim_dates: select c.date_day, t.accommodation_type_id from changed_rows as c cross join (select accommodation_type_id from core.dim_units union select accommodation_type_id from core.fct_stay_nights union select accommodation_type_id from marts.occupancy_daily) as t
-- incremental by date_day, accommodation_type_id from core.fct_allotment_pickup_weeks: select stay_date, accommodation_type_id from changed_rows where weeks_back = 0 group by weeks_back, stay_date, location_id, accommodation_type_id, distribution_channel_id having count(*) <> 2 or count(distinct row(still_held_nights)) <> 1
-- incremental by date_day, accommodation_type_id from core.dim_accommodation_types: select o.date_day, o.accommodation_type_id from marts.occupancy_daily as o where o.accommodation_type_id in (select c.accommodation_type_id from changed_rows as c group by c.accommodation_type_id having count(*) <> 2 or count(distinct row(c.accommodation_type_code)) <> 1)
-- incremental by date_day, accommodation_type_id from core.dim_locations: select o.date_day, o.accommodation_type_id from marts.occupancy_daily as o where o.location_id in (select c.location_id from changed_rows as c group by c.location_id having count(*) <> 2 or count(distinct row(c.location_code)) <> 1)
-- incremental when core.fct_allotment_pickup_weeks changed whole: select stay_date, accommodation_type_id from (select o.date_day as stay_date, o.accommodation_type_id, -o.allotment_held_nights as held from marts.occupancy_daily as o where o.allotment_held_nights <> 0 union all select a.stay_date, a.accommodation_type_id, a.still_held_nights from core.fct_allotment_pickup_weeks as a where a.weeks_back = 0 and a.still_held_nights <> 0) group by all having sum(held) <> 0
-- incremental narrows its inputs
-- incremental narrows core.fct_allotment_pickup_weeks: select a.* from core.fct_allotment_pickup_weeks as a semi join affected_keys as k on k.date_day = a.stay_date and k.accommodation_type_id = a.accommodation_type_id
-- incremental narrows core.dim_dates: date_day in (select date_day from affected_keys)
-- Occupancy per night x location x accommodation type over the reporting range: supply nights
-- (units available), nights sold (on-the-books guest stays), owner / hold nights, occupancy and
-- available occupancy as defined in metrics.md; beside them the supply that cannot be sold
-- (out-of-order unit nights of operations tasks, allotment nights still held for channels as of
-- the build's as_of), the sellable nights left and the occupancy of those (docs/metrics.md
-- "sellable supply").
--
-- Maintained by night x accommodation type (an hour's stays reach a third of the nights but a
-- few thousand of the nights x types): an allotment pickup row keys its stay date and type only
-- when it is of the as-of snapshot (weeks_back 0 of core.fct_allotment_pickup_weeks) and its
-- still-held nights moved; a type or location whose code changed keys all its rows; a night
-- whose calendar row changed keys every type. The as-of date reaches a row through its
-- allotment-held nights alone, which the stored pickup keeps without the date: when the date
-- moves, the pickup's changed rows of weeks_back 0 key the nights whose release date passed, or
-- whose pickup moved, on the new date, as any hour's do. Should the pickup be rebuilt whole, the
-- rows keyed are those whose stored allotment-held nights differ from its snapshot's: one
-- aggregate of the stored nights (negated) and the snapshot's, by night x type, over the rows
-- that hold any.

with dates as (
    select * from core.dim_dates
),

unit_nights as (
    select * from core.fct_unit_nights
),

stay_nights as (
    select * from core.fct_stay_nights
),

accommodation_types as (
    select * from core.dim_accommodation_types
),

locations as (
    select * from core.dim_locations
),

allotment_pickup as (
    select * from core.fct_allotment_pickup_weeks
),

allotment_held as (
    select
        allotment_pickup.stay_date as night_date,
        allotment_pickup.accommodation_type_id,
        cast(sum(allotment_pickup.still_held_nights) as bigint) as allotment_held_nights,
    from allotment_pickup
    where allotment_pickup.weeks_back = 0
    group by allotment_pickup.stay_date, allotment_pickup.accommodation_type_id
),

supply as (
    select
        night_date,
        location_id,
        accommodation_type_id,
        count(*) filter (where is_available) as nights_available,
        count(*) filter (
            where is_available and is_out_of_order and not is_owner_hold
        ) as out_of_order_nights,
    from unit_nights
    group by night_date, location_id, accommodation_type_id
),

demand as (
    select
        stay_nights.night_date,
        stay_nights.location_id,
        stay_nights.accommodation_type_id,
        count(*) filter (where stay_nights.is_sold) as nights_sold,
        count(*) filter (where stay_nights.is_owner_hold) as owner_hold_nights,
        count(*) filter (where stay_nights.is_held and stay_nights.is_guest_stay) as held_nights,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where stay_nights.is_stay_night
        and dates.is_in_reporting_range
    group by stay_nights.night_date, stay_nights.location_id, stay_nights.accommodation_type_id
),

joined as (
    select
        night_date,
        location_id,
        accommodation_type_id,
        coalesce(supply.nights_available, 0) as nights_available,
        coalesce(supply.out_of_order_nights, 0) as out_of_order_nights,
        coalesce(demand.nights_sold, 0) as nights_sold,
        coalesce(demand.owner_hold_nights, 0) as owner_hold_nights,
        coalesce(demand.held_nights, 0) as held_nights,
    from supply
    full outer join demand
        using (night_date, location_id, accommodation_type_id)
),

sellable as (
    select
        joined.*,
        coalesce(allotment_held.allotment_held_nights, 0) as allotment_held_nights,
        joined.nights_available
        - joined.out_of_order_nights
        - joined.owner_hold_nights
        - coalesce(allotment_held.allotment_held_nights, 0) as sellable_nights,
    from joined
    left join allotment_held
        on joined.night_date = allotment_held.night_date
        and joined.accommodation_type_id = allotment_held.accommodation_type_id
),

final as (
    select
        sellable.night_date as date_day,
        sellable.location_id,
        locations.location_code,
        sellable.accommodation_type_id,
        accommodation_types.accommodation_type_code,
        sellable.nights_available,
        sellable.nights_sold,
        sellable.owner_hold_nights,
        sellable.held_nights,
        safe_ratio(sellable.nights_sold, sellable.nights_available) as occupancy,
        safe_ratio(sellable.nights_sold, sellable.nights_available - sellable.owner_hold_nights)
            as available_occupancy,
        sellable.out_of_order_nights,
        sellable.allotment_held_nights,
        sellable.sellable_nights,
        safe_ratio(sellable.nights_sold, sellable.sellable_nights) as sellable_occupancy,
    from sellable
    left join locations
        on sellable.location_id = locations.location_id
    left join accommodation_types
        on sellable.accommodation_type_id = accommodation_types.accommodation_type_id
)

select * from final
