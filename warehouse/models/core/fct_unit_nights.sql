-- incremental by night_date, unit_id from core.fct_stay_nights: night_date, unit_id
-- incremental by night_date, unit_id from core.dim_dates: select c.date_day, u.unit_id from changed_rows as c cross join core.dim_units as u
-- incremental by night_date, unit_id from staging.stg_operation_tasks: cast(unnest(generate_series(changed.out_of_order_from, changed.out_of_order_to - 1, interval 1 day)) as date), changed.unit_id
-- incremental narrows its inputs
-- incremental narrows core.fct_stay_nights: select s.* from core.fct_stay_nights as s where s.unit_id in (select unit_id from affected_keys) and exists (select 1 from affected_keys as k where k.night_date is not distinct from s.night_date and k.unit_id is not distinct from s.unit_id)
-- incremental narrows core.dim_dates: date_day in (select night_date from affected_keys)
-- incremental narrows core.dim_units: unit_id in (select unit_id from affected_keys)
-- incremental narrows staging.stg_operation_tasks: unit_id in (select unit_id from affected_keys)
-- Supply: every unit x night of the reporting range. is_available follows contracts.md
-- section 2 (setup_date <= night and archived_from null or after the night); is_sold and
-- is_owner_hold say whether an on-the-books guest stay or owner / block reservation has the unit;
-- is_out_of_order whether an operations task takes the unit out of order that night
-- (out_of_order_from <= night < out_of_order_to, a task not CANCELLED).
--
-- Maintained by night x unit: an hour's stays reach a third of the nights but a few thousand of
-- the unit nights (a night whose calendar row changed keys every unit). The stay nights are read
-- for the keys' units first (a stay night without a unit counts nowhere), then by night x unit:
-- ~20 % less CPU than by night x unit alone (docs/benchmarks.md, session 21).

with units as (
    select * from core.dim_units
),

dates as (
    select * from core.dim_dates
),

stay_nights as (
    select * from core.fct_stay_nights
),

operation_tasks as (
    select * from staging.stg_operation_tasks
),

out_of_order as (
    select distinct
        operation_tasks.unit_id,
        dates.date_day as night_date,
    from operation_tasks
    inner join dates
        on dates.date_day >= operation_tasks.out_of_order_from
        and dates.date_day < operation_tasks.out_of_order_to
    where operation_tasks.is_out_of_order
        and operation_tasks.unit_id is not null
        and coalesce(operation_tasks.task_status, '') <> 'CANCELLED'
        and dates.is_in_reporting_range
),

unit_usage as (
    select
        unit_id,
        night_date,
        bool_or(is_sold) as is_sold,
        bool_or(is_owner_hold) as is_owner_hold,
        count(*) as reservation_count,
    from stay_nights
    where is_stay_night
        and is_on_the_books
        and unit_id is not null
    group by unit_id, night_date
),

final as (
    select
        units.unit_id,
        dates.date_day as night_date,
        units.accommodation_type_id,
        units.location_id,
        coalesce(units.setup_date <= dates.date_day, true)
        and (units.archived_from is null or units.archived_from > dates.date_day)
            as is_available,
        coalesce(unit_usage.is_sold, false) as is_sold,
        coalesce(unit_usage.is_owner_hold, false) as is_owner_hold,
        coalesce(unit_usage.reservation_count, 0) > 1 as is_double_booked,
        out_of_order.unit_id is not null as is_out_of_order,
    from units
    cross join dates
    left join unit_usage
        on units.unit_id = unit_usage.unit_id
        and dates.date_day = unit_usage.night_date
    left join out_of_order
        on units.unit_id = out_of_order.unit_id
        and dates.date_day = out_of_order.night_date
    where dates.is_in_reporting_range
)

select * from final
