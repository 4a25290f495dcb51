-- incremental by reservation_id
-- What each guest stay that took an offer adds to marts.offer_discount_monthly, per reservation
-- x month x offer x currency, in two kinds of rows (part): 'taken', the reservation's sold
-- nights in the month (in the reporting range) whatever they carry (is_booked: one of them a
-- stay night; nights: its stay nights; room_cents: their room revenue in cents, as billed),
-- and 'discount', the offer's discount on those nights (discount_cents, discount_net_cents:
-- the negated item line's allocation). The offer of a discount is the resource of its bill
-- line (an item line of resourceType SPECIAL, total not 0), and the reservations that carry
-- one took the offer. Per reservation, so maintained by reservation: the mart sums these rows.

with line_nights as (
    select * from core.fct_bill_line_nights
),

bill_lines as (
    select * from core.fct_bill_lines
),

stay_nights as (
    select * from core.fct_stay_nights
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

-- the sold nights of those reservations only (every night this model reads is one of them): a
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
        'discount' as part,
        discount_nights.reservation_id,
        sold_nights.month_start,
        discount_nights.offer_id,
        sold_nights.currency_code,
        cast(null as boolean) as is_booked,
        cast(null as bigint) as nights,
        cast(null as hugeint) as room_cents,
        -sum(discount_nights.cents) as discount_cents,
        -sum(discount_nights.net_cents) as discount_net_cents,
    from discount_nights
    inner join sold_nights
        on discount_nights.reservation_id = sold_nights.reservation_id
        and discount_nights.night_date = sold_nights.night_date
    group by discount_nights.reservation_id, sold_nights.month_start, discount_nights.offer_id,
        sold_nights.currency_code
),

taken as (
    select
        'taken' as part,
        takers.reservation_id,
        sold_nights.month_start,
        takers.offer_id,
        sold_nights.currency_code,
        bool_or(sold_nights.is_stay_night) as is_booked,
        count(*) filter (where sold_nights.is_stay_night) as nights,
        sum(to_cents(sold_nights.room_revenue)) as room_cents,
        cast(null as hugeint) as discount_cents,
        cast(null as hugeint) as discount_net_cents,
    from takers
    inner join sold_nights
        on takers.reservation_id = sold_nights.reservation_id
    group by takers.reservation_id, sold_nights.month_start, takers.offer_id,
        sold_nights.currency_code
),

final as (
    select * from taken
    union all
    select * from discounts
)

select * from final
