"""Reservations: creation, the state machine, unit holds, stay changes and the scripted API."""

from __future__ import annotations

from datetime import date
from typing import Any

import numpy as np

from sandbox.protocol import WorldError
from sandbox.world.booking import BookingMixin
from sandbox.world.lifecycle import LifecycleMixin
from sandbox.world.reservation_state import (
    Res,
)
from sandbox.world.scripted import ScriptedMixin

from .clock import dstr, dtstr, parse_date


class ReservationsMixin(BookingMixin, LifecycleMixin, ScriptedMixin):
    """All reservation changes go through `_move` (state table) and `_hold`/`_release` (units)."""

    # the scripted API -------------------------------------------------------------------------
    def _get_res(self, reservation_id: int) -> Res:
        r = self._res(int(reservation_id))
        if r is None:
            raise WorldError(f"reservation {reservation_id} not found")
        return r

    def pay(
        self, reservation_id: int, amount: float | None = None, payer_type: str | None = None
    ) -> dict[str, Any]:
        """Register a payment (amount in currency units; None = all outstanding)."""
        with self.lock:
            t = self.now
            r = self._get_res(reservation_id)
            if r.status not in ("PROVISIONAL", "DEFINITIVE", "CHECKED_IN"):
                raise WorldError(f"no payments on a {r.status} reservation")
            payers = [payer_type] if payer_type else list(r.bills)
            if payer_type and payer_type not in r.bills:
                raise WorldError(f"reservation {r.rid} has no {payer_type} bill")
            paid = 0
            for p in payers:
                paid += self._pay(r, p, None if amount is None else round(float(amount) * 100), t)
            if paid and r.status == "PROVISIONAL":
                self._move(r, "DEFINITIVE", t)
            return r.rec

    def change_stay(self, reservation_id: int, departure_date: date | str) -> dict[str, Any]:
        """Extend a stay to a later departure (adds bill lines, never reprices booked nights)."""
        with self.lock:
            r = self._get_res(reservation_id)
            dep = parse_date(departure_date).toordinal()
            if dep <= r.dep:
                raise WorldError("only extensions are supported: departure must move later")
            if not self._extend(r, dep - r.dep, self.now):
                raise WorldError("the unit is not available for the extension")
            return r.rec

    def status_history(self, reservation_id: int) -> list[tuple[str, str]]:
        """[(time, status name)] of one reservation, for tests and debugging."""
        with self.lock:
            frozen = self._frozen_history(int(reservation_id))
            if frozen is not None:
                return frozen
            r = self._get_res(reservation_id)
            return [(dtstr(t), s) for t, s in r.hist]

    def unit_by_id(self, unit_id: int) -> int | None:
        u = unit_id - 1
        return u if 0 <= u < len(self.unit_ids) else None

    # availability ------------------------------------------------------------------------------
    def availability(
        self,
        *,
        arrival_from: date,
        arrival_to: date,
        resource_ids: Any = None,
        location_id: int | None = None,
        durations: Any = None,
        rate_type_id: int | None = None,
        distribution_channel_code: str | None = None,
    ) -> list[dict[str, Any]]:
        """Availability records computed from units, holds and rates at call time."""
        with self.lock:
            a0 = parse_date(arrival_from).toordinal()
            a1 = parse_date(arrival_to).toordinal()
            if a1 < a0:
                raise WorldError("arrivalDateTo is before arrivalDateFrom")
            if a1 - a0 + 1 > 31:
                raise WorldError("at most 31 arrival dates per request")
            durs = sorted({int(d) for d in durations}) if durations else [2, 3, 4, 7]
            if any(d < 1 or d > 60 for d in durs):
                raise WorldError("duration must be between 1 and 60")
            rts = list(self.rate_types)
            if distribution_channel_code is not None:
                ch = self.channels.get(distribution_channel_code)
                if ch is None:
                    raise WorldError("unknown distributionChannelCode")
                rts = [ch.rate_type_id]
            if rate_type_id is not None:
                rts = [x for x in rts if x == int(rate_type_id)]
            types = self.types
            if resource_ids:
                wanted = {int(x) for x in resource_ids}
                types = [ti for ti in types if ti.resource_id in wanted]
            if location_id is not None:
                types = [ti for ti in types if ti.location_id == int(location_id)]
            out: list[dict[str, Any]] = []
            maxd = max(durs)
            n_arr = a1 - a0 + 1
            span = n_arr + maxd
            lo = a0 - self.ord0
            booked = self.now.toordinal()
            # every (type, rate type)'s stay prices in one pass: [pair, arrival, duration]
            pairs = [(ti.idx, rt) for ti in types for rt in rts]
            totals = (
                self.stay_totals_of(pairs, a0, n_arr, durs, booked)
                .reshape(len(types), len(rts), n_arr, len(durs))
                .transpose(0, 2, 3, 1)  # [type, arrival, duration, rate type]
                .tolist()
                if pairs
                else []
            )
            rt_cur = [(rt, self.rate_types[rt][1]) for rt in rts]
            dates = [dstr(a0 + k) for k in range(span)]
            unit_ids = np.asarray(self.unit_ids, dtype=np.int64)
            first = np.arange(n_arr)[:, None]  # [arrival, 1]
            last = first + np.asarray(durs, dtype=np.int64)[None, :]  # [arrival, duration]
            arrival = a0 + first
            for t, ti in enumerate(types):
                units = self.units_of_type[ti.idx]
                busy = np.ones((len(units), span), dtype=np.int64)
                s0, s1 = max(lo, 0), min(lo + span, self.ord_end - self.ord0)
                if s1 > s0 and len(units):
                    busy[:, s0 - lo : s1 - lo] = self.occ[units, s0:s1] != 0
                cs = np.concatenate([np.zeros((len(units), 1), np.int64), busy.cumsum(axis=1)], 1)
                setup = self.unit_setup[units][:, None, None]
                arch = self.unit_arch[units][:, None, None]
                # [arrival, duration, unit]: no night busy, set up by arrival, kept to departure
                free = (
                    (cs[:, last] - cs[:, first] == 0) & (setup <= arrival) & (arch >= a0 + last)
                ).transpose(1, 2, 0)
                _, _, u = np.nonzero(free)
                ids_flat = unit_ids[units[u]].tolist()
                ends = np.cumsum(free.sum(axis=2).ravel()).tolist()
                tot = totals[t] if rts else [[[]] * len(durs)] * n_arr
                for i in range(n_arr):
                    for j, d in enumerate(durs):
                        k = i * len(durs) + j
                        ids = ids_flat[ends[k - 1] if k else 0 : ends[k]]
                        prices = [
                            {"rateTypeId": rt, "currencyCode": cur, "price": v / 100}
                            for (rt, cur), v in zip(rt_cur, tot[i][j], strict=True)
                            if v >= 0
                        ]
                        out.append(
                            {
                                "resourceId": ti.resource_id,
                                "accommodationKindId": ti.kind_id,
                                "locationId": ti.location_id,
                                "locationCode": ti.location_code,
                                "arrivalDate": dates[i],
                                "departureDate": dates[i + d],
                                "duration": d,
                                "availableUnits": len(ids) if prices else 0,
                                "units": ids if prices else [],
                                "maxCapacity": ti.persons,
                                "petCapacity": 2 if ti.pets and ids and prices else 0,
                                "prices": prices,
                            }
                        )
            return out
