-- Distribution channels; the channel's currency is the currency of its reservations' money.

with channels as (
    select * from staging.stg_distribution_channels
),

final as (
    select
        distribution_channel_id,
        distribution_channel_code,
        distribution_channel_name,
        channel_type,
        parent_id as parent_distribution_channel_id,
        currency_code,
        commission_percentage,
        active_start_date,
        active_end_date,
        archived_from,
    from channels
)

select * from final
