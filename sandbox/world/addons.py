"""Add-ons (extras and products) with their category and prices, and their changes (ADDON_EVENT).

`/add-ons` and `/add-ons/{resourceId}` serve the add-ons the bills already charge (`reference.
ADDONS`: bed linen, final cleaning, pets, the early-booking discount) and the cancellation
insurance the channels sell (`channel_details.py`), each with a category and a price per
currency. A bill charges the same amount in either currency, so the EUR and GBP prices are
equal. Prices never change (the bills would have to follow); `advance` now and then changes an
add-on's description or whether it is bookable online, each an ADDON_EVENT. The draws come from
a stream of their own, so the rest of the world is byte-identical to a world without add-ons.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np

from .channel_details import CANCELLATION_ADDON_RESOURCE_ID
from .clock import dstr, ms
from .reference import ADDONS

ADDON_SEED = 0xAD0  # the add-ons' own random stream: (seed, ADDON_SEED)
ADDON_CHANGES_PER_DAY = 0.2  # per world
# category: (addonCategoryId, code, name)
CATEGORIES = {
    "LINEN": (1, "LINEN", "Linen and towels"),
    "CLEANING": (2, "CLEANING", "Cleaning"),
    "PETS": (3, "PETS", "Pets"),
    "EARLYBIRD": (4, "DISCOUNT", "Discounts"),
    "INSURANCE": (5, "INSURANCE", "Insurance"),
}
CURRENCIES = ("EUR", "GBP")
DESCRIPTIONS = ("Book ahead", "Popular with families", "Ask at reception", "Limited stock")


class AddonsMixin:
    """The add-on catalogue (see the module docstring)."""

    def _build_addons(self, far_past: int) -> None:
        self._addon_rng = np.random.default_rng([self.seed, ADDON_SEED])
        tbl = self.t["addons"]
        items: list[tuple[str, int, str, int, float, str]] = [
            (code, rid, name, cents, vat, per)
            for code, (rid, name, cents, vat, per) in ADDONS.items()
        ]
        items.append(
            ("INSURANCE", CANCELLATION_ADDON_RESOURCE_ID, "Cancellation insurance", 0, 21.0, "STAY")
        )
        price_id = 0
        for code, rid, name, cents, vat, per in sorted(items, key=lambda i: i[1]):
            cat_id, cat_code, cat_name = CATEGORIES[code]
            prices = []
            for cur in CURRENCIES:
                price_id += 1
                prices.append(
                    {
                        "addonPriceId": price_id,
                        "resourceId": rid,
                        "currencyCode": cur,
                        "price": cents / 100,
                        "validFrom": dstr(far_past),
                        "validTo": None,
                    }
                )
            tbl.add(
                {
                    "resourceId": rid,
                    "code": code,
                    "name": name,
                    "type": "SPECIAL" if code == "EARLYBIRD" else "EXTRA",
                    "addonCategoryId": cat_id,
                    "categoryCode": cat_code,
                    "categoryName": cat_name,
                    "priceType": per,
                    "vatRate": vat,
                    "choosableOnInternet": True,
                    "description": name,
                    "archivedFrom": None,
                    "prices": prices,
                }
            )

    def _draw_addon_changes(self, start: datetime, end: datetime) -> list[tuple[datetime, str]]:
        span = (end - start).total_seconds()
        if span <= 0:
            return []
        rng = self._addon_rng
        n = int(rng.poisson(ADDON_CHANGES_PER_DAY * span / 86400))
        return sorted(
            (ms(start + timedelta(seconds=float(rng.uniform(0, span)))), "addon") for _ in range(n)
        )

    def _addon_change(self, t: datetime) -> None:
        rng = self._addon_rng
        records: list[dict[str, Any]] = list(self.t["addons"].records())
        rec = records[int(rng.integers(0, len(records)))]
        if rng.random() < 0.5:
            rec["choosableOnInternet"] = not rec["choosableOnInternet"]
        else:
            rec["description"] = f"{rec['name']}: {DESCRIPTIONS[int(rng.integers(0, 4))]}"
        self._event("ADDON_EVENT", rec["resourceId"], "UPDATE", t)
