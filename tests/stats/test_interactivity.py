"""Throughput at an interactivity target: Pareto front, PCHIP, no extrapolation."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.stats import (
    Reach,
    Verdict,
    VersionSweep,
    compare_versions,
    pareto_front,
    series_gain,
    throughput_at_interactivity,
    throughput_series,
)

STAT = "median 1/TPOT"


def test_pareto_front_drops_dominated_points() -> None:
    x = [10.0, 20.0, 30.0, 25.0, 40.0, 40.0, 5.0]
    y = [900.0, 800.0, 500.0, 400.0, 300.0, 200.0, 850.0]
    fx, fy = pareto_front(x, y)
    assert fx.tolist() == [10.0, 20.0, 30.0, 40.0]
    assert fy.tolist() == [900.0, 800.0, 500.0, 300.0]


def test_spec_example_718_to_1997_tokens_per_s_on_four_gpus_at_50_per_user() -> None:
    # Two sweeps whose fronts are straight lines through (50 tok/s/user, 718/4) and
    # (50, 1997/4), where PCHIP reproduces the line exactly; each has a dominated point.
    gpus = 4
    before = VersionSweep(
        "nim-2.0.11",
        (20.0, 40.0, 45.0, 60.0, 80.0),
        tuple(179.5 - 2.0 * (x - 50.0) for x in (20.0, 40.0)) + (150.0, 159.5, 119.5),
    )
    after = VersionSweep(
        "nim-2.0.12",
        (25.0, 45.0, 45.0, 55.0, 90.0),
        (649.25, 529.25, 300.0, 469.25, 259.25),
    )
    results, series = throughput_series(
        [before, after], key="b200x4/agentic", target=50.0, statistic=STAT
    )
    system = [
        r.tokens_per_s_per_accelerator * gpus for r in results if r.tokens_per_s_per_accelerator
    ]
    assert system == pytest.approx([718.0, 1997.0])
    assert all(
        r.reach is Reach.REACHED and r.method == "pchip" and r.statistic == STAT for r in results
    )
    gain = series_gain(series, "nim-2.0.11", "nim-2.0.12")
    assert gain is not None and gain.gain == pytest.approx(2.78, abs=0.005)


def test_worked_example_of_the_format_reference() -> None:
    # docs/formats/llm-serving.md §6.2, real AIPerf sweep: x = 1000/p50 ITL, y = output tok/s
    x, y = [97.74, 80.77, 46.17], [87.3, 293.5, 636.7]
    linear = throughput_at_interactivity(
        x, y, target=50.0, statistic="1000/p50 ITL", method="linear"
    )
    assert linear.tokens_per_s_per_accelerator == pytest.approx(598.8, abs=0.2)
    assert linear.best_measured == pytest.approx(293.5)  # MLPerf-style step: c=4
    pchip = throughput_at_interactivity(x, y, target=50.0, statistic="1000/p50 ITL")
    assert pchip.method == "pchip"
    assert 293.5 < (pchip.tokens_per_s_per_accelerator or 0.0) < 636.7


def test_a_target_outside_the_front_is_not_reached_not_zero() -> None:
    x, y = [30.0, 60.0, 90.0], [600.0, 400.0, 100.0]
    too_fast = throughput_at_interactivity(x, y, target=120.0, statistic=STAT)
    assert too_fast.reach is Reach.NOT_REACHED and too_fast.tokens_per_s_per_accelerator is None
    assert too_fast.best_measured is None and "above the most" in too_fast.reason
    too_slow = throughput_at_interactivity(x, y, target=10.0, statistic=STAT)
    assert too_slow.reach is Reach.NOT_REACHED and "not extrapolated" in too_slow.reason
    assert too_slow.best_measured == 600.0
    edge = throughput_at_interactivity(x, y, target=90.0, statistic=STAT)
    assert edge.tokens_per_s_per_accelerator == pytest.approx(100.0)


def test_pchip_stays_between_its_neighbours() -> None:
    x, y = [10.0, 20.0, 50.0, 100.0], [1000.0, 990.0, 400.0, 50.0]
    for target in np.linspace(10.0, 100.0, 37):
        value = throughput_at_interactivity(x, y, target=float(target), statistic=STAT)
        v = value.tokens_per_s_per_accelerator
        assert v is not None
        i = int(np.searchsorted(x, target, side="right")) - 1
        hi, lo = y[i], y[min(i + 1, 3)]
        assert lo - 1e-9 <= v <= hi + 1e-9


def test_invalid_points_are_ignored_and_a_single_point_is_exact() -> None:
    one = throughput_at_interactivity(
        [50.0, float("nan"), -1.0], [300.0, 10.0, 10.0], target=50.0, statistic=STAT
    )
    assert one.front == ((50.0, 300.0),) and one.tokens_per_s_per_accelerator == 300.0
    none = throughput_at_interactivity([], [], target=50.0, statistic=STAT)
    assert none.reach is Reach.NOT_REACHED and none.reason == "no valid sweep point"


def test_the_statistic_must_be_named() -> None:
    with pytest.raises(ValueError):
        throughput_at_interactivity([1.0], [1.0], target=1.0, statistic="")
    with pytest.raises(ValueError):
        throughput_at_interactivity([1.0, 2.0], [1.0], target=1.0, statistic=STAT)


def test_throughput_at_the_target_is_a_series_that_can_regress() -> None:
    sweeps = [
        VersionSweep("1.0", (20.0, 80.0), (1000.0, 400.0)),
        VersionSweep("1.1", (20.0, 40.0), (1000.0, 900.0)),  # does not reach 50
        VersionSweep("1.2", (20.0, 80.0), (800.0, 300.0)),
    ]
    results, series = throughput_series(sweeps, key="k", target=50.0, statistic=STAT)
    assert [r.reach for r in results] == [Reach.REACHED, Reach.NOT_REACHED, Reach.REACHED]
    assert series.versions == ("1.0", "1.2") and series.higher_is_better
    run = compare_versions([series], "1.0", "1.2", rng=np.random.default_rng(0))
    assert run.comparisons[0].verdict is Verdict.REGRESSION  # 700 -> 550, plain threshold
