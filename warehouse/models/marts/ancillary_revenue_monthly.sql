-- incremental by month_start, location_id from core.fct_stay_nights: cast(date_trunc('month', night_date) as date), location_id
-- incremental by month_start, location_id from core.fct_bill_line_nights: select cast(date_trunc('month', c.night_date) as date), s.location_id from changed_rows as c inner join core.fct_stay_nights as s on s.reservation_id = c.reservation_id and s.night_date = c.night_date
-- incremental by month_start, location_id from core.fct_unit_nights: cast(date_trunc('month', night_date) as date), location_id
-- incremental by month_start, location_id from core.fct_bill_lines: select cast(date_trunc('month', s.night_date) as date), s.location_id from core.fct_stay_nights as s where s.reservation_id in (select c.reservation_id from changed_rows as c)
-- incremental by month_start, location_id from core.dim_dates: select c.month_start, l.location_id from changed_rows as c cross join (select location_id from core.fct_stay_nights union select location_id from core.fct_unit_nights union select location_id from marts.ancillary_revenue_monthly) as l
-- incremental narrows core.fct_stay_nights: (night_date, location_id) in (select d.date_day, k.location_id from core.dim_dates as d inner join affected_keys as k on d.month_start = k.month_start) or location_id is null
-- incremental narrows core.fct_bill_line_nights: night_date in (select d.date_day from core.dim_dates as d where d.month_start in (select month_start from affected_keys)) and reservation_id in (select s.reservation_id from core.fct_stay_nights as s where (s.night_date, s.location_id) in (select d.date_day, k.location_id from core.dim_dates as d inner join affected_keys as k on d.month_start = k.month_start) or s.location_id is null)
-- incremental narrows core.fct_unit_nights: (night_date, location_id) in (select d.date_day, k.location_id from core.dim_dates as d inner join affected_keys as k on d.month_start = k.month_start) or location_id is null
-- incremental narrows core.fct_bill_lines: reservation_id in (select s.reservation_id from core.fct_stay_nights as s where (s.night_date, s.location_id) in (select d.date_day, k.location_id from core.dim_dates as d inner join affected_keys as k on d.month_start = k.month_start) or s.location_id is null)
-- incremental narrows core.dim_dates: month_start in (select month_start from affected_keys)
-- Ancillary (extras) revenue per month x location x currency x add-on category: the extra bill
-- lines of on-the-books guest stays allocated to the month's nights (core.fct_bill_line_nights),
-- broken down by the add-on's category (UNCATEGORISED when the line's resource is not a known
-- add-on); the attach rate: the share of the stays in house in the month (a stay night there)
-- whose bills carry an extra line of the category; and the category's part of TRevPAR, its
-- revenue per available unit night of the location. A row for every category of the EXTRA
-- add-ons wherever stays were in house, so a category nobody bought shows 0.
--
-- Maintained by month x location: an hour's stays reach most months, but a tenth of the months x
-- locations; a line night or a bill line keys the months and locations of its reservation's
-- stay nights; its inputs are read by the keyed months' dates of the calendar.

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

unit_nights as (
    select * from core.fct_unit_nights
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
        month_start,
        location_id,
        currency_code,
        reservation_id,
    from sold_nights
    where is_stay_night
    group by all
),

stay_counts as (
    select
        month_start,
        location_id,
        currency_code,
        count(*) as stays,
    from stays
    group by all
),

categories as (
    select distinct addon_category_code from addons where addon_type = 'EXTRA'
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
        stays.month_start,
        stays.location_id,
        stays.currency_code,
        bought.addon_category_code,
        count(*) as stays_with_addon,
    from stays
    inner join bought
        on stays.reservation_id = bought.reservation_id
    group by all
),

extras as (
    select
        sold_nights.month_start,
        sold_nights.location_id,
        sold_nights.currency_code,
        coalesce(addons.addon_category_code, 'UNCATEGORISED') as addon_category_code,
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

supply as (
    select
        dates.month_start,
        unit_nights.location_id,
        count(*) filter (where unit_nights.is_available) as nights_available,
    from unit_nights
    inner join dates
        on unit_nights.night_date = dates.date_day
    group by all
),

keys as (
    select month_start, location_id, currency_code, addon_category_code
    from stay_counts
    cross join categories
    union
    select month_start, location_id, currency_code, addon_category_code
    from extras
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
        coalesce(attached.stays_with_addon, 0) as stays_with_addon,
        safe_ratio(coalesce(attached.stays_with_addon, 0), stay_counts.stays) as attach_rate,
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
    left join attached
        on keys.month_start = attached.month_start
        and keys.location_id = attached.location_id
        and keys.currency_code = attached.currency_code
        and keys.addon_category_code = attached.addon_category_code
    left join supply
        on keys.month_start = supply.month_start
        and keys.location_id = supply.location_id
)

select * from final
