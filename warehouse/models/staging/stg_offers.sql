-- Offers (specials): the discount on the rent and who may book it.
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.offers
),

final as (
    select
        resource_id as offer_id,
        code as offer_code,
        name as offer_name,
        type as offer_type,
        description,
        discount_percentage,
        min_days_before_arrival,
        max_days_before_arrival,
        rate_type_ids,
        choosable_on_internet,
        valid_from,
        valid_to,
        archived_from,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
