"""`bench.build_profile`'s CPU shares: models built at once split the CPU, never count it twice."""

from __future__ import annotations

import pytest

from bench.build_profile import CpuSampler, timeline


def _sampler(*samples: tuple[float, float]) -> CpuSampler:
    sampler = CpuSampler()
    sampler.samples = list(samples)
    return sampler


def test_models_at_once_share_the_cpu_of_their_periods() -> None:
    # 0-1 s: 1.8 CPU s with a and b running; 1-2 s: 0.9 CPU s with a alone
    sampler = _sampler((0.0, 0.0), (1.0, 1.8), (2.0, 2.7))
    shares = sampler.shares({"a": (0.0, 2.0), "b": (0.0, 1.0)})
    assert shares == pytest.approx({"a": 0.9 + 0.9, "b": 0.9})
    assert sum(shares.values()) == pytest.approx(2.7)
    assert sampler.cpu_between(0.5, 1.5) == pytest.approx(0.9 + 0.45)


def test_the_timeline_names_the_models_of_each_row() -> None:
    sampler = _sampler((0.0, 0.0), (5.0, 8.0), (10.0, 13.0))
    rows = timeline({"core.a": (0.0, 10.0), "core.b": (6.0, 7.0)}, sampler, 0.0)
    assert [(r["at_s"], r["cores_busy"], r["running"]) for r in rows] == [
        (0.0, 1.6, ["a"]),
        (5.0, 1.0, ["a", "b"]),
    ]
