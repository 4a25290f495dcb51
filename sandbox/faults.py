"""Opt-in faults, so the pipeline's retry, resume and quarantine paths meet real failures.

Each fault has a rate in [0, 1]: the chance that it fires on one request. Draws come from one
seeded `random.Random`, so a sequential client sees the same faults run after run. Faults apply
only to `GET /service/v2/...` (never to `/authenticate`, the admin API or writes), except
`token_expire`, which applies to every authenticated request.

- `storm_429`: 429 TOO_MANY_REQUESTS with `Retry-After: 1`, even under the concurrency cap (a
  rate-limit storm the client must back off from).
- `http_500`, `http_502`, `http_503`: that status with the error body (5xx the client retries).
- `slow`: sleep `slow_seconds` (default 5 s) before serving, past a sensible client timeout.
- `drop`: the status line and half the body go out, then the connection is closed (the client
  sees an incomplete response, like a reset mid-transfer).
- `truncate`: a complete 200 whose JSON body is cut in half (Content-Length matches the half),
  so the client must treat unparsable JSON as retryable.
- `token_expire`: a valid token is answered with 401 TOKEN_EXPIRED; re-authenticating works.
- `churn`: before a page is served, the world inserts and deletes records (`world.churn(name)`,
  when the world has it), so offset paging skips or repeats records while keyset paging does not.
- `malformed`: a fraction (`malformed_fraction`, default 0.1, at least one) of the records in the
  served page are copied and damaged: the primary key nulled, a date made "2026-13-45", `status`
  set to 77, or a number replaced by "abc". The world's own records are never touched.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FAULT_NAMES: tuple[str, ...] = (
    "storm_429",
    "http_500",
    "http_502",
    "http_503",
    "drop",
    "truncate",
    "slow",
    "token_expire",
    "churn",
    "malformed",
)
DEFAULT_SLOW_SECONDS = 5.0
DEFAULT_MALFORMED_FRACTION = 0.1
BAD_DATE = "2026-13-45"
BAD_STATUS = 77
BAD_NUMBER = "abc"


def validate_rates(rates: Mapping[str, Any]) -> dict[str, float]:
    """Check names and rates; ValueError names the offending fault."""
    clean: dict[str, float] = {}
    for name, rate in rates.items():
        if name not in FAULT_NAMES:
            raise ValueError(f"unknown fault {name!r}; known: {', '.join(FAULT_NAMES)}")
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
            raise ValueError(f"rate of fault {name!r} must be a number in [0, 1]")
        clean[name] = float(rate)
    return clean


@dataclass(frozen=True)
class FaultDecision:
    """Which faults fire on one request."""

    fired: frozenset[str] = frozenset()

    def __contains__(self, name: object) -> bool:
        return name in self.fired

    @property
    def status(self) -> int | None:
        """The error status to answer instead of serving, if any (429 wins over 5xx)."""
        for name, status in (("storm_429", 429), ("http_503", 503), ("http_502", 502)):
            if name in self.fired:
                return status
        return 500 if "http_500" in self.fired else None


NO_FAULTS = FaultDecision()


class Faults:
    """The fault configuration of a running sandbox; changeable at runtime via `/_admin/faults`."""

    def __init__(
        self,
        rates: Mapping[str, Any] | None = None,
        *,
        seed: int = 0,
        slow_seconds: float = DEFAULT_SLOW_SECONDS,
        malformed_fraction: float = DEFAULT_MALFORMED_FRACTION,
    ) -> None:
        self._lock = threading.Lock()
        self.counts: dict[str, int] = dict.fromkeys(FAULT_NAMES, 0)
        self.configure(
            rates or {}, seed=seed, slow_seconds=slow_seconds, malformed_fraction=malformed_fraction
        )

    def configure(
        self,
        rates: Mapping[str, Any],
        *,
        seed: int | None = None,
        slow_seconds: float | None = None,
        malformed_fraction: float | None = None,
    ) -> None:
        """Replace the rates (and reseed, so a test can replay a fault sequence)."""
        clean = validate_rates(rates)
        with self._lock:
            self.rates = clean
            if seed is not None:
                self.seed = seed
            self._rng = random.Random(self.seed)
            if slow_seconds is not None:
                self.slow_seconds = float(slow_seconds)
            if malformed_fraction is not None:
                self.malformed_fraction = float(malformed_fraction)

    def describe(self) -> dict[str, Any]:
        return {
            "faults": dict(self.rates),
            "seed": self.seed,
            "slowSeconds": self.slow_seconds,
            "malformedFraction": self.malformed_fraction,
            "injected": dict(self.counts),
        }

    def decide(self, names: tuple[str, ...] = FAULT_NAMES) -> FaultDecision:
        """Draw for each configured fault in `names`, in a fixed order (deterministic per seed)."""
        if not self.rates:
            return NO_FAULTS
        fired = set()
        with self._lock:
            for name in FAULT_NAMES:
                rate = self.rates.get(name, 0.0)
                if name in names and rate > 0 and self._rng.random() < rate:
                    fired.add(name)
                    self.counts[name] += 1
        return FaultDecision(frozenset(fired)) if fired else NO_FAULTS

    def rng(self) -> random.Random:
        """A child generator for per-page choices (seeded from the main one, under its lock)."""
        with self._lock:
            return random.Random(self._rng.random())


def malform(records: list[dict[str, Any]], pk: str, rng: random.Random, fraction: float) -> list:
    """Copies of `records` with some damaged (see module docstring); the input is not mutated."""
    if not records:
        return records
    out = list(records)
    count = max(1, round(len(records) * fraction))
    for index in rng.sample(range(len(records)), min(count, len(records))):
        record = dict(records[index])
        choices = ["null_pk"]
        dates = [k for k, v in record.items() if isinstance(v, str) and _looks_like_date(v)]
        numbers = [
            k
            for k, v in record.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and k != pk
        ]
        if dates:
            choices.append("bad_date")
        if "status" in record:
            choices.append("bad_status")
        if numbers:
            choices.append("text_number")
        kind = rng.choice(choices)
        if kind == "null_pk":
            record[pk] = None
        elif kind == "bad_date":
            record[rng.choice(dates)] = BAD_DATE
        elif kind == "bad_status":
            record["status"] = BAD_STATUS
        else:
            record[rng.choice(numbers)] = BAD_NUMBER
        out[index] = record
    return out


def _looks_like_date(value: str) -> bool:
    return len(value) >= 10 and value[4] == "-" and value[7] == "-" and value[:4].isdigit()


def truncate(body: bytes) -> bytes:
    """The first half of a body: still bytes, no longer JSON."""
    return body[: max(1, len(body) // 2)]
