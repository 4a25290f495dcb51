"""The data checks on the core facts: every unit night, bill and stay night the marts are built
from holds together (`warehouse.checks` gathers them into `CHECKS`).
"""

from __future__ import annotations

from warehouse.check_spec import CheckSpec

CORE_CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        name="no_stay_on_an_out_of_order_unit",
        model="core.fct_unit_nights",
        description="No on-the-books stay (guest or owner) holds a unit night that an "
        "operations task took out of order: the stay or the task is wrong, and sellable "
        "supply would count the night twice.",
        sql="""
            select unit_id, night_date, accommodation_type_id, is_sold, is_owner_hold
            from core.fct_unit_nights
            where is_available and is_out_of_order and (is_sold or is_owner_hold)
            order by unit_id, night_date
        """,
    ),
    CheckSpec(
        name="bill_items_equal_total",
        model="core.fct_bill_lines",
        description="Per reservation and payer, item lines sum to the TOTAL (70) line.",
        sql="""
            with per_bill as (
                select
                    reservation_id,
                    payer_type,
                    coalesce(sum(total) filter (where line_class = 'item'), 0) as item_total,
                    sum(total) filter (where bill_line_type = 70) as total_line,
                    count(*) filter (where line_class = 'item') as item_lines,
                from core.fct_bill_lines
                group by reservation_id, payer_type
            )
            select * from per_bill
            where (total_line is null and item_lines > 0)
                or item_total <> coalesce(total_line, 0)
            order by reservation_id, payer_type
        """,
    ),
    CheckSpec(
        name="bill_vat_matches_vat_line",
        model="core.fct_bill_lines",
        description="Per reservation and payer with a VAT (60) line, the VAT the warehouse "
        "allocates to the item lines (from their vatRate) adds up to that line, within the "
        "rounding of half a cent per item line (a missing or wrong vatRate shows here).",
        sql="""
            with per_bill as (
                select
                    reservation_id,
                    payer_type,
                    coalesce(sum(vat_cents) filter (where line_class = 'item'), 0)
                        as item_vat_cents,
                    sum(total_cents) filter (where bill_line_type = 60) as vat_line_cents,
                    count(*) filter (where line_class = 'item') as item_lines,
                from core.fct_bill_lines
                group by reservation_id, payer_type
            )
            select * from per_bill
            where vat_line_cents is not null
                and 2 * abs(item_vat_cents - vat_line_cents) > item_lines + 1
            order by reservation_id, payer_type
        """,
    ),
    CheckSpec(
        name="stay_nights_equal_stay_lengths",
        model="core.fct_stay_nights",
        description="Stay nights per reservation equal departure - arrival.",
        sql="""
            with counted as (
                select reservation_id, count(*) filter (where is_stay_night) as stay_nights
                from core.fct_stay_nights
                group by reservation_id
            )
            select
                coalesce(r.reservation_id, c.reservation_id) as reservation_id,
                greatest(r.nights, 0) as expected_nights,
                coalesce(c.stay_nights, 0) as stay_nights,
            from core.fct_reservations as r
            full outer join counted as c
                on r.reservation_id = c.reservation_id
            where coalesce(greatest(r.nights, 0), -1) <> coalesce(c.stay_nights, 0)
            order by reservation_id
        """,
    ),
    CheckSpec(
        name="stay_nights_have_dimensions",
        model="core.fct_stay_nights",
        description="No orphan keys: every stay night's date, location, accommodation "
        "type, unit and channel exists in its dimension.",
        sql="""
            with keys as (
                select reservation_id, night_date, 'night_date' as key_name,
                    cast(night_date as varchar) as key_value,
                    exists (select 1 from core.dim_dates d where d.date_day = s.night_date)
                        as found
                from core.fct_stay_nights s
                union all
                select reservation_id, night_date, 'location_id', cast(location_id as varchar),
                    location_id is not null and exists (
                        select 1 from core.dim_locations d where d.location_id = s.location_id)
                from core.fct_stay_nights s
                union all
                select reservation_id, night_date, 'accommodation_type_id',
                    cast(accommodation_type_id as varchar),
                    accommodation_type_id is not null and exists (
                        select 1 from core.dim_accommodation_types d
                        where d.accommodation_type_id = s.accommodation_type_id)
                from core.fct_stay_nights s
                union all
                select reservation_id, night_date, 'unit_id', cast(unit_id as varchar),
                    unit_id is null or exists (
                        select 1 from core.dim_units d where d.unit_id = s.unit_id)
                from core.fct_stay_nights s
                union all
                select reservation_id, night_date, 'distribution_channel_id',
                    cast(distribution_channel_id as varchar),
                    distribution_channel_id is not null and exists (
                        select 1 from core.dim_distribution_channels d
                        where d.distribution_channel_id = s.distribution_channel_id)
                from core.fct_stay_nights s
            )
            select reservation_id, night_date, key_name, key_value
            from keys
            where not found
            order by reservation_id, night_date, key_name
        """,
    ),
)
