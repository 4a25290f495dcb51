-- incremental by reservation_id from core.fct_stay_nights: reservation_id
-- incremental by reservation_id from core.fct_bill_line_nights: reservation_id
-- incremental by reservation_id from core.fct_bill_lines: reservation_id
-- incremental by reservation_id from core.dim_dates: select s.reservation_id from core.fct_stay_nights as s where s.night_date in (select c.date_day from changed_rows as c)
-- incremental narrows its inputs
-- What each on-the-books guest stay adds to marts.ancillary_revenue_monthly, per reservation x
-- month x location x currency x add-on category, summed by core.fct_ancillary_cells: a row with
-- no category (addon_category_code null) for each month x location x currency in which the
-- stay has a stay night (stays 1: the stay is in house there); beside it a row per category its
-- bills carry an extra line of (stays_with_addon 1); and a row per category of the extra lines
-- on its sold nights there (extra_line_nights, extra_cents, extra_net_cents). The sold nights
-- of the reporting range, as in the mart; a category is the add-on's, UNCATEGORISED when the
-- line's resource is not a known add-on (never null, so the null category marks the stay rows).
--
-- Per reservation, so maintained by reservation: an hour's stays re-derive their own rows
-- instead of every stay night and bill line of the months and locations they reach; a night
-- whose calendar row changed (the reporting range) keys the stays with a night on it.

with line_nights as (
    select * from core.fct_bill_line_nights
),

stay_nights as (
    select * from core.fct_stay_nights
),

bill_lines as (
    select * from core.fct_bill_lines
),

addons as (
    select * from core.dim_addons
),

dates as (
    select * from core.dim_dates
),

sold_nights as (
    select
        stay_nights.*,
        dates.month_start,
    from stay_nights
    inner join dates
        on stay_nights.night_date = dates.date_day
    where stay_nights.is_sold
        and dates.is_in_reporting_range
),

stays as (
    select
        reservation_id,
        month_start,
        location_id,
        currency_code,
    from sold_nights
    where is_stay_night
    group by all
),

-- which categories each reservation's bills carry (an extra line of non-zero total)
bought as (
    select distinct
        bill_lines.reservation_id,
        coalesce(addons.addon_category_code, 'UNCATEGORISED') as addon_category_code,
    from bill_lines
    left join addons
        on bill_lines.resource_id = addons.addon_id
    where bill_lines.revenue_class = 'extra'
        and bill_lines.total <> 0
),

attached as (
    select
        stays.reservation_id,
        stays.month_start,
        stays.location_id,
        stays.currency_code,
        bought.addon_category_code,
    from stays
    inner join bought
        on stays.reservation_id = bought.reservation_id
),

extras as (
    select
        line_nights.reservation_id,
        sold_nights.month_start,
        sold_nights.location_id,
        sold_nights.currency_code,
        coalesce(addons.addon_category_code, 'UNCATEGORISED') as addon_category_code,
        count(*) as extra_line_nights,
        sum(line_nights.cents) as extra_cents,
        sum(line_nights.net_cents) as extra_net_cents,
    from line_nights
    inner join sold_nights
        on line_nights.reservation_id = sold_nights.reservation_id
        and line_nights.night_date = sold_nights.night_date
    left join addons
        on line_nights.resource_id = addons.addon_id
    where line_nights.revenue_class = 'extra'
    group by all
),

final as (
    select
        reservation_id,
        month_start,
        location_id,
        currency_code,
        cast(null as varchar) as addon_category_code,
        cast(1 as bigint) as stays,
        cast(0 as bigint) as stays_with_addon,
        cast(0 as bigint) as extra_line_nights,
        cast(0 as hugeint) as extra_cents,
        cast(0 as hugeint) as extra_net_cents,
    from stays
    union all
    select
        reservation_id,
        month_start,
        location_id,
        currency_code,
        addon_category_code,
        0,
        1,
        0,
        0,
        0,
    from attached
    union all
    select
        reservation_id,
        month_start,
        location_id,
        currency_code,
        addon_category_code,
        0,
        0,
        extra_line_nights,
        coalesce(extra_cents, 0),
        coalesce(extra_net_cents, 0),
    from extras
)

select * from final
