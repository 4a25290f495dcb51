-- incremental by reservation_id
-- incremental changes every affected key
-- Every observed version of every reservation, from all lake batches (not just the current
-- one): consecutive observations that change nothing tracked are collapsed. valid_from is the
-- service's modifiedDate (extraction time for tombstones), valid_to the next version's
-- valid_from; is_current marks the version that staging keeps.

with observations as (
    select * from lake.reservations
),

current_reservations as (
    select * from staging.stg_reservations
),

distinct_observations as (
    select distinct
        reservation_id,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        coalesce(_is_deleted, false) as is_deleted,
        status as status_code,
        type as reservation_type,
        category_code,
        arrival_date,
        departure_date,
        distribution_channel_id,
        location_id,
        customer_id,
        reservation_date as reserved_at,
        modified_date as modified_at,
        cancel_date as cancelled_at,
    from observations
),

compared as (
    select
        *,
        struct_pack(
            is_deleted, status_code, reservation_type, category_code, arrival_date,
            departure_date, distribution_channel_id, location_id, customer_id, modified_at,
            cancelled_at
        ) as tracked,
        lag(
            struct_pack(
                is_deleted, status_code, reservation_type, category_code, arrival_date,
                departure_date, distribution_channel_id, location_id, customer_id, modified_at,
                cancelled_at
            )
        ) over (partition by reservation_id order by batch_id, extracted_at) as previous_tracked,
    from distinct_observations
),

versions as (
    select
        * exclude (tracked, previous_tracked),
        case when is_deleted then extracted_at else coalesce(modified_at, extracted_at) end
            as valid_from,
    from compared
    where previous_tracked is null or tracked is distinct from previous_tracked
),

numbered as (
    select
        versions.reservation_id,
        row_number() over (
            partition by versions.reservation_id
            order by versions.batch_id, versions.extracted_at
        ) as version_number,
        versions.valid_from,
        lead(versions.valid_from) over (
            partition by versions.reservation_id
            order by versions.batch_id, versions.extracted_at
        ) as valid_to,
        versions.is_deleted,
        versions.status_code,
        status_name(versions.status_code) as status_name,
        not versions.is_deleted and is_on_the_books(versions.status_code) as is_on_the_books,
        is_guest_stay(versions.reservation_type, versions.category_code) as is_guest_stay,
        versions.reservation_type,
        versions.category_code,
        versions.arrival_date,
        versions.departure_date,
        versions.departure_date - versions.arrival_date as nights,
        versions.distribution_channel_id,
        versions.location_id,
        versions.customer_id,
        versions.reserved_at,
        versions.modified_at,
        versions.cancelled_at,
        versions.batch_id,
        versions.batch_kind,
        versions.extracted_at as observed_at,
    from versions
),

-- when a version takes effect for pace (marts.booking_pace): at its modifiedDate, never before
-- the cancellation it records; it holds until the next version takes effect
effective as (
    select
        *,
        greatest(valid_from, case when status_code in (-12, -13) then cancelled_at end)
            as effective_from,
    from numbered
),

final as (
    select
        effective.*,
        lead(effective.effective_from) over (
            partition by effective.reservation_id order by effective.version_number
        ) as effective_to,
        effective.valid_to is null
        and not effective.is_deleted
        and current_reservations.reservation_id is not null as is_current,
    from effective
    left join current_reservations
        on effective.reservation_id = current_reservations.reservation_id
)

select * from final
