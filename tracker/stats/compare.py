"""Two-version comparisons and their verdicts: each series' evidence, two directional BH
families, the rules that turn them into verdicts, and what each test could have seen.

Evidence
--------
For every series that has both versions, :func:`collect_evidence` measures the
change ``g = s·ln(candidate/baseline)`` of the medians and tests it:

==========================================  ==========================================
data                                        method (:class:`Method`)
==========================================  ==========================================
≥ ``min_repeats`` samples on both sides     the moderated t on logs, the within-version
                                            variance shared across the call's series
                                            (< ``mwu_min_repeats`` a side; Welch's t
                                            where the series' own variance lies past
                                            the shared one, or the series do not share
                                            one: :mod:`~tracker.stats.significance`) or
                                            Mann–Whitney U, if the test can reach its
                                            family's level (``q_level`` / 2,
                                            one-sided) at all; bootstrap CI of the
                                            change of medians; floor 2%
otherwise, ≥ ``min_history`` history points  Student-t prediction interval of the
                                            candidate's median against the log history
                                            up to the baseline, outliers set aside,
                                            variances pooled across the call's series
                                            (:mod:`~tracker.stats.history`); floor 5%
otherwise                                   plain threshold on ``g``; floor 5%
a side with a value ≤ 0, NaN or ∞           none (INCONCLUSIVE)
==========================================  ==========================================

Every test is one-sided: each series gets the p of "worse" and of "better"
(``p_value`` is the one in the direction of ``g``). Then
:func:`~tracker.stats.compare.decide_verdicts` puts them into the run's two
directional Benjamini–Hochberg families (regressions, improvements; argued
below) and gives each series a verdict. Each series also
gets the number of repeats a re-run needs to confirm a change of the size seen
(``advised_repeats``, shown with a SUSPECT).

For the history method ``g`` (the change shown) is measured against the
baseline's value, while the p-value and CI are those of the candidate against
the whole history (the shift from the history mean), and the floor is judged on
the change against the history's level (``level_g``): the history is one level
by the test's own assumption, and its mean estimates the baseline version's level
with a noise of ``σ/√n`` instead of ``σ``. A floor on the single baseline value
lost 2.5% of the 10% drops at 2% noise to that noise alone
(``benchmarks/bench_detection.py``). When the
baseline itself lies past the floor from the history's level on the side of the
change (a step *at* the baseline, reported by the previous comparison), the
floor is judged on ``g`` as before, unless the candidate has come back past
the floor towards a level it still lies past the floor below (an excursion down
at the baseline, :func:`_baseline_excursion`): then the change shown and judged
is the one against the level. The history runs from the start of
the current segment (``segment_starts``, e.g. an acknowledged change) to the
baseline, newest ``max_history`` points, the candidate excluded.

Directional testing
-------------------
Every test is one-sided. A comparison holds two hypotheses, "the candidate is
worse" and "the candidate is better", each with its one-sided p-value
(``p_worse + p_better ≈ 1``). :func:`decide_verdicts` puts the run's ``p_worse``
into one Benjamini–Hochberg family (the *regression family*) and its
``p_better`` into another (the *improvement family*), each of the run's size
``m``, each at ``q_level / 2``. The q-value reported for a comparison is twice
its BH q in the family of its direction (at most 1), so that "q below
``q_level``" is the rule everywhere (reports, gate policies, per-series levels).

Why each family at half the level: the false-discovery share of the whole run
is at most the sum of the families' (``V₁/R ≤ V₁/R₁`` when ``R ≥ R₁``), so two
families at ``q_level / 2`` keep the run's at ``q_level``, which is what the
spec's "Benjamini–Hochberg across every test of one run" promises a reader of
the gate. The bound is reached where it matters most: when nothing changed, the
run's false-discovery rate is the chance that it confirms anything, and two
families at the full level each confirmed something in about ``2·q_level`` of
such runs (``tests/stats/test_directional.py``). With a tenth of 1,000 single-value
series losing 10%, the full level also let 0.7% of the unchanged ones become
REGRESSION at 10 and 20 versions of history, where the target is 0.3%; a
z-test that *knows* each series' level and noise lets 0.56% through at the full
level and 0.32% at half of it (``benchmarks/bench_detection.py``,
``single_oracle``), so no test of the data could have met that at the full level.

Why two families and not one family of ``2m`` directional hypotheses: in the
single family, half of the ``2m`` p-values are ``≥ 0.5`` and never rejected,
so every q-value is ``p_one-sided · 2m / rank`` = ``p_two-sided · m / rank``:
the two-sided test, whose rank counts the discoveries of both directions. The
two families give the same cut-off when a run has discoveries in one direction
only and a stricter one for each direction when it has both; what they add is
that each verdict is confirmed by the test of its own direction, a series can be
a discovery in one family only (its two p-values cannot both be small), and the
regression family's guarantee holds for the regressions alone, whatever the run
found among the improvements. The power for one value per version comes from the
test itself (the prediction interval on pooled variances and the floor against
the history's level, :mod:`~tracker.stats.history`), not from the split.

Rules
-----
* tested: ``|g| ≤ floor`` → NO_CHANGE (for the prediction interval ``g`` is
  :attr:`ChangeEvidence.floor_g`, mostly the change against the history's level);
  past the floor and confirmed in the family of its direction (q below
  ``q_level``; for repeats also the bootstrap CI of the medians on the same side
  of 0) → REGRESSION or IMPROVEMENT; a drop
  past the floor that is not confirmed but whose own one-sided p is below
  ``suspect_p`` (the test alone says "worse", the family does not) → SUSPECT;
  else NO_CHANGE.
* the test cannot reach its family's level, one-sided ``p < q_level / 2`` (asv's
  guard; exact Mann–Whitney U at 3 against 3): a drop past the floor → SUSPECT,
  else INCONCLUSIVE.
* plain threshold (no history): past twice the floor → REGRESSION / IMPROVEMENT; a
  drop past the floor → SUSPECT; else NO_CHANGE.
* no usable values → INCONCLUSIVE.

A SUSPECT carries ``advised_repeats``: how many repeats of each version a re-run
needs to confirm a drop of the size seen (see
:func:`tracker.stats.significance.advised_repeats`); :func:`judge` writes it into
the comparison's note.

Sensitivity
-----------
A NO_CHANGE says little without what the test could have seen. Every comparison
carries :attr:`Comparison.detectable_g`, the smallest drop it would have confirmed
with probability ``sensitivity_power`` (0.8): the detection limit
(:func:`~tracker.stats.significance.detectable_change`) of its own test (standard
error and df: its repeats and noise, the shared variance included) at the level the
run's regression family asks of one more discovery, ``q/2 · (R + 1) / m`` with ``R``
the family's discoveries and ``m`` its size (the family's Benjamini–Hochberg
cut-off), and never below the series' floor. A test that cannot reach that level
at all (exact Mann–Whitney U at 3 against 3) can detect nothing (∞); a plain
threshold detects twice its floor. :attr:`Comparison.under_powered` marks the
series whose detection limit lies past their floor, and
:meth:`ComparisonRun.blind_share` is the share of a run's series that could not
see a change of a given size (5% by default,
:data:`~tracker.stats.defaults.SENSITIVITY_CHANGE`). At 3 repeats and CV 2% the
moderated t detects about 6% at 1,000 series with a tenth of them regressed, and
8% in a run with no discovery (Bonferroni's level): with 3 repeats, a lone 5%
regression among 1,000 series is not confirmed, and the run says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Protocol

import numpy as np
import numpy.typing as npt

from tracker.stats.defaults import (
    MAX_ADVISED_REPEATS,
    Q_LEVEL,
    SENSITIVITY_CHANGE,
    SENSITIVITY_POWER,
    SUSPECT_P,
    ComparePolicy,
)
from tracker.stats.history import prediction_tails
from tracker.stats.series import SeriesSamples, direction, is_usable, level, log_ratio
from tracker.stats.significance import (
    FamilyMethod,
    Method,
    NoisePrior,
    advised_repeats,
    bootstrap_ci,
    choose_test,
    detectable_change,
    fit_noise_prior,
    mann_whitney_tails,
    min_attainable_p,
    q_values,
    repeat_t_tails,
    within_variances,
)

__all__ = [
    "ChangeEvidence",
    "blind_share",
    "Comparison",
    "ComparisonRun",
    "EvidenceSet",
    "FAMILIES",
    "Method",
    "Sensitive",
    "Verdict",
    "collect_evidence",
    "compare_versions",
    "decide_verdicts",
    "detectable_changes",
    "directional_q_values",
    "judge",
    "sensitivity_words",
    "suspect_advice",
    "verdict_of",
]


FAMILIES = 2
"""The run's level is split evenly between the regression and improvement families."""


