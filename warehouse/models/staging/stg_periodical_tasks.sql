-- Recurring operations tasks per location (inspections, pool care); none takes a unit out of
-- order by itself. Current state per the lake contract; renamed and cast only.

with source as (
    select * from lake_current.periodical_tasks
),

final as (
    select
        periodical_task_id,
        location_id,
        task_type,
        description,
        interval_days,
        start_date,
        end_date,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields
    from source
)

select * from final
