-- Forecast per future stay date x currency, by additive pickup (docs/forecast.md): the nights
-- and room revenue on the books at the build's as-of date (booking_pace) plus what the same stay
-- date last year (stay date - 364 days: the same weekday) picked up from the same number of days
-- before arrival to its final figure (sales_daily at that night, summed over its other columns
-- in core.fct_night_sales, less booking_pace's same-time-last-year figure). Negative pickup
-- counts as none; the nights picked up are capped by the night's free supply (currencies in code
-- order). Room revenue is VAT included, as billed (the basis of booking_pace).

with settings as (
    select * from meta.build_settings
),

pace as (
    select * from marts.booking_pace
),

-- marts.sales_daily's nights and room revenue per night x currency, kept by adding
night_sales as (
    select * from core.fct_night_sales
),

occupancy as (
    select * from marts.occupancy_daily
),

current_pace as (
    select pace.*
    from pace
    inner join settings
        on pace.as_of_date = settings.as_of
),

last_year as (
    select
        date_day,
        currency_code,
        sum(nights_sold) as nights_sold,
        sum(room_revenue_gross) as room_revenue_gross,
    from night_sales
    group by all
),

supply as (
    select
        date_day,
        sum(nights_available) as nights_available,
    from occupancy
    -- the forecast's stay dates alone (a third of the nights the mart holds)
    where occupancy.date_day in (select current_pace.stay_date from current_pace)
    group by all
),

joined as (
    select
        current_pace.stay_date,
        current_pace.as_of_date,
        current_pace.currency_code,
        current_pace.days_before_arrival,
        coalesce(supply.nights_available, 0) as nights_available,
        current_pace.otb_nights,
        current_pace.otb_room_revenue,
        coalesce(last_year.nights_sold, 0) as ly_nights_sold,
        cast(coalesce(last_year.room_revenue_gross, 0) as decimal(18, 2)) as ly_room_revenue,
        current_pace.stly_otb_nights,
        current_pace.stly_otb_room_revenue,
        greatest(coalesce(last_year.nights_sold, 0) - current_pace.stly_otb_nights, 0)
            as pickup_nights,
        greatest(
            to_cents(coalesce(last_year.room_revenue_gross, 0))
            - to_cents(current_pace.stly_otb_room_revenue),
            0
        ) as pickup_cents,
    from current_pace
    left join last_year
        on last_year.date_day = current_pace.stay_date - 364
        and last_year.currency_code is not distinct from current_pace.currency_code
    left join supply
        on supply.date_day = current_pace.stay_date
),

capped as (
    select
        *,
        greatest(nights_available - sum(otb_nights) over (partition by stay_date), 0)
            as free_nights,
        coalesce(
            sum(pickup_nights) over (
                partition by stay_date
                order by currency_code
                rows between unbounded preceding and 1 preceding
            ),
            0
        ) as pickup_before,
    from joined
),

allotted as (
    select
        *,
        least(pickup_nights, greatest(free_nights - pickup_before, 0)) as forecast_pickup_nights,
    from capped
),

final as (
    select
        stay_date,
        as_of_date,
        currency_code,
        days_before_arrival,
        cast(nights_available as bigint) as nights_available,
        otb_nights,
        otb_room_revenue,
        cast(ly_nights_sold as bigint) as ly_nights_sold,
        ly_room_revenue,
        stly_otb_nights,
        stly_otb_room_revenue,
        cast(forecast_pickup_nights as bigint) as forecast_pickup_nights,
        cast(otb_nights + forecast_pickup_nights as bigint) as forecast_nights,
        cast(
            otb_room_revenue
            + from_cents(
                case when pickup_nights > 0
                    then pickup_cents * forecast_pickup_nights // pickup_nights
                    else 0 end
            )
            as decimal(18, 2)
        ) as forecast_room_revenue,
    from allotted
)

select * from final
