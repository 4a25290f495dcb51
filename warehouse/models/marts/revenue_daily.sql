-- Revenue per night x location x accommodation type x currency: room and total revenue of
-- on-the-books guest stays allocated to nights, commission and net figures, and ADR, RevPAR,
-- TRevPAR as defined in metrics.md; beside them (in none of those), the cancellation
-- compensation retained on cancelled guest stays, allocated to the nights they cancelled.
-- Supply nights repeat on each currency row of a key (the location's company currency always
-- has a row); never sum them across currencies.

with occupancy as (
    select * from marts.occupancy_daily
),

stay_nights as (
    select * from core.fct_stay_nights
),

locations as (
    select * from core.dim_locations
),

dates as (
    select * from core.dim_dates
),

sold as (
    select
        stay_nights.night_date,
        stay_nights.location_id,
        stay_nights.accommodation_type_id,
        stay_nights.currency_code,
        count(*) filter (where stay_nights.is_stay_night) as nights_sold,
        sum(stay_nights.room_revenue) as room_revenue,
        sum(stay_nights.total_revenue) as total_revenue,
        sum(stay_nights.commission) as commission,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where stay_nights.is_sold
        and dates.is_in_reporting_range
    group by all
),

cancelled as (
    select
        stay_nights.night_date,
        stay_nights.location_id,
        stay_nights.accommodation_type_id,
        stay_nights.currency_code,
        sum(stay_nights.cancellation_revenue) as cancellation_revenue,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where stay_nights.is_cancelled
        and stay_nights.is_guest_stay
        and dates.is_in_reporting_range
    group by all
    having sum(stay_nights.cancellation_revenue) <> 0
),

keys as (
    select
        occupancy.date_day as night_date,
        occupancy.location_id,
        occupancy.accommodation_type_id,
        locations.currency_code,
    from occupancy
    inner join locations
        on occupancy.location_id = locations.location_id
    where locations.currency_code is not null
    union
    select night_date, location_id, accommodation_type_id, currency_code
    from sold
    union
    select night_date, location_id, accommodation_type_id, currency_code
    from cancelled
),

joined as (
    select
        keys.night_date,
        keys.location_id,
        keys.accommodation_type_id,
        keys.currency_code,
        coalesce(sold.nights_sold, 0) as nights_sold,
        coalesce(occupancy.nights_available, 0) as nights_available,
        cast(coalesce(sold.room_revenue, 0) as decimal(18, 2)) as room_revenue,
        cast(coalesce(sold.total_revenue, 0) as decimal(18, 2)) as total_revenue,
        cast(coalesce(sold.commission, 0) as decimal(18, 2)) as commission,
        cast(coalesce(cancelled.cancellation_revenue, 0) as decimal(18, 2))
            as cancellation_revenue,
    from keys
    left join sold
        on keys.night_date = sold.night_date
        and keys.location_id is not distinct from sold.location_id
        and keys.accommodation_type_id is not distinct from sold.accommodation_type_id
        and keys.currency_code is not distinct from sold.currency_code
    left join cancelled
        on keys.night_date = cancelled.night_date
        and keys.location_id is not distinct from cancelled.location_id
        and keys.accommodation_type_id is not distinct from cancelled.accommodation_type_id
        and keys.currency_code is not distinct from cancelled.currency_code
    left join occupancy
        on keys.night_date = occupancy.date_day
        and keys.location_id is not distinct from occupancy.location_id
        and keys.accommodation_type_id is not distinct from occupancy.accommodation_type_id
),

final as (
    select
        night_date as date_day,
        location_id,
        accommodation_type_id,
        currency_code,
        room_revenue,
        total_revenue,
        commission,
        room_revenue - commission as net_room_revenue,
        cancellation_revenue,
        nights_sold,
        nights_available,
        div_money(room_revenue, nights_sold) as adr,
        div_money(room_revenue, nights_available) as revpar,
        div_money(total_revenue, nights_available) as trevpar,
        div_money(room_revenue - commission, nights_sold) as net_adr,
        div_money(room_revenue - commission, nights_available) as net_revpar,
    from joined
)

select * from final
