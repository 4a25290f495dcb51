-- incremental by accommodation_type_id from core.fct_unit_nights: select distinct changed.accommodation_type_id from changed_rows as changed inner join (select c.unit_id, c.night_date from changed_rows as c where c.night_date >= (select as_of from meta.build_settings) and c.night_date < (select as_of from meta.build_settings) + 180 + cast((select coalesce(max(min_duration), 0) from staging.stg_rentability_sets) as integer) group by all having count(*) <> 2 or count(distinct row(c.accommodation_type_id, c.is_available, c.is_out_of_order, c.is_sold, c.is_owner_hold)) <> 1) as moved on changed.unit_id = moved.unit_id and changed.night_date = moved.night_date
-- incremental by accommodation_type_id from core.dim_accommodation_types: unnest(case when (select count(*) <> 2 or count(distinct row(c.location_id)) <> 1 from changed_rows as c where c.accommodation_type_id = changed.accommodation_type_id) then [changed.accommodation_type_id] else [] end)
-- incremental by accommodation_type_id from staging.stg_rentability_config: resource_id
-- incremental narrows core.fct_unit_nights: accommodation_type_id in affected_keys or (accommodation_type_id is null and exists (select 1 from affected_keys as a where a.k is null))
-- incremental narrows core.dim_accommodation_types: accommodation_type_id in affected_keys
-- incremental narrows staging.stg_rentability_config: resource_id in affected_keys
-- Orphan nights per night x location x accommodation type, from the build's as_of over the next
-- 180 nights within the reporting range: unsold unit nights (available, not out of order, no
-- on-the-books stay) that no stay allowed by the type's rentability (arrival weekday, minimum
-- length, arrival on or after as_of) could fill. A night D of a unit's free run [start, end) is
-- fillable when some allowed arrival A with max(start, as_of) <= A <= D has
-- A + min_duration <= end (a stay can then run from A to past D within the run).
--
-- Maintained by accommodation type: a unit night that changed (freed, sold, out of order, another
-- type) within the window or the horizon below changes its type's rows (a change before as_of or
-- past the horizon changes none), as do the type's rentability rules and location; the rentability
-- sets, the calendar and the as-of date rebuild it whole. (By night, an hour's changes touch
-- every night of the window: a unit's free run spans it.)

with settings as (
    select * from meta.build_settings
),

dates as (
    select * from core.dim_dates
),

unit_nights as (
    select * from core.fct_unit_nights
),

configs as (
    select * from staging.stg_rentability_config
),

rentability_sets as (
    select * from staging.stg_rentability_sets
),

accommodation_types as (
    select * from core.dim_accommodation_types
),

-- the nights a window night's status can depend on: from as_of to the window's end plus the
-- longest minimum stay (a free run reaching that far fits every stay allowed from the window, so
-- its nights past it change nothing; nights before as_of are never arrivals)
horizon as (
    select
        as_of as first_night,
        as_of + 180 + cast(coalesce((select max(min_duration) from rentability_sets), 0) as integer)
            as end_night,
    from settings
),

free_nights as (
    select
        unit_nights.unit_id,
        unit_nights.accommodation_type_id,
        unit_nights.night_date,
        unit_nights.night_date - cast(row_number() over (
            partition by unit_nights.unit_id order by unit_nights.night_date
        ) as integer) as run_key,
    from unit_nights
    cross join horizon
    where unit_nights.is_available
        and not unit_nights.is_out_of_order
        and not unit_nights.is_sold
        and not unit_nights.is_owner_hold
        and unit_nights.night_date >= horizon.first_night
        and unit_nights.night_date < horizon.end_night
),

runs as (
    select
        unit_id,
        run_key,
        min(night_date) as run_start,
        max(night_date) + 1 as run_end,
    from free_nights
    group by unit_id, run_key
),

-- the arrival dates a free night can be: the horizon's (a config's rule over every date of the
-- calendar is some 16 million rows, which the planner may build before the join with the free
-- nights when a table was rebuilt in the refresh's transaction: 4-5 CPU s instead of 1.5)
arrival_dates as (
    select dates.date_day,
    from dates
    cross join horizon
    where dates.date_day >= horizon.first_night
        and dates.date_day < horizon.end_night
),

-- per type and arrival date: the shortest stay an allowed arrival that day needs (a night is
-- fillable from an arrival when some rule's stay fits the run: the shortest one does)
rules as (
    select
        configs.resource_id as accommodation_type_id,
        dates.date_day as arrival_date,
        min(rentability_sets.min_duration) as min_duration,
    from configs
    inner join rentability_sets
        on configs.rentability_set_id = rentability_sets.rentability_set_id
    inner join arrival_dates as dates
        on dates.date_day >= configs.start_date
        and dates.date_day < configs.end_date
    where configs.distribution_channel_id is null
        and coalesce(configs.resource_type, 'ACCOMMODATIONTYPE') like 'ACCOMMODATI%'
        and list_contains(rentability_sets.arrival_days, upper(dayname(dates.date_day)))
    group by all
),

first_arrival as (
    -- per free run: the first arrival date from which an allowed stay fits in the run
    select
        free_nights.unit_id,
        free_nights.run_key,
        min(free_nights.night_date) as first_fillable,
    from free_nights
    inner join runs
        using (unit_id, run_key)
    cross join settings
    inner join rules
        on free_nights.accommodation_type_id = rules.accommodation_type_id
        and free_nights.night_date = rules.arrival_date
    where free_nights.night_date >= settings.as_of
        and free_nights.night_date + cast(rules.min_duration as integer) <= runs.run_end
    group by free_nights.unit_id, free_nights.run_key
),

window_nights as (
    select
        free_nights.*,
        first_arrival.first_fillable,
    from free_nights
    cross join settings
    inner join dates
        on free_nights.night_date = dates.date_day
    left join first_arrival
        using (unit_id, run_key)
    where free_nights.night_date >= settings.as_of
        and free_nights.night_date < settings.as_of + 180
        and dates.is_in_reporting_range
),

final as (
    select
        window_nights.night_date as date_day,
        accommodation_types.location_id,
        window_nights.accommodation_type_id,
        count(*) as unsold_nights,
        count(*) filter (
            where window_nights.first_fillable is null
            or window_nights.night_date < window_nights.first_fillable
        ) as orphan_nights,
    from window_nights
    left join accommodation_types
        on window_nights.accommodation_type_id = accommodation_types.accommodation_type_id
    group by all
)

select * from final
