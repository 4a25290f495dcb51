-- incremental by reservation_id
-- incremental changes every affected key
-- Reservation headers, current state.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.reservations
),

final as (
    select
        reservation_id,
        reservation_number,
        reservation_category_id,
        category_code,
        category_name,
        type as reservation_type,
        status as status_code,
        arrival_date,
        departure_date,
        expected_arrival_date_time as expected_arrival_at,
        expected_departure_date_time as expected_departure_at,
        customer_id,
        distribution_channel_id,
        distribution_channel_code,
        location_id,
        reservation_date as reserved_at,
        modified_date as modified_at,
        cancel_date as cancelled_at,
        voucher,
        validation_status,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
