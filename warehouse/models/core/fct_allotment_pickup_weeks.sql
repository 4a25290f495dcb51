-- incremental by stay_date, accommodation_type_id, weeks_back from core.fct_allotment_stay_nights: select n.night_date, n.accommodation_type_id, cast(w.k as integer) from (select v.night_date, v.accommodation_type_id, case when count(*) = 2 and min(v.b) = max(v.b) then (case when min(v.e) <> max(v.e) then min(v.e) end) else min(v.b) end as m from (select c.reservation_id, c.night_date, c.accommodation_type_id, c.distribution_channel_id, c.booking_date as b, case when c.is_on_the_books then date '9999-12-31' else c.cancelled_on end as e from changed_rows as c where c.booking_date < (case when c.is_on_the_books then date '9999-12-31' else c.cancelled_on end)) as v group by v.reservation_id, v.night_date, v.accommodation_type_id, v.distribution_channel_id) as n cross join range(0, 13) as w(k) cross join meta.build_settings as s where n.m <= s.as_of - cast(7 * w.k as integer)
-- incremental by stay_date, accommodation_type_id, weeks_back from staging.stg_allotments: select cast(unnest(generate_series(c.start_date, c.end_date - 1, interval 1 day)) as date), c.accommodation_type_id, cast(w.k as integer) from changed_rows as c cross join range(0, 13) as w(k)
-- incremental by stay_date, accommodation_type_id, weeks_back from core.dim_accommodation_types: select a.stay_date, a.accommodation_type_id, a.weeks_back from core.fct_allotment_pickup_weeks as a where a.accommodation_type_id in (select c.accommodation_type_id from changed_rows as c group by c.accommodation_type_id having count(*) <> 2 or count(distinct row(c.location_id)) <> 1) group by all
-- incremental when meta.build_settings changed whole: with days as (select cast(d.day - cast(7 * w.k as integer) as date) as day, cast(w.k as integer) as k from (select cast(unnest(generate_series(least(b.as_of, n.as_of) + 1, greatest(b.as_of, n.as_of), interval 1 day)) as date) as day from meta.build_settings as n cross join build_settings_before as b) as d cross join range(0, 13) as w(k)), released as (select cast(d.day + cast(coalesce(a.release_days, 0) as integer) as date) as stay_date, a.accommodation_type_id, d.k, a.start_date, a.end_date from staging.stg_allotments as a cross join days as d) select stay_date, accommodation_type_id, k from released where stay_date >= start_date and stay_date < end_date union select s.night_date, s.accommodation_type_id, d.k from core.fct_allotment_stay_nights as s inner join days as d on s.booking_date = d.day union select s.night_date, s.accommodation_type_id, d.k from core.fct_allotment_stay_nights as s inner join days as d on s.cancelled_on = d.day
-- incremental narrows core.fct_allotment_stay_nights: select s.* from core.fct_allotment_stay_nights as s semi join affected_keys as k on k.stay_date = s.night_date and k.accommodation_type_id = s.accommodation_type_id
-- incremental narrows staging.stg_allotments: select a.* replace (k.stay_date as start_date, cast(k.stay_date + 1 as date) as end_date) from staging.stg_allotments as a inner join (select distinct j.stay_date, j.accommodation_type_id from affected_keys as j) as k on a.accommodation_type_id is not distinct from k.accommodation_type_id and k.stay_date >= a.start_date and k.stay_date < a.end_date
-- incremental narrows core.dim_dates: date_day in (select stay_date from affected_keys)
-- incremental narrows core.dim_accommodation_types: accommodation_type_id in (select accommodation_type_id from affected_keys)
-- incremental narrows grid: exists (select 1 from affected_keys as k where k.stay_date = grid.stay_date and k.accommodation_type_id is not distinct from grid.accommodation_type_id and k.weeks_back = grid.weeks_back)
-- Allotment pickup by weeks back from the as-of date x stay date x location x accommodation
-- type x channel: the rows of marts.allotment_pickup (a view of these adding the snapshot's date,
-- as_of - 7 x weeks_back) stored without the date, so a new as-of date moves no stored row.
-- Snapshots: weeks_back 0 (the build's as_of) to 12, weekly. Maintained by stay date x
-- accommodation type x weeks back: a row reads the allotments and stays of its night and type
-- alone (an allotment is read as one night for each keyed night it holds, and the grid of
-- allotment nights x snapshots for the keyed weeks back of each night alone). Its stay nights are
-- core.fct_allotment_stay_nights, those an allotment of their channel and type covers; a stay
-- night counts in a snapshot only from its booking date on, so a changed one keys the weeks
-- back whose date is on or after the first date its old and new versions count differently
-- (booked or cancelled on the as-of date: the newest snapshot alone; a night gone or new: from
-- its booking date). Old and new versions of a changed allotment key their nights at every
-- snapshot; a type whose location changed keys all its rows; a moved calendar rebuilds it
-- whole. A snapshot is a function of its own date, not of the as-of date: when the date moves,
-- the row of weeks_back k changes only where the days between its old date and its new one
-- (old as_of - 7k, new as_of - 7k] reach it (a release date among them, or a covered stay
-- booked or cancelled on one of them): those nights are recomputed at that snapshot alone,
-- every other row stays as stored.

with settings as (
    select * from meta.build_settings
),

dates as (
    select * from core.dim_dates
),

allotments as (
    select * from staging.stg_allotments
),

accommodation_types as (
    select * from core.dim_accommodation_types
),

-- the guest stay nights on a night an allotment of their channel and type covers
stay_nights as (
    select * from core.fct_allotment_stay_nights
),

snapshots as (
    select
        cast(weeks.k as integer) as weeks_back,
        cast(settings.as_of - cast(7 * weeks.k as integer) as date) as as_of_date,
    from settings
    cross join range(0, 13) as weeks(k)
),

-- each allotment's nights listed, then matched to the calendar by date (an equal join: a join
-- on start_date <= date < end_date was a range join, ~0.04 CPU s of the refresh's new rows
-- across midnight at large, and ~0.6 of a whole build)
allotment_nights as (
    select
        allotments.allotment_id,
        allotments.distribution_channel_id,
        allotments.accommodation_type_id,
        dates.date_day as stay_date,
        cast(dates.date_day - cast(coalesce(allotments.release_days, 0) as integer) as date)
            as release_date,
        allotments.quantity,
    from (
        select
            *,
            cast(unnest(generate_series(start_date, end_date - 1, interval 1 day)) as date)
                as night_date,
        from allotments
        where quantity > 0
    ) as allotments
    inner join dates
        on dates.date_day = allotments.night_date
    where dates.is_in_reporting_range
),

