"""One value per version (issue 15): outliers, pooled variances, the floor on the history's level.

Small seeded versions of the benchmark's single-value rows (benchmarks/bench_detection.py,
1,000 series, medians of 10 seeds: recall of 10% drops at 5 / 10 / 20 versions
0.33 / 0.85 / 0.94 before, about 0.91 / 0.98 / 0.98 after).
"""

from __future__ import annotations

import numpy as np
import pytest

from tracker.stats import ComparePolicy, SeriesSamples, Verdict, collect_evidence, compare_versions
from tracker.stats.history import history_outliers, prediction_tails
from tracker.stats.significance import MAX_PRIOR_DF, pooled_variances, variance_prior

CV = 0.02


def _single(values: np.ndarray) -> list[SeriesSamples]:
    versions = tuple(f"1.{v}" for v in range(values.shape[1]))
    return [
        SeriesSamples(f"s{i}", versions, tuple((float(v),) for v in row), True)
        for i, row in enumerate(values)
    ]


def _spiked(rng: np.random.Generator, values: np.ndarray) -> np.ndarray:
    hit = rng.random(values.shape) < 0.01
    out = values.copy()
    out[hit] *= 1 + rng.choice([-1, 1], int(hit.sum())) * rng.uniform(0.1, 0.3, int(hit.sum()))
    return out


@pytest.mark.parametrize("points", [5, 10, 20])
def test_a_clean_history_loses_a_point_at_the_outlier_level_and_a_spike_goes(
    points: int,
) -> None:
    rng = np.random.default_rng(points)
    clean = rng.normal(0.0, CV, (20_000, points))
    # Bonferroni over the points: at most 1% of clean rows (measured 0.99-1.08%)
    assert history_outliers(clean, level=0.01).any(axis=1).mean() <= 0.0125
    spiked = clean.copy()
    spiked[:, 0] += 0.2  # the first point: the neighbour rule could not judge it
    spiked[:, -1] -= 0.0  # the baseline stays
    found = history_outliers(spiked, level=0.01)
    assert found[:, 0].mean() >= (0.45 if points == 5 else 0.99)  # measured 0.49 / 1.0 / 1.0


def test_two_spikes_in_one_history_do_not_hide_each_other() -> None:
    rng = np.random.default_rng(3)
    clean = rng.normal(0.0, CV, (2_000, 20))
    spiked = clean.copy()
    spiked[:, 2] -= 0.25  # two spikes down: each inflates the variance the other is judged by
    spiked[:, 17] -= 0.25
    found = history_outliers(spiked, level=0.01)
    # measured 1.0; a forward test that stops at the first round not significant: 0.36
    assert (found[:, 2] & found[:, 17]).mean() >= 0.99


def test_rows_of_different_lengths_are_one_block_with_nan_padding() -> None:
    short = np.log([100.0, 101.0, 99.0, 100.5, 99.5])
    long = np.log([100.0, 102.0, 98.0, 101.0, 99.0, 100.0, 101.5, 98.5])
    block = np.full((2, 8), np.nan)
    block[0, :5], block[1] = short, long
    found = prediction_tails(block, np.log([95.0, 95.0]), outlier_p=0.0, confidence=0.95)
    for row, history in enumerate((short, long)):
        alone = prediction_tails(history[None, :], np.log([95.0]), outlier_p=0.0, confidence=0.95)
        assert found.p_less[row] == pytest.approx(alone.p_less[0], rel=1e-12)
        assert found.df[row] == history.size - 1


def test_the_prior_of_equal_noise_pools_fully_and_of_mixed_noise_hardly() -> None:
    rng = np.random.default_rng(5)
    df = np.full(2000, 10.0)
    equal = rng.normal(0.0, CV, (2000, 11)).var(axis=1, ddof=1)
    d0, s0 = variance_prior(equal, df, min_series=20)
    assert d0 > 100.0 and s0 == pytest.approx(CV * CV, rel=0.05)  # measured 321
    mixed_cv = np.where(rng.random(2000) < 0.5, 0.01, 0.05)[:, None]
    mixed = (rng.normal(0.0, 1.0, (2000, 11)) * mixed_cv).var(axis=1, ddof=1)
    assert variance_prior(mixed, df, min_series=20)[0] < 3.0  # measured 1.5
    assert variance_prior(equal[:19], df[:19], min_series=20) == (0.0, 0.0)
    same = np.full(50, CV * CV)
    assert variance_prior(same, np.full(50, 10.0), min_series=20)[0] == MAX_PRIOR_DF
    var, dof = pooled_variances(equal[:19], df[:19], min_series=20)
    assert np.array_equal(var, equal[:19]) and np.array_equal(dof, df[:19])


@pytest.mark.parametrize("history", [5, 10, 20])
def test_pooled_single_value_p_values_stay_calibrated(history: int) -> None:
    rng = np.random.default_rng(100 + history)
    values = 1000.0 * (1.0 + rng.normal(0.0, CV, (4000, history + 1)))
    values[:, :-1] = _spiked(rng, values[:, :-1])
    found = collect_evidence(
        _single(values), f"1.{history - 1}", f"1.{history}", rng=np.random.default_rng(0)
    )
    worse = np.array([p[0] for p in (ev.one_sided() for ev in found.evidence) if p])
    assert 0.04 <= np.mean(worse < 0.05) <= 0.06  # raw, one-sided, as the issue asks


