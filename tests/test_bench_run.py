"""`bench.run`: the pipeline process's CPU within a step, from its samples."""

from __future__ import annotations

from bench.run import _cpu_within


def test_cpu_within_a_step_is_the_difference_of_the_samples_at_its_ends() -> None:
    timeline = [(10.0, 1.0), (11.0, 2.5), (12.0, 4.0), (13.0, 4.5)]
    assert _cpu_within(timeline, 11.2, 12.9) == 1.5  # the samples at 11.0 and 12.0
    assert _cpu_within(timeline, 5.0, 13.0) == 4.5  # from before the first sample: from 0
    assert _cpu_within(timeline, 5.0, 6.0) is None  # ended before the first sample
