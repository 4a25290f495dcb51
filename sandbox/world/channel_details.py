"""Distribution-channel details: commission and cancellation add-ons, and their changes.

`GET /distributionchannels/details` (real-service-notes 8.3) returns a channel with the sections
asked in `returnSections`; the sandbox models COMMISSION_ADDONS (`commissionAddons`: the
commission the channel earns, a percentage of the agent bill's total plus 21 % VAT on it, the
rule the bills' COMMISSION 100 / COMMISSION_VAT 110 lines follow) and CANCELLATION_ADDONS
(`cancellationAddons`: the cancellation insurance the channel sells, a percentage of the stay).
RATETYPES and IMAGES are accepted and add nothing. The section field names are our choice: the
notes name only the section enums.

The commission rules never change (the bills would have to follow); the cancellation insurance
is repriced now and then under `advance` (a new add-on from the next day, the old one ended),
each change a DISTRIBUTIONCHANNEL_EVENT. The draws come from a stream of their own, so the rest
of the world is byte-identical to a world without channel details.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np

from .clock import dstr, ms
from .reference import CHANNELS

CHANNEL_SEED = 0xDC1  # the channel details' own random stream: (seed, CHANNEL_SEED)
COMMISSION_VAT_RATE = 21.0  # billing.VAT_COMMISSION
CANCELLATION_ADDON_RESOURCE_ID = 900010
CANCELLATION_PERCENTAGES = (3.5, 4.0, 4.5, 5.0, 5.5, 6.0)
CHANNEL_CHANGES_PER_DAY = 0.15  # per world
CHANNEL_SECTIONS = ("COMMISSION_ADDONS", "CANCELLATION_ADDONS", "RATETYPES", "IMAGES")
SECTION_FIELDS = {
    "COMMISSION_ADDONS": "commissionAddons",
    "CANCELLATION_ADDONS": "cancellationAddons",
}


class ChannelDetailsMixin:
    """The details sections of every distribution channel (see the module docstring)."""

    def _build_channel_details(self, far_past: int) -> None:
        self._channel_rng = np.random.default_rng([self.seed, CHANNEL_SEED])
        self._channel_addon_seq = 0
        self._channel_sections: dict[int, dict[str, list[dict[str, Any]]]] = {}
        for cid, (code, _name, _kind, _cur, pct, _rt) in enumerate(CHANNELS, start=1):
            commission = []
            if pct:
                commission.append(
                    {
                        "commissionAddonId": cid,
                        "distributionChannelId": cid,
                        "name": f"Commission {code}",
                        "percentage": float(pct),
                        "calculationBase": "BILL_TOTAL",
                        "vatRate": COMMISSION_VAT_RATE,
                        "validFrom": dstr(far_past),
                        "validTo": None,
                    }
                )
            self._channel_sections[cid] = {"commissionAddons": commission, "cancellationAddons": []}
            self._add_cancellation_addon(
                cid, far_past, float(self._channel_rng.choice(CANCELLATION_PERCENTAGES))
            )

    def _add_cancellation_addon(self, cid: int, start: int, pct: float) -> None:
        self._channel_addon_seq += 1
        self._channel_sections[cid]["cancellationAddons"].append(
            {
                "cancellationAddonId": self._channel_addon_seq,
                "distributionChannelId": cid,
                "resourceId": CANCELLATION_ADDON_RESOURCE_ID,
                "name": "Cancellation insurance",
                "percentage": pct,
                "validFrom": dstr(start),
                "validTo": None,
            }
        )

    def channel_details(self, channel_id: int, sections: set[str] | None = None) -> Any:
        """A channel's record plus the asked sections (all modelled ones when None)."""
        with self.lock:
            rec = self.t["distributionchannels"].get(channel_id)
            if rec is None:
                return None
            out = dict(rec)
            for section, field in SECTION_FIELDS.items():
                if sections is None or section in sections:
                    out[field] = [dict(a) for a in self._channel_sections[channel_id][field]]
            return out

    def _draw_channel_changes(self, start: datetime, end: datetime) -> list[tuple[datetime, str]]:
        span = (end - start).total_seconds()
        if span <= 0:
            return []
        rng = self._channel_rng
        n = int(rng.poisson(CHANNEL_CHANGES_PER_DAY * span / 86400))
        return sorted(
            (ms(start + timedelta(seconds=float(rng.uniform(0, span)))), "channel")
            for _ in range(n)
        )

    def _channel_change(self, t: datetime) -> None:
        """Reprice one channel's cancellation insurance from the next day."""
        rng = self._channel_rng
        cid = int(rng.integers(1, len(CHANNELS) + 1))
        addons = self._channel_sections[cid]["cancellationAddons"]
        first = t.toordinal() + 1
        pct = float(rng.choice(CANCELLATION_PERCENTAGES))
        current = [a for a in addons if a["validTo"] is None]
        if current and current[-1]["validFrom"] == dstr(first):  # repriced again the same day
            current[-1]["percentage"] = pct
        else:
            for a in current:
                a["validTo"] = dstr(first - 1)
            self._add_cancellation_addon(cid, first, pct)
        self._event("DISTRIBUTIONCHANNEL_EVENT", cid, "UPDATE", t)
