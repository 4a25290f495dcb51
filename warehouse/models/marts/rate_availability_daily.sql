-- incremental by date_day, accommodation_type_id from core.fct_rate_nights: night_date, accommodation_type_id
-- incremental by date_day, accommodation_type_id from core.fct_stay_nights: night_date, accommodation_type_id
-- incremental by date_day, accommodation_type_id from core.fct_stay_rate_nights: night_date, accommodation_type_id
-- incremental by date_day, accommodation_type_id from marts.occupancy_daily: date_day, accommodation_type_id
-- incremental by date_day, accommodation_type_id from core.fct_availability: select c.arrival_date, c.accommodation_type_id from changed_rows as c group by c.accommodation_type_id, c.arrival_date, c.duration, c.rate_type_id, c.currency_code, c.available_units having count(*) <> 2
-- incremental by date_day, accommodation_type_id from core.dim_dates: select c.date_day, t.accommodation_type_id from changed_rows as c cross join (select accommodation_type_id from core.dim_units union select accommodation_type_id from core.fct_stay_nights union select accommodation_type_id from core.fct_rate_nights union select accommodation_type_id from marts.rate_availability_daily) as t
-- incremental by date_day, accommodation_type_id from core.dim_accommodation_types: select r.date_day, r.accommodation_type_id from marts.rate_availability_daily as r where r.accommodation_type_id in (select c.accommodation_type_id from changed_rows as c group by c.accommodation_type_id having count(*) <> 2 or count(distinct row(c.location_id)) <> 1)
-- incremental narrows its inputs
-- incremental narrows core.fct_availability: arrival_date in (select date_day from affected_keys) and accommodation_type_id in (select accommodation_type_id from affected_keys)
-- incremental narrows core.dim_dates: date_day in (select date_day from affected_keys)
-- List price vs realised ADR per night x accommodation type x rate type x currency: the list
-- price of the night's reference stay (core.fct_rate_nights) and the average list price of the
-- nights sold, each priced as a night of its own stay (core.fct_stay_rate_nights), with the
-- units left to sell (supply - sold - owner/hold - held nights) and the service's own
-- availability index for arrivals that night.
--
-- Maintained by night x accommodation type (as revenue_daily): an availability record keys its
-- arrival night and type when the units it offers moved.

with rate_nights as (
    select * from core.fct_rate_nights
),

stay_nights as (
    select * from core.fct_stay_nights
),

stay_rate_nights as (
    select * from core.fct_stay_rate_nights
),

occupancy as (
    select * from marts.occupancy_daily
),

availability as (
    select * from core.fct_availability
),

accommodation_types as (
    select * from core.dim_accommodation_types
),

dates as (
    select * from core.dim_dates
),

realised as (
    select
        stay_nights.night_date,
        stay_nights.accommodation_type_id,
        stay_nights.rate_type_id,
        stay_nights.currency_code,
        count(*) filter (where stay_nights.is_stay_night) as nights_sold,
        sum(stay_nights.room_revenue) as room_revenue,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where stay_nights.is_sold
        and dates.is_in_reporting_range
    group by all
),

sold_list_prices as (
    select
        stay_rate_nights.night_date,
        stay_rate_nights.accommodation_type_id,
        stay_rate_nights.rate_type_id,
        stay_rate_nights.currency_code,
        sum(stay_rate_nights.list_price) as sold_list_total,
        count(stay_rate_nights.list_price) as sold_listed_nights,
    from stay_rate_nights
    inner join dates
        on stay_rate_nights.night_date = dates.date_day
    where stay_rate_nights.is_sold
        and dates.is_in_reporting_range
    group by all
),

keys as (
    select night_date, accommodation_type_id, rate_type_id, currency_code from rate_nights
    union
    select night_date, accommodation_type_id, rate_type_id, currency_code from realised
),

type_occupancy as (
    select
        date_day,
        accommodation_type_id,
        sum(nights_available) as nights_available,
        sum(nights_sold + owner_hold_nights + held_nights) as nights_taken,
    from occupancy
    group by all
),

service_availability as (
    select
        accommodation_type_id,
        arrival_date,
        max(available_units) as service_available_units,
    from availability
    group by all
),

final as (
    select
        keys.night_date as date_day,
        keys.accommodation_type_id,
        accommodation_types.location_id,
        keys.rate_type_id,
        keys.currency_code,
        rate_nights.list_price,
        coalesce(realised.nights_sold, 0) as nights_sold,
        cast(coalesce(realised.room_revenue, 0) as decimal(18, 2)) as room_revenue,
        div_money(realised.room_revenue, realised.nights_sold) as realised_adr,
        div_money(realised.room_revenue, realised.nights_sold) - rate_nights.list_price
            as adr_vs_list_price,
        div_money(sold_list_prices.sold_list_total, sold_list_prices.sold_listed_nights)
            as sold_list_price,
        div_money(realised.room_revenue, realised.nights_sold)
        - div_money(sold_list_prices.sold_list_total, sold_list_prices.sold_listed_nights)
            as adr_vs_sold_list_price,
        type_occupancy.nights_available,
        type_occupancy.nights_available - type_occupancy.nights_taken as remaining_units,
        service_availability.service_available_units,
    from keys
    left join rate_nights
        on keys.night_date = rate_nights.night_date
        and keys.accommodation_type_id is not distinct from rate_nights.accommodation_type_id
        and keys.rate_type_id is not distinct from rate_nights.rate_type_id
        and keys.currency_code is not distinct from rate_nights.currency_code
    left join realised
        on keys.night_date = realised.night_date
        and keys.accommodation_type_id is not distinct from realised.accommodation_type_id
        and keys.rate_type_id is not distinct from realised.rate_type_id
        and keys.currency_code is not distinct from realised.currency_code
    left join sold_list_prices
        on keys.night_date = sold_list_prices.night_date
        and keys.accommodation_type_id is not distinct from sold_list_prices.accommodation_type_id
        and keys.rate_type_id is not distinct from sold_list_prices.rate_type_id
        and keys.currency_code is not distinct from sold_list_prices.currency_code
    left join type_occupancy
        on keys.night_date = type_occupancy.date_day
        and keys.accommodation_type_id = type_occupancy.accommodation_type_id
    left join service_availability
        on keys.night_date = service_availability.arrival_date
        and keys.accommodation_type_id = service_availability.accommodation_type_id
    left join accommodation_types
        on keys.accommodation_type_id = accommodation_types.accommodation_type_id
)

select * from final
