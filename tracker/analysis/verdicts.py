"""Verdicts of two-version comparisons: the evidence, two directional BH families, the rules.

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
such runs (``test_analysis_directional``). With a tenth of 1,000 single-value
series losing 10%, the full level also let 0.7% of the unchanged ones become
REGRESSION at 10 and 20 versions of history, where issue 15 asks for 0.3%; a
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
the history's level, :mod:`~tracker.analysis.history`), not from the split.

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
:func:`tracker.analysis.twosample.advised_repeats`); :func:`judge` writes it into
the comparison's note.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np

from tracker.analysis.defaults import Q_LEVEL, SUSPECT_P
from tracker.analysis.multiple import FamilyMethod
from tracker.analysis.multiple import q_values
from tracker.analysis.series import direction
from tracker.analysis.twosample import Method

__all__ = [
    "FAMILIES",
    "ChangeEvidence",
    "Comparison",
    "ComparisonRun",
    "Verdict",
    "decide_verdicts",
    "directional_q_values",
    "judge",
    "suspect_advice",
    "verdict_of",
]


FAMILIES = 2
"""The run's level is split evenly between the regression and improvement families."""


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

    @property
    def key(self) -> str:
        """The series key."""
        return self.evidence.key


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
) -> Comparison:
    """:func:`verdict_of` as a :class:`Comparison`; a SUSPECT's note carries its advice."""
    found = _verdict(evidence, q_value, q_level, suspect_p)
    if found is Verdict.SUSPECT:
        advice = suspect_advice(evidence)
        note = f"{evidence.note}; {advice}" if evidence.note else advice
        evidence = replace(evidence, note=note)
    return Comparison(evidence, q_value, found)


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
) -> ComparisonRun:
    """The two directional families over all ``evidence`` of a run, then each verdict.

    Pass the evidence of every version pair and metric analysed in the run
    together, so that the families (and their reported size) are the whole run.
    """
    qs, family_size = directional_q_values(evidence, family_method)
    comparisons = tuple(
        judge(ev, qs[i], q_level, suspect_p=suspect_p) for i, ev in enumerate(evidence)
    )
    return ComparisonRun(comparisons, family_size, q_level, family_method, tuple(missing))