def sensitivity_words(detectable_pct: float | None, under_powered: bool) -> str:
    """``could detect ≥ 4.1%``, ``could detect no change`` (empty when untested), with
    ``, under-powered`` where that lies past the floor."""
    if detectable_pct is None:
        return ""
    pct = detectable_pct
    text = "could detect no change" if math.isinf(pct) else f"could detect ≥ {pct:.1f}%"
    return text + (", under-powered" if under_powered else "")


class Verdict(StrEnum):
    """The outcome of one comparison."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    SUSPECT = "suspect"
    """Worse past the floor, significant on its own but not confirmed by the family."""
    NO_CHANGE = "no_change"
    INCONCLUSIVE = "inconclusive"
    """No usable values, or a test that could never reach significance."""


@dataclass(frozen=True, slots=True)
class ChangeEvidence:
    """What one series says about baseline → candidate, before the family's q-values.

    ``g``, ``ci_low`` and ``ci_high`` are direction-aware log-ratios (negative is
    worse). ``n_baseline`` counts the baseline's samples, or the history points for
    the prediction interval, where the CI is that of the candidate's shift from the
    history mean (``g`` is against the baseline). ``min_p`` is the smallest p the
    test could give.

    ``p_value`` is one-sided, in the direction of ``g``: the p of "worse" when
    ``g < 0``, of "better" otherwise; ``p_opposite`` is the one-sided p of the
    other direction (``None``: ``1 − p_value``). ``advised_repeats`` is the number
    of repeats per version a re-run needs to confirm a change of size ``|g|``.

    ``level_g`` (prediction interval only) is the candidate's direction-aware change
    against the *level* of its history (the mean of the kept points), on which the
    floor is judged (:attr:`floor_g`); ``None`` for the other methods.

    ``se`` and ``test_df`` are the standard error (log units) and degrees of freedom of
    the test's statistic, from which the sensitivity is computed (``None``: untested,
    or a plain threshold).
    """

    key: str
    baseline: str
    candidate: str
    higher_is_better: bool
    method: Method
    floor: float
    n_baseline: int
    n_candidate: int
    baseline_level: float | None = None
    candidate_level: float | None = None
    g: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    min_p: float | None = None
    note: str = ""
    p_opposite: float | None = None
    advised_repeats: int | None = None
    level_g: float | None = None
    baseline_outlier: bool | None = None
    se: float | None = None
    test_df: float | None = None

    @property
    def floor_g(self) -> float | None:
        """The direction-aware change the floor is judged on.

        ``level_g`` when set, unless the baseline itself lies past the floor from the
        history's level on the same side (``level_g − g`` is the baseline's offset)
        and the history's outlier test set it aside (``baseline_outlier``; ``None``:
        not known): then ``g``, so that a step *at* the baseline, which the previous
        comparison found, is not found again at the next version. A baseline past the
        floor that the test kept is noise the previous comparison could not confirm,
        and a candidate a further step below it is judged against the level. Past the
        floor it has the sign of ``g``.
        """
        if self.level_g is None or self.g is None:
            return self.g
        offset = self.level_g - self.g
        stepped = (
            abs(offset) > self.floor
            and (offset < 0.0) == (self.level_g < 0.0)
            and self.baseline_outlier is not False
        )
        return self.g if stepped else self.level_g

    def one_sided(self) -> tuple[float, float] | None:
        """``(p_worse, p_better)``, or ``None`` when untested."""
        if self.p_value is None or self.g is None:
            return None
        other = 1.0 - self.p_value if self.p_opposite is None else self.p_opposite
        return (self.p_value, other) if self.g < 0.0 else (other, self.p_value)

    @property
    def ratio(self) -> float | None:
        """``candidate_level / baseline_level`` (raw, not direction-aware)."""
        if self.baseline_level is None or self.candidate_level is None:
            return None
        return self.candidate_level / self.baseline_level

    @property
    def delta_pct(self) -> float | None:
        """The raw relative change of the metric in percent (+5.0 means 5% higher)."""
        ratio = self.ratio
        return None if ratio is None else 100.0 * (ratio - 1.0)

    @property
    def ci_pct(self) -> tuple[float, float] | None:
        """The CI as raw relative changes in percent, low to high."""
        if self.ci_low is None or self.ci_high is None:
            return None
        s = direction(self.higher_is_better)
        ends = sorted(100.0 * math.expm1(s * g) for g in (self.ci_low, self.ci_high))
        return ends[0], ends[1]


@dataclass(frozen=True, slots=True)
class Comparison:
    """One series' evidence with its q-value (``None`` when untested) and verdict."""

    evidence: ChangeEvidence
    q_value: float | None
    verdict: Verdict
    q_level: float | None = None
    """The level the verdict was judged at (the run's, or its series' own threshold)."""
    detectable_g: float | None = None
    """The smallest drop (direction-aware log units, ∞: none) the series could have confirmed
    (module docstring, "Sensitivity"); ``None`` when untested."""

    @property
    def key(self) -> str:
        """The series key."""
        return self.evidence.key

    @property
    def detectable_pct(self) -> float | None:
        """:attr:`detectable_g` as the raw change of the metric in percent, the worse way
        (4.1: a throughput 4.1% lower, or a latency 4.1% higher)."""
        g = self.detectable_g
        if g is None:
            return None
        if math.isinf(g):
            return math.inf
        return 100.0 * (-math.expm1(-g) if self.evidence.higher_is_better else math.expm1(g))

    @property
    def under_powered(self) -> bool:
        """Whether the smallest change the series could confirm lies past its floor."""
        g = self.detectable_g
        return g is not None and g > self.evidence.floor + 1e-12

    def sensitivity_text(self) -> str:
        """:func:`sensitivity_words` of this comparison."""
        return sensitivity_words(self.detectable_pct, self.under_powered)


