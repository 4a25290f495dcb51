-- incremental by accommodation_type_id, arrival_date from lake.availability_prices: resource_id, arrival_date
-- incremental by accommodation_type_id, arrival_date from lake.availability: resource_id, arrival_date
-- incremental narrows its inputs
-- incremental changes every affected key
-- Prices per rate type of availability records (child of availability).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.
--
-- Maintained by accommodation type x arrival date (part of the lake's key, so the lake's
-- current state is read for the affected pairs only): across midnight the new day's landing is
-- the passed arrival date and the new one of every type, a fortieth of the horizon's pairs,
-- where by type alone it was every type, the whole horizon re-read and compared.

with source as (
    select * from lake_current.availability_prices
),

final as (
    select
        resource_id as accommodation_type_id,
        arrival_date,
        duration,
        rate_type_id,
        currency_code,
        price,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
