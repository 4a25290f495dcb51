-- The commission rule of each distribution channel over time: the percentage of the agent
-- bill's total it earns and the VAT on it, valid from valid_from to valid_to (both included; a
-- null bound is open).

with commissions as (
    select * from staging.stg_distribution_channel_commissions
),

final as (
    select
        commission_addon_id,
        distribution_channel_id,
        commission_name,
        commission_percentage,
        calculation_base,
        commission_vat_rate,
        valid_from,
        valid_to,
    from commissions
)

select * from final
