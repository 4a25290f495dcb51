-- incremental sums over core.fct_pace_night_spans by as_of_date, stay_date, currency_code
-- Nights and room revenue on the books per weekly as-of snapshot x stay date x currency, the
-- cells marts.booking_pace reads: the build's as_of and the 105 weeks before it (53 reported,
-- plus the ones pickup and same time last year look back to), stay dates from the snapshot to
-- 372 days after it. Each night of core.fct_pace_night_spans counts in the snapshots within its
-- as-of span: by its history (a version in force then) or by today's status, and today's status
-- also before the reservation's history starts. Every measure is a sum over those nights, so a
-- refresh adds the changed reservations' new nights and subtracts their old ones; a cell whose
-- nights all went is removed (a whole build has no cell without nights).

with settings as (
    select * from meta.build_settings
),

spans as (
    select * from core.fct_pace_night_spans
),

-- the snapshots each night counts in, as weeks back (as-of date = as_of - 7 x weeks_back, 0 to
-- 105): those within its as-of span and from 372 days before the night to the night itself
-- (a list per night: a range join of every night with every snapshot costs twice the CPU)
bounds as (
    select
        spans.*,
        settings.as_of,
        settings.as_of - greatest(spans.first_as_of_date, spans.night_date - 372) as days_to_first,
        settings.as_of - least(spans.last_as_of_date, spans.night_date) as days_to_last,
    from spans
    cross join settings
),

weeks as (
    select
        *,
        unnest(range(
            greatest(0, cast(ceil(days_to_last / 7) as bigint)),
            least(105, cast(floor(days_to_first / 7) as bigint)) + 1
        )) as weeks_back,
    from bounds
    where days_to_last <= days_to_first
),

counted as (
    select
        cast(as_of - cast(7 * weeks_back as integer) as date) as as_of_date,
        night_date as stay_date,
        currency_code,
        room_revenue,
        is_from_history,
        not is_from_history
            and cast(as_of - cast(7 * weeks_back as integer) as date) < history_start_date
            as is_before_history,
    from weeks
),

final as (
    select
        as_of_date,
        stay_date,
        currency_code,
        count(*) filter (where is_from_history) as nights_from_history,
        cast(coalesce(sum(room_revenue) filter (where is_from_history), 0) as decimal(38, 2))
            as room_revenue_from_history,
        count(*) filter (where not is_from_history) as nights_by_current_status,
        cast(coalesce(sum(room_revenue) filter (where not is_from_history), 0)
            as decimal(38, 2)) as room_revenue_by_current_status,
        count(*) filter (where is_before_history) as nights_before_history,
        cast(coalesce(sum(room_revenue) filter (where is_before_history), 0) as decimal(38, 2))
            as room_revenue_before_history,
    from counted
    group by all
)

select * from final
