-- Owner contracts (child of owners): the unit, the revenue-share percentage and the period
-- (start_date <= night < end_date; a null end runs on).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.owner_contracts
),

final as (
    select
        contract_id,
        owner_id,
        unit_id,
        resource_id as accommodation_type_id,
        contract_type,
        share_basis,
        revenue_share_percentage,
        start_date,
        end_date,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