@dataclass(frozen=True, slots=True)
class ComparisonRun:
    """The verdicts of one analysis run; each directional family had ``family_size`` p-values."""

    comparisons: tuple[Comparison, ...]
    family_size: int
    q_level: float
    family_method: FamilyMethod = "bh"
    missing: tuple[str, ...] = ()

    def with_verdict(self, verdict: Verdict) -> tuple[Comparison, ...]:
        """The comparisons that got ``verdict``."""
        return tuple(c for c in self.comparisons if c.verdict is verdict)

    def counts(self) -> dict[Verdict, int]:
        """How many comparisons got each verdict (every verdict listed)."""
        out = dict.fromkeys(Verdict, 0)
        for c in self.comparisons:
            out[c.verdict] += 1
        return out

    def blind_share(self, change: float = SENSITIVITY_CHANGE) -> float | None:
        """:func:`blind_share` of the run's comparisons."""
        return blind_share(self.comparisons, change)


class Sensitive(Protocol):
    """Anything with a detection limit in percent (a comparison, a gate's series)."""

    @property
    def detectable_pct(self) -> float | None:
        """The smallest change (%, the worse way) it could have confirmed."""
        ...


def blind_share(
    comparisons: Sequence[Sensitive], change: float = SENSITIVITY_CHANGE
) -> float | None:
    """The share of ``comparisons`` that could not see a ``change`` (0.05: 5% the worse
    way): untested, or a detection limit past it; ``None`` without comparisons."""
    if not comparisons:
        return None
    pct = 100.0 * change
    blind = sum(c.detectable_pct is None or c.detectable_pct > pct + 1e-9 for c in comparisons)
    return blind / len(comparisons)


