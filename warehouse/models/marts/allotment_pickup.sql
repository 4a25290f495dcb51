-- materialized as a view
-- Allotment pickup per as-of date x stay date x location x accommodation type x channel: the
-- units held for the channel (the allotments' quantity), how many its guests picked up (their
-- on-the-books stay nights booked by the as-of date, or by the release date once it passed; at
-- most the quantity), what was released unsold on the release date (stay date - release_days)
-- and what is still held. Snapshots: the build's as_of and the 12 weeks before it.
-- A view of core.fct_allotment_pickup_weeks, which stores the same rows by weeks back from the
-- as-of date: this adds the snapshot's date (as_of - 7 x weeks_back), so a new as-of date
-- rewrites no stored row (the stored table recomputes only the nights the days between reach).

with settings as (
    select * from meta.build_settings
),

snapshots as (
    select * from core.fct_allotment_pickup_weeks
),

final as (
    select
        cast(settings.as_of - cast(7 * snapshots.weeks_back as integer) as date) as as_of_date,
        snapshots.stay_date,
        snapshots.location_id,
        snapshots.accommodation_type_id,
        snapshots.distribution_channel_id,
        snapshots.release_date,
        snapshots.held_nights,
        snapshots.picked_up_nights,
        snapshots.released_nights,
        snapshots.still_held_nights,
    from snapshots
    cross join settings
)

select * from final
