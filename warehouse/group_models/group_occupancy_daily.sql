-- Occupancy per night across the group: each tenant's (concern's) occupancy_daily summed over
-- its parks and accommodation types, then over the tenants that report the night. Counts add up
-- across concerns (a night is a night); the ratios are recomputed from the summed counts.

with occupancy as (
    select * from tenants.occupancy_daily
),

final as (
    select
        date_day,
        cast(count(distinct tenant) as bigint) as tenants,
        cast(sum(nights_available) as bigint) as nights_available,
        cast(sum(nights_sold) as bigint) as nights_sold,
        cast(sum(owner_hold_nights) as bigint) as owner_hold_nights,
        safe_ratio(sum(nights_sold), sum(nights_available)) as occupancy,
        safe_ratio(sum(nights_sold), sum(nights_available) - sum(owner_hold_nights))
            as available_occupancy,
    from occupancy
    group by date_day
)

select * from final