channel_stays as (
    select
        distribution_channel_id,
        accommodation_type_id,
        night_date as stay_date,
        booking_date,
        cancelled_on,
        is_on_the_books,
    from stay_nights
),

grid as (
    select
        snapshots.weeks_back,
        snapshots.as_of_date,
        allotment_nights.*,
        least(snapshots.as_of_date, allotment_nights.release_date) as counted_until,
    from snapshots
    cross join allotment_nights
),

-- per allotment, night and snapshot (one grid row each): its nights on the books then
picked as (
    select
        grid.weeks_back,
        grid.as_of_date,
        grid.allotment_id,
        grid.stay_date,
        grid.accommodation_type_id,
        grid.distribution_channel_id,
        grid.release_date,
        grid.quantity,
        count(channel_stays.stay_date) as otb_nights,
    from grid
    left join channel_stays
        on grid.distribution_channel_id = channel_stays.distribution_channel_id
        and grid.accommodation_type_id = channel_stays.accommodation_type_id
        and grid.stay_date = channel_stays.stay_date
        and channel_stays.booking_date <= grid.counted_until
        and (channel_stays.is_on_the_books or channel_stays.cancelled_on > grid.counted_until)
    group by all
),

per_allotment as (
    select
        weeks_back,
        as_of_date,
        stay_date,
        accommodation_type_id,
        distribution_channel_id,
        release_date,
        quantity as held_nights,
        least(otb_nights, quantity) as picked_up_nights,
        case
            when release_date <= as_of_date
                then quantity - least(otb_nights, quantity)
            else 0
        end as released_nights,
    from picked
),

final as (
    select
        per_allotment.weeks_back,
        per_allotment.stay_date,
        accommodation_types.location_id,
        per_allotment.accommodation_type_id,
        per_allotment.distribution_channel_id,
        min(per_allotment.release_date) as release_date,
        cast(sum(per_allotment.held_nights) as bigint) as held_nights,
        cast(sum(per_allotment.picked_up_nights) as bigint) as picked_up_nights,
        cast(sum(per_allotment.released_nights) as bigint) as released_nights,
        cast(sum(
            per_allotment.held_nights
            - per_allotment.picked_up_nights
            - per_allotment.released_nights
        ) as bigint) as still_held_nights,
    from per_allotment
    left join accommodation_types
        on per_allotment.accommodation_type_id = accommodation_types.accommodation_type_id
    group by all
)

select * from final
