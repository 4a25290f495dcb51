-- incremental by reservation_id
-- incremental stored by night_date, accommodation_type_id
-- Reservation x night, for every reservation (flags included; marts filter). Stay nights are
-- arrival <= night < departure; revenue is allocated from the bill lines themselves in integer
-- cents per contracts.md section 1 (a line's own period, else its reserved resource's, else the
-- accommodation's), so an extension never changes nights already reported. Nights carrying only
-- allocated money outside the stay have is_stay_night = false. Unsuffixed money is as billed
-- (VAT included); the _net columns exclude VAT: each line's net (total - its VAT) is spread by
-- the same rule, so a line's nights add up to its net and to its VAT exactly. The allocation
-- itself is core.fct_bill_line_nights (one rule, summed here per reservation night).

with reservations as (
    select * from core.fct_reservations
),

allocated as (
    select * from core.fct_bill_line_nights
),

reservation_nights as (
    select
        reservation_id,
        cast(unnest(range(arrival_date, departure_date, interval 1 day)) as date) as night_date,
    from reservations
    where departure_date > arrival_date
),

-- plain sums of case expressions: the same totals as filtered sums (coalesced to 0), at less
-- CPU over every allocated line (docs/benchmarks.md, session 10)
night_money as (
    select
        reservation_id,
        night_date,
        sum(case when revenue_class = 'room' then cents else 0 end) as room_cents,
        sum(case when revenue_class = 'extra' then cents else 0 end) as extra_cents,
        sum(case when revenue_class = 'tax' then cents else 0 end) as tax_cents,
        sum(case when revenue_class = 'cancellation' then cents else 0 end)
            as cancellation_cents,
        sum(case when revenue_class = 'other' then cents else 0 end) as other_cents,
        sum(case when line_class = 'commission' then cents else 0 end) as commission_cents,
        sum(case when revenue_class = 'room' then net_cents else 0 end) as room_net_cents,
        sum(case when revenue_class = 'extra' then net_cents else 0 end) as extra_net_cents,
        sum(case when line_class = 'commission' then net_cents else 0 end)
            as commission_net_cents,
    from allocated
    group by reservation_id, night_date
),

nights as (
    select
        coalesce(reservation_nights.reservation_id, night_money.reservation_id)
            as reservation_id,
        coalesce(reservation_nights.night_date, night_money.night_date) as night_date,
        reservation_nights.night_date is not null as is_stay_night,
        coalesce(night_money.room_cents, 0) as room_cents,
        coalesce(night_money.extra_cents, 0) as extra_cents,
        coalesce(night_money.tax_cents, 0) as tax_cents,
        coalesce(night_money.cancellation_cents, 0) as cancellation_cents,
        coalesce(night_money.other_cents, 0) as other_cents,
        coalesce(night_money.commission_cents, 0) as commission_cents,
        coalesce(night_money.room_net_cents, 0) as room_net_cents,
        coalesce(night_money.extra_net_cents, 0) as extra_net_cents,
        coalesce(night_money.commission_net_cents, 0) as commission_net_cents,
    from reservation_nights
    full outer join night_money
        on reservation_nights.reservation_id = night_money.reservation_id
        and reservation_nights.night_date = night_money.night_date
),

final as (
    select
        nights.reservation_id,
        nights.night_date,
        nights.is_stay_night,
        reservations.location_id,
        reservations.company_id,
        reservations.accommodation_type_id,
        reservations.unit_id,
        reservations.rate_type_id,
        reservations.distribution_channel_id,
        reservations.currency_code,
        reservations.status_code,
        reservations.booking_date,
        reservations.cancelled_on,
        reservations.arrival_date,
        reservations.is_on_the_books,
        reservations.is_held,
        reservations.is_quoted,
        reservations.is_cancelled,
        reservations.is_owner_hold,
        reservations.is_guest_stay,
        reservations.is_sold,
        from_cents(nights.room_cents) as room_revenue,
        from_cents(nights.extra_cents) as extra_revenue,
        from_cents(nights.room_cents + nights.extra_cents) as total_revenue,
        from_cents(nights.tax_cents) as tourist_tax,
        from_cents(nights.cancellation_cents) as cancellation_revenue,
        from_cents(nights.other_cents) as other_item_amount,
        from_cents(nights.commission_cents) as commission,
        from_cents(nights.room_net_cents) as room_revenue_net,
        from_cents(nights.extra_net_cents) as extra_revenue_net,
        from_cents(nights.room_net_cents + nights.extra_net_cents) as total_revenue_net,
        from_cents(nights.commission_net_cents) as commission_net,
    from nights
    inner join reservations
        on nights.reservation_id = reservations.reservation_id
)

select * from final