def _confirmed(ev: ChangeEvidence, q: float | None, q_level: float, worse: bool) -> bool:
    if q is None or q >= q_level:
        return False
    if ev.method is Method.PREDICTION_INTERVAL:
        return True  # its CI is the test's own two-sided interval: the one-sided q decides
    if worse:
        return ev.ci_high is not None and ev.ci_high < 0.0
    return ev.ci_low is not None and ev.ci_low > 0.0


def _verdict(
    ev: ChangeEvidence, q: float | None, q_level: float, suspect_p: float = SUSPECT_P
) -> Verdict:
    g, floor = ev.floor_g, ev.floor
    if g is None:
        return Verdict.INCONCLUSIVE
    if ev.method is Method.THRESHOLD:
        if abs(g) > 2.0 * floor:
            return Verdict.REGRESSION if g < 0 else Verdict.IMPROVEMENT
        return Verdict.SUSPECT if g < -floor else Verdict.NO_CHANGE
    if ev.p_value is None:
        return Verdict.SUSPECT if g < -floor else Verdict.INCONCLUSIVE
    if abs(g) <= floor:
        return Verdict.NO_CHANGE
    worse = g < 0
    if _confirmed(ev, q, q_level, worse):
        return Verdict.REGRESSION if worse else Verdict.IMPROVEMENT
    return Verdict.SUSPECT if worse and ev.p_value < suspect_p else Verdict.NO_CHANGE


