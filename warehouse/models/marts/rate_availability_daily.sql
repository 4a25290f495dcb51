-- incremental by date_day, accommodation_type_id from core.fct_rate_nights: night_date, accommodation_type_id
-- incremental by date_day, accommodation_type_id from core.fct_stay_nights: night_date, accommodation_type_id
-- incremental by date_day, accommodation_type_id from core.fct_stay_rate_nights: night_date, accommodation_type_id
-- incremental by date_day, accommodation_type_id from marts.occupancy_daily: date_day, accommodation_type_id
-- incremental by date_day, accommodation_type_id from core.fct_availability: select c.arrival_date, c.accommodation_type_id from changed_rows as c group by c.accommodation_type_id, c.arrival_date, c.duration, c.rate_type_id, c.currency_code, c.available_units having count(*) <> 2
-- incremental by date_day, accommodation_type_id from core.dim_dates: select c.date_day, t.accommodation_type_id from changed_rows as c cross join (select accommodation_type_id from core.dim_units union select accommodation_type_id from core.fct_stay_nights union select accommodation_type_id from core.fct_rate_nights union select accommodation_type_id from marts.rate_availability_daily) as t
-- incremental by date_day, accommodation_type_id from core.dim_accommodation_types: select r.date_day, r.accommodation_type_id from marts.rate_availability_daily as r where r.accommodation_type_id in (select c.accommodation_type_id from changed_rows as c group by c.accommodation_type_id having count(*) <> 2 or count(distinct row(c.location_id)) <> 1)
-- incremental narrows its inputs
-- incremental stored as built
-- incremental narrows core.fct_availability: select a.* from core.fct_availability as a semi join affected_keys as k on k.date_day = a.arrival_date and k.accommodation_type_id = a.accommodation_type_id
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

-- the nights sold of each night x type x rate type x currency, realised (core.fct_stay_nights)
-- and priced as nights of their stays (core.fct_stay_rate_nights), in one aggregate over both
-- inputs' rows stacked (each input's columns null in the other's rows); `is_realised`: the key
-- has a night of core.fct_stay_nights (a realised row)
sold as (
    select
        night_date,
        accommodation_type_id,
        rate_type_id,
        currency_code,
        count(*) filter (where is_stay_night) as nights_sold,
        sum(room_revenue) as room_revenue,
        sum(list_price) as sold_list_total,
        count(list_price) as sold_listed_nights,
        bool_or(is_realised) as is_realised,
    from (
        select
            stay_nights.night_date,
            stay_nights.accommodation_type_id,
            stay_nights.rate_type_id,
            stay_nights.currency_code,
            stay_nights.is_stay_night,
            stay_nights.room_revenue,
            true as is_realised,
        from stay_nights
        where stay_nights.is_sold
        union all by name
        select
            stay_rate_nights.night_date,
            stay_rate_nights.accommodation_type_id,
            stay_rate_nights.rate_type_id,
            stay_rate_nights.currency_code,
            stay_rate_nights.list_price,
            false as is_realised,
        from stay_rate_nights
        where stay_rate_nights.is_sold
    ) as sold_nights
    inner join dates
        on sold_nights.night_date = dates.date_day
    where dates.is_in_reporting_range
    group by all
),

-- the keys: every reference stay's list price and every realised key (a key only sold list
-- prices name has no row); one full join in place of a union of the keys and three joins on
-- them (the same rows at less CPU; docs/benchmarks.md, session 13)
keyed as (
    select
        coalesce(rate_nights.night_date, sold.night_date) as night_date,
        coalesce(rate_nights.accommodation_type_id, sold.accommodation_type_id)
            as accommodation_type_id,
        coalesce(rate_nights.rate_type_id, sold.rate_type_id) as rate_type_id,
        coalesce(rate_nights.currency_code, sold.currency_code) as currency_code,
        rate_nights.list_price,
        case when sold.is_realised then sold.nights_sold end as nights_sold,
        case when sold.is_realised then sold.room_revenue end as room_revenue,
        sold.sold_list_total,
        sold.sold_listed_nights,
    from rate_nights
    full outer join sold
        on rate_nights.night_date = sold.night_date
        and rate_nights.accommodation_type_id is not distinct from sold.accommodation_type_id
        and rate_nights.rate_type_id is not distinct from sold.rate_type_id
        and rate_nights.currency_code is not distinct from sold.currency_code
    where rate_nights.night_date is not null
        or sold.is_realised
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
        keyed.night_date as date_day,
        keyed.accommodation_type_id,
        accommodation_types.location_id,
        keyed.rate_type_id,
        keyed.currency_code,
        keyed.list_price,
        coalesce(keyed.nights_sold, 0) as nights_sold,
        cast(coalesce(keyed.room_revenue, 0) as decimal(18, 2)) as room_revenue,
        div_money(keyed.room_revenue, keyed.nights_sold) as realised_adr,
        div_money(keyed.room_revenue, keyed.nights_sold) - keyed.list_price
            as adr_vs_list_price,
        div_money(keyed.sold_list_total, keyed.sold_listed_nights) as sold_list_price,
        div_money(keyed.room_revenue, keyed.nights_sold)
        - div_money(keyed.sold_list_total, keyed.sold_listed_nights)
            as adr_vs_sold_list_price,
        type_occupancy.nights_available,
        type_occupancy.nights_available - type_occupancy.nights_taken as remaining_units,
        service_availability.service_available_units,
    from keyed
    left join type_occupancy
        on keyed.night_date = type_occupancy.date_day
        and keyed.accommodation_type_id = type_occupancy.accommodation_type_id
    left join service_availability
        on keyed.night_date = service_availability.arrival_date
        and keyed.accommodation_type_id = service_availability.accommodation_type_id
    left join accommodation_types
        on keyed.accommodation_type_id = accommodation_types.accommodation_type_id
)

select * from final
