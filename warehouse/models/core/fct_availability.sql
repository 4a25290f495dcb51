-- incremental by accommodation_type_id, arrival_date
-- The service's availability index: accommodation type x arrival date x duration with the
-- available units, one row per rate-type price (a record without prices keeps one row).

with availability as (
    select * from staging.stg_availability
),

prices as (
    select * from staging.stg_availability_prices
),

final as (
    select
        availability.accommodation_type_id,
        availability.location_id,
        availability.arrival_date,
        availability.duration,
        coalesce(availability.departure_date, availability.arrival_date + cast(availability.duration as integer))
            as departure_date,
        -- the count the default sandbox also sends, else (as the real service) its units[]
        coalesce(availability.available_units, len(availability.units)) as available_units,
        len(availability.units) as listed_unit_count,
        prices.rate_type_id,
        prices.currency_code,
        prices.price,
        div_money(prices.price, availability.duration) as average_nightly_price,
    from availability
    left join prices
        on availability.accommodation_type_id = prices.accommodation_type_id
        and availability.arrival_date = prices.arrival_date
        and availability.duration = prices.duration
)

select * from final
