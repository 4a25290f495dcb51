-- incremental by reservation_id
-- Subjects (persons, pets) of reservations (child of reservations).
-- Current state per the lake contract (lake_current applies latest-row, tombstone, full-batch
-- and child-replacement rules); renamed and cast only.

with source as (
    select * from lake_current.reservation_subjects
),

final as (
    select
        reservation_subject_id,
        reservation_id,
        subject_id,
        type as subject_type,
        age_from,
        age_to,
        quantity,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
