-- Reservability of resources: whether each can be reserved at all and on the internet.
-- Current state per the lake contract; renamed and cast only.

with source as (
    select * from lake_current.resource_reservability
),

final as (
    select
        reservability_id,
        resource_id,
        resource_type,
        reservable as is_reservable,
        reservable_on_internet as is_reservable_on_internet,
        modified_date as modified_at,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
