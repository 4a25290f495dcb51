-- Companies (legal entities); their currency is the bookkeeping currency of journals.

with companies as (
    select * from staging.stg_companies
),

final as (
    select
        company_id,
        company_code,
        company_name,
        admin_organisation_id,
        currency_code,
        country_code,
    from companies
)

select * from final
