"""The bulk history's customers: every booker of a closed stay, as columns."""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson

from sandbox.world.block import Block, col_dt, col_int, col_key, col_vocab
from sandbox.world.bulk_common import (
    CUST_BASE,
    STREETS,
)
from sandbox.world.columns import ComposedColumn
from sandbox.world.pieces import json_inner

from .clock import from_ms, to_ms
from .customers import COUNTRIES, CUSTOMER_FIELDS, FIRST, LAST, LOYALTY


class BulkCustomersMixin:
    """The bulk history's customers."""

    def _bulk_customers(self, rng: np.random.Generator, t0: np.ndarray) -> np.ndarray:
        """Customer of every stay: 22 % come back, 1.5 % of the new ones are duplicates."""
        n = len(t0)
        u = rng.random(n)
        rep = (np.arange(n) > 0) & (u < 0.22)
        new = ~rep
        made = np.cumsum(new)
        before = made - new
        cust_idx = np.where(new, made - 1, np.floor(rng.random(n) * np.maximum(before, 1)))
        cust_idx = cust_idx.astype(np.int64)
        creator = np.flatnonzero(new)  # the stay that creates each customer
        c = len(creator)
        cb = before[creator]
        like = (cb > 0) & (rng.random(c) < 0.015)
        src = np.where(like, np.floor(rng.random(c) * np.maximum(cb, 1)), np.arange(c)).astype(
            np.int64
        )
        root = src.copy()
        while True:
            nxt = src[root]
            if np.array_equal(nxt, root):
                break
            root = nxt
        weights = np.cumsum([w for _, _, w in COUNTRIES])
        cc = np.minimum(np.searchsorted(weights, rng.random(c), side="right"), len(COUNTRIES) - 1)
        cols = {
            "cc": cc.astype(np.int8),
            "birth": rng.integers(1945, 2005, c).astype(np.int16),
            "fn": rng.integers(0, len(FIRST), c).astype(np.int8),
            "ln": rng.integers(0, len(LAST), c).astype(np.int8),
            "mail": (CUST_BASE + np.arange(c)).astype(np.int32),
            "pa": rng.integers(30, 50, c).astype(np.int8),
            "pb": rng.integers(100000000, 1000000000, c).astype(np.int32),
            "street": rng.integers(0, len(STREETS), c).astype(np.int8),
            "house": rng.integers(1, 201, c).astype(np.int16),
            "zip": rng.integers(1000, 10000, c).astype(np.int16),
        }
        cols = {k: v[root] for k, v in cols.items()}
        loyalty = rng.integers(0, len(LOYALTY), c).astype(np.int8)
        created = t0[creator] - rng.integers(1, 91, c) * 60_000
        self._dups.extend(
            zip(
                (CUST_BASE + src[like]).tolist(),
                (CUST_BASE + np.flatnonzero(like)).tolist(),
                strict=True,
            )
        )
        langs = [lg for _, lg, _ in COUNTRIES]
        ccs = [cc_ for cc_, _, _ in COUNTRIES]
        fn_l = [f.lower() for f in FIRST]
        ln_l = [x.lower() for x in LAST]

        def email_values(idx: Any, k: int) -> list[str]:
            return [
                f"{fn_l[a]}.{ln_l[b]}{m}@example.org"
                for a, b, m in zip(
                    cols["fn"][idx].tolist(),
                    cols["ln"][idx].tolist(),
                    cols["mail"][idx].tolist(),
                    strict=True,
                )
            ]

        def phone_values(idx: Any, k: int) -> list[str]:
            return [
                f"+{a}{b}"
                for a, b in zip(cols["pa"][idx].tolist(), cols["pb"][idx].tolist(), strict=True)
            ]

        def address_values(idx: Any, k: int) -> list[dict[str, Any]]:
            return [
                {
                    "address1": f"{STREETS[s_]} Street {h}",
                    "zipCode": f"{z}",
                    "city": "Springfield",
                    "countryCode": ccs[c_],
                }
                for s_, h, z, c_ in zip(
                    cols["street"][idx].tolist(),
                    cols["house"][idx].tolist(),
                    cols["zip"][idx].tolist(),
                    cols["cc"][idx].tolist(),
                    strict=True,
                )
            ]

        # the same values as JSON text, a column at a time (see columns.ComposedColumn)
        email = ComposedColumn(
            email_values,
            [
                (cols["fn"], ['"' + json_inner(f + ".") for f in fn_l]),
                (cols["ln"], [json_inner(x) for x in ln_l]),
                cols["mail"],
                '@example.org"',
            ],
        )
        phone = ComposedColumn(phone_values, ['"+', cols["pa"], cols["pb"], '"'])
        address = ComposedColumn(
            address_values,
            [
                '{"address1":"',
                (cols["street"], [json_inner(f"{x} Street ") for x in STREETS]),
                cols["house"],
                '","zipCode":"',
                cols["zip"],
                '","city":"Springfield","countryCode":',
                (cols["cc"], [orjson.dumps(c_).decode() + "}" for c_ in ccs]),
            ],
        )

        modified = created.copy()
        block = Block(
            CUST_BASE,
            c,
            CUSTOMER_FIELDS,
            [
                col_key(CUST_BASE),
                col_vocab(cols["cc"], ccs),
                col_vocab(cols["cc"], langs),
                col_int(cols["birth"]),
                col_vocab(np.where(loyalty < 3, -1, loyalty).astype(np.int8), LOYALTY),
                col_dt(created),
                col_dt(modified),
                col_vocab(cols["fn"], FIRST),
                col_vocab(cols["ln"], LAST),
                email,
                phone,
                address,
            ],
        )
        self.t["customers"].set_block(block)
        self._cust_ids = list(range(CUST_BASE, CUST_BASE + c))
        win = to_ms(self._event_window)
        for k in np.flatnonzero(created > win).tolist():
            self._event_buffer.append(
                (from_ms(int(created[k])), "CUSTOMER_EVENT", CUST_BASE + k, "CREATE", None)
            )
        return CUST_BASE + cust_idx

    # plans ------------------------------------------------------------------------------------
