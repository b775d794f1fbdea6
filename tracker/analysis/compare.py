"""Two-version comparison, the gate's engine (SPEC §4, anchors §5.3).

For every series that has both versions, :func:`collect_evidence` measures the
change ``g = s·ln(candidate/baseline)`` of the medians and tests it:

==========================================  ==========================================
data                                        method (:class:`Method`)
==========================================  ==========================================
≥ ``min_repeats`` samples on both sides     Welch's t on logs (< ``mwu_min_repeats``
                                            a side) or Mann–Whitney U, if the test can
                                            reach its family's level (``q_level``
                                            / 2, one-sided) at all; bootstrap CI of
                                            the change of medians; floor 2%
otherwise, ≥ ``min_history`` history points  Student-t prediction interval of the
                                            candidate's median against the log history
                                            up to the baseline, outliers set aside,
                                            variances pooled across the call's series
                                            (:mod:`~tracker.analysis.history`); floor 5%
otherwise                                   plain threshold on ``g``; floor 5%
a side with a value ≤ 0, NaN or ∞           none (INCONCLUSIVE)
==========================================  ==========================================

Every test is one-sided: each series gets the p of "worse" and of "better"
(``p_value`` is the one in the direction of ``g``). Then
:func:`~tracker.analysis.verdicts.decide_verdicts` puts them into the run's two
directional Benjamini–Hochberg families (regressions, improvements; its
docstring argues the choice) and gives each series a verdict. Each series also
gets the number of repeats a re-run needs to confirm a change of the size seen
(``advised_repeats``, shown with a SUSPECT).

For the history method ``g`` (the change shown) is measured against the
baseline's value, while the p-value and CI are those of the candidate against
the whole history (the shift from the history mean), and the floor is judged on
the change against the history's level (``level_g``): the history is one level
by the test's own assumption, and its mean estimates the baseline version's level
with a noise of ``σ/√n`` instead of ``σ``. A floor on the single baseline value
lost 2.5% of the 10% drops at 2% noise to that noise alone (issue 15). When the
baseline itself lies past the floor from the history's level on the side of the
change (a step *at* the baseline, reported by the previous comparison), the
floor is judged on ``g`` as before, unless the candidate has come back past
the floor towards a level it still lies past the floor below (an excursion down
at the baseline, :func:`_baseline_excursion`): then the change shown and judged
is the one against the level. The history runs from the start of
the current segment (``segment_starts``, e.g. an acknowledged change) to the
baseline, newest ``max_history`` points, the candidate excluded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import replace as _replace

import numpy as np
import numpy.typing as npt

from tracker.analysis.defaults import MAX_ADVISED_REPEATS, ComparePolicy
from tracker.analysis.history import prediction_tails
from tracker.analysis.series import SeriesSamples, direction, is_usable, level
from tracker.analysis.twosample import (
    Method,
    advised_repeats,
    bootstrap_ci,
    choose_test,
    mann_whitney_tails,
    min_attainable_p,
    welch_log_tails,
)
from tracker.analysis.verdicts import (
    FAMILIES,
    ChangeEvidence,
    Comparison,
    ComparisonRun,
    Verdict,
    decide_verdicts,
)

__all__ = [
    "ChangeEvidence",
    "Comparison",
    "ComparisonRun",
    "EvidenceSet",
    "Method",
    "Verdict",
    "collect_evidence",
    "compare_versions",
    "decide_verdicts",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def _directional(
    g: FloatArray, sign: FloatArray, p_less: FloatArray, p_greater: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """``(p in the direction of g, p in the other)`` from the tails of "candidate below/above".

    "Worse" is "below" when higher is better (``sign > 0``), "above" otherwise.
    """
    p_worse = np.where(sign > 0.0, p_less, p_greater)
    p_better = np.where(sign > 0.0, p_greater, p_less)
    down = g < 0.0
    return np.where(down, p_worse, p_better), np.where(down, p_better, p_worse)


def _advice(g: FloatArray, sd: FloatArray, policy: ComparePolicy) -> list[int]:
    n = advised_repeats(
        g,
        sd,
        level=policy.advice_level,
        power=policy.advice_power,
        least=policy.min_repeats,
        most=MAX_ADVISED_REPEATS,
    )
    return [int(v) for v in n]


@dataclass(frozen=True, slots=True)
class EvidenceSet:
    """Evidence for the series that have both versions, and the keys of those that do not."""

    evidence: tuple[ChangeEvidence, ...]
    missing: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Plan:
    """One series prepared for a vectorised group: its group key and raw values.

    ``base`` and ``cand`` are the samples (repeats) or the medians (single-value
    modes); ``history`` the usable per-version medians up to the baseline.
    """

    head: ChangeEvidence
    group: tuple[str, int, int]
    base: tuple[float, ...] = ()
    cand: tuple[float, ...] = ()
    history: tuple[float, ...] = ()


def _history(
    series: SeriesSamples, ib: int, ic: int, policy: ComparePolicy, start: str | None
) -> tuple[float, ...]:
    first = series.index(start) if start is not None else None
    lo = first if first is not None and first <= ib else 0
    window = series.samples[lo : ib + 1]
    values = [t[0] if len(t) == 1 else level(t) for t in window]
    if lo <= ic <= ib:
        del values[ic - lo]
    usable = [v for v in values if v > 0.0 and math.isfinite(v)]
    return tuple(usable[-policy.max_history :])


def _plan(
    series: SeriesSamples, baseline: str, candidate: str, policy: ComparePolicy, start: str | None
) -> _Plan | None:
    ib, ic = series.index(baseline), series.index(candidate)
    if ib is None or ic is None:
        return None
    a, b = series.samples[ib], series.samples[ic]
    repeats = min(len(a), len(b)) >= policy.min_repeats
    floor = policy.floor_repeats if repeats else policy.floor_single
    head = ChangeEvidence(
        series.key, baseline, candidate, series.higher_is_better, Method.NONE, floor, len(a), len(b)
    )
    if not a or not b or not all(is_usable(v) for v in (*a, *b)):
        note = "no usable value (empty, zero, negative or not finite) on a side"
        return _Plan(head=_replace(head, note=note), group=("none", 0, 0))
    if repeats:
        return _Plan(head=head, group=("repeats", len(a), len(b)), base=a, cand=b)
    history = _history(series, ib, ic, policy, start)
    base, cand = (level(a),), (level(b),)
    if len(history) >= policy.min_history:
        return _Plan(head, ("history", 0, 0), base=base, cand=cand, history=history)
    note = f"{len(history)} history points (< {policy.min_history}): plain threshold"
    return _Plan(head=_replace(head, note=note), group=("threshold", 0, 0), base=base, cand=cand)


def _evaluate_repeats(
    plans: Sequence[_Plan], policy: ComparePolicy, rng: np.random.Generator
) -> list[ChangeEvidence]:
    raw_a = np.array([p.base for p in plans], dtype=np.float64)
    raw_b = np.array([p.cand for p in plans], dtype=np.float64)
    la, lb = np.log(raw_a), np.log(raw_b)
    sign = np.array([direction(p.head.higher_is_better) for p in plans])
    n_a, n_b = raw_a.shape[1], raw_b.shape[1]
    method = choose_test(n_a, n_b, policy.mwu_min_repeats)
    min_p = min_attainable_p(method, n_a, n_b, policy.mwu_exact_max)
    med_a, med_b = np.median(raw_a, axis=1), np.median(raw_b, axis=1)
    g = sign * np.log(med_b / med_a)
    p: FloatArray | None = None
    other: FloatArray | None = None
    family_level = policy.q_level / FAMILIES
    if min_p < family_level:
        exact = max(n_a, n_b) <= policy.mwu_exact_max
        tails = (
            welch_log_tails(la, lb)
            if method is Method.WELCH_LOG
            else mann_whitney_tails(la, lb, exact=exact)
        )
        p, other = _directional(g, sign, *tails)
    sd = np.sqrt(0.5 * (la.var(axis=1, ddof=1) + lb.var(axis=1, ddof=1)))
    advice = _advice(g, sd, policy)
    lo, hi = bootstrap_ci(
        la, lb, sign, rng=rng, resamples=policy.bootstrap_resamples, confidence=policy.confidence
    )
    note = "" if p is not None else f"{method.value} cannot reach one-sided p < {family_level:g}"
    return [
        _replace(
            plan.head,
            method=method,
            baseline_level=float(med_a[i]),
            candidate_level=float(med_b[i]),
            g=float(g[i]),
            ci_low=float(lo[i]),
            ci_high=float(hi[i]),
            p_value=None if p is None else float(p[i]),
            p_opposite=None if other is None else float(other[i]),
            min_p=min_p,
            note=note,
            advised_repeats=advice[i],
        )
        for i, plan in enumerate(plans)
    ]


def _history_block(plans: Sequence[_Plan]) -> FloatArray:
    """The plans' log histories as one array, NaN after the end of a shorter one."""
    block = np.full((len(plans), max(len(p.history) for p in plans)), np.nan)
    for i, plan in enumerate(plans):
        block[i, : len(plan.history)] = np.log(plan.history)
    return block


