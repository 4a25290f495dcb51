"""What the page's area sections must show, as table cells, queried straight from the marts here
(by the marts' own column names), independently of `pipelines.dashboard.areas`."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from tests.serve.conftest import Built
from tests.serve.expected import money, money_per, pct, ratio

COLUMN = {
    "park": "location_id",
    "accommodation_type": "accommodation_type_id",
    "channel": "distribution_channel_id",
    "currency": "currency_code",
}
Filters = dict[str, list[Any]]


def _where(filters: Filters, dims: tuple[str, ...], prefix: str = "") -> tuple[str, list[Any]]:
    conds, params = [], []
    for dim, values in filters.items():
        if dim in dims:
            conds.append(f"{prefix}{COLUMN[dim]} in ({', '.join('?' for _ in values)})")
            params += values
    return "".join(f" and {c}" for c in conds), params


def _n(v: Any) -> str:
    return f"{int(v):,}"


def _m(v: Any, currency: str) -> str:
    return "–" if v is None else money(v, currency)


def _names(built: Built) -> dict[str, dict[Any, str]]:
    return {
        "type": dict(
            built.rows(
                "select t.accommodation_type_id, l.location_name || ' · ' || "
                "t.accommodation_type_name from core.dim_accommodation_types t "
                "join core.dim_locations l using (location_id)"
            )
        ),
        "channel": dict(
            built.rows(
                "select distribution_channel_id, distribution_channel_name "
                "from core.dim_distribution_channels"
            )
        ),
    }


def supply(built: Built, lo: date, hi: date, filters: Filters) -> list[list[str]]:
    where, params = _where(filters, ("park", "accommodation_type"))
    rows = built.rows(
        "select date_trunc('month', date_day)::date, sum(nights_available), "
        "sum(out_of_order_nights), sum(owner_hold_nights), sum(allotment_held_nights), "
        "sum(sellable_nights), sum(nights_sold) from marts.occupancy_daily "
        f"where date_day between ? and ?{where} group by 1 order by 1",
        [lo, hi, *params],
    )
    return [
        [
            f"{m:%b %Y}",
            *(_n(v) for v in counts),
            _n(sold),
            pct(ratio(sold, counts[0])),
            pct(ratio(sold, counts[4])),
        ]
        for m, *counts, sold in rows
    ]


def orphans(built: Built, today: date, filters: Filters) -> list[list[str]]:
    where, params = _where(filters, ("park", "accommodation_type"))
    names = _names(built)["type"]
    rows = built.rows(
        "select accommodation_type_id, sum(unsold_nights), sum(orphan_nights) "
        f"from marts.orphan_nights where date_day between ? and ?{where} "
        "group by 1 having sum(unsold_nights) > 0 order by 1",
        [today, today + timedelta(179), *params],
    )
    return [[names[t], _n(u), _n(o), pct(ratio(o, u))] for t, u, o in rows]


def allotments(built: Built, lo: date, hi: date, filters: Filters) -> list[list[str]]:
    where, params = _where(filters, ("park", "accommodation_type", "channel"))
    names = _names(built)["channel"]
    rows = built.rows(
        "select distribution_channel_id, sum(held_nights), sum(picked_up_nights), "
        "sum(released_nights), sum(still_held_nights) from marts.allotment_pickup "
        "where as_of_date = (select max(as_of_date) from marts.allotment_pickup) "
        f"and stay_date between ? and ?{where} group by 1 having sum(held_nights) > 0 order by 1",
        [lo, hi, *params],
    )
    return [[names[c], _n(h), _n(p), _n(r), _n(s), pct(ratio(p, h))] for c, h, p, r, s in rows]


_OWNER_SUMS = (
    "sum(nights_rented), sum(owner_use_nights), sum(room_revenue_net), sum(owner_share), "
    "sum(journal_owner_share), sum(owner_share_difference)"
)


def _owner_cells(currency: str, sums: tuple[Any, ...]) -> list[str]:
    nights, use, *amounts = sums
    return [currency, _n(nights), _n(use), *(money(a, currency) for a in amounts)]


def owners_by_month(built: Built, lo: date, hi: date, filters: Filters) -> list[list[str]]:
    where, params = _where(filters, ("park", "accommodation_type", "currency"))
    rows = built.rows(
        f"select month_start, currency_code, {_OWNER_SUMS} from marts.owner_statement_monthly "
        f"where month_start between ? and ?{where} group by 1, 2 order by 1, 2",
        [lo, hi, *params],
    )
    return [[f"{m:%b %Y}", *_owner_cells(c, sums)] for m, c, *sums in rows]


def owners_by_unit(built: Built, lo: date, hi: date, filters: Filters) -> list[list[str]]:
    where, params = _where(filters, ("park", "accommodation_type", "currency"), "s.")
    rows = built.rows(
        "select s.owner_id, s.unit_id, any_value(coalesce(u.unit_name, u.unit_code)), "
        f"s.currency_code, {_OWNER_SUMS} from marts.owner_statement_monthly s "
        "left join core.dim_units u using (unit_id) "
        f"where s.month_start between ? and ?{where} group by 1, 2, 4 order by 1, 2, 4",
        [lo, hi, *params],
    )
    return [[f"Owner {o}", str(name), *_owner_cells(c, sums)] for o, _u, name, c, *sums in rows]


def ancillary(built: Built, lo: date, hi: date, filters: Filters) -> list[list[str]]:
    where, params = _where(filters, ("park", "currency"))
    rows = built.rows(
        "select addon_category_code, currency_code, sum(extra_revenue_gross), "
        "sum(extra_revenue_net), sum(stays_with_addon), sum(stays) "
        f"from marts.ancillary_revenue_monthly where month_start between ? and ?{where} "
        "group by 1, 2 having sum(stays) > 0 order by 1, 2",
        [lo, hi, *params],
    )
    return [
        [k, c, money(g, c), money(n, c), _n(a), _n(s), pct(ratio(a, s))]
        for k, c, g, n, a, s in rows
    ]


def channel_net(built: Built, lo: date, hi: date, filters: Filters) -> list[list[str]]:
    where, params = _where(filters, ("channel", "currency"))
    names = _names(built)["channel"]
    rows = built.rows(
        "select distribution_channel_id, currency_code, sum(nights_sold), sum(room_revenue_net), "
        "sum(commission_net), sum(net_room_revenue_net) "
        f"from marts.channel_net_revenue_monthly where month_start between ? and ?{where} "
        "group by 1, 2 having sum(nights_sold) <> 0 or sum(room_revenue_net) <> 0 order by 1, 2",
        [lo, hi, *params],
    )
    return [
        [
            names[ch],
            c,
            _n(nights),
            money(rev, c),
            money(comm, c),
            money(net, c),
            _m(money_per(rev, nights), c),
            _m(money_per(net, nights), c),
            pct(ratio(comm, rev) if rev else None),
        ]
        for ch, c, nights, rev, comm, net in rows
    ]


def repeat_share(built: Built, lo: date, hi: date) -> str:
    ((repeat, total),) = built.rows(
        "select sum(stays) filter (where bucket = 'repeat'), sum(stays) "
        "from marts.guest_mix_monthly where dimension = 'guest_type' "
        "and month_start between ? and ?",
        [lo, hi],
    )
    return f"Repeat guests: {pct(ratio(repeat or 0, total))} of {_n(total)} stays"


def guest_shares(built: Built, lo: date, hi: date, dimension: str) -> dict[str, Decimal]:
    rows = built.rows(
        "select bucket, sum(stays) from marts.guest_mix_monthly "
        "where dimension = ? and month_start between ? and ? group by 1",
        [dimension, lo, hi],
    )
    total = sum(n for _b, n in rows)
    return {str(b): Decimal(n) / Decimal(total) for b, n in rows}


def tables(
    built: Built, lo: date, hi: date, filters: Filters, today: date
) -> dict[str, list[list[list[str]]]]:
    """Every area section's tables (id -> tables -> rows -> cells), as the page lays them out."""
    return {
        "supply": [supply(built, lo, hi, filters)],
        "orphans": [orphans(built, today, filters)],
        "allotments": [allotments(built, lo, hi, filters)],
        "owners": [
            owners_by_month(built, lo, hi, filters),
            owners_by_unit(built, lo, hi, filters),
        ],
        "ancillary": [ancillary(built, lo, hi, filters)],
        "channel-net": [channel_net(built, lo, hi, filters)],
    }
