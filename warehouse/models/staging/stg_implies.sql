-- Implies: the mandatory costs an accommodation type, an offer or an add-on carries (the
-- interface lists them only per holder; unit implies are not read, docs/interface-coverage.md).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.implies
),

final as (
    select
        holder_kind,
        holder_id,
        imply_id,
        implied_resource_id,
        implied_code,
        quantity,
        valid_from,
        valid_to,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
