-- incremental by reservation_id from core.fct_reservations: reservation_id
-- incremental by reservation_id from core.fct_journal_entries: reservation_id
-- incremental narrows its inputs
-- What each guest reservation adds to marts.cancellations_monthly, per reservation x month x
-- location x currency, summed by core.fct_cancellation_cells: in its booking month what it
-- adds to the creation columns (a reservation created, now cancelled, declined, expired or on
-- the books, and its lead time when on the books), in its arrival month when on the books the
-- arrival and its nights, in the month of its cancelDate when cancelled the cancellation, the
-- value its bills had (the booked revenue its latest journal entries reversed) and the
-- compensation retained. A row per part it counts in (the months may be one: the mart sums them).
--
-- Per reservation, so maintained by reservation: an hour's reservations re-derive their own
-- rows instead of every reservation and journal entry of the months they reach.

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

-- INIT (0) is an unconfirmed basket and DELETED (-99) never existed for the guest: neither
-- counts as a reservation created (docs/contracts.md section 2).
created as (
    select
        reservation_id,
        cast(date_trunc('month', booking_date) as date) as month_start,
        location_id,
        currency_code,
        1 as reservations_created,
        case when is_cancelled then 1 else 0 end as reservations_cancelled,
        case when is_declined then 1 else 0 end as reservations_declined,
        case when is_expired then 1 else 0 end as reservations_expired,
        case when is_on_the_books then 1 else 0 end as reservations_on_the_books,
        case when is_on_the_books and lead_time_days is not null then lead_time_days else 0 end
            as lead_time_days,
        case when is_on_the_books and lead_time_days is not null then 1 else 0 end
            as lead_times,
    from guest
    where booking_date is not null
        and status_code not in (0, -99)
),

arrivals as (
    select
        reservation_id,
        cast(date_trunc('month', arrival_date) as date) as month_start,
        location_id,
        currency_code,
        1 as arrivals,
        coalesce(nights, 0) as arrival_stay_nights,
        case when nights is not null then 1 else 0 end as arrival_nights_known,
    from guest
    where is_on_the_books
),

cancelled as (
    select
        guest.reservation_id,
        cast(date_trunc('month', guest.cancelled_on) as date) as month_start,
        guest.location_id,
        guest.currency_code,
        1 as cancellations,
        coalesce(cancelled_values.cancelled_value, 0) as cancelled_value,
        guest.cancellation_revenue as retained_cancellation_revenue,
    from guest
    left join cancelled_values
        on guest.reservation_id = cancelled_values.reservation_id
    where guest.is_cancelled
        and guest.cancelled_on is not null
),

parts as (
    select * from created
    union all by name
    select * from arrivals
    union all by name
    select * from cancelled
),

final as (
    select
        reservation_id,
        month_start,
        location_id,
        currency_code,
        cast(coalesce(reservations_created, 0) as bigint) as reservations_created,
        cast(coalesce(reservations_cancelled, 0) as bigint) as reservations_cancelled,
        cast(coalesce(reservations_declined, 0) as bigint) as reservations_declined,
        cast(coalesce(reservations_expired, 0) as bigint) as reservations_expired,
        cast(coalesce(reservations_on_the_books, 0) as bigint) as reservations_on_the_books,
        cast(coalesce(lead_time_days, 0) as bigint) as lead_time_days,
        cast(coalesce(lead_times, 0) as bigint) as lead_times,
        cast(coalesce(arrivals, 0) as bigint) as arrivals,
        cast(coalesce(arrival_stay_nights, 0) as bigint) as arrival_stay_nights,
        cast(coalesce(arrival_nights_known, 0) as bigint) as arrival_nights_known,
        cast(coalesce(cancellations, 0) as bigint) as cancellations,
        cast(coalesce(cancelled_value, 0) as decimal(38, 2)) as cancelled_value,
        cast(coalesce(retained_cancellation_revenue, 0) as decimal(38, 2))
            as retained_cancellation_revenue,
    from parts
)

select * from final
