-- Owner contracts with their owner's country and language: the revenue share as whole basis
-- points (hundredths of a percent), so the owner share is computed in exact integers.

with contracts as (
    select * from staging.stg_owner_contracts
),

owners as (
    select * from staging.stg_owners
),

final as (
    select
        contracts.contract_id,
        contracts.owner_id,
        owners.country_code as owner_country_code,
        owners.language as owner_language,
        contracts.unit_id,
        contracts.accommodation_type_id,
        contracts.contract_type,
        contracts.share_basis,
        contracts.revenue_share_percentage,
        cast(round(contracts.revenue_share_percentage * 100) as bigint) as share_basis_points,
        contracts.start_date,
        contracts.end_date,
    from contracts
    inner join owners
        on contracts.owner_id = owners.owner_id
)

select * from final
