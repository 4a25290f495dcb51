-- materialized as a view
-- Bill lines of reservations per payer type (child of reservations).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only. A view of `core.fct_bill_lines`, which
-- reads the same current state with the same renames and keeps these columns: the bill lines
-- are stored once.

with bill_lines as (
    select * from core.fct_bill_lines
),

final as (
    select
        bill_line_id,
        bill_id,
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
        unit_value,
        total,
        vat_rate,
        start_date,
        end_date,
        batch_id,
        batch_kind,
        extracted_at,
        extra_fields,
    from bill_lines
)

select * from final
