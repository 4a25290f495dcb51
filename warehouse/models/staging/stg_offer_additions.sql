-- Additions of an offer: the add-ons a guest may add to it.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.offer_additions
),

final as (
    select
        addition_id,
        resource_id as offer_id,
        addon_resource_id as addon_id,
        addon_code,
        mandatory,
        max_quantity,
        valid_from,
        valid_to,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