def verdict_of(
    evidence: ChangeEvidence,
    q_value: float | None,
    q_level: float,
    *,
    suspect_p: float = SUSPECT_P,
) -> Verdict:
    """The verdict of one comparison given its q-value (the rules of the module docstring).

    The gate uses it to apply per-series floors and q levels to a run's evidence
    (the floor is ``evidence.floor``); the q-values stay those of the run's families.
    """
    return _verdict(evidence, q_value, q_level, suspect_p)


def suspect_advice(evidence: ChangeEvidence) -> str:
    """What a SUSPECT asks for: the change seen and the repeats that would settle it."""
    delta = evidence.delta_pct
    seen = f"{delta:+.1f}%" if delta is not None else "worse"
    n = evidence.advised_repeats
    if n is None:
        return f"{seen} past the floor, not confirmed; re-run both versions with repeats"
    return (
        f"{seen} past the floor, not confirmed; re-run both versions with {n} repeats "
        "each to confirm or clear it"
    )


def judge(
    evidence: ChangeEvidence,
    q_value: float | None,
    q_level: float,
    *,
    suspect_p: float = SUSPECT_P,
    detectable_g: float | None = None,
) -> Comparison:
    """:func:`verdict_of` as a :class:`Comparison` (with its sensitivity, ``detectable_g``);
    a SUSPECT's note carries its advice."""
    found = _verdict(evidence, q_value, q_level, suspect_p)
    if found is Verdict.SUSPECT:
        advice = suspect_advice(evidence)
        note = f"{evidence.note}; {advice}" if evidence.note else advice
        evidence = replace(evidence, note=note)
    return Comparison(evidence, q_value, found, q_level, detectable_g)


