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

snapshots as (
    select cast(settings.as_of - cast(7 * weeks.k as integer) as date) as as_of_date,
    from settings
    cross join range(0, 106) as weeks(k)
),

counted as (
    select
        snapshots.as_of_date,
        spans.night_date as stay_date,
        spans.currency_code,
        spans.room_revenue,
        spans.is_from_history,
        not spans.is_from_history and snapshots.as_of_date < spans.history_start_date
            as is_before_history,
    from snapshots
    inner join spans
        on spans.night_date between snapshots.as_of_date and snapshots.as_of_date + 372
        and snapshots.as_of_date >= spans.first_as_of_date
        and snapshots.as_of_date <= spans.last_as_of_date
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
