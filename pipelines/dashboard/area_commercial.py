"""The commercial area sections of the page: owner statements, ancillary revenue, channel net
revenue and guest mix (charts and tables, from `areas.AreaData`). Money stays per currency and
exact in the tables; ratios are recomputed from the summed counts and money."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pipelines.dashboard import area_figures as figures
from pipelines.dashboard.area_supply import Charts, Section, applies
from pipelines.dashboard.areas import AreaData
from pipelines.dashboard.formatting import _e, _money, _month, _num, _pct
from pipelines.dashboard.tables import table
from pipelines.dashboard.views import Filters, Options


def money_per(amount: Any, n: Any) -> Decimal | None:
    """Money / count to the cent, half away from zero (the marts' div_money)."""
    if not n or amount is None:
        return None
    return (Decimal(amount) / Decimal(n)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def share(part: Any, whole: Any) -> Decimal | None:
    return Decimal(part) / Decimal(whole) if whole else None


def owners(data: AreaData, filters: Filters, charts: Charts) -> Section:
    body = applies("owners", filters)
    body += charts(
        figures.owner_shares(data.owners_by_month), "Owner share by month against the journal"
    )
    heads = [
        "Month",
        "Cur.",
        "Nights rented",
        "Owner-use nights",
        "Room revenue",
        "Owner share",
        "In the journal",
        "Difference",
    ]
    rows = [
        [
            _month(m),
            c,
            _num(nights),
            _num(use),
            _money(revenue, c),
            _money(owner, c),
            _money(journal, c),
            _money(diff, c),
        ]
        for m, c, nights, use, revenue, owner, journal, diff in data.owners_by_month
    ]
    body += table(heads, rows, caption="All owners, by month, excl. VAT", wide=True)
    units = [
        [
            f"Owner {owner_id}",
            str(unit),
            c,
            _num(nights),
            _num(use),
            _money(revenue, c),
            _money(owner, c),
            _money(journal, c),
            _money(diff, c),
        ]
        for owner_id, _uid, unit, c, nights, use, revenue, owner, journal, diff in (
            data.owners_by_unit
        )
    ]
    if units:
        body += (
            f'<details class="owners-units"><summary>Per owner and unit ({len(units)} '
            "statements over the range)</summary>"
            + table(["Owner", "Unit", *heads[1:]], units, caption="Excl. VAT", wide=True)
            + "</details>"
        )
    return ("owners", "Owner statements", _OWNERS_INTRO, body)


def ancillary(data: AreaData, filters: Filters, charts: Charts) -> Section:
    body = applies("ancillary", filters)
    found = [r for r in data.ancillary if r[5]]
    body += charts(figures.ancillary(found), "Add-on revenue and attach rate by category")
    rows = [
        [
            str(category),
            c,
            _money(gross, c),
            _money(net, c),
            _num(attached),
            _num(stays),
            _pct(share(attached, stays)),
        ]
        for category, c, gross, net, attached, stays in found
    ]
    body += table(
        ["Category", "Cur.", "Incl. VAT", "Excl. VAT", "Stays with it", "Stays", "Attach rate"],
        rows,
        caption="Add-ons by category over the months of the range",
    )
    return ("ancillary", "Ancillary revenue", _ANCILLARY_INTRO, body)


def channel_net(data: AreaData, filters: Filters, options: Options, charts: Charts) -> Section:
    body = applies("channel_net", filters)
    found = [r for r in data.channel_net if r[2] or r[3]]
    body += charts(
        figures.channel_net(found, options.channels), "Net room revenue and commission by channel"
    )
    rows = [
        [
            options.channels.get(ch, str(ch)),
            c,
            _num(nights),
            _money(revenue, c),
            _money(commission, c),
            _money(net, c),
            _money(money_per(revenue, nights), c),
            _money(money_per(net, nights), c),
            _pct(share(commission, revenue)),
        ]
        for ch, c, nights, revenue, commission, net in found
    ]
    body += table(
        [
            "Channel",
            "Cur.",
            "Nights",
            "Room revenue",
            "Commission",
            "Net revenue",
            "ADR",
            "Net ADR",
            "Comm. share",
        ],
        rows,
        caption="Excl. VAT, over the months of the range",
        wide=True,
    )
    return ("channel-net", "Channel net revenue", _CHANNEL_NET_INTRO, body)


def guest_mix(data: AreaData, filters: Filters, charts: Charts) -> Section:
    body = applies("guest_mix", filters)
    rows = data.guest_mix
    stays = {d: sum(int(r[3]) for r in rows if r[0] == d) for d, _t in figures.GUEST_DIMENSIONS}
    repeat = next((r for r in rows if r[0] == "guest_type" and r[1] == "repeat"), None)
    body += (
        f'<p class="headline" data-metric="repeat_share">Repeat guests: '
        f"<strong>{_e(_pct(share(repeat[3] if repeat else 0, stays['guest_type'])))}</strong> "
        f"of {_e(_num(stays['guest_type']))} stays</p>"
    )
    grid = "".join(
        f'<div class="mix">{charts(figures.guest_mix(d, t, rows), f"Share of stays by {t}")}</div>'
        for d, t in figures.GUEST_DIMENSIONS
    )
    body += f'<div class="mix-grid">{grid}</div>'
    order = {d: i for i, (d, _t) in enumerate(figures.GUEST_DIMENSIONS)}
    table_rows = [
        [
            dict(figures.GUEST_DIMENSIONS).get(str(d), str(d)),
            str(bucket),
            _num(n),
            _num(nights),
            _num(guests),
            _pct(share(n, stays.get(d))),
        ]
        for d, bucket, _order, n, nights, guests in sorted(
            rows, key=lambda r: (order.get(str(r[0]), 99), r[2], str(r[1]))
        )
    ]
    body += (
        '<details class="mix-table"><summary>Every bucket</summary>'
        + table(["Split", "Bucket", "Stays", "Nights", "Guests", "Share"], table_rows)
        + "</details>"
    )
    return ("guests", "Guest mix", _GUESTS_INTRO, body)


_OWNERS_INTRO = (
    "Owner statements of the months whose first day lies in the range: nights rented, room "
    "revenue and the owner's share by the contract, owner-use nights, and the share booked in "
    "the owner journal (closed months reconcile to zero; open ones are not booked yet). The "
    "park, type and currency filters apply; statements have no channel."
)
_ANCILLARY_INTRO = (
    "Add-ons sold with the stays of the months in the range, by category; attach rate = stays "
    "with the add-on / stays. The park and currency filters apply (the mart has no type or "
    "channel)."
)
_CHANNEL_NET_INTRO = (
    "What each channel leaves after its commission, over the months in the range: net ADR = "
    "(room revenue - commission) / nights sold. The channel and currency filters apply (the "
    "mart has no park or type)."
)
_GUESTS_INTRO = (
    "Who stayed, by arrival month over the months in the range: first or repeat guests, "
    "country, party size, length of stay, booking window and arrival weekday, as shares of "
    "stays. The mart has no park, type, channel or currency split: those filters do not apply."
)
