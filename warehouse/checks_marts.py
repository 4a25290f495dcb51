"""The data checks on the marts: occupancy never above one, one rentability rule per arrival,
revenue against the journals, owner statements, channel commissions, add-ons, offers and guest mix
(`warehouse.checks` gathers them into `CHECKS`).
"""

from __future__ import annotations

from decimal import Decimal

from warehouse.check_spec import CheckSpec

DEFAULT_ABS_TOLERANCE = Decimal("1.00")
DEFAULT_REL_TOLERANCE = Decimal("0.005")

MART_CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        name="occupancy_not_above_one",
        model="marts.occupancy_daily",
        description="Overbooking alarm: nights sold never exceed nights available.",
        sql="""
            select date_day, location_id, accommodation_type_id, nights_available,
                nights_sold, occupancy
            from marts.occupancy_daily
            where nights_sold > nights_available
            order by date_day, location_id, accommodation_type_id
        """,
    ),
    CheckSpec(
        name="one_rentability_rule_per_arrival",
        model="marts.orphan_nights",
        description="No two rentability configs of one resource and channel cover the same "
        "arrival date: orphan_nights could not tell which rule holds.",
        sql="""
            select
                a.resource_id,
                a.distribution_channel_id,
                a.rentability_config_id,
                b.rentability_config_id as overlapping_config_id,
                greatest(a.start_date, b.start_date) as from_arrival,
            from staging.stg_rentability_config as a
            inner join staging.stg_rentability_config as b
                on a.resource_id = b.resource_id
                and a.distribution_channel_id is not distinct from b.distribution_channel_id
                and a.rentability_config_id < b.rentability_config_id
                and a.start_date < b.end_date
                and b.start_date < a.end_date
            order by a.resource_id, a.rentability_config_id
        """,
    ),
    CheckSpec(
        name="revenue_reconciles_with_journals",
        model="marts.revenue_reconciliation",
        description="All-time bill-based and journal-based revenue per company and "
        "currency agree within max(abs_tolerance, rel_tolerance x bill revenue).",
        sql="""
            with totals as (
                select
                    company_id,
                    currency_code,
                    sum(bill_revenue) as bill_revenue,
                    sum(journal_revenue) as journal_revenue,
                    sum(difference) as difference,
                from marts.revenue_reconciliation
                group by company_id, currency_code
            )
            select * from totals
            where abs(difference) > greatest(
                cast($abs_tolerance as decimal(18, 2)),
                abs(bill_revenue) * cast($rel_tolerance as decimal(18, 6))
            )
            order by company_id, currency_code
        """,
        params={
            "abs_tolerance": DEFAULT_ABS_TOLERANCE,
            "rel_tolerance": DEFAULT_REL_TOLERANCE,
        },
    ),
    CheckSpec(
        name="owner_statement_reconciles",
        model="marts.owner_statement_monthly",
        description="Every month closed before the build's as-of month: the owner share "
        "the statement computes equals the share booked in the owner journals (ledger "
        "1610), and no share exceeds the net room revenue it is a part of.",
        sql="""
            select owner_id, unit_id, month_start, currency_code, room_revenue_net,
                owner_share, journal_owner_share, owner_share_difference
            from marts.owner_statement_monthly
            where (
                    owner_share_difference <> 0
                    and month_start < (
                        select date_trunc('month', max(as_of)) from meta.build_settings
                    )
                )
                or abs(owner_share) > abs(room_revenue_net)
            order by owner_id, unit_id, month_start, currency_code
        """,
    ),
    CheckSpec(
        name="channel_commission_has_a_rule",
        model="marts.channel_net_revenue_monthly",
        description="Commission on the bills only where the channel has a commission rule "
        "in force, never negative, never more than the room revenue it comes out of.",
        sql="""
            select month_start, distribution_channel_id, currency_code, nights_sold,
                room_revenue_net, commission_net, commission_percentage
            from marts.channel_net_revenue_monthly
            where (commission_net <> 0 and commission_percentage = 0)
                or commission_net < 0
                or commission_net > room_revenue_net
            order by month_start, distribution_channel_id, currency_code
        """,
    ),
    CheckSpec(
        name="ancillary_revenue_is_categorised",
        model="marts.ancillary_revenue_monthly",
        description="Every extra line's add-on is known (no UNCATEGORISED revenue: a new "
        "add-on the lake lacks), attach rates lie in [0, 1], and the categories add up "
        "to the extras revenue_daily reports for the location and month.",
        sql="""
            with ancillary as (
                select
                    month_start,
                    location_id,
                    currency_code,
                    sum(extra_revenue_gross) as extra_revenue_gross,
                    bool_or(addon_category_code = 'UNCATEGORISED'
                        and extra_revenue_gross <> 0) as has_uncategorised,
                    bool_or(attach_rate < 0 or attach_rate > 1) as bad_attach_rate,
                from marts.ancillary_revenue_monthly
                group by all
            ),
            daily as (
                select
                    cast(date_trunc('month', date_day) as date) as month_start,
                    location_id,
                    currency_code,
                    sum(total_revenue_gross - room_revenue_gross) as extra_revenue_gross,
                from marts.revenue_daily
                group by all
            )
            select ancillary.*, daily.extra_revenue_gross as revenue_daily_extras
            from ancillary
            left join daily
                on ancillary.month_start = daily.month_start
                and ancillary.location_id = daily.location_id
                and ancillary.currency_code = daily.currency_code
            where has_uncategorised
                or bad_attach_rate
                or ancillary.extra_revenue_gross
                    <> coalesce(daily.extra_revenue_gross, 0)
            order by ancillary.month_start, ancillary.location_id, ancillary.currency_code
        """,
    ),
    CheckSpec(
        name="offer_discounts_are_attributed",
        model="marts.offer_discount_monthly",
        description="Every discount goes to a known offer (no offer the lake lacks), no "
        "offer adds to the rent, and the offers' discounts add up to the SPECIAL lines "
        "allocated to the sold nights of the month and currency.",
        sql="""
            with offers as (
                select
                    month_start,
                    currency_code,
                    cast(sum(discount_amount) * 100 as bigint) as discount_cents,
                    bool_or(offer_code is null and discount_amount <> 0) as has_unknown,
                    bool_or(discount_amount < 0) as adds_to_rent,
                from marts.offer_discount_monthly
                group by all
            ),
            specials as (
                select
                    dates.month_start,
                    stay_nights.currency_code,
                    -sum(line_nights.cents) as discount_cents,
                from core.fct_bill_line_nights as line_nights
                inner join core.fct_bill_lines as bill_lines
                    on line_nights.bill_line_id = bill_lines.bill_line_id
                inner join core.fct_stay_nights as stay_nights
                    on line_nights.reservation_id = stay_nights.reservation_id
                    and line_nights.night_date = stay_nights.night_date
                inner join core.dim_dates as dates
                    on line_nights.night_date = dates.date_day
                where bill_lines.resource_type = 'SPECIAL'
                    and stay_nights.is_sold
                    and dates.is_in_reporting_range
                group by all
            )
            select offers.*, specials.discount_cents as special_lines_discount_cents
            from offers
            full join specials
                on offers.month_start = specials.month_start
                and offers.currency_code = specials.currency_code
            where coalesce(offers.has_unknown, false)
                or coalesce(offers.adds_to_rent, false)
                or coalesce(offers.discount_cents, 0) <> coalesce(specials.discount_cents, 0)
            order by 1, 2
        """,
    ),
    CheckSpec(
        name="guest_mix_dimensions_agree",
        model="marts.guest_mix_monthly",
        description="In every month each dimension splits the same stays, nights and guests "
        "(no stay lost or counted twice by a bucket rule or a missing customer).",
        sql="""
            with per_dimension as (
                select
                    month_start,
                    dimension,
                    sum(stays) as stays,
                    sum(nights) as nights,
                    sum(guests) as guests,
                from marts.guest_mix_monthly
                group by all
            )
            select
                month_start,
                count(distinct dimension) as dimensions,
                count(distinct stays) as stay_totals,
                count(distinct nights) as night_totals,
                count(distinct guests) as guest_totals,
            from per_dimension
            group by month_start
            having count(distinct dimension) <> 6
                or count(distinct stays) > 1
                or count(distinct nights) > 1
                or count(distinct guests) > 1
            order by month_start
        """,
    ),
)
