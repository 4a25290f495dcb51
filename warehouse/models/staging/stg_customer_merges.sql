-- incremental by old_customer_id
-- Customer merges: old customer id -> surviving customer id.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.customer_merges
),

final as (
    select
        old_customer_id,
        customer_id,
        merged_at,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
