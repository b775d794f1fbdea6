"""Invariants of the analysis, checked with Hypothesis.

Values are integers (per-mille steps around 1000) times a scale, so that two
samples are either equal or clearly apart, in every scale: the invariants are
about the method, not about rounding in the last bit.
"""

from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tracker.stats import (
    ComparePolicy,
    ScalingPoint,
    SeriesSamples,
    Verdict,
    compare_versions,
    detect_change_points,
    efficiency_below_floor,
    find_change_points,
    pareto_front,
    q_values,
    scaling_findings,
    scaling_groups,
    scaling_key,
    software_gains,
)

SETTINGS = settings(deadline=None, max_examples=40)
MIRROR = {
    Verdict.REGRESSION: {Verdict.IMPROVEMENT},
    Verdict.IMPROVEMENT: {Verdict.REGRESSION},
    Verdict.NO_CHANGE: {Verdict.NO_CHANGE, Verdict.SUSPECT},
    Verdict.SUSPECT: {Verdict.NO_CHANGE, Verdict.INCONCLUSIVE},
    Verdict.INCONCLUSIVE: {Verdict.INCONCLUSIVE, Verdict.SUSPECT},
}

noise = st.lists(st.integers(-40, 40), min_size=3, max_size=10)
shifts = st.sampled_from([800, 900, 950, 980, 1000, 1020, 1050, 1100, 1250])
scales = st.floats(min_value=1e-3, max_value=1e4, allow_nan=False, allow_infinity=False)


def two_versions(
    base: list[int], cand: list[int], shift: int, k: float, hib: bool
) -> SeriesSamples:
    a = tuple(k * (1000 + j) for j in base)
    b = tuple(k * (shift + i) for i in cand)
    return SeriesSamples("s", ("1.0", "1.1"), (a, b), hib)


def verdict(
    series: SeriesSamples, baseline: str, candidate: str, policy: ComparePolicy | None = None
) -> Verdict:
    rng = np.random.default_rng(0)
    run = compare_versions([series], baseline, candidate, rng=rng, policy=policy)
    return run.comparisons[0].verdict


@SETTINGS
@given(
    base=noise, cand=noise, shift=shifts, k=scales, hib=st.booleans(), mwu=st.sampled_from([3, 8])
)
def test_scaling_all_values_does_not_change_a_two_sample_verdict(
    base: list[int], cand: list[int], shift: int, k: float, hib: bool, mwu: int
) -> None:
    policy = ComparePolicy(mwu_min_repeats=mwu)
    plain = verdict(two_versions(base, cand, shift, 1.0, hib), "1.0", "1.1", policy=policy)
    scaled = verdict(two_versions(base, cand, shift, k, hib), "1.0", "1.1", policy=policy)
    assert plain is scaled
    event(plain.value)


@SETTINGS
@given(
    history=st.lists(st.integers(-40, 40), min_size=1, max_size=14),
    new=st.integers(-40, 40),
    shift=shifts,
    k=scales,
)
def test_scaling_all_values_does_not_change_a_single_value_verdict(
    history: list[int], new: int, shift: int, k: float
) -> None:
    def series(scale: float) -> SeriesSamples:
        values = [(scale * (1000 + j),) for j in history] + [(scale * (shift + new),)]
        return SeriesSamples("h", tuple(f"v{i}" for i in range(len(values))), tuple(values), True)

    last, prev = f"v{len(history)}", f"v{len(history) - 1}"
    plain = verdict(series(1.0), prev, last)
    assert plain is verdict(series(k), prev, last)
    event(plain.value)


@SETTINGS
@given(base=noise, cand=noise, shift=shifts, hib=st.booleans(), mwu=st.sampled_from([3, 8]))
def test_swapping_baseline_and_candidate_flips_regression_and_improvement(
    base: list[int], cand: list[int], shift: int, hib: bool, mwu: int
) -> None:
    series = two_versions(base, cand, shift, 1.0, hib)
    policy = ComparePolicy(mwu_min_repeats=mwu)
    forward = compare_versions([series], "1.0", "1.1", rng=np.random.default_rng(0), policy=policy)
    back = compare_versions([series], "1.1", "1.0", rng=np.random.default_rng(0), policy=policy)
    f, b = forward.comparisons[0], back.comparisons[0]
    assert b.verdict in MIRROR[f.verdict]
    assert (f.verdict is Verdict.REGRESSION) == (b.verdict is Verdict.IMPROVEMENT)
    assert (f.verdict is Verdict.IMPROVEMENT) == (b.verdict is Verdict.REGRESSION)
    fe, be = f.evidence, b.evidence
    forward_p, back_p = fe.one_sided(), be.one_sided()  # None: untested (identical samples)
    assert forward_p == (back_p and back_p[::-1])  # (worse, better) is (better, worse) back
    if fe.g != 0.0:  # p_value is in the direction of g; at g = 0 exactly it has none
        assert fe.p_value == be.p_value
    assert fe.ci_low is not None and fe.ci_high is not None
    assert be.ci_low is not None and be.ci_high is not None
    assert (fe.ci_low, fe.ci_high) == (-be.ci_high, -be.ci_low)
    event(f"forward {f.verdict.value}")