@pytest.mark.parametrize(("history", "least"), [(5, 0.8), (10, 0.93), (20, 0.95)])
def test_pooled_variances_confirm_single_value_drops_at_short_histories(
    history: int, least: float
) -> None:
    rng = np.random.default_rng(history)
    n = 400
    dropped = rng.random(n) < 0.10
    values = 1000.0 * (1.0 + rng.normal(0.0, CV, (n, history + 1)))
    values[:, :-1] = _spiked(rng, values[:, :-1])
    values[dropped, -1] *= 0.90
    run = compare_versions(
        _single(values), f"1.{history - 1}", f"1.{history}", rng=np.random.default_rng(0)
    )
    flagged = np.array([c.verdict is Verdict.REGRESSION for c in run.comparisons])
    # measured 0.96 / 0.97 / 1.0; each history unpooled (ComparePolicy(pool_min_series=0)):
    # 0.47 / 0.88 / 1.0. False: 0 / 0 / 3 of 360 (BH at q = 0.05 allows about 5% of the
    # ~40 discoveries)
    assert (flagged & dropped).sum() / dropped.sum() >= least
    assert (flagged & ~dropped).sum() / (~dropped).sum() <= 0.015


def _series(values: list[float]) -> SeriesSamples:
    return SeriesSamples(
        "x", tuple(f"1.{i}" for i in range(len(values))), tuple((v,) for v in values), True
    )


HISTORY = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.8, 99.2, 100.0]


def test_the_floor_is_judged_against_the_history_level_not_one_noisy_baseline() -> None:
    # the baseline happens to be 2% low; the candidate is 6% below the level, 4% below it
    series = _series([*HISTORY[:-1], 98.0, 94.0])
    run = compare_versions([series], "1.9", "1.10", rng=np.random.default_rng(0))
    (c,) = run.comparisons
    ev = c.evidence
    assert ev.g is not None and ev.level_g is not None
    assert abs(ev.g) < ev.floor < abs(ev.level_g)
    assert c.verdict is Verdict.REGRESSION
    assert "against the level of the history (the floor is judged on it)" in ev.note
    assert ev.delta_pct == pytest.approx(-4.08, abs=0.01)  # the change shown stays the pair's


def test_a_step_at_the_baseline_is_not_reported_again_at_the_next_version() -> None:
    series = _series([*HISTORY, 90.0, 90.3])  # 1.10 stepped down; 1.11 stays there
    run = compare_versions([series], "1.10", "1.11", rng=np.random.default_rng(0))
    (c,) = run.comparisons
    assert c.evidence.floor_g == c.evidence.g
    assert c.verdict is Verdict.NO_CHANGE
    found = compare_versions([series], "1.9", "1.10", rng=np.random.default_rng(0))
    assert found.comparisons[0].verdict is Verdict.REGRESSION


def test_a_drop_right_after_a_spike_down_at_the_baseline_is_judged_against_the_level() -> None:
    # 1.10 is a one-off 25% spike down; 1.11 is 10% below the level of 1.0-1.9 though 20%
    # above 1.10: a regression, shown against the history's level (issue 15)
    series = _series([*HISTORY, 75.0, 90.0])
    run = compare_versions([series], "1.10", "1.11", rng=np.random.default_rng(0))
    (c,) = run.comparisons
    assert c.verdict is Verdict.REGRESSION
    assert c.evidence.delta_pct == pytest.approx(-10.0, abs=0.2)
    assert "the baseline 1.10 lies -25.0% from the level of its history" in c.evidence.note


def test_a_candidate_that_lost_part_of_a_spike_up_is_not_called_an_improvement() -> None:
    series = _series([*HISTORY, 125.0, 110.0])  # 10% above the level, 12% below 1.10
    run = compare_versions([series], "1.10", "1.11", rng=np.random.default_rng(0))
    (c,) = run.comparisons
    assert c.verdict is not Verdict.IMPROVEMENT
    assert c.evidence.delta_pct == pytest.approx(-12.0, abs=0.01)  # shown against 1.10


def test_a_further_drop_below_a_noisy_low_baseline_is_judged_against_the_level() -> None:
    # 1.10 is 6% low, within the noise of this history (the outlier test keeps it), so no
    # comparison confirmed a step there; 1.11 is 4.3% below 1.10 and 10% below the level
    noisy = [100.0, 104.0, 97.0, 102.0, 95.0, 103.0, 98.0, 105.0, 96.0, 100.0]
    series = _series([*noisy, 94.0, 90.0])
    (c,) = compare_versions([series], "1.10", "1.11", rng=np.random.default_rng(0)).comparisons
    assert c.evidence.baseline_outlier is False
    assert c.evidence.floor_g == c.evidence.level_g
    assert c.evidence.level_g is not None and c.evidence.level_g < -0.09


def test_an_outlier_in_the_history_is_named_in_the_note() -> None:
    series = _series([130.0, *HISTORY[1:], 90.0])
    (ev,) = collect_evidence([series], "1.9", "1.10", rng=np.random.default_rng(0)).evidence
    assert "1 of 10 history points set aside as outliers" in ev.note
    kept = collect_evidence(
        [series],
        "1.9",
        "1.10",
        rng=np.random.default_rng(0),
        policy=ComparePolicy(history_outlier_p=0.0),
    ).evidence[0]
    assert ev.p_value is not None and kept.p_value is not None
    assert ev.p_value < kept.p_value / 10