def _with_history_note(
    ev: ChangeEvidence, removed: float, used: float, excursion: float | None = None
) -> ChangeEvidence:
    notes = []
    if excursion is not None:
        notes.append(
            f"the baseline {ev.baseline} lies {100.0 * math.expm1(excursion):+.1f}% from the "
            "level of its history and the candidate between them: compared with that level"
        )
    if removed >= 1.0:
        notes.append(
            f"{int(removed)} of {int(removed + used)} history points set aside as outliers"
        )
    judged = ev.floor_g
    if ev.g is not None and judged is not None and judged != ev.g:
        if (abs(ev.g) > ev.floor) != (abs(judged) > ev.floor):
            notes.append(
                f"{100.0 * math.expm1(judged):+.1f}% against the level of the history "
                "(the floor is judged on it)"
            )
    return _replace(ev, note="; ".join(notes)) if notes else ev


def _evaluate_history(plans: Sequence[_Plan], policy: ComparePolicy) -> list[ChangeEvidence]:
    """Every single-value plan of the call in one block, so that the variances are pooled."""
    base = np.array([p.base[0] for p in plans], dtype=np.float64)
    cand = np.array([p.cand[0] for p in plans], dtype=np.float64)
    sign = np.array([direction(p.head.higher_is_better) for p in plans])
    found = prediction_tails(
        _history_block(plans),
        np.log(cand),
        outlier_p=policy.history_outlier_p,
        confidence=policy.confidence,
        pool_min_series=policy.pool_min_series,
    )
    level = sign * found.shift
    floors = np.array([p.head.floor for p in plans])
    g = sign * np.log(cand / base)
    excursion = _baseline_excursion(g, level, floors)
    offset = np.log(base) - np.log(cand) + found.shift  # the baseline against the level, raw
    base = np.where(excursion, cand * np.exp(-found.shift), base)
    g = np.where(excursion, level, g)
    p, other = _directional(g, sign, found.p_less, found.p_greater)
    advice = _advice(g, found.sd, policy)
    ends = np.sort(np.stack([sign * found.low, sign * found.high]), axis=0)
    return [
        _with_history_note(
            _replace(
                plan.head,
                method=Method.PREDICTION_INTERVAL,
                n_baseline=len(plan.history),
                baseline_level=float(base[i]),
                candidate_level=float(cand[i]),
                g=float(g[i]),
                ci_low=float(ends[0, i]),
                ci_high=float(ends[1, i]),
                p_value=float(p[i]),
                p_opposite=float(other[i]),
                min_p=0.0,
                advised_repeats=advice[i],
                level_g=float(level[i]),
                baseline_outlier=bool(found.last_outlier[i]),
            ),
            float(found.outliers[i]),
            float(found.used[i]),
            float(offset[i]) if excursion[i] else None,
        )
        for i, plan in enumerate(plans)
    ]


