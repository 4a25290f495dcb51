"""The units' stay walks of the generated history, taken side by side (`TimelineMixin._stay_walks`),
are exactly the walks taken one unit after the other from the same random numbers: a seeded
world stays the same world."""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pytest

from sandbox.world import World
from sandbox.world import timeline as tl
from sandbox.world.clock import weekday
from sandbox.world.seasons import DUR_FRI, DUR_MON, DUR_OTHER, _pick, _season_target


def _walks_one_by_one(w: World, rng: np.random.Generator, gen_end: int) -> tuple[list[int], ...]:
    """The walk as it was written before it was vectorised (session 20's `_timeline` loop)."""
    target = np.array([_season_target(w.ord0 + i) for i in range(gen_end - w.ord0)])
    units: list[int] = []
    arrs: list[int] = []
    durs: list[int] = []
    for u in range(len(w.unit_ids)):
        ti = w.types[int(w.unit_type[u])]
        winter_factor = 0.4 if ti.kind == "CAMPING_PITCH" else 1.0
        c = max(w.ord0, int(w.unit_setup[u]))
        end = min(gen_end, int(w.unit_arch[u]))
        k = 0
        draws = rng.random((4, 700))
        while c < end and k < 700:
            p = float(target[c - w.ord0])
            if winter_factor < 1 and date.fromordinal(c).month in (11, 12, 1, 2, 3):
                p *= winter_factor
            gap = int(-math.log(1.0 - draws[0, k]) * 4.3 * (1 - p) / p)
            a = c + gap
            if draws[1, k] < 0.85:
                while weekday(a) not in (0, 4):
                    a += 1
            wd = weekday(a)
            table = DUR_FRI if wd == 4 else (DUR_MON if wd == 0 else DUR_OTHER)
            d = _pick(table, float(draws[2, k]))
            k += 1
            if a + d > end:
                break
            units.append(u)
            arrs.append(a)
            durs.append(d)
            c = a + d
    return units, arrs, durs


@pytest.mark.parametrize("seed", [7, 12])
def test_side_by_side_walks_equal_the_walks_one_unit_at_a_time(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = World(seed=seed, scale="small")
    monkeypatch.setattr(tl, "_WALK_UNITS", 7)  # several groups of units, the last one short
    gen_end = w.now.toordinal() + 430
    w.rng = np.random.default_rng(seed)
    target = np.array([_season_target(w.ord0 + i) for i in range(gen_end - w.ord0)])
    unit, arr, dur = w._stay_walks(target, gen_end)
    after = w.rng.random()
    expected = _walks_one_by_one(w, np.random.default_rng(seed), gen_end)
    reference_rng = np.random.default_rng(seed)
    reference_rng.random((len(w.unit_ids), 4, 700))
    assert (unit.tolist(), arr.tolist(), dur.tolist()) == expected
    assert after == reference_rng.random()  # the same random numbers used up
    assert len(unit) > 10 * len(w.unit_ids)


def test_gaps_equal_the_c_library_log_also_next_to_whole_numbers() -> None:
    rng = np.random.default_rng(3)
    u = rng.random(200_000)
    p = rng.choice([0.33, 0.58, 0.8, 0.85, 0.9, 0.132, 0.232], size=len(u))
    # draws whose gap lands on a whole number (2 .. 40), where one bit of the log decides
    k = np.arange(2, 42)
    q = np.full(len(k), 0.58)
    on_whole = 1.0 - np.exp(-k * q / (4.3 * (1 - q)))
    # pairs where numpy's log (on the machine this was written on) truncates to one less or more
    # than the C library's
    edge = [
        (0.015579617650930522, 0.06324913539170854),
        (0.015579617650930522, 0.03265734201931063),
    ]
    eu, ep = (np.array(col) for col in zip(*edge, strict=True))
    u = np.concatenate([u, on_whole, np.nextafter(on_whole, 0), eu])
    p = np.concatenate([p, q, q, ep])
    expected = [int(-math.log(1.0 - a) * 4.3 * (1 - b) / b) for a, b in zip(u, p, strict=True)]
    assert tl._gaps(u, p).tolist() == expected
