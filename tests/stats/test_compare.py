"""Two-version comparison on synthetic series with fixed seeds and known answers.

Measured false-positive rates (identical distributions, 2% noise, one series per
run so BH does not help; 500 seeds, the figures at the time of writing):

* 5 repeats a side (Welch's t on logs): 8 / 500 = 1.6% REGRESSION verdicts,
  under the one-sided nominal α/2 = 2.5%;
* one value per version, 10 history points (prediction interval): 6 / 500 = 1.2%;
* in families of 100 null series (BH over the family): 0 of 2,000 series (5 repeats)
  and 1 of 2,000 (history).

The tests assert these rates with slack (``≤ α/2 + 1.5 points``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats  # type: ignore[import-untyped]

from tracker.stats import (
    ComparePolicy,
    Method,
    SeriesSamples,
    Verdict,
    collect_evidence,
    compare_versions,
    decide_verdicts,
)
from tracker.stats.history import prediction_test
from tracker.stats.significance import bootstrap_ci, min_attainable_p

NOISE = 0.02
Q = 0.05
SEEDS = 500


def repeats(seed: int, drop: float, n: int = 5, *, higher_is_better: bool = True) -> SeriesSamples:
    """Baseline and candidate with ``n`` repeats each; the candidate loses ``drop``."""
    rng = np.random.default_rng(seed)
    factor = 1.0 - drop if higher_is_better else 1.0 / (1.0 - drop)
    base = 1000.0 * (1.0 + rng.normal(0.0, NOISE, n))
    cand = 1000.0 * factor * (1.0 + rng.normal(0.0, NOISE, n))
    return SeriesSamples(
        key=f"s{seed}",
        versions=("2.0.12", "2.0.13"),
        samples=(tuple(map(float, base)), tuple(map(float, cand))),
        higher_is_better=higher_is_better,
    )


def history(
    seed: int, drop: float, points: int = 10, *, spike_at: int | None = None
) -> SeriesSamples:
    """``points`` single values, then a last version that loses ``drop``."""
    rng = np.random.default_rng(seed)
    values = 1000.0 * (1.0 + rng.normal(0.0, NOISE, points + 1))
    values[-1] *= 1.0 - drop
    if spike_at is not None:
        values[spike_at] *= 1.3
    return SeriesSamples(
        key=f"h{seed}",
        versions=tuple(f"v{i}" for i in range(points + 1)),
        samples=tuple((float(v),) for v in values),
        higher_is_better=True,
    )


def verdict(
    series: SeriesSamples,
    baseline: str,
    candidate: str,
    seed: int = 0,
    policy: ComparePolicy | None = None,
) -> Verdict:
    rng = np.random.default_rng(seed)
    run = compare_versions([series], baseline, candidate, rng=rng, policy=policy)
    (comparison,) = run.comparisons
    return comparison.verdict


def test_planted_ten_percent_drop_with_five_repeats_is_a_regression() -> None:
    run = compare_versions([repeats(7, 0.10)], "2.0.12", "2.0.13", rng=np.random.default_rng(1))
    (c,) = run.comparisons
    assert c.verdict is Verdict.REGRESSION
    ev = c.evidence
    assert ev.method is Method.WELCH_LOG
    assert (ev.n_baseline, ev.n_candidate) == (5, 5)
    assert ev.delta_pct == pytest.approx(-10.0, abs=3.0)
    assert ev.ci_high is not None and ev.ci_high < 0.0
    assert c.q_value is not None and c.q_value < Q
    assert run.family_size == 1


def test_planted_ten_percent_drop_is_found_at_every_seed() -> None:
    verdicts = {verdict(repeats(seed, 0.10), "2.0.12", "2.0.13", seed) for seed in range(50)}
    assert verdicts == {Verdict.REGRESSION}


def test_one_percent_drop_in_noise_is_not_a_regression() -> None:
    assert verdict(repeats(3, 0.01), "2.0.12", "2.0.13") is Verdict.NO_CHANGE
    # Over many seeds a 1% drop is called a regression only when the noise pushes the
    # measured drop past the 2% floor *and* the test confirms it: 29 / 500 when written.
    found = [verdict(repeats(s, 0.01), "2.0.12", "2.0.13", s) for s in range(200)]
    assert found.count(Verdict.REGRESSION) / len(found) <= 0.10
    assert found.count(Verdict.NO_CHANGE) / len(found) >= 0.65


def test_identical_distributions_with_repeats_stay_at_the_expected_false_positive_rate() -> None:
    found = [verdict(repeats(s, 0.0), "2.0.12", "2.0.13", s) for s in range(SEEDS)]
    rate = found.count(Verdict.REGRESSION) / SEEDS  # measured: 8 / 500 = 0.016
    assert rate <= Q / 2 + 0.015
    assert found.count(Verdict.NO_CHANGE) / SEEDS >= 0.8


def test_identical_history_stays_at_the_expected_false_positive_rate() -> None:
    found = [verdict(history(s, 0.0), "v9", "v10", s) for s in range(SEEDS)]
    rate = found.count(Verdict.REGRESSION) / SEEDS  # measured: 6 / 500 = 0.012
    assert rate <= Q / 2 + 0.015


def test_families_of_null_series_are_almost_never_flagged_after_bh() -> None:
    flagged = 0
    for family in range(5):
        series = [repeats(family * 1000 + i, 0.0) for i in range(100)]
        run = compare_versions(series, "2.0.12", "2.0.13", rng=np.random.default_rng(family))
        assert run.family_size == 100
        flagged += len(run.with_verdict(Verdict.REGRESSION))
    assert flagged <= 2


def test_latency_that_rises_is_a_regression_and_falls_is_an_improvement() -> None:
    worse = repeats(5, 0.10, higher_is_better=False)
    assert worse.samples[1][0] > worse.samples[0][0] * 1.05
    assert verdict(worse, "2.0.12", "2.0.13") is Verdict.REGRESSION
    assert verdict(worse, "2.0.13", "2.0.12") is Verdict.IMPROVEMENT


def test_eight_repeats_a_side_use_mann_whitney() -> None:
    run = compare_versions(
        [repeats(2, 0.10, n=8)], "2.0.12", "2.0.13", rng=np.random.default_rng(0)
    )
    (c,) = run.comparisons
    assert c.evidence.method is Method.MANN_WHITNEY
    assert c.evidence.min_p == pytest.approx(1 / math.comb(16, 8))  # one-sided
    assert c.verdict is Verdict.REGRESSION


def test_minimum_attainable_p_of_the_exact_mann_whitney() -> None:
    # one-sided: 1 / C(n_a + n_b, n_a)
    assert min_attainable_p(Method.MANN_WHITNEY, 3, 3, 20) == pytest.approx(0.05)
    assert min_attainable_p(Method.MANN_WHITNEY, 4, 4, 20) == pytest.approx(0.0143, abs=1e-4)
    assert min_attainable_p(Method.MANN_WHITNEY, 5, 5, 20) == pytest.approx(0.0040, abs=1e-4)
    assert min_attainable_p(Method.MANN_WHITNEY, 30, 30, 20) < 1e-10
    assert min_attainable_p(Method.WELCH_LOG, 3, 3, 20) == 0.0


def test_a_test_that_cannot_reach_significance_is_not_a_no_change() -> None:
    policy = ComparePolicy(mwu_min_repeats=3)  # exact MWU, 3 vs 3: one-sided p >= 0.05
    dropped = compare_versions(
        [repeats(1, 0.10, n=3)], "2.0.12", "2.0.13", rng=np.random.default_rng(0), policy=policy
    )
    (c,) = dropped.comparisons
    assert c.evidence.method is Method.MANN_WHITNEY
    assert c.evidence.p_value is None and c.evidence.min_p == pytest.approx(0.05)
    assert c.verdict is Verdict.SUSPECT
    assert dropped.family_size == 0
    same = SeriesSamples("c", ("a", "b"), ((10.0, 10.1, 9.9), (10.0, 10.1, 9.9)), True)
    assert verdict(same, "a", "b", policy=policy) is Verdict.INCONCLUSIVE


def test_single_value_with_history_uses_the_prediction_interval() -> None:
    run = compare_versions([history(4, 0.10)], "v9", "v10", rng=np.random.default_rng(0))
    (c,) = run.comparisons
    assert c.evidence.method is Method.PREDICTION_INTERVAL
    assert c.evidence.n_baseline == 10 and c.evidence.n_candidate == 1
    assert c.evidence.floor == 0.05
    assert c.verdict is Verdict.REGRESSION


def test_a_spike_in_the_history_is_removed_before_the_interval() -> None:
    spiky = history(4, 0.10, spike_at=4)
    assert verdict(spiky, "v9", "v10") is Verdict.REGRESSION
    unspiked = compare_versions(
        [spiky],
        "v9",
        "v10",
        rng=np.random.default_rng(0),
        policy=ComparePolicy(history_outlier_p=0.0),
    )
    # the spike inflates s: the drop is no longer significant even on its own
    despiked = compare_versions([spiky], "v9", "v10", rng=np.random.default_rng(0))
    (kept,), (lost,) = despiked.comparisons, unspiked.comparisons
    assert lost.verdict is Verdict.NO_CHANGE
    assert lost.evidence.p_value is not None and kept.evidence.p_value is not None
    assert lost.evidence.p_value > 10 * kept.evidence.p_value


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (88.0, Verdict.REGRESSION),
        (92.0, Verdict.SUSPECT),
        (97.0, Verdict.NO_CHANGE),
        (103.0, Verdict.NO_CHANGE),
        (108.0, Verdict.NO_CHANGE),
        (112.0, Verdict.IMPROVEMENT),
    ],
)
def test_without_enough_history_a_plain_threshold_decides(new: float, expected: Verdict) -> None:
    series = SeriesSamples("t", ("v1", "v2", "v3"), ((101.0,), (100.0,), (new,)), True)
    run = compare_versions([series], "v2", "v3", rng=np.random.default_rng(0))
    (c,) = run.comparisons
    assert c.evidence.method is Method.THRESHOLD
    assert c.evidence.p_value is None and c.q_value is None
    assert c.verdict is expected
    assert run.family_size == 0


def test_the_segment_start_limits_the_history() -> None:
    series = history(4, 0.10)
    found = collect_evidence(
        [series], "v9", "v10", rng=np.random.default_rng(0), segment_starts={series.key: "v7"}
    )
    (ev,) = found.evidence
    assert ev.method is Method.THRESHOLD and "3 history points" in ev.note


def test_values_that_cannot_be_compared_are_inconclusive() -> None:
    broken = SeriesSamples("z", ("a", "b"), ((100.0, 0.0, 101.0), (99.0, 98.0, 97.0)), True)
    run = compare_versions([broken], "a", "b", rng=np.random.default_rng(0))
    (c,) = run.comparisons
    assert c.verdict is Verdict.INCONCLUSIVE and c.evidence.g is None
    assert "no usable value" in c.evidence.note


def test_series_without_both_versions_are_listed_as_missing() -> None:
    other = SeriesSamples("other", ("2.0.11", "2.0.12"), ((1.0,), (1.0,)), True)
    run = compare_versions(
        [repeats(1, 0.0), other], "2.0.12", "2.0.13", rng=np.random.default_rng(0)
    )
    assert run.missing == ("other",)
    assert [c.key for c in run.comparisons] == ["s1"]


def test_one_family_spans_every_test_of_a_run() -> None:
    rng = np.random.default_rng(0)
    first = collect_evidence([repeats(s, 0.10) for s in range(3)], "2.0.12", "2.0.13", rng=rng)
    second = collect_evidence([history(s, 0.0) for s in range(4)], "v9", "v10", rng=rng)
    threshold = SeriesSamples("t", ("a", "b"), ((1.0,), (1.0,)), True)
    third = collect_evidence([threshold], "a", "b", rng=rng)
    run = decide_verdicts([*first.evidence, *second.evidence, *third.evidence])
    assert run.family_size == 7
    assert len(run.comparisons) == 8
    for c in run.comparisons:
        if c.evidence.p_value is None:
            assert c.q_value is None
        else:
            assert c.q_value is not None and c.q_value >= c.evidence.p_value
    assert run.counts()[Verdict.REGRESSION] == 3


def test_bootstrap_ci_is_reproducible_with_the_same_seed() -> None:
    series = [repeats(9, 0.05)]
    a = collect_evidence(series, "2.0.12", "2.0.13", rng=np.random.default_rng(42))
    b = collect_evidence(series, "2.0.12", "2.0.13", rng=np.random.default_rng(42))
    assert a == b
    ev = a.evidence[0]
    assert ev.ci_low is not None and ev.ci_high is not None and ev.g is not None
    assert ev.ci_low <= ev.g <= ev.ci_high
    low, high = ev.ci_pct or (0.0, 0.0)
    assert low < high < 0.0


@pytest.mark.parametrize(("n_a", "n_b"), [(5, 5), (3, 7), (8, 8), (10, 4)])
def test_bootstrap_ci_equals_sorting_every_resampled_difference(n_a: int, n_b: int) -> None:
    data = np.random.default_rng(3)
    base = np.log(100.0 * (1 + data.normal(0, 0.02, (40, n_a))))
    cand = np.log(97.0 * (1 + data.normal(0, 0.02, (40, n_b))))
    sign = np.where(data.random(40) < 0.5, 1.0, -1.0)
    lo, hi = bootstrap_ci(
        base, cand, sign, rng=np.random.default_rng(5), resamples=500, confidence=0.9
    )
    draws = np.random.default_rng(5)

    def positions(n: int) -> np.ndarray:
        return np.sort(draws.integers(0, n, (500, n)), axis=1)

    def medians(rows: np.ndarray, pos: np.ndarray) -> np.ndarray:
        s, n = np.sort(rows, axis=1), rows.shape[1]
        middle: np.ndarray = 0.5 * (s[:, pos[:, (n - 1) // 2]] + s[:, pos[:, n // 2]])
        return middle

    if n_a == n_b:
        first, second = positions(n_a), positions(n_a)
        diffs = np.concatenate(
            [
                medians(cand, second) - medians(base, first),
                medians(cand, first) - medians(base, second),
            ],
            axis=1,
        )
    else:
        drawn = {n: positions(n) for n in sorted((n_a, n_b))}
        diffs = medians(cand, drawn[n_b]) - medians(base, drawn[n_a])
    diffs = np.sort(diffs * sign[:, None], axis=1)
    k = int(math.floor(0.05 * diffs.shape[1]))
    assert np.array_equal(lo, diffs[:, k])
    assert np.array_equal(hi, diffs[:, diffs.shape[1] - 1 - k])


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        ComparePolicy(q_level=1.5)
    with pytest.raises(ValueError):
        ComparePolicy(min_history=2)


def test_min_attainable_p_of_the_asymptotic_test_is_the_normal_tail_of_separation() -> None:
    mean, sd = 30 * 30 / 2.0, math.sqrt(30 * 30 * 61 / 12.0)
    expected = stats.norm.sf(mean / sd)  # one-sided
    assert min_attainable_p(Method.MANN_WHITNEY, 30, 30, 20) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n", [3, 5, 12])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_prediction_interval_uses_students_t_quantile(n: int, confidence: float) -> None:
    rng = np.random.default_rng(n)
    history = np.log(100.0 + rng.normal(0.0, 1.0, size=(4, n)))
    new = np.log(np.array([100.0, 101.0, 99.0, 130.0]))
    _, low, high = prediction_test(history, new, outlier_p=0.0, confidence=confidence)
    scale = history.std(axis=1, ddof=1) * math.sqrt(1.0 + 1.0 / n)
    expected = stats.t.ppf(0.5 + confidence / 2.0, n - 1) * scale
    np.testing.assert_allclose((high - low) / 2.0, expected, rtol=1e-10)
