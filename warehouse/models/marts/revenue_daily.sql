-- incremental by date_day, accommodation_type_id from core.fct_stay_nights: night_date, accommodation_type_id
-- incremental by date_day, accommodation_type_id from marts.occupancy_daily: date_day, accommodation_type_id
-- incremental by date_day, accommodation_type_id from core.dim_dates: select c.date_day, t.accommodation_type_id from changed_rows as c cross join (select accommodation_type_id from core.dim_units union select accommodation_type_id from core.fct_stay_nights union select accommodation_type_id from marts.revenue_daily) as t
-- incremental narrows its inputs
-- incremental narrows core.dim_dates: date_day in (select date_day from affected_keys)
-- Revenue per night x location x accommodation type x currency: room and total revenue of
-- on-the-books guest stays allocated to nights, gross (VAT included, as billed) and net (VAT
-- excluded, each line's VAT from its vatRate), commission, and ADR, RevPAR, TRevPAR as defined in
-- metrics.md on both bases. Every key of occupancy_daily has a row in every reporting currency
-- (each location's company currency and every currency sold), sold or not, so supply nights are
-- on every currency's rows: aggregate RevPAR as sum(revenue) / sum(nights_available) within one
-- currency, never sum nights across currencies, never average the daily ratios. Beside them
-- (in none of those), the cancellation compensation retained on cancelled guest stays
-- (`cancellation_revenue`, gross as billed), allocated to the nights they cancelled.
--
-- Maintained by night x accommodation type: an hour's stays reach a third of the nights but a
-- few thousand of the nights x types; a night whose calendar row changed keys every type.

with occupancy as (
    select * from marts.occupancy_daily
),

stay_nights as (
    select * from core.fct_stay_nights
),

reporting_currencies as (
    select * from core.dim_reporting_currencies
),

dates as (
    select * from core.dim_dates
),

-- the sold (on the books) and the cancelled guest stays' nights of each night x location x type
-- x currency in one aggregate over stay_nights; a key is sold when it has a night on the books,
-- cancelled when its cancellation compensation does not sum to 0
figures as (
    select
        stay_nights.night_date,
        stay_nights.location_id,
        stay_nights.accommodation_type_id,
        stay_nights.currency_code,
        bool_or(stay_nights.is_sold) as is_sold,
        count(*) filter (where stay_nights.is_sold and stay_nights.is_stay_night) as nights_sold,
        sum(stay_nights.room_revenue) filter (where stay_nights.is_sold) as room_revenue_gross,
        sum(stay_nights.room_revenue_net) filter (where stay_nights.is_sold) as room_revenue_net,
        sum(stay_nights.total_revenue) filter (where stay_nights.is_sold)
            as total_revenue_gross,
        sum(stay_nights.total_revenue_net) filter (where stay_nights.is_sold)
            as total_revenue_net,
        sum(stay_nights.commission) filter (where stay_nights.is_sold) as commission_gross,
        sum(stay_nights.commission_net) filter (where stay_nights.is_sold) as commission_net,
        sum(stay_nights.cancellation_revenue) filter (
            where stay_nights.is_cancelled and stay_nights.is_guest_stay
        ) as cancellation_revenue,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where (stay_nights.is_sold or (stay_nights.is_cancelled and stay_nights.is_guest_stay))
        and dates.is_in_reporting_range
    group by all
    having bool_or(stay_nights.is_sold) or coalesce(sum(stay_nights.cancellation_revenue) filter (
        where stay_nights.is_cancelled and stay_nights.is_guest_stay
    ), 0) <> 0
),

currencies as (
    select currency_code from reporting_currencies
),

supply_keys as (
    select
        occupancy.date_day as night_date,
        occupancy.location_id,
        occupancy.accommodation_type_id,
        currencies.currency_code,
    from occupancy
    cross join currencies
),

-- every supply night in every reporting currency and every key sold or cancelled: one full join
-- in place of a union of the keys and a join to each (the same rows at less CPU;
-- docs/benchmarks.md, session 13)
keyed as (
    select
        coalesce(supply_keys.night_date, figures.night_date) as night_date,
        coalesce(supply_keys.location_id, figures.location_id) as location_id,
        coalesce(supply_keys.accommodation_type_id, figures.accommodation_type_id)
            as accommodation_type_id,
        coalesce(supply_keys.currency_code, figures.currency_code) as currency_code,
        figures.nights_sold,
        figures.room_revenue_gross,
        figures.room_revenue_net,
        figures.total_revenue_gross,
        figures.total_revenue_net,
        figures.commission_gross,
        figures.commission_net,
        figures.cancellation_revenue,
    from supply_keys
    full outer join figures
        on supply_keys.night_date = figures.night_date
        and supply_keys.location_id is not distinct from figures.location_id
        and supply_keys.accommodation_type_id is not distinct from figures.accommodation_type_id
        and supply_keys.currency_code is not distinct from figures.currency_code
),

joined as (
    select
        keyed.night_date,
        keyed.location_id,
        keyed.accommodation_type_id,
        keyed.currency_code,
        coalesce(keyed.nights_sold, 0) as nights_sold,
        coalesce(occupancy.nights_available, 0) as nights_available,
        cast(coalesce(keyed.room_revenue_gross, 0) as decimal(18, 2)) as room_revenue_gross,
        cast(coalesce(keyed.room_revenue_net, 0) as decimal(18, 2)) as room_revenue_net,
        cast(coalesce(keyed.total_revenue_gross, 0) as decimal(18, 2)) as total_revenue_gross,
        cast(coalesce(keyed.total_revenue_net, 0) as decimal(18, 2)) as total_revenue_net,
        cast(coalesce(keyed.commission_gross, 0) as decimal(18, 2)) as commission_gross,
        cast(coalesce(keyed.commission_net, 0) as decimal(18, 2)) as commission_net,
        cast(coalesce(keyed.cancellation_revenue, 0) as decimal(18, 2))
            as cancellation_revenue,
    from keyed
    left join occupancy
        on keyed.night_date = occupancy.date_day
        and keyed.location_id is not distinct from occupancy.location_id
        and keyed.accommodation_type_id is not distinct from occupancy.accommodation_type_id
),

after_commission as (
    select
        *,
        room_revenue_gross - commission_gross as room_revenue_after_commission_gross,
        room_revenue_net - commission_net as room_revenue_after_commission_net,
    from joined
),

final as (
    select
        night_date as date_day,
        location_id,
        accommodation_type_id,
        currency_code,
        room_revenue_gross,
        room_revenue_net,
        room_revenue_gross - room_revenue_net as room_vat,
        total_revenue_gross,
        total_revenue_net,
        total_revenue_gross - total_revenue_net as total_vat,
        commission_gross,
        commission_net,
        room_revenue_after_commission_gross,
        room_revenue_after_commission_net,
        cancellation_revenue,
        nights_sold,
        nights_available,
        div_money(room_revenue_gross, nights_sold) as adr_gross,
        div_money(room_revenue_net, nights_sold) as adr_net,
        div_money(room_revenue_gross, nights_available) as revpar_gross,
        div_money(room_revenue_net, nights_available) as revpar_net,
        div_money(total_revenue_gross, nights_available) as trevpar_gross,
        div_money(total_revenue_net, nights_available) as trevpar_net,
        div_money(room_revenue_after_commission_gross, nights_sold)
            as adr_after_commission_gross,
        div_money(room_revenue_after_commission_net, nights_sold) as adr_after_commission_net,
        div_money(room_revenue_after_commission_gross, nights_available)
            as revpar_after_commission_gross,
        div_money(room_revenue_after_commission_net, nights_available)
            as revpar_after_commission_net,
    from after_commission
)

select * from final
