-- incremental by accommodation_type_id from core.fct_stay_nights: unnest(case when changed.is_stay_night and changed.is_guest_stay and exists (select 1 from staging.stg_allotments as a where a.distribution_channel_id = changed.distribution_channel_id and a.accommodation_type_id = changed.accommodation_type_id and changed.night_date >= a.start_date and changed.night_date < a.end_date) then [changed.accommodation_type_id] else [] end)
-- incremental by accommodation_type_id from staging.stg_allotments: accommodation_type_id
-- incremental by accommodation_type_id from core.dim_accommodation_types: unnest(case when (select count(*) <> 2 or count(distinct row(c.location_id)) <> 1 from changed_rows as c where c.accommodation_type_id = changed.accommodation_type_id) then [changed.accommodation_type_id] else [] end)
-- incremental narrows core.fct_stay_nights: accommodation_type_id in affected_keys
-- incremental narrows staging.stg_allotments: accommodation_type_id in affected_keys or (accommodation_type_id is null and exists (select 1 from affected_keys as a where a.k is null))
-- incremental narrows core.dim_accommodation_types: accommodation_type_id in affected_keys
-- Allotment pickup per as-of date x stay date x location x accommodation type x channel: the
-- units held for the channel (the allotments' quantity), how many its guests picked up (their
-- on-the-books stay nights booked by the as-of date, or by the release date once it passed; at
-- most the quantity), what was released unsold on the release date (stay date - release_days)
-- and what is still held. Snapshots: the build's as_of and the 12 weeks before it.
-- Maintained by accommodation type: a type's rows read its allotments and its stays alone, and an
-- hour's stays reach few types through a channel's allotment (by stay date they reached half the
-- dates). A changed stay night counts only where an allotment of its channel and type covers it
-- (old and new versions of a changed allotment key its type themselves); a moved calendar or
-- as-of date rebuilds it whole.

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

stay_nights as (
    select * from core.fct_stay_nights
),

snapshots as (
    select
        cast(settings.as_of - cast(7 * weeks.k as integer) as date) as as_of_date,
    from settings
    cross join range(0, 13) as weeks(k)
),

allotment_nights as (
    select
        allotments.allotment_id,
        allotments.distribution_channel_id,
        allotments.accommodation_type_id,
        dates.date_day as stay_date,
        cast(dates.date_day - cast(coalesce(allotments.release_days, 0) as integer) as date)
            as release_date,
        allotments.quantity,
    from allotments
    inner join dates
        on dates.date_day >= allotments.start_date
        and dates.date_day < allotments.end_date
    where dates.is_in_reporting_range
        and allotments.quantity > 0
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
    where is_stay_night
        and is_guest_stay
        and (is_on_the_books or is_cancelled)
),

grid as (
    select
        snapshots.as_of_date,
        allotment_nights.*,
        least(snapshots.as_of_date, allotment_nights.release_date) as counted_until,
    from snapshots
    cross join allotment_nights
),

picked as (
    select
        grid.as_of_date,
        grid.allotment_id,
        grid.stay_date,
        count(channel_stays.stay_date) as otb_nights,
    from grid
    left join channel_stays
        on grid.distribution_channel_id = channel_stays.distribution_channel_id
        and grid.accommodation_type_id = channel_stays.accommodation_type_id
        and grid.stay_date = channel_stays.stay_date
        and channel_stays.booking_date <= grid.counted_until
        and (channel_stays.is_on_the_books or channel_stays.cancelled_on > grid.counted_until)
    group by grid.as_of_date, grid.allotment_id, grid.stay_date
),

per_allotment as (
    select
        grid.as_of_date,
        grid.stay_date,
        grid.accommodation_type_id,
        grid.distribution_channel_id,
        grid.release_date,
        grid.quantity as held_nights,
        least(picked.otb_nights, grid.quantity) as picked_up_nights,
        case
            when grid.release_date <= grid.as_of_date
                then grid.quantity - least(picked.otb_nights, grid.quantity)
            else 0
        end as released_nights,
    from grid
    inner join picked
        on grid.as_of_date = picked.as_of_date
        and grid.allotment_id = picked.allotment_id
        and grid.stay_date = picked.stay_date
),

final as (
    select
        per_allotment.as_of_date,
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
