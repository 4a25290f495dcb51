"""Customers (with PII the pipeline must not land unless asked) and customer merges."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sandbox.world.block import record_factory

from .clock import dtstr

_PERSON_FIELDS = (
    "countryCode",
    "language",
    "birthYear",
    "firstName",
    "lastName",
    "email",
    "phone",
)  # copied from a customer "like" another; the address is copied as a new dict

CUSTOMER_FIELDS = (
    "customerId",
    "countryCode",
    "language",
    "birthYear",
    "loyaltyLevel",
    "createdDate",
    "modifiedDate",
    "firstName",
    "lastName",
    "email",
    "phone",
    "address",
)
_CUSTOMER = record_factory("Customer", CUSTOMER_FIELDS)

FIRST = (
    "Anna",
    "Bram",
    "Chloe",
    "Daan",
    "Emma",
    "Finn",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Lena",
    "Milan",
    "Nora",
    "Oscar",
    "Pia",
    "Ruben",
    "Sara",
    "Tom",
    "Uma",
    "Vera",
    "Wout",
    "Yara",
)
LAST = (
    "Jansen",
    "Peeters",
    "Schmidt",
    "Smith",
    "Dubois",
    "Visser",
    "Maes",
    "Muller",
    "Brown",
    "Bakker",
    "Claes",
    "Weber",
    "Taylor",
    "Martin",
    "Smit",
    "Wouters",
    "Wagner",
    "Evans",
)
COUNTRIES = (
    ("NL", "nl", 0.38),
    ("DE", "de", 0.25),
    ("BE", "nl", 0.12),
    ("GB", "en", 0.15),
    ("FR", "fr", 0.10),
)
LOYALTY = (None, None, None, "BRONZE", "SILVER", "GOLD")


class CustomersMixin:
    """Customers are created with their first booking; a few are duplicates that get merged."""

    def _new_customer(
        self, t: datetime, fields: dict[str, Any] | None = None, like: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        py = self.py
        tbl = self.t["customers"]
        cid = tbl.new_id()
        if like is not None:
            base = {k: like[k] for k in _PERSON_FIELDS}
            base["address"] = dict(like["address"])
        else:
            r = py.random()
            acc = 0.0
            cc, lang = "NL", "nl"
            for c, lg, w in COUNTRIES:
                acc += w
                if r < acc:
                    cc, lang = c, lg
                    break
            fn = py.choice(FIRST)
            ln = py.choice(LAST)
            base = {
                "countryCode": cc,
                "language": lang,
                "birthYear": py.randint(1945, 2004),
                "firstName": fn,
                "lastName": ln,
                "email": f"{fn.lower()}.{ln.lower()}{cid}@example.org",
                "phone": f"+{py.randint(30, 49)}{py.randint(100000000, 999999999)}",
                "address": {
                    "address1": f"{py.choice(('Main', 'Church', 'Mill', 'Dyke'))} Street "
                    f"{py.randint(1, 200)}",
                    "zipCode": f"{py.randint(1000, 9999)}",
                    "city": "Springfield",
                    "countryCode": cc,
                },
            }
        if fields:
            for k in (*_PERSON_FIELDS, "address"):
                if k in fields and fields[k] is not None:
                    base[k] = fields[k]
        stamp = dtstr(t)
        rec = _CUSTOMER(
            cid,
            base["countryCode"],
            base["language"],
            base["birthYear"],
            py.choice(LOYALTY),
            stamp,
            stamp,
            base["firstName"],
            base["lastName"],
            base["email"],
            base["phone"],
            base["address"],
        )
        tbl.add(rec)
        self.cust_res[cid] = []
        self._event("CUSTOMER_EVENT", cid, "CREATE", t)
        return rec

    def merge_customers(self, survivor_id: int, removed_id: int, t: datetime | None = None) -> dict:
        """Merge `removed_id` into `survivor_id`: its reservations move, the record disappears."""
        from sandbox.protocol import WorldError

        with self.lock:
            t = t or self.now
            tbl = self.t["customers"]
            surv = tbl.thaw(survivor_id)
            if surv is None or tbl.get(removed_id) is None or survivor_id == removed_id:
                raise WorldError("merge needs two different existing customers")
            moved = self.cust_res.pop(removed_id, [])
            stamp = dtstr(t)
            for rid in moved:
                r = self._res(rid)
                if r is None:
                    continue
                r.rec["customerId"] = survivor_id
                r.cust = survivor_id
                r.touch(t)
                self._event("RESERVATION_EVENT", rid, "UPDATE", t)
            self.cust_res.setdefault(survivor_id, []).extend(moved)
            self.cust_res[survivor_id].sort()
            tbl.delete(removed_id)
            surv["modifiedDate"] = stamp
            self._event("CUSTOMER_EVENT", survivor_id, "MERGE", t, old=removed_id)
            self.merges.append((removed_id, survivor_id, stamp))
            return {"customerId": survivor_id, "oldEntityId": removed_id, "moved": list(moved)}