@SETTINGS
@given(a=st.integers(500, 1500), b=st.integers(500, 1500), hib=st.booleans())
def test_swapping_single_values_without_history_flips_the_threshold_verdict(
    a: int, b: int, hib: bool
) -> None:
    series = SeriesSamples("t", ("1.0", "1.1"), ((float(a),), (float(b),)), hib)
    forward, back = verdict(series, "1.0", "1.1"), verdict(series, "1.1", "1.0")
    assert (forward is Verdict.REGRESSION) == (back is Verdict.IMPROVEMENT)
    assert (forward is Verdict.IMPROVEMENT) == (back is Verdict.REGRESSION)


@SETTINGS
@given(
    value=st.floats(min_value=1e-6, max_value=1e9, allow_nan=False),
    versions=st.integers(2, 30),
    repeats=st.integers(1, 9),
    hib=st.booleans(),
)
def test_a_constant_series_has_no_finding(
    value: float, versions: int, repeats: int, hib: bool
) -> None:
    labels = tuple(f"v{i}" for i in range(versions))
    series = SeriesSamples("c", labels, tuple((value,) * repeats for _ in labels), hib)
    assert verdict(series, labels[-2], labels[-1]) is Verdict.NO_CHANGE
    (cps,) = detect_change_points([series])
    assert cps.change_points == () and cps.spikes == ()
    assert all(g.gain == 1.0 for g in software_gains([series], labels[0], labels[-1]))


@SETTINGS
@given(
    per_accelerator=st.floats(min_value=1e-3, max_value=1e6),
    counts=st.sets(st.integers(1, 512), min_size=2, max_size=6),
)
def test_perfect_linear_scaling_has_no_finding(per_accelerator: float, counts: set[int]) -> None:
    key = scaling_key(submitter="S", accelerator="A", benchmark="b", scenario="s", metric="m")
    points = [
        ScalingPoint(key, v, n, per_accelerator * n, True) for v in ("1", "2") for n in counts
    ]
    groups = scaling_groups(points)
    assert all(abs(p.efficiency - 1.0) < 1e-9 for g in groups for p in g.points)
    assert efficiency_below_floor(groups) == ()
    assert scaling_findings(groups, version_order=["1", "2"]) == ()


@SETTINGS
@given(
    steps=st.lists(st.integers(-40, 40), min_size=8, max_size=60),
    jump=st.sampled_from([0, 80, -150, 300]),
    k=scales,
)
def test_change_points_do_not_depend_on_the_unit(steps: list[int], jump: int, k: float) -> None:
    values = np.array([1000.0 + s for s in steps])
    values[len(values) // 2 :] += jump
    assert find_change_points(values) == find_change_points(values * k)


@SETTINGS
@given(
    points=st.lists(st.tuples(st.integers(1, 200), st.integers(1, 5000)), min_size=1, max_size=25)
)
def test_the_pareto_front_is_undominated_and_covers_every_point(
    points: list[tuple[int, int]],
) -> None:
    x = np.array([p[0] for p in points], dtype=float)
    y = np.array([p[1] for p in points], dtype=float)
    fx, fy = pareto_front(x, y)
    assert np.all(np.diff(fx) > 0) and np.all(np.diff(fy) < 0)
    for a, b in zip(fx, fy, strict=True):
        assert not np.any((x >= a) & (y >= b) & ((x > a) | (y > b)))
    for a, b in zip(x, y, strict=True):
        assert np.any((fx >= a) & (fy >= b))


@SETTINGS
@given(p=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=50))
def test_q_values_are_at_least_the_p_values_and_keep_their_order(p: list[float]) -> None:
    arr = np.array(p)
    q = q_values(arr)
    assert np.all(q >= arr - 1e-12) and np.all(q <= 1.0)
    order = np.argsort(arr, kind="stable")
    assert np.all(np.diff(q[order]) >= -1e-12)
