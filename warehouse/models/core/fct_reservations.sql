-- incremental by reservation_id from staging.stg_reservations: reservation_id
-- incremental by reservation_id from staging.stg_reserved_resources: reservation_id
-- incremental by reservation_id from core.fct_bill_lines: reservation_id
-- incremental by reservation_id from staging.stg_customer_merges: select r.reservation_id from staging.stg_reservations as r where r.customer_id in (select c.old_customer_id from changed_rows as c union all select m1.old_customer_id from staging.stg_customer_merges as m1 where m1.customer_id in (select c.old_customer_id from changed_rows as c) union all select m1.old_customer_id from staging.stg_customer_merges as m1 inner join staging.stg_customer_merges as m2 on m1.customer_id = m2.old_customer_id where m2.customer_id in (select c.old_customer_id from changed_rows as c))
-- incremental by reservation_id from core.dim_accommodation_types: select r.reservation_id from staging.stg_reserved_resources as r where r.resource_type = 'ACCOMMODATIONTYPE' and r.resource_id in (select c.accommodation_type_id from changed_rows as c group by c.accommodation_type_id having count(*) <> 2 or count(distinct row(c.location_id)) <> 1)
-- incremental by reservation_id from core.dim_locations: select r.reservation_id from core.fct_reservations as r where r.location_id in (select c.location_id from changed_rows as c group by c.location_id having count(*) <> 2 or count(distinct row(c.company_id)) <> 1)
-- incremental by reservation_id from core.dim_distribution_channels: select r.reservation_id from staging.stg_reservations as r where r.distribution_channel_id in (select c.distribution_channel_id from changed_rows as c group by c.distribution_channel_id having count(*) <> 2 or count(distinct row(c.distribution_channel_code, c.channel_type, c.currency_code)) <> 1)
-- incremental narrows its inputs
-- incremental stored as built
-- Reservations, current state: status name, nights, lead time, channel and currency, the
-- what-counts flags of contracts.md section 2, accommodation type and unit from the
-- ACCOMMODATIONTYPE reserved resource, and bill totals (a cancelled booking's bill holds its
-- retained cancellation compensation, line 190, in cancellation_revenue).

with reservations as (
    select * from staging.stg_reservations
),

reserved_resources as (
    select * from staging.stg_reserved_resources
),

customer_merges as (
    select * from staging.stg_customer_merges
),

channels as (
    select * from core.dim_distribution_channels
),

accommodation_types as (
    select * from core.dim_accommodation_types
),

locations as (
    select * from core.dim_locations
),

bill_lines as (
    select * from core.fct_bill_lines
),

-- one accommodation per reservation: the first ACCOMMODATIONTYPE reserved resource
accommodation as (
    select
        reservation_id,
        reserved_resource_id,
        resource_id as accommodation_type_id,
        unit_id,
        rate_type_id,
        start_date,
        end_date,
    from reserved_resources
    where resource_type = 'ACCOMMODATIONTYPE'
    qualify row_number() over (partition by reservation_id order by reserved_resource_id) = 1
),

bill_totals as (
    select
        reservation_id,
        from_cents(sum(total_cents) filter (where revenue_class = 'room')) as room_revenue,
        from_cents(sum(total_cents) filter (where revenue_class = 'extra')) as extra_revenue,
        from_cents(sum(total_cents) filter (where revenue_class = 'tax')) as tourist_tax,
        from_cents(sum(total_cents) filter (where revenue_class = 'cancellation'))
            as cancellation_revenue,
        from_cents(sum(total_cents) filter (where line_class = 'commission')) as commission,
        from_cents(sum(total_cents) filter (where line_class = 'item')) as item_total,
    from bill_lines
    group by reservation_id
),

flagged as (
    select
        reservations.*,
        is_on_the_books(reservations.status_code) as is_on_the_books,
        reservations.status_code in (10, 11) as is_held,
        reservations.status_code = -5 as is_quoted,
        reservations.status_code in (-12, -13) as is_cancelled,
        reservations.status_code = -10 as is_declined,
        reservations.status_code = -11 as is_expired,
        is_guest_stay(reservations.reservation_type, reservations.category_code)
            as is_guest_stay,
        coalesce(
            reservations.reservation_type = 'INVOICE'
            or reservations.category_code in ('OWNER', 'BLOCK'),
            false
        ) as is_owner_or_block,
    from reservations
),

final as (
    select
        flagged.reservation_id,
        flagged.reservation_number,
        flagged.reservation_type,
        flagged.reservation_category_id,
        flagged.category_code,
        flagged.category_name,
        flagged.status_code,
        status_name(flagged.status_code) as status_name,
        flagged.arrival_date,
        flagged.departure_date,
        flagged.departure_date - flagged.arrival_date as nights,
        flagged.reserved_at,
        cast(flagged.reserved_at as date) as booking_date,
        flagged.arrival_date - cast(flagged.reserved_at as date) as lead_time_days,
        flagged.modified_at,
        flagged.cancelled_at,
        cast(flagged.cancelled_at as date) as cancelled_on,
        coalesce(m3.customer_id, m2.customer_id, m1.customer_id, flagged.customer_id)
            as customer_id,
        flagged.customer_id as original_customer_id,
        flagged.distribution_channel_id,
        coalesce(channels.distribution_channel_code, flagged.distribution_channel_code)
            as distribution_channel_code,
        channels.channel_type,
        channels.currency_code,
        coalesce(accommodation_types.location_id, flagged.location_id) as location_id,
        locations.company_id,
        accommodation.accommodation_type_id,
        accommodation.unit_id,
        accommodation.reserved_resource_id,
        accommodation.rate_type_id,
        coalesce(accommodation.start_date, flagged.arrival_date) as stay_start_date,
        coalesce(accommodation.end_date, flagged.departure_date) as stay_end_date,
        flagged.is_on_the_books,
        flagged.is_held,
        flagged.is_quoted,
        flagged.is_cancelled,
        flagged.is_declined,
        flagged.is_expired,
        flagged.is_on_the_books and flagged.is_owner_or_block as is_owner_hold,
        flagged.is_guest_stay,
        flagged.is_on_the_books and flagged.is_guest_stay as is_sold,
        coalesce(bill_totals.room_revenue, 0) as room_revenue,
        coalesce(bill_totals.extra_revenue, 0) as extra_revenue,
        coalesce(bill_totals.room_revenue, 0) + coalesce(bill_totals.extra_revenue, 0)
            as total_revenue,
        coalesce(bill_totals.tourist_tax, 0) as tourist_tax,
        coalesce(bill_totals.cancellation_revenue, 0) as cancellation_revenue,
        coalesce(bill_totals.commission, 0) as commission,
        coalesce(bill_totals.item_total, 0) as item_total,
        flagged.batch_id,
        flagged.extracted_at,
    from flagged
    left join accommodation
        on flagged.reservation_id = accommodation.reservation_id
    left join channels
        on flagged.distribution_channel_id = channels.distribution_channel_id
    left join accommodation_types
        on accommodation.accommodation_type_id = accommodation_types.accommodation_type_id
    left join locations
        on coalesce(accommodation_types.location_id, flagged.location_id) = locations.location_id
    left join bill_totals
        on flagged.reservation_id = bill_totals.reservation_id
    left join customer_merges as m1
        on flagged.customer_id = m1.old_customer_id
    left join customer_merges as m2
        on m1.customer_id = m2.old_customer_id
    left join customer_merges as m3
        on m2.customer_id = m3.old_customer_id
)

select * from final