def detectable_changes(
    evidence: Sequence[ChangeEvidence],
    q_values_: Sequence[float | None],
    q_levels: Sequence[float],
    *,
    power: float = SENSITIVITY_POWER,
) -> list[float | None]:
    """Each comparison's smallest confirmable drop (module docstring, "Sensitivity"):
    ``q_values_`` are the run's (:func:`directional_q_values`), ``q_levels`` each series'
    level. ``None`` where a comparison has no change to test."""
    tested = [i for i, q in enumerate(q_values_) if q is not None]
    found = 0
    for i in tested:
        g, q = evidence[i].g, q_values_[i]
        found += g is not None and g < 0.0 and q is not None and q < q_levels[i]
    share = (found + 1) / max(len(tested), 1)
    out: list[float | None] = [None] * len(evidence)
    rows = [i for i, ev in enumerate(evidence) if ev.se is not None and ev.test_df is not None]
    if rows:
        level = np.array([min(0.5, q_levels[i] / FAMILIES * share) for i in rows])
        se = np.array([evidence[i].se for i in rows], dtype=np.float64)
        df = np.array([evidence[i].test_df for i in rows], dtype=np.float64)
        limit = detectable_change(se, df, level=level, power=power)
        for j, i in enumerate(rows):
            ev = evidence[i]
            reachable = ev.min_p is None or ev.min_p < level[j]
            out[i] = max(ev.floor, float(limit[j])) if reachable else math.inf
    for i, ev in enumerate(evidence):
        if ev.method is Method.THRESHOLD and ev.g is not None:
            out[i] = 2.0 * ev.floor
    return out


def directional_q_values(
    evidence: Sequence[ChangeEvidence], family_method: FamilyMethod = "bh"
) -> tuple[list[float | None], int]:
    """Each comparison's run q-value, from the family of its direction, and the family size.

    The regression family holds every tested comparison's ``p_worse``, the
    improvement family its ``p_better`` (module docstring); a comparison's q is
    twice (at most 1) the BH q of the family its ``g`` points to: each family at
    half the run's level. ``None`` for untested evidence.
    """
    tested = [i for i, ev in enumerate(evidence) if ev.one_sided() is not None]
    pairs = [evidence[i].one_sided() for i in tested]
    worse = np.array([p[0] for p in pairs if p is not None], dtype=np.float64)
    better = np.array([p[1] for p in pairs if p is not None], dtype=np.float64)
    q_worse, q_better = q_values(worse, family_method), q_values(better, family_method)
    qs: list[float | None] = [None] * len(evidence)
    for j, i in enumerate(tested):
        g = evidence[i].g
        family_q = q_worse[j] if g is not None and g < 0.0 else q_better[j]
        qs[i] = min(1.0, FAMILIES * float(family_q))
    return qs, len(tested)


def decide_verdicts(
    evidence: Sequence[ChangeEvidence],
    *,
    q_level: float = Q_LEVEL,
    family_method: FamilyMethod = "bh",
    missing: Sequence[str] = (),
    suspect_p: float = SUSPECT_P,
    power: float = SENSITIVITY_POWER,
) -> ComparisonRun:
    """The two directional families over all ``evidence`` of a run, then each verdict and
    its sensitivity (at ``power``).

    Pass the evidence of every version pair and metric analysed in the run
    together, so that the families (and their reported size) are the whole run.
    """
    qs, family_size = directional_q_values(evidence, family_method)
    limits = detectable_changes(evidence, qs, [q_level] * len(evidence), power=power)
    comparisons = tuple(
        judge(ev, qs[i], q_level, suspect_p=suspect_p, detectable_g=limits[i])
        for i, ev in enumerate(evidence)
    )
    return ComparisonRun(comparisons, family_size, q_level, family_method, tuple(missing))


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
        return _Plan(head=replace(head, note=note), group=("none", 0, 0))
    if repeats:
        return _Plan(head=head, group=("repeats", len(a), len(b)), base=a, cand=b)
    history = _history(series, ib, ic, policy, start)
    base, cand = (level(a),), (level(b),)
    if len(history) >= policy.min_history:
        return _Plan(head, ("history", 0, 0), base=base, cand=cand, history=history)
    note = f"{len(history)} history points (< {policy.min_history}): plain threshold"
    return _Plan(head=replace(head, note=note), group=("threshold", 0, 0), base=base, cand=cand)


def _samples(plans: Sequence[_Plan]) -> tuple[FloatArray, FloatArray]:
    """The samples of a group of repeats plans (one shape): baseline, candidate."""
    raw_a = np.array([p.base for p in plans], dtype=np.float64)
    raw_b = np.array([p.cand for p in plans], dtype=np.float64)
    return raw_a, raw_b


