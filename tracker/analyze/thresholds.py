"""Verdicts under per-series floors and q levels (the gate's policy), decided once.

A run's comparisons form one Benjamini–Hochberg family whatever the thresholds:
the q-values are those of the whole family. Without per-series thresholds every
verdict uses the run's floor and q level (:func:`tracker.analysis.decide_verdicts`);
with them (:class:`SeriesThresholds`, e.g. a
:class:`~tracker.gate.policy.GatePolicy`) each series' floor and q level decide
its verdict, and its evidence carries the floor that was applied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from tracker.analysis import ChangeEvidence, Comparison, ComparisonRun, decide_verdicts
from tracker.analysis.multiple import FamilyMethod
from tracker.analysis.verdicts import directional_q_values, judge
from tracker.analysis_records import SeriesInfo

__all__ = ["SeriesThresholds", "decide"]


class SeriesThresholds(Protocol):
    """Per-series thresholds: (floor, or ``None`` for the method's own, and q level)."""

    def threshold_for(self, key: str, benchmark: str, metric: str) -> tuple[float | None, float]:
        """The floor and q level of the series ``key``."""
        ...


def _family_q_values(
    evidence: Sequence[ChangeEvidence], family_method: FamilyMethod
) -> tuple[list[float | None], int]:
    """Each comparison's q-value in its directional family (``None`` when untested), and
    the family size (:func:`tracker.analysis.verdicts.directional_q_values`)."""
    return directional_q_values(evidence, family_method)


def _judged(
    ev: ChangeEvidence, q: float | None, info: SeriesInfo, thresholds: SeriesThresholds
) -> Comparison:
    floor, q_level = thresholds.threshold_for(ev.key, info.benchmark, info.metric)
    if floor is not None:
        ev = replace(ev, floor=floor)
    return judge(ev, q, q_level)


def decide(
    evidence: Sequence[ChangeEvidence],
    *,
    infos: Mapping[str, SeriesInfo],
    thresholds: SeriesThresholds | None,
    q_level: float,
    family_method: FamilyMethod,
    missing: Sequence[str],
) -> ComparisonRun:
    """One family over all ``evidence``, each verdict under its series' thresholds."""
    if thresholds is None:
        return decide_verdicts(
            evidence, q_level=q_level, family_method=family_method, missing=missing
        )
    qs, family_size = _family_q_values(evidence, family_method)
    comparisons = tuple(
        _judged(ev, q, infos[ev.key], thresholds) for ev, q in zip(evidence, qs, strict=True)
    )
    return ComparisonRun(comparisons, family_size, q_level, family_method, tuple(missing))