def _baseline_excursion(g: FloatArray, level: FloatArray, floor: FloatArray) -> BoolArray:
    """Where the candidate lies past the floor below its history's level *and* past the
    floor above the baseline: the baseline was a one-off excursion down (a spike, or a
    step the candidate partly recovered from), and the candidate is judged and shown
    against the level (a 10% drop right after a 25% spike down is still a 10% drop).
    Within the floor of the baseline it stays judged on the pair (a step *at* the
    baseline). Only downwards: below a baseline far *above* the level, calling the
    candidate an improvement could hide a real regression.
    """
    return (level < -floor) & (g > floor)


def _evaluate_threshold(plans: Sequence[_Plan]) -> list[ChangeEvidence]:
    out = []
    for plan in plans:
        base, cand = plan.base[0], plan.cand[0]
        g = direction(plan.head.higher_is_better) * math.log(cand / base)
        head = _replace(plan.head, method=Method.THRESHOLD, g=g)
        out.append(_replace(head, baseline_level=base, candidate_level=cand))
    return out


def _evaluate(
    members: Sequence[_Plan], policy: ComparePolicy, rng: np.random.Generator
) -> list[ChangeEvidence]:
    """The evidence of one group of plans (all of one kind and shape)."""
    kind = members[0].group[0]
    if kind == "repeats":
        return _evaluate_repeats(members, policy, rng)
    if kind == "history":
        return _evaluate_history(members, policy)
    if kind == "threshold":
        return _evaluate_threshold(members)
    return [m.head for m in members]