def _repeat_prior(
    plans: Sequence[_Plan], groups: Mapping[tuple[str, int, int], Sequence[int]], pol: ComparePolicy
) -> NoisePrior:
    """The noise prior of every repeats plan of the call tested by the t-test (all shapes
    together: a variance on ``n_a + n_b − 2`` df each; :func:`fit_noise_prior`)."""
    variances: list[FloatArray] = []
    dfs: list[FloatArray] = []
    for (kind, n_a, n_b), members in groups.items():
        if kind == "repeats" and choose_test(n_a, n_b, pol.mwu_min_repeats) is Method.MODERATED_T:
            raw_a, raw_b = _samples([plans[i] for i in members])
            var, df = within_variances(np.log(raw_a), np.log(raw_b))
            variances.append(var)
            dfs.append(df)
    if not variances or pol.pool_min_series == 0:
        return NoisePrior()
    return fit_noise_prior(
        np.concatenate(variances),
        np.concatenate(dfs),
        min_series=pol.pool_min_series,
        outlier_level=pol.noise_outlier_level,
        shared_level=pol.shared_noise_level,
    )


@dataclass(frozen=True, slots=True)
class _Tested:
    """A group's test: directional p-values (``None``: the test cannot reach the level),
    standard errors and df, each row's method, and a note per row."""

    p: FloatArray | None
    other: FloatArray | None
    se: FloatArray
    df: FloatArray
    methods: list[Method]
    notes: list[str]


def _test_repeats(
    la: FloatArray,
    lb: FloatArray,
    g: FloatArray,
    sign: FloatArray,
    policy: ComparePolicy,
    prior: NoisePrior,
) -> _Tested:
    """The test of one group of repeats plans: the moderated t (Welch's t per row where
    the prior does not hold) below ``mwu_min_repeats`` a side, else Mann–Whitney U (its
    standard error from the within-version variance and its 3/π efficiency)."""
    n_a, n_b = la.shape[1], lb.shape[1]
    method = choose_test(n_a, n_b, policy.mwu_min_repeats)
    m = la.shape[0]
    if method is Method.MODERATED_T:
        test = repeat_t_tails(la, lb, prior)
        p, other = _directional(g, sign, test.p_less, test.p_greater)
        own_note = "" if not prior.pools else _OWN_NOTE
        if not math.isnan(prior.shared_p) and not prior.pools:
            own_note = _NOT_SHARED_NOTE.format(p=prior.shared_p)
        methods = [Method.WELCH_LOG if own else Method.MODERATED_T for own in test.own]
        notes = [own_note if own else "" for own in test.own]
        return _Tested(p, other, test.se, test.df, methods, notes)
    min_p = min_attainable_p(method, n_a, n_b, policy.mwu_exact_max)
    variances, df = within_variances(la, lb)
    se = np.sqrt(variances * (1.0 / n_a + 1.0 / n_b) * math.pi / 3.0)  # MWU's efficiency 3/π
    family_level = policy.q_level / FAMILIES
    if min_p >= family_level:
        note = f"{method.value} cannot reach one-sided p < {family_level:g}"
        return _Tested(None, None, se, df, [method] * m, [note] * m)
    exact = max(n_a, n_b) <= policy.mwu_exact_max
    p, other = _directional(g, sign, *mann_whitney_tails(la, lb, exact=exact))
    return _Tested(p, other, se, df, [method] * m, [""] * m)


_OWN_NOTE = (
    "its repeats vary more than the run's shared noise explains: tested on its own "
    "variances (Welch's t)"
)
_NOT_SHARED_NOTE = (
    "the run's series do not share one noise level (p = {p:.2g}): each tested on its own "
    "variances (Welch's t)"
)


