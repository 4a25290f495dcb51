-- incremental by month_start, location_id from core.fct_ancillary_cells: month_start, location_id
-- incremental by month_start, location_id from core.fct_unit_night_months: month_start, location_id
-- incremental narrows its inputs
-- Ancillary (extras) revenue per month x location x currency x add-on category: the extra bill
-- lines of on-the-books guest stays allocated to the month's nights (core.fct_bill_line_nights),
-- broken down by the add-on's category (UNCATEGORISED when the line's resource is not a known
-- add-on); the attach rate: the share of the stays in house in the month (a stay night there)
-- whose bills carry an extra line of the category; and the category's part of TRevPAR, its
-- revenue per available unit night of the location. A row for every category of the EXTRA
-- add-ons wherever stays were in house, so a category nobody bought shows 0.
--
-- The sums of core.fct_ancillary_cells (what each stay adds, maintained by reservation) and of
-- core.fct_unit_night_months (the supply), maintained by month x location from their changed
-- rows: an hour's stays reach a tenth of the months x locations, whose few cells it reads.

with cells as (
    select * from core.fct_ancillary_cells
),

supply as (
    select * from core.fct_unit_night_months
),

addons as (
    select * from core.dim_addons
),

-- the stays in house per month x location x currency (the cells without a category)
stay_counts as (
    select
        month_start,
        location_id,
        currency_code,
        stays,
    from cells
    where addon_category_code is null
),

-- a category's cells (its stays with the add-on, its extra revenue)
extras as (
    select * from cells
    where addon_category_code is not null
),

categories as (
    select distinct addon_category_code from addons where addon_type = 'EXTRA'
),

keys as (
    select month_start, location_id, currency_code, addon_category_code
    from stay_counts
    cross join categories
    union
    select month_start, location_id, currency_code, addon_category_code
    from extras
    where extra_line_nights > 0
),

final as (
    select
        keys.month_start,
        keys.location_id,
        keys.currency_code,
        keys.addon_category_code,
        from_cents(coalesce(extras.extra_cents, 0)) as extra_revenue_gross,
        from_cents(coalesce(extras.extra_net_cents, 0)) as extra_revenue_net,
        coalesce(stay_counts.stays, 0) as stays,
        coalesce(extras.stays_with_addon, 0) as stays_with_addon,
        safe_ratio(coalesce(extras.stays_with_addon, 0), stay_counts.stays) as attach_rate,
        coalesce(supply.nights_available, 0) as nights_available,
        div_money(from_cents(coalesce(extras.extra_cents, 0)), supply.nights_available)
            as trevpar_part_gross,
        div_money(from_cents(coalesce(extras.extra_net_cents, 0)), supply.nights_available)
            as trevpar_part_net,
    from keys
    left join extras
        on keys.month_start = extras.month_start
        and keys.location_id = extras.location_id
        and keys.currency_code = extras.currency_code
        and keys.addon_category_code = extras.addon_category_code
    left join stay_counts
        on keys.month_start = stay_counts.month_start
        and keys.location_id = stay_counts.location_id
        and keys.currency_code = stay_counts.currency_code
    left join supply
        on keys.month_start = supply.month_start
        and keys.location_id = supply.location_id
)

select * from final
