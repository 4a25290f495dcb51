-- incremental sums over core.fct_pace_span_groups by as_of_date, stay_date, currency_code
-- incremental shifts as_of_date with the as-of date
-- incremental when meta.build_settings changed whole: with moved as (select n.as_of as new_as_of, b.as_of as old_as_of, least(n.as_of, b.as_of) as lo, greatest(n.as_of, b.as_of) as hi
-- incremental when meta.build_settings changed whole: from meta.build_settings as n cross join build_settings_before as b),
-- incremental when meta.build_settings changed whole: days as (select cast(hi - cast(7 * k + i as integer) as date) as day, cast(k as integer) as weeks_back
-- incremental when meta.build_settings changed whole: from (select m.hi, w.k, unnest(range(0, m.hi - m.lo)) as i from moved as m cross join range(0, 106) as w(k))),
-- incremental when meta.build_settings changed whole: weeks as (select g.*, d.weeks_back from core.fct_pace_span_groups as g inner join days as d on g.first_counted_date = d.day
-- incremental when meta.build_settings changed whole: union all select g.*, d.weeks_back from core.fct_pace_span_groups as g inner join days as d on cast(g.last_counted_date + 1 as date) = d.day cross join moved as m
-- incremental when meta.build_settings changed whole: where not (g.first_counted_date > m.lo - 7 * d.weeks_back and g.first_counted_date <= m.hi - 7 * d.weeks_back)
-- incremental when meta.build_settings changed whole: union all select g.*, d.weeks_back from core.fct_pace_span_groups as g inner join days as d on g.before_history_until = d.day cross join moved as m
-- incremental when meta.build_settings changed whole: where not (g.first_counted_date > m.lo - 7 * d.weeks_back and g.first_counted_date <= m.hi - 7 * d.weeks_back)
-- incremental when meta.build_settings changed whole: and not (g.last_counted_date + 1 > m.lo - 7 * d.weeks_back and g.last_counted_date + 1 <= m.hi - 7 * d.weeks_back)),
-- incremental when meta.build_settings changed whole: sides as (select w.*, cast(m.new_as_of - cast(7 * w.weeks_back as integer) as date) as new_day, cast(m.old_as_of - cast(7 * w.weeks_back as integer) as date) as old_day
-- incremental when meta.build_settings changed whole: from weeks as w cross join moved as m),
-- incremental when meta.build_settings changed whole: moves as (select new_day as as_of_date, night_date as stay_date, currency_code, is_from_history, nights, room_revenue,
-- incremental when meta.build_settings changed whole: cast(new_day between first_counted_date and last_counted_date as integer) - cast(old_day between first_counted_date and last_counted_date as integer) as counted,
-- incremental when meta.build_settings changed whole: cast(new_day between first_counted_date and last_counted_date and new_day < before_history_until as integer) - cast(old_day between first_counted_date and last_counted_date and old_day < before_history_until as integer) as before from sides)
-- incremental when meta.build_settings changed whole: select as_of_date, stay_date, currency_code,
-- incremental when meta.build_settings changed whole: cast(sum(case when is_from_history then counted * nights else 0 end) as bigint) as nights_from_history,
-- incremental when meta.build_settings changed whole: cast(sum(case when is_from_history then counted * room_revenue else 0 end) as decimal(38, 2)) as room_revenue_from_history,
-- incremental when meta.build_settings changed whole: cast(sum(case when not is_from_history then counted * nights else 0 end) as bigint) as nights_by_current_status,
-- incremental when meta.build_settings changed whole: cast(sum(case when not is_from_history then counted * room_revenue else 0 end) as decimal(38, 2)) as room_revenue_by_current_status,
-- incremental when meta.build_settings changed whole: cast(sum(coalesce(before, 0) * nights) as bigint) as nights_before_history,
-- incremental when meta.build_settings changed whole: cast(sum(coalesce(before, 0) * room_revenue) as decimal(38, 2)) as room_revenue_before_history
-- incremental when meta.build_settings changed whole: from moves group by all
-- Nights and room revenue on the books per weekly as-of snapshot x stay date x currency, the
-- cells marts.booking_pace reads: the build's as_of and the 105 weeks before it (53 reported,
-- plus the ones pickup and same time last year look back to), stay dates from the snapshot to
-- 372 days after it. Each night of core.fct_pace_night_spans counts in the snapshots within its
-- as-of span: by its history (a version in force then) or by today's status, and today's status
-- also before the reservation's history starts. Every measure is a sum over those nights, so a
-- refresh adds the changed reservations' new nights and subtracts their old ones; a cell whose
-- nights all went is removed (a whole build has no cell without nights). It reads the nights
-- through core.fct_pace_span_groups (the nights counted over the same as-of dates summed,
-- free of the as-of date). A snapshot's cells are a function of its own date, so a new business
-- date moving N days moves the stored snapshots N days with it (`as_of_date` + N) and adds what
-- the move changes at each: the query above takes the groups with a bound (first or last
-- counted date, or the end of the history's "before") between a snapshot's old and new date
-- (a quarter of them a day on, each at one week) and sums, per week, their nights counted at
-- the new date less those counted at the old, rather than spreading every group over its
-- weeks again. `days` lists the dates a move reaches, each with its week (106 a day on), and
-- each bound finds its groups by an equal join on them (rather than a test of every group's
-- three bounds and a list of weeks per group: 0.26 -> 0.19 CPU s a day on at large, session
-- 24); a group listed by an earlier bound at the same week is left out of a later one's.

with settings as (
    select * from meta.build_settings
),

groups as (
    select * from core.fct_pace_span_groups
),

-- the snapshots each group's nights count in, as weeks back (as-of date = as_of - 7 x
-- weeks_back, 0 to 105): from first_counted_date to last_counted_date; today's status judges
-- the weeks from first_week_before_history on (the as-of dates before before_history_until)
bounds as (
    select
        groups.night_date,
        groups.currency_code,
        groups.is_from_history,
        groups.nights,
        groups.room_revenue,
        greatest(0, cast(ceil(
            (settings.as_of - groups.last_counted_date) / 7
        ) as bigint)) as first_week,
        least(105, cast(floor(
            (settings.as_of - groups.first_counted_date) / 7
        ) as bigint)) as last_week,
        case
            when groups.is_from_history then 106
            else least(106, greatest(0,
                cast(floor((settings.as_of - groups.before_history_until) / 7) as bigint) + 1))
        end as first_week_before_history,
    from groups
    cross join settings
),

