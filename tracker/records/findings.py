"""Plain records the analysis use case hands to the gate and the report.

Like :mod:`tracker.records.results` (which is full), this module imports only the
standard library and :mod:`tracker.records.keys` at run time: :class:`SeriesInfo` says
what a series key stands for, :class:`SweepTarget` is one sweep read at the
interactivity target, and the findings as one run produced them (:class:`FindingRecord`)
and as stored (:class:`StoredFinding`, :class:`FindingsSaved`), with the settings of the
run that stored them (:class:`AnalysisRunSettings`). The analysis types
:class:`SweepTarget` holds are imported for type checking only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tracker.records.keys import SeriesKey

if TYPE_CHECKING:
    from tracker.stats import CostEstimate, ThroughputAtTarget

__all__ = [
    "AXIS_STACK",
    "AXIS_VERSION",
    "KIND_CHANGE_POINT",
    "KIND_CONFIGURATION",
    "KIND_DRIFT",
    "KIND_SCALING",
    "KIND_SLA_MISS",
    "AnalysisRunSettings",
    "FINDING_STATUSES",
    "FindingRecord",
    "FindingsSaved",
    "SeriesInfo",
    "StoredFinding",
    "SweepTarget",
]


AXIS_VERSION = "version"
"""The axis of a series across software versions."""
AXIS_STACK = "software_stack"
"""The axis of configurations of one version that differ only in software."""
KIND_CHANGE_POINT = "change_point"
"""A finding's kind: a step in a series' level (a report annotation)."""
KIND_CONFIGURATION = "configuration_changed"
"""A finding's kind: a series whose configuration changed between two versions."""
KIND_DRIFT = "drift"
"""A finding's kind: a series drifting over versions (a report annotation)."""
KIND_SCALING = "scaling_efficiency"
"""A finding's kind: a scaling efficiency below its floor or fallen since the baseline."""
KIND_SLA_MISS = "sla_miss"
"""A finding's kind: a sweep that does not reach its interactivity target."""


@dataclass(frozen=True, slots=True)
class SeriesInfo(SeriesKey):
    """What a series key stands for (for findings and the report): its labels, with the
    metric's unit and direction.

    ``axis`` is ``"version"`` for series across software versions and
    ``"software_stack"`` for configurations of one ``version`` that differ only in
    software; ``system`` is then the platform (submitter, accelerator and counts).
    """

    unit: str
    higher_is_better: bool
    axis: str = AXIS_VERSION
    version: str | None = None


@dataclass(frozen=True, slots=True)
class SweepTarget:
    """One sweep read at the interactivity target, with its cost when priced.

    ``result`` holds tokens/s per accelerator when ``accelerators`` is known, else
    the system's tokens/s (``per_accelerator`` false). ``tokens_per_s_at_target``
    and ``peak_tokens_per_s`` are always the whole system's.
    """

    key: str
    software: str
    version: str
    system: str
    benchmark: str
    scenario: str
    curve_workload: str
    sweep_key: str
    accelerator: str | None
    accelerators: int | None
    result: ThroughputAtTarget
    tokens_per_s_at_target: float | None
    peak_tokens_per_s: float | None
    cost_at_target: CostEstimate | None = None
    cost_at_peak: CostEstimate | None = None
    cost_note: str = ""
    input_tokens_per_s_at_target: float | None = None
    """The whole system's input tokens/s at the target (``None``: lengths unknown)."""

    @property
    def per_accelerator(self) -> bool:
        return self.accelerators is not None

    @property
    def is_sla_miss(self) -> bool:
        """No measured point meets the target (the whole front is less interactive)."""
        front = self.result.front
        return bool(front) and front[-1][0] < self.result.target_tokens_per_s_per_user


FINDING_STATUSES = ("open", "acknowledged", "expected", "fixed", "superseded")
"""Triage states of a finding: analysis opens, fixes and supersedes them (made under
settings that no longer apply: another interactivity target or efficiency floor), people
acknowledge or expect them."""


@dataclass(frozen=True, slots=True)
class FindingRecord:
    """A finding as one analysis run produced it (``evidence`` is JSON-ready).

    ``fingerprint`` identifies it across runs (a hash of what it is about, never of
    its numbers); ``software`` and the version labels name its versions.
    """

    fingerprint: str
    kind: str
    series_key: str
    method: str
    software: str | None = None
    baseline_version: str | None = None
    candidate_version: str | None = None
    change_pct: float | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoredFinding:
    """A stored finding with its triage state; ``is_current`` when the last analysis found it."""

    id: int
    fingerprint: str
    kind: str
    series_key: str
    method: str
    baseline_version: str | None
    candidate_version: str | None
    change_pct: float | None
    evidence: Mapping[str, Any]
    status: str
    status_note: str | None
    is_current: bool
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class FindingsSaved:
    """What saving one analysis run's findings did to the stored ones.

    ``closed``: open findings no longer found, now "fixed"; ``no_longer_found``:
    acknowledged or expected ones no longer found, status kept; ``reopened``:
    "fixed" ones found again, now "open".
    """

    new: int = 0
    updated: int = 0
    reopened: int = 0
    closed: int = 0
    no_longer_found: int = 0
    superseded: int = 0
    """Findings made under settings this run does not use (another target or floor)."""


@dataclass(frozen=True, slots=True)
class AnalysisRunSettings:
    """The settings of one analysis run, stored with its findings (``tracker report`` reads
    the latest back).

    ``price_book``: accelerator name (normalised) → $/accelerator-hour, ``None`` when
    the run had none; ``price_book_source``: the file it came from, as given.
    ``other``: the remaining knobs (interpolation, family method, the comparison,
    change-point and drift policies), JSON-ready, for the record. ``analysed_at``:
    when the run was (``None`` before it is stored).
    """

    target_tokens_per_s_per_user: float
    efficiency_floor: float
    efficiency_drop_floor: float
    price_book: Mapping[str, float] | None = None
    price_book_source: str = ""
    other: Mapping[str, Any] = field(default_factory=dict)
    analysed_at: datetime | None = None
