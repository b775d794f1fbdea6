"""Verdicts of two-version comparisons: the evidence, one BH family per run, the rules.

:func:`decide_verdicts` puts every p-value of one analysis run into one
Benjamini–Hochberg family and gives each comparison a :class:`Verdict`:

* tested: ``|g| ≤ floor`` → NO_CHANGE; past the floor and confirmed (q below
  ``q_level`` and the CI on the same side of 0) → REGRESSION or IMPROVEMENT; a drop
  past the floor that is not confirmed → SUSPECT; an unconfirmed gain → NO_CHANGE.
* the test cannot reach ``q_level`` (asv's guard): a drop past the floor → SUSPECT,
  else INCONCLUSIVE.
* plain threshold (no history): past twice the floor → REGRESSION / IMPROVEMENT; a
  drop past the floor → SUSPECT; else NO_CHANGE.
* no usable values → INCONCLUSIVE.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from tracker.analysis.defaults import Q_LEVEL
from tracker.analysis.multiple import Method as FamilyMethod
from tracker.analysis.multiple import q_values
from tracker.analysis.series import direction
from tracker.analysis.twosample import Method

__all__ = [
    "ChangeEvidence",
    "Comparison",
    "ComparisonRun",
    "Verdict",
    "decide_verdicts",
    "verdict_of",
]


class Verdict(StrEnum):
    """The outcome of one comparison."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    SUSPECT = "suspect"
    """Worse past the floor, but not confirmed by the test."""
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
    """The verdicts of one analysis run; ``family_size`` p-values went into one BH call."""

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
    if worse:
        return ev.ci_high is not None and ev.ci_high < 0.0
    return ev.ci_low is not None and ev.ci_low > 0.0


def _verdict(ev: ChangeEvidence, q: float | None, q_level: float) -> Verdict:
    if ev.g is None:
        return Verdict.INCONCLUSIVE
    g, floor = ev.g, ev.floor
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
    return Verdict.SUSPECT if worse else Verdict.NO_CHANGE


def verdict_of(evidence: ChangeEvidence, q_value: float | None, q_level: float) -> Verdict:
    """The verdict of one comparison given its q-value (the rules of the module docstring).

    The gate uses it to apply per-series floors and q levels to a run's evidence
    (the floor is ``evidence.floor``); the q-values stay those of the whole family.
    """
    return _verdict(evidence, q_value, q_level)


def decide_verdicts(
    evidence: Sequence[ChangeEvidence],
    *,
    q_level: float = Q_LEVEL,
    family_method: FamilyMethod = "bh",
    missing: Sequence[str] = (),
) -> ComparisonRun:
    """One multiple-testing family over all ``evidence`` of a run, then each verdict.

    Pass the evidence of every version pair and metric analysed in the run
    together, so that the family (and its reported size) is the whole run.
    """
    tested = [i for i, ev in enumerate(evidence) if ev.p_value is not None]
    pvalues = [evidence[i].p_value for i in tested]
    q = q_values(np.array(pvalues, dtype=np.float64), family_method)
    qs: list[float | None] = [None] * len(evidence)
    for i, value in zip(tested, q, strict=True):
        qs[i] = float(value)
    comparisons = tuple(
        Comparison(ev, qs[i], _verdict(ev, qs[i], q_level)) for i, ev in enumerate(evidence)
    )
    return ComparisonRun(comparisons, len(tested), q_level, family_method, tuple(missing))