-- nights that count in the same weeks, summed before they are spread over them (a range join
-- of every night with every snapshot costs about six times the CPU)
grouped as (
    select
        night_date,
        currency_code,
        is_from_history,
        first_week,
        last_week,
        first_week_before_history,
        sum(nights) as nights,
        sum(room_revenue) as room_revenue,
    from bounds
    where first_week <= last_week
    group by all
),

weeks as (
    select
        *,
        unnest(range(first_week, last_week + 1)) as weeks_back,
    from grouped
),

counted as (
    select
        cast(settings.as_of - cast(7 * weeks.weeks_back as integer) as date) as as_of_date,
        weeks.night_date as stay_date,
        weeks.currency_code,
        weeks.nights,
        weeks.room_revenue,
        weeks.is_from_history,
        weeks.weeks_back >= weeks.first_week_before_history as is_before_history,
    from weeks
    cross join settings
),

final as (
    select
        as_of_date,
        stay_date,
        currency_code,
        cast(coalesce(sum(nights) filter (where is_from_history), 0) as bigint)
            as nights_from_history,
        cast(coalesce(sum(room_revenue) filter (where is_from_history), 0) as decimal(38, 2))
            as room_revenue_from_history,
        cast(coalesce(sum(nights) filter (where not is_from_history), 0) as bigint)
            as nights_by_current_status,
        cast(coalesce(sum(room_revenue) filter (where not is_from_history), 0)
            as decimal(38, 2)) as room_revenue_by_current_status,
        cast(coalesce(sum(nights) filter (where is_before_history), 0) as bigint)
            as nights_before_history,
        cast(coalesce(sum(room_revenue) filter (where is_before_history), 0) as decimal(38, 2))
            as room_revenue_before_history,
    from counted
    group by all
)

select * from final
