-- Guest mix per arrival month: the on-the-books guest stays arriving in the month, split by one
-- dimension at a time (dimension, bucket): guest_type (first or repeat: the customer, merges
-- resolved, has a stay arriving earlier), country (the customer's countryCode; UNKNOWN when
-- none), party_size (persons booked), length_of_stay (nights), booking_window (days from the
-- booking date to arrival) and arrival_weekday. Each dimension's buckets add up to the month's
-- stays; share_of_stays is the bucket's share. Ids, country and language only: no PII.

-- The cells are summed by stay in core.fct_guest_mix_cells (maintained by adding the changed
-- customers' stays), so a refresh rebuilds this small mart whole from them.

with cells as (
    select * from core.fct_guest_mix_cells
),

final as (
    select
        month_start,
        dimension,
        bucket,
        cast(bucket_order as integer) as bucket_order,
        stays,
        cast(nights as bigint) as nights,
        cast(guests as bigint) as guests,
        safe_ratio(stays, sum(stays) over (partition by month_start, dimension))
            as share_of_stays,
    from cells
)

select * from final
