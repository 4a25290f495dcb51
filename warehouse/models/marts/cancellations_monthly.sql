-- incremental by month_start from core.fct_reservations: [cast(date_trunc('month', booking_date) as date), cast(date_trunc('month', arrival_date) as date), cast(date_trunc('month', cancelled_on) as date)]
-- incremental by month_start from core.fct_journal_entries: unnest((select list(cast(date_trunc('month', r.cancelled_on) as date)) from core.fct_reservations as r where r.reservation_id = changed.reservation_id and r.cancelled_on is not null))
-- Bookings and cancellations per month x location x currency (the distribution channel's).
-- Creation columns count guest reservations by booking month (cancellation rate = now
-- CANCELLED / DEF_CANCELLED over created; declines and expiries beside it; lead time averaged
-- over on-the-books bookings). Arrival columns count on-the-books guest stays by arrival month
-- (ALOS = stay nights / reservations). Cancellation columns count guest reservations now
-- cancelled by the month of their cancelDate, with the value their bills had when cancelled
-- (the booked revenue the journals reversed, VAT included, tourist tax left out) and the
-- cancellation compensation retained (bill line 190, revenue of its own, never room revenue).

with reservations as (
    select * from core.fct_reservations
),

journal_entries as (
    select * from core.fct_journal_entries
),

guest as (
    select * from reservations
    where is_guest_stay
),

created as (
    select
        cast(date_trunc('month', booking_date) as date) as month_start,
        location_id,
        currency_code,
        count(*) as reservations_created,
        count(*) filter (where is_cancelled) as reservations_cancelled,
        count(*) filter (where is_declined) as reservations_declined,
        count(*) filter (where is_expired) as reservations_expired,
        count(*) filter (where is_on_the_books) as reservations_on_the_books,
        avg(lead_time_days) filter (where is_on_the_books) as avg_lead_time_days,
    from guest
    -- INIT (0) is an unconfirmed basket and DELETED (-99) never existed for the guest: neither
    -- counts as a reservation created (docs/contracts.md section 2).
    where booking_date is not null
        and status_code not in (0, -99)
    group by all
),

arrivals as (
    select
        cast(date_trunc('month', arrival_date) as date) as month_start,
        location_id,
        currency_code,
        count(*) as arrivals,
        sum(nights) as arrival_stay_nights,
    from guest
    where is_on_the_books
    group by all
),

-- A cancellation reverses the booked revenue on each revenue ledger it was posted to, so a
-- cancelled reservation's latest entry per ledger is that reversal (contracts.md, "Bill
-- rules"); the compensation is posted to a ledger of its own and is left out here.
reversals as (
    select
        journal_entries.reservation_id,
        journal_entries.net_vat_included,
    from journal_entries
    inner join guest
        on journal_entries.reservation_id = guest.reservation_id
    where guest.is_cancelled
        and journal_entries.is_revenue_ledger
        and not journal_entries.is_cancellation_ledger
    qualify row_number() over (
        partition by journal_entries.reservation_id, journal_entries.ledger_number
        order by journal_entries.journal_entry_id desc
    ) = 1
),

cancelled_values as (
    select
        reservation_id,
        -sum(net_vat_included) as cancelled_value,
    from reversals
    group by reservation_id
),

cancelled as (
    select
        cast(date_trunc('month', guest.cancelled_on) as date) as month_start,
        guest.location_id,
        guest.currency_code,
        count(*) as cancellations,
        sum(coalesce(cancelled_values.cancelled_value, 0)) as cancelled_value,
        sum(guest.cancellation_revenue) as retained_cancellation_revenue,
    from guest
    left join cancelled_values
        on guest.reservation_id = cancelled_values.reservation_id
    where guest.is_cancelled
        and guest.cancelled_on is not null
    group by all
),

final as (
    select
        month_start,
        location_id,
        currency_code,
        coalesce(created.reservations_created, 0) as reservations_created,
        coalesce(created.reservations_cancelled, 0) as reservations_cancelled,
        coalesce(created.reservations_declined, 0) as reservations_declined,
        coalesce(created.reservations_expired, 0) as reservations_expired,
        coalesce(created.reservations_on_the_books, 0) as reservations_on_the_books,
        safe_ratio(created.reservations_cancelled, created.reservations_created)
            as cancellation_rate,
        safe_ratio(created.reservations_declined, created.reservations_created) as decline_rate,
        safe_ratio(created.reservations_expired, created.reservations_created) as expiry_rate,
        created.avg_lead_time_days,
        coalesce(arrivals.arrivals, 0) as arrivals,
        coalesce(arrivals.arrival_stay_nights, 0) as arrival_stay_nights,
        safe_ratio(arrivals.arrival_stay_nights, arrivals.arrivals) as alos,
        coalesce(cancelled.cancellations, 0) as cancellations,
        cast(coalesce(cancelled.cancelled_value, 0) as decimal(18, 2)) as cancelled_value,
        cast(coalesce(cancelled.retained_cancellation_revenue, 0) as decimal(18, 2))
            as retained_cancellation_revenue,
        safe_ratio(cancelled.retained_cancellation_revenue, cancelled.cancelled_value)
            as retained_share,
    from created
    full outer join arrivals
        using (month_start, location_id, currency_code)
    full outer join cancelled
        using (month_start, location_id, currency_code)
)

select * from final
