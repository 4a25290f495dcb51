-- incremental by date_day from core.fct_stay_nights: night_date
-- incremental by date_day from core.fct_unit_nights: night_date
-- incremental by date_day from core.dim_dates: date_day
-- incremental narrows its inputs
-- Occupancy per night x location x accommodation type over the reporting range: supply nights
-- (units available), nights sold (on-the-books guest stays), owner / hold nights, occupancy and
-- available occupancy as defined in metrics.md.

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

supply as (
    select
        night_date,
        location_id,
        accommodation_type_id,
        count(*) filter (where is_available) as nights_available,
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
        coalesce(demand.nights_sold, 0) as nights_sold,
        coalesce(demand.owner_hold_nights, 0) as owner_hold_nights,
        coalesce(demand.held_nights, 0) as held_nights,
    from supply
    full outer join demand
        using (night_date, location_id, accommodation_type_id)
),

final as (
    select
        joined.night_date as date_day,
        joined.location_id,
        locations.location_code,
        joined.accommodation_type_id,
        accommodation_types.accommodation_type_code,
        joined.nights_available,
        joined.nights_sold,
        joined.owner_hold_nights,
        joined.held_nights,
        safe_ratio(joined.nights_sold, joined.nights_available) as occupancy,
        safe_ratio(joined.nights_sold, joined.nights_available - joined.owner_hold_nights)
            as available_occupancy,
    from joined
    left join locations
        on joined.location_id = locations.location_id
    left join accommodation_types
        on joined.accommodation_type_id = accommodation_types.accommodation_type_id
)

select * from final
