"""What the report is built from: plain records and analysis results, never the database.

:func:`tracker.report.publish.gather_report_input` fills a :class:`ReportInput` from the
store (and an analysis run); tests build one by hand. Only ``points`` and
``versions`` are required: a report of results with no analysis has no
comparisons, findings, scaling or serving content, and says so.

The two big inputs are streamed, so a report of a million results never holds
them all: ``read_points`` (when given) yields the points grouped by benchmark or
by system, read anew for each pass, and ``pairs`` is iterated once, each
comparison rendered and dropped before the next is computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import groupby
from typing import TYPE_CHECKING, Literal

from tracker.analysis import ChangePointResult, ComparisonRun, ScalingFinding, ScalingGroup
from tracker.analysis import SeriesSamples as SeriesSamples
from tracker.analysis_records import FindingRecord, SeriesInfo, StoredFinding, SweepTarget
from tracker.records import SeriesPoint, SweepSample, VersionInfo
from tracker.report.settings import SettingsUsed
from tracker.report.training_input import TrainingScore

if TYPE_CHECKING:
    from tracker.analyze.platforms import PlatformRanking

__all__ = ["PairRun", "PointOrder", "ReportInput", "SystemInfo", "point_groups"]

PointOrder = Literal["benchmark", "system"]
"""How a pass over the points groups them: by benchmark and scenario, or by system."""


@dataclass(frozen=True, slots=True)
class SystemInfo:
    """The description of one system, merged over its stored results (by its key)."""

    name: str
    key: str = ""
    """Its identity, ``submitter/name``; empty: the name."""
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
    the analysis run made for the report (not triaged). ``read_points``, when
    given, stands for ``points``: called once per pass, it yields every point,
    grouped as :data:`PointOrder` says (a group's points adjacent). ``pairs`` is
    iterated once (it may be a generator computing each pair on demand).
    """

    points: tuple[SeriesPoint, ...]
    versions: tuple[VersionInfo, ...]
    systems: tuple[SystemInfo, ...] = ()
    series: tuple[SeriesSamples, ...] = ()
    infos: Mapping[str, SeriesInfo] = field(default_factory=dict)
    pairs: Iterable[PairRun] = ()
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
    read_points: Callable[[PointOrder], Iterable[SeriesPoint]] | None = None
    settings: SettingsUsed | None = None
    """The analysis settings used and where they came from (``None``: not said)."""
    training: tuple[TrainingScore, ...] = ()
    """MLPerf Training folders: each score with its runs (the Training pages)."""
    platforms: tuple[PlatformRanking, ...] = ()
    """Per round, benchmark and scenario: the systems ranked per accelerator (the
    platform pages; ranked by :mod:`tracker.report.publish`)."""


def _group_key(order: PointOrder) -> Callable[[SeriesPoint], tuple[str, ...]]:
    if order == "benchmark":
        return lambda p: (p.benchmark, p.scenario)
    return lambda p: (p.system_key or p.system,)


def point_groups(data: ReportInput, order: PointOrder) -> Iterator[list[SeriesPoint]]:
    """The points of ``data`` one group at a time: one benchmark and scenario, or one system.

    From ``read_points`` the groups come in its order; from ``points`` they are
    sorted by their labels (the same points in any order give the same groups).
    """
    key = _group_key(order)
    if data.read_points is not None:
        found: Iterable[SeriesPoint] = data.read_points(order)
    else:
        found = sorted(data.points, key=lambda p: (key(p), p.system, p.software, p.version))
    for _key, group in groupby(found, key=key):
        yield list(group)