def _evaluate_repeats(
    plans: Sequence[_Plan], policy: ComparePolicy, rng: np.random.Generator, prior: NoisePrior
) -> list[ChangeEvidence]:
    """The evidence of one group of repeats plans (one shape): change of medians, test,
    bootstrap CI, advised repeats, and the standard error the sensitivity is made of."""
    raw_a, raw_b = _samples(plans)
    la, lb = np.log(raw_a), np.log(raw_b)
    sign = np.array([direction(p.head.higher_is_better) for p in plans])
    n_a, n_b = la.shape[1], lb.shape[1]
    min_p = min_attainable_p(
        choose_test(n_a, n_b, policy.mwu_min_repeats), n_a, n_b, policy.mwu_exact_max
    )
    med_a, med_b = np.median(raw_a, axis=1), np.median(raw_b, axis=1)
    g = sign * log_ratios(med_b, med_a)
    tested = _test_repeats(la, lb, g, sign, policy, prior)
    advice = _advice(g, tested.se / math.sqrt(1.0 / n_a + 1.0 / n_b), policy)
    lo, hi = bootstrap_ci(
        la, lb, sign, rng=rng, resamples=policy.bootstrap_resamples, confidence=policy.confidence
    )
    p, other = tested.p, tested.other
    return [
        replace(
            plan.head,
            method=tested.methods[i],
            baseline_level=float(med_a[i]),
            candidate_level=float(med_b[i]),
            g=float(g[i]),
            ci_low=float(lo[i]),
            ci_high=float(hi[i]),
            p_value=None if p is None else float(p[i]),
            p_opposite=None if other is None else float(other[i]),
            min_p=min_p,
            note=tested.notes[i],
            advised_repeats=advice[i],
            se=float(tested.se[i]),
            test_df=float(tested.df[i]),
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
    return replace(ev, note="; ".join(notes)) if notes else ev


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
    g = sign * log_ratios(cand, base)
    excursion = _baseline_excursion(g, level, floors)
    offset = np.log(base) - np.log(cand) + found.shift  # the baseline against the level, raw
    base = np.where(excursion, cand * np.exp(-found.shift), base)
    g = np.where(excursion, level, g)
    p, other = _directional(g, sign, found.p_less, found.p_greater)
    advice = _advice(g, found.sd, policy)
    se = found.sd * np.sqrt(1.0 + 1.0 / np.maximum(found.used, 1.0))
    ends = np.sort(np.stack([sign * found.low, sign * found.high]), axis=0)
    return [
        _with_history_note(
            replace(
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
                se=float(se[i]),
                test_df=float(found.df[i]),
            ),
            float(found.outliers[i]),
            float(found.used[i]),
            float(offset[i]) if excursion[i] else None,
        )
        for i, plan in enumerate(plans)
    ]


def log_ratios(new: FloatArray, base: FloatArray) -> FloatArray:
    """``ln(new/base)`` element by element, as :func:`~tracker.stats.series.log_ratio`: a
    ratio that underflows or overflows is taken as the difference of the logs."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        ratio = new / base
        exact = (ratio >= _NORMAL_MIN) & (ratio < np.inf)
        return np.where(exact, np.log(np.where(exact, ratio, 1.0)), np.log(new) - np.log(base))


_NORMAL_MIN = float(np.finfo(np.float64).tiny)


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
        g = direction(plan.head.higher_is_better) * log_ratio(cand, base)
        head = replace(plan.head, method=Method.THRESHOLD, g=g)
        out.append(replace(head, baseline_level=base, candidate_level=cand))
    return out


def _evaluate(
    members: Sequence[_Plan], policy: ComparePolicy, rng: np.random.Generator, prior: NoisePrior
) -> list[ChangeEvidence]:
    """The evidence of one group of plans (all of one kind and shape)."""
    kind = members[0].group[0]
    if kind == "repeats":
        return _evaluate_repeats(members, policy, rng, prior)
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
    (and so its usable history) begins. Repeats share one noise prior across the call
    (:func:`~tracker.stats.significance.fit_noise_prior`), as single values share one
    over their histories: call it with every series of a run that share a policy.
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
    prior = _repeat_prior(plans, groups, pol)
    for group in sorted(groups):
        found = _evaluate([plans[i] for i in groups[group]], pol, rng, prior)
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
        found.evidence,
        q_level=pol.q_level,
        missing=found.missing,
        suspect_p=pol.suspect_p,
        power=pol.sensitivity_power,
    )
