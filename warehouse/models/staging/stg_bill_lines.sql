-- incremental by reservation_id
-- Bill lines of reservations per payer type (child of reservations).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.bill_lines
),

final as (
    select
        reservation_bill_line_id as bill_line_id,
        reservation_bill_id as bill_id,
        reservation_id,
        payer_type,
        bill_line_type,
        resource_id,
        resource_type,
        reserved_resource_id,
        rate_id,
        rate_type_id,
        description,
        quantity,
        multiplier,
        value as unit_value,
        total,
        vat_rate,
        start_date,
        end_date,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
