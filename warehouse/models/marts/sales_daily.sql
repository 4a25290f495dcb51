-- incremental by date_day, accommodation_type_id from core.fct_stay_nights: night_date, accommodation_type_id
-- incremental by date_day, accommodation_type_id from core.dim_dates: select c.date_day, t.accommodation_type_id from changed_rows as c cross join (select accommodation_type_id from core.fct_stay_nights union select accommodation_type_id from marts.sales_daily) as t
-- incremental narrows its inputs
-- incremental narrows core.dim_dates: date_day in (select date_day from affected_keys)
-- Sales per night x location x accommodation type x distribution channel x booking window x
-- currency: nights sold, room revenue (gross and net of VAT) and commission of on-the-books guest
-- stays, on the same rows as revenue_daily (summed over channel and booking window, they equal
-- revenue_daily's columns of the same names). The booking window is the days from the booking
-- date to arrival, in buckets; the filters and feeds of `reservoir serve` read this mart.
-- Maintained by night x accommodation type, as revenue_daily.

with stay_nights as (
    select * from core.fct_stay_nights
),

channels as (
    select * from core.dim_distribution_channels
),

dates as (
    select * from core.dim_dates
),

sold as (
    select
        stay_nights.night_date,
        stay_nights.location_id,
        stay_nights.accommodation_type_id,
        stay_nights.distribution_channel_id,
        stay_nights.currency_code,
        stay_nights.arrival_date - stay_nights.booking_date as lead_days,
        stay_nights.is_stay_night,
        stay_nights.room_revenue,
        stay_nights.room_revenue_net,
        stay_nights.commission,
        stay_nights.commission_net,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where stay_nights.is_sold
        and dates.is_in_reporting_range
),

windowed as (
    select
        *,
        case
            when lead_days is null then null
            when lead_days < 7 then 0
            when lead_days < 14 then 7
            when lead_days < 30 then 14
            when lead_days < 60 then 30
            when lead_days < 90 then 60
            when lead_days < 180 then 90
            else 180
        end as booking_window_days,
    from sold
),

grouped as (
    select
        night_date,
        location_id,
        accommodation_type_id,
        distribution_channel_id,
        booking_window_days,
        currency_code,
        count(*) filter (where is_stay_night) as nights_sold,
        sum(room_revenue) as room_revenue_gross,
        sum(room_revenue_net) as room_revenue_net,
        sum(commission) as commission_gross,
        sum(commission_net) as commission_net,
    from windowed
    group by all
),

final as (
    select
        grouped.night_date as date_day,
        grouped.location_id,
        grouped.accommodation_type_id,
        grouped.distribution_channel_id,
        channels.distribution_channel_code,
        grouped.booking_window_days,
        case grouped.booking_window_days
            when 0 then '0-6 days'
            when 7 then '7-13 days'
            when 14 then '14-29 days'
            when 30 then '30-59 days'
            when 60 then '60-89 days'
            when 90 then '90-179 days'
            when 180 then '180+ days'
        end as booking_window,
        grouped.currency_code,
        grouped.nights_sold,
        cast(grouped.room_revenue_gross as decimal(18, 2)) as room_revenue_gross,
        cast(grouped.room_revenue_net as decimal(18, 2)) as room_revenue_net,
        cast(grouped.commission_gross as decimal(18, 2)) as commission_gross,
        cast(grouped.commission_net as decimal(18, 2)) as commission_net,
        cast(grouped.room_revenue_gross - grouped.commission_gross as decimal(18, 2))
            as room_revenue_after_commission_gross,
        cast(grouped.room_revenue_net - grouped.commission_net as decimal(18, 2))
            as room_revenue_after_commission_net,
    from grouped
    left join channels
        on grouped.distribution_channel_id = channels.distribution_channel_id
)

select * from final
