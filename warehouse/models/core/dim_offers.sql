-- Offers (the resources of SPECIAL bill lines: a discount on the rent) with their terms.

with offers as (
    select * from staging.stg_offers
),

final as (
    select
        offer_id,
        offer_code,
        offer_name,
        offer_type,
        discount_percentage,
        min_days_before_arrival,
        max_days_before_arrival,
        choosable_on_internet,
        valid_from,
        valid_to,
    from offers
)

select * from final
