-- Offers per month x offer x currency: what each offer gave away and what it sold. The offer of a
-- discount is the resource of its bill line (an item line of resourceType SPECIAL: the interface's
-- resource is an accommodation type, add-on or offer); its discount is allocated to the nights
-- like every line (core.fct_bill_line_nights). For the on-the-books guest stays whose bills carry
-- a discount line of the offer: the stays in house in the month, their stay nights, the discount
-- on the month's nights and their room revenue there (after the discount, as billed), so
-- room_revenue + discount_amount is what the same nights would have cost without the offer.
-- The sums of core.fct_offer_stay_months (what each stay adds, maintained by reservation), so
-- a refresh rebuilds this small mart whole from them.

with stay_months as (
    select * from core.fct_offer_stay_months
),

offers as (
    select * from core.dim_offers
),

discounts as (
    select
        month_start,
        offer_id,
        currency_code,
        sum(discount_cents) as discount_cents,
        sum(discount_net_cents) as discount_net_cents,
    from stay_months
    where part = 'discount'
    group by all
),

-- a stay counts once in each month x offer x currency it has a stay night in
taken as (
    select
        month_start,
        offer_id,
        currency_code,
        cast(count(*) filter (where is_booked) as bigint) as bookings,
        cast(sum(nights) as bigint) as nights,
        sum(room_cents) as room_cents,
    from stay_months
    where part = 'taken'
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
