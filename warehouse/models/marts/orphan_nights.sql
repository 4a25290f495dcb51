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
-- every night of the window: a unit's free run spans it.) The free runs are the gaps between a
-- unit's taken nights (a unit has one accommodation type), and the counts per night are the
-- runs' starts and ends summed in night order: no step goes over every free night one by one.

with settings as (
    select * from meta.build_settings
),

dates as (
    select * from core.dim_dates
),

unit_nights as not materialized (
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
-- its nights past it change nothing; nights before as_of are never arrivals), within the
-- reporting range (the nights with unit nights: one span, the same for every unit)
horizon as (
    select
        greatest(settings.as_of, min(dates.date_day)) as first_night,
        least(
            settings.as_of + 180 + cast(
                coalesce((select max(min_duration) from rentability_sets), 0) as integer
            ),
            max(dates.date_day) + 1
        ) as end_night,
    from settings
    cross join dates
    where dates.is_in_reporting_range
    group by settings.as_of
),

-- the nights that end a free run: each unit's taken nights within the horizon, and the nights
-- just outside it (a unit's free runs of its type are the gaps between them: these few rather
-- than a numbering of every free night). The free nights are left at the scan: no step reads
-- them (a table of the horizon's 2.2 million unit nights at large, kept for this and the
-- bounds, cost ~0.04 CPU s; `unit_nights` is read twice, each time by its own filter)
blocked as (
    select unit_nights.unit_id, unit_nights.accommodation_type_id, unit_nights.night_date,
    from unit_nights
    cross join horizon
    where unit_nights.night_date >= horizon.first_night
        and unit_nights.night_date < horizon.end_night
        and not (
            unit_nights.is_available
            and not unit_nights.is_out_of_order
            and not unit_nights.is_sold
            and not unit_nights.is_owner_hold
        )
    union all
    select units.unit_id, units.accommodation_type_id, bound.night_date,
    from unit_nights as units
    cross join horizon
    cross join lateral (
        select cast(horizon.first_night - 1 as date) as night_date
        union all
        select horizon.end_night
    ) as bound
    -- every unit has a row on every night of the reporting range: one per unit
    where units.night_date = horizon.first_night
),

-- a unit's blocked nights in order, each with the next: a gap between them is a free run (a
-- list per unit rather than a window over every blocked night: ~0.03 CPU s less at large)
runs as (
    select
        unit_id,
        accommodation_type_id,
        cast(gap[1] + 1 as date) as run_start,
        gap[2] as run_end,
    from (
        select
            unit_id,
            accommodation_type_id,
            unnest(list_zip(nights[:-2], nights[2:])) as gap,
        from (
            select unit_id, accommodation_type_id, list(night_date order by night_date) as nights,
            from blocked
            group by all
        )
    )
    where gap[2] - gap[1] > 1
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

-- per free run: the first arrival date from which an allowed stay fits in the run (null: none)
fillable_runs as (
    select
        runs.unit_id,
        runs.accommodation_type_id,
        runs.run_start,
        runs.run_end,
        min(rules.arrival_date) as first_fillable,
    from runs
    left join rules
        on runs.accommodation_type_id = rules.accommodation_type_id
        and rules.arrival_date >= runs.run_start
        and rules.arrival_date + cast(rules.min_duration as integer) <= runs.run_end
    group by all
),

-- each run's nights within the window, and those of them before its first fillable arrival,
-- as +1 where they start and -1 where they end, per type and night
changes as (
    select
        accommodation_type_id,
        night_date,
        sum(unsold) as unsold,
        sum(orphan) as orphan,
    from (
        select
            fillable_runs.accommodation_type_id,
            bounds.*,
        from fillable_runs
        cross join settings
        cross join lateral (
            select
                greatest(fillable_runs.run_start, settings.as_of) as first_night,
                least(fillable_runs.run_end, settings.as_of + 180) as end_night,
                least(
                    coalesce(fillable_runs.first_fillable, fillable_runs.run_end),
                    settings.as_of + 180
                ) as orphan_end
        ) as clipped
        cross join lateral (
            select
                clipped.first_night as night_date,
                1 as unsold,
                cast(clipped.first_night < clipped.orphan_end as integer) as orphan,
            union all
            select clipped.end_night, -1, 0
            union all
            select clipped.orphan_end, 0, -1
            where clipped.first_night < clipped.orphan_end
        ) as bounds
        where clipped.first_night < clipped.end_night
    )
    group by all
),

-- the counts from each change to the next, one row per night
counted as (
    select
        accommodation_type_id,
        cast(unnest(generate_series(night_date, next_night - 1, interval 1 day)) as date)
            as date_day,
        unsold_nights,
        orphan_nights,
    from (
        select
            accommodation_type_id,
            night_date,
            lead(night_date) over by_night as next_night,
            sum(unsold) over by_night as unsold_nights,
            sum(orphan) over by_night as orphan_nights,
        from changes
        window by_night as (partition by accommodation_type_id order by night_date)
    )
    where unsold_nights > 0
),

final as (
    select
        counted.date_day,
        accommodation_types.location_id,
        counted.accommodation_type_id,
        cast(counted.unsold_nights as bigint) as unsold_nights,
        cast(counted.orphan_nights as bigint) as orphan_nights,
    from counted
    inner join dates
        on counted.date_day = dates.date_day
    left join accommodation_types
        on counted.accommodation_type_id = accommodation_types.accommodation_type_id
    where dates.is_in_reporting_range
)

select * from final