def collect_evidence(
    series: Sequence[SeriesSamples],
    baseline: str,
    candidate: str,
    *,
    rng: np.random.Generator,
    policy: ComparePolicy | None = None,
    segment_starts: Mapping[str, str] | None = None,
) -> EvidenceSet:
    """Measure and test baseline → candidate on every series that has both versions.

    Series of the same shape are tested together (vectorised). ``rng`` drives the
    bootstrap; pass a seeded ``numpy.random.default_rng(seed)`` for reproducible CIs.
    ``segment_starts`` maps a series key to the version where its current segment
    (and so its usable history) begins.
    """
    pol = policy or ComparePolicy()
    starts = segment_starts or {}
    plans: list[_Plan] = []
    missing: list[str] = []
    for s in series:
        plan = _plan(s, baseline, candidate, pol, starts.get(s.key))
        if plan is None:
            missing.append(s.key)
        else:
            plans.append(plan)
    groups: dict[tuple[str, int, int], list[int]] = {}
    for i, plan in enumerate(plans):
        groups.setdefault(plan.group, []).append(i)
    results: list[ChangeEvidence | None] = [None] * len(plans)
    for group in sorted(groups):
        found = _evaluate([plans[i] for i in groups[group]], pol, rng)
        for i, evidence in zip(groups[group], found, strict=True):
            results[i] = evidence
    return EvidenceSet(tuple(e for e in results if e is not None), tuple(missing))


def compare_versions(
    series: Sequence[SeriesSamples],
    baseline: str,
    candidate: str,
    *,
    rng: np.random.Generator,
    policy: ComparePolicy | None = None,
    segment_starts: Mapping[str, str] | None = None,
) -> ComparisonRun:
    """:func:`collect_evidence` and :func:`decide_verdicts` for a run of one version pair."""
    pol = policy or ComparePolicy()
    found = collect_evidence(
        series, baseline, candidate, rng=rng, policy=pol, segment_starts=segment_starts
    )
    return decide_verdicts(
        found.evidence, q_level=pol.q_level, missing=found.missing, suspect_p=pol.suspect_p
    )
