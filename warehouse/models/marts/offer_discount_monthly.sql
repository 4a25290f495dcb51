-- Offers per month x offer x currency: what each offer gave away and what it sold. The offer of a
-- discount is the resource of its bill line (an item line of resourceType SPECIAL: the interface's
-- resource is an accommodation type, add-on or offer); its discount is allocated to the nights
-- like every line (core.fct_bill_line_nights). For the on-the-books guest stays whose bills carry
-- a discount line of the offer: the stays in house in the month, their stay nights, the discount
-- on the month's nights and their room revenue there (after the discount, as billed), so
-- room_revenue + discount_amount is what the same nights would have cost without the offer.

with line_nights as (
    select * from core.fct_bill_line_nights
),

bill_lines as (
    select * from core.fct_bill_lines
),

stay_nights as (
    select * from core.fct_stay_nights
),

offers as (
    select * from core.dim_offers
),

dates as (
    select * from core.dim_dates
),

discount_lines as (
    select
        bill_line_id,
        reservation_id,
        resource_id as offer_id,
    from bill_lines
    where line_class = 'item'
        and resource_type = 'SPECIAL'
        and total_cents <> 0
),

-- the reservations that took each offer
takers as (
    select distinct
        reservation_id,
        offer_id,
    from discount_lines
),

-- the sold nights of those reservations only (every night this mart reads is one of them): a
-- few percent of the stay nights, read before any join
sold_nights as materialized (
    select
        stay_nights.*,
        dates.month_start,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where stay_nights.is_sold
        and dates.is_in_reporting_range
        and stay_nights.reservation_id in (select reservation_id from takers)
),

-- the nights of the discount lines (item lines: the bill line's class), before the join with
-- the stay nights
discount_nights as materialized (
    select
        line_nights.reservation_id,
        line_nights.night_date,
        line_nights.cents,
        line_nights.net_cents,
        discount_lines.offer_id,
    from line_nights
    inner join discount_lines
        on line_nights.bill_line_id = discount_lines.bill_line_id
    where line_nights.line_class = 'item'
),

discounts as (
    select
        sold_nights.month_start,
        discount_nights.offer_id,
        sold_nights.currency_code,
        -sum(discount_nights.cents) as discount_cents,
        -sum(discount_nights.net_cents) as discount_net_cents,
    from discount_nights
    inner join sold_nights
        on discount_nights.reservation_id = sold_nights.reservation_id
        and discount_nights.night_date = sold_nights.night_date
    group by all
),

taken as (
    select
        sold_nights.month_start,
        takers.offer_id,
        sold_nights.currency_code,
        count(distinct sold_nights.reservation_id) filter (where sold_nights.is_stay_night)
            as bookings,
        count(*) filter (where sold_nights.is_stay_night) as nights,
        sum(to_cents(sold_nights.room_revenue)) as room_cents,
    from takers
    inner join sold_nights
        on takers.reservation_id = sold_nights.reservation_id
    group by all
),

keys as (
    select month_start, offer_id, currency_code from taken
    union
    select month_start, offer_id, currency_code from discounts
),

final as (
    select
        keys.month_start,
        keys.offer_id,
        offers.offer_code,
        offers.offer_name,
        keys.currency_code,
        coalesce(taken.bookings, 0) as bookings,
        coalesce(taken.nights, 0) as nights,
        from_cents(coalesce(discounts.discount_cents, 0)) as discount_amount,
        from_cents(coalesce(discounts.discount_net_cents, 0)) as discount_amount_net,
        from_cents(coalesce(taken.room_cents, 0)) as room_revenue,
        from_cents(coalesce(taken.room_cents, 0) + coalesce(discounts.discount_cents, 0))
            as room_revenue_before_discount,
        safe_ratio(
            coalesce(discounts.discount_cents, 0),
            coalesce(taken.room_cents, 0) + coalesce(discounts.discount_cents, 0)
        ) as discount_rate,
    from keys
    left join taken
        on keys.month_start = taken.month_start
        and keys.offer_id = taken.offer_id
        and keys.currency_code = taken.currency_code
    left join discounts
        on keys.month_start = discounts.month_start
        and keys.offer_id = discounts.offer_id
        and keys.currency_code = discounts.currency_code
    left join offers
        on keys.offer_id = offers.offer_id
)

select * from final
