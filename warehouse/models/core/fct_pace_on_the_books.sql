-- incremental sums over core.fct_pace_span_groups by as_of_date, stay_date, currency_code
-- incremental shifts as_of_date with the as-of date
-- incremental when meta.build_settings changed whole: with moved as (select n.as_of as new_as_of, b.as_of as old_as_of, least(n.as_of, b.as_of) as lo, greatest(n.as_of, b.as_of) as hi
-- incremental when meta.build_settings changed whole: from meta.build_settings as n cross join build_settings_before as b),
-- incremental when meta.build_settings changed whole: near as (select g.*, m.* from core.fct_pace_span_groups as g cross join moved as m
-- incremental when meta.build_settings changed whole: where (g.first_counted_date <= m.hi and g.first_counted_date > m.lo - 742 and (m.hi - m.lo >= 7 or (m.hi - g.first_counted_date) % 7 < m.hi - m.lo))
-- incremental when meta.build_settings changed whole: or (g.last_counted_date + 1 <= m.hi and g.last_counted_date + 1 > m.lo - 742 and (m.hi - m.lo >= 7 or (m.hi - (g.last_counted_date + 1)) % 7 < m.hi - m.lo))
-- incremental when meta.build_settings changed whole: or (g.before_history_until <= m.hi and g.before_history_until > m.lo - 742 and (m.hi - m.lo >= 7 or (m.hi - g.before_history_until) % 7 < m.hi - m.lo))),
-- incremental when meta.build_settings changed whole: bounded as (select *, case when lo < b1 then 0 else (lo - b1) // 7 + 1 end as s1, least(105, (hi - b1) // 7) as e1,
-- incremental when meta.build_settings changed whole: case when lo < b2 then 0 else (lo - b2) // 7 + 1 end as s2, least(105, (hi - b2) // 7) as e2,
-- incremental when meta.build_settings changed whole: case when lo < b3 then 0 else (lo - b3) // 7 + 1 end as s3, least(105, (hi - b3) // 7) as e3
-- incremental when meta.build_settings changed whole: from (select *, first_counted_date as b1, cast(last_counted_date + 1 as date) as b2, before_history_until as b3 from near)),
-- incremental when meta.build_settings changed whole: weeks as (select * exclude (b1, b2, b3, s1, e1, s2, e2, s3, e3) from (select *, unnest(range(s1, e1 + 1)) as weeks_back from bounded where b1 <= hi
-- incremental when meta.build_settings changed whole: union all select * from (select *, unnest(range(s2, e2 + 1)) as weeks_back from bounded where b2 <= hi) where not (b1 <= hi and weeks_back between s1 and e1)
-- incremental when meta.build_settings changed whole: union all select * from (select *, unnest(range(s3, e3 + 1)) as weeks_back from bounded where b3 <= hi)
-- incremental when meta.build_settings changed whole: where not (coalesce(b1 <= hi and weeks_back between s1 and e1, false) or coalesce(b2 <= hi and weeks_back between s2 and e2, false)))),
-- incremental when meta.build_settings changed whole: sides as (select *, cast(new_as_of - cast(7 * weeks_back as integer) as date) as new_day, cast(old_as_of - cast(7 * weeks_back as integer) as date) as old_day from weeks),
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
-- (a quarter of them a day on, each at one week: `near` keeps them, by one test per bound
-- rather than a list of the three; `weeks` lists those weeks, each bound's weeks but those an
-- earlier bound lists too, rather than a list of lists made distinct per group)
-- and sums, per week, their nights counted at the new date less those counted at the old,
-- rather than spreading every group over its weeks again.

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
