"""What the report is built from: plain records and analysis results, never the database.

:func:`tracker.publish.gather_report_input` fills a :class:`ReportInput` from the
store (and an analysis run); tests build one by hand. Only ``points`` and
``versions`` are required: a report of results with no analysis has no
comparisons, findings, scaling or serving content, and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tracker.analysis import ChangePointResult, ComparisonRun, ScalingFinding, ScalingGroup
from tracker.analysis import SeriesSamples as SeriesSamples
from tracker.analyze_inputs import SeriesInfo
from tracker.analyze_sweeps import SweepTarget
from tracker.records import FindingRecord, SeriesPoint, StoredFinding, SweepSample, VersionInfo

__all__ = ["PairRun", "ReportInput", "SystemInfo"]


@dataclass(frozen=True, slots=True)
class SystemInfo:
    """The description of one system, merged over its stored results (by system name)."""

    name: str
    submitters: tuple[str, ...] = ()
    accelerators: tuple[str, ...] = ()
    accelerator_counts: tuple[int, ...] = ()
    nodes: tuple[int, ...] = ()
    host_cpus: tuple[str, ...] = ()
    divisions: tuple[str, ...] = ()
    software_stacks: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PairRun:
    """The comparison of every series of ``software`` from ``baseline`` to ``candidate``.

    One pair is one Benjamini–Hochberg family. ``is_latest`` marks each software's
    newest consecutive pair, ``is_baseline`` its newest version against its first.
    """

    software: str
    baseline: str
    candidate: str
    run: ComparisonRun
    is_latest: bool = False
    is_baseline: bool = False


@dataclass(frozen=True, slots=True)
class ReportInput:
    """Everything the pages show, as records and analysis results.

    ``versions`` are in explicit order per software; ``series``/``infos`` are the
    analysis series across versions (valid samples); ``findings`` are the stored
    ones with their triage states when ``findings_stored``, else the findings of
    the analysis run made for the report (not triaged).
    """

    points: tuple[SeriesPoint, ...]
    versions: tuple[VersionInfo, ...]
    systems: tuple[SystemInfo, ...] = ()
    series: tuple[SeriesSamples, ...] = ()
    infos: Mapping[str, SeriesInfo] = field(default_factory=dict)
    pairs: tuple[PairRun, ...] = ()
    change_points: tuple[ChangePointResult, ...] = ()
    scaling: tuple[tuple[str, ScalingGroup], ...] = ()
    scaling_issues: tuple[tuple[str, ScalingFinding], ...] = ()
    targets: tuple[SweepTarget, ...] = ()
    sweep_points: tuple[SweepSample, ...] = ()
    findings: tuple[StoredFinding | FindingRecord, ...] = ()
    findings_stored: bool = False
    target_tokens_per_s_per_user: float = 50.0
    efficiency_floor: float = 0.9
    title: str = "Benchmark results"
