"""What the report is built from (plain records and analysis results, never the database),
with the analysis settings it names and the MLPerf Training scores it shows.

What the report is built from: plain records and analysis results, never the database.

:func:`tracker.report.publish.gather_report_input` fills a :class:`ReportInput` from the
store (and an analysis run); tests build one by hand. Only ``points`` and
``versions`` are required: a report of results with no analysis has no
comparisons, findings, scaling or serving content, and says so.

The two big inputs are streamed, so a report of a million results never holds
them all: ``read_points`` (when given) yields the points grouped by benchmark or
by system, read anew for each pass, and ``pairs`` is iterated once, each
comparison rendered and dropped before the next is computed.

What the report says of its analysis settings: which, and where each came from.

The report analyses with the settings of the latest stored analysis (``tracker
analyze`` stores them with its findings), or the defaults when none was stored;
``tracker report`` options override them and are named (:class:`SettingsUsed`).

MLPerf Training scores and their runs, as the report shows them (plain records).

The Training reader stores, per round and result folder, the official score
(``time_to_train_minutes``, one result) and one ``run_time_to_train_minutes``
sample per run that has a time, each with its role in the olympic mean in
``extra`` (see :mod:`tracker.formats.mlperf_training.read`).
:func:`training_scores` turns those stored rows (as the export gives them)
back into one :class:`TrainingScore` per folder with its runs, for the Training
pages; a run without a time (no ``run_stop``) is known only from its folder's
score and is listed there with its reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from itertools import groupby
from typing import TYPE_CHECKING, Literal

from tracker.analyze.groupings import ConfigurationChange, StackRanking, training_folders
from tracker.records.findings import (
    AnalysisRunSettings,
    FindingRecord,
    SeriesInfo,
    StoredFinding,
    SweepTarget,
)
from tracker.records.results import (
    RUN_TIME_TO_TRAIN,
    TIME_TO_TRAIN,
    TRAINING_SOFTWARE,
    Configuration,
    ExportRow,
    ExtraValue,
    SeriesPoint,
    SweepSample,
    SystemRecord,
    VersionInfo,
    numeric_value,
)
from tracker.stats import ChangePointResult, ComparisonRun, ScalingFinding, ScalingGroup
from tracker.stats import SeriesSamples as SeriesSamples
from tracker.stats.series import SeriesGain

if TYPE_CHECKING:
    from tracker.analyze.platforms import PlatformRanking, RoundGain

__all__ = [
    "AnalysisCounts",
    "PairRun",
    "PointOrder",
    "PowerResult",
    "PriceRow",
    "RUN_METRIC",
    "ReportInput",
    "SCORE_METRIC",
    "SettingsUsed",
    "SystemInfo",
    "TRAINING_SOFTWARE",
    "TrainingRun",
    "TrainingScore",
    "point_groups",
    "power_result",
    "settings_used",
    "training_scores",
]


@dataclass(frozen=True, slots=True)
class PriceRow:
    """One price of the price book."""

    accelerator: str
    """Accelerator or system name, as matched."""
    usd_per_hour: float
    """Dollars per accelerator-hour."""


@dataclass(frozen=True, slots=True)
class SettingsUsed:
    """The analysis settings of the report's pages, and where they came from."""

    target_tokens_per_s_per_user: float
    """Interactivity target where sweeps are read, tokens/s/user."""
    efficiency_floor: float
    """Scaling efficiency below this: a finding."""
    efficiency_drop_floor: float
    """A fall of efficiency past this against the previous version: a finding."""
    has_price_book: bool
    """Whether costs were computed."""
    price_book_source: str
    """The price book's file, as given."""
    prices: tuple[PriceRow, ...]
    """The prices used, by name."""
    stored: bool
    """From a stored analysis (`tracker analyze`); false: the defaults."""
    analysed_at: str
    """When it ran (UTC, ISO 8601; not in report.json); empty: none stored."""
    overridden: tuple[str, ...]
    """The `tracker report` options that override the stored settings."""


def settings_used(run: AnalysisRunSettings, overridden: Sequence[str] = ()) -> SettingsUsed:
    """The page record of ``run`` (the stored settings, or the defaults when its
    ``analysed_at`` is ``None``) with the report options in ``overridden``."""
    at = run.analysed_at
    book = run.price_book
    return SettingsUsed(
        target_tokens_per_s_per_user=run.target_tokens_per_s_per_user,
        efficiency_floor=run.efficiency_floor,
        efficiency_drop_floor=run.efficiency_drop_floor,
        has_price_book=book is not None,
        price_book_source=run.price_book_source,
        prices=tuple(PriceRow(name, price) for name, price in sorted((book or {}).items())),
        stored=at is not None,
        analysed_at="" if at is None else at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        overridden=tuple(overridden),
    )


SCORE_METRIC = TIME_TO_TRAIN.name
"""The metric of a Training folder's official score."""
RUN_METRIC = RUN_TIME_TO_TRAIN.name
"""The metric of one Training run behind a score."""

_RUN_LINE = re.compile(
    r"(?P<file>\S+?)(?:\.txt)? (?:(?P<minutes>[0-9.]+) min|no time) (?P<role>.+)"
)


@dataclass(frozen=True, slots=True)
class TrainingRun:
    """One run (``result_<i>.txt``) of a Training folder."""

    run: str
    """The run's file name without ``.txt`` (``result_3``)."""
    minutes: float | None
    """Its time to train; ``None`` when it never stopped (no ``run_stop``)."""
    role: str
    """``used``, ``dropped (fastest)``, ``dropped (slowest)``, ``dropped (not converged)``
    or ``not scored`` (its folder has no score)."""
    converged: bool
    reason: str = ""
    """Why it did not converge (empty when it did)."""

    @property
    def index(self) -> str:
        """The run's index as its file names it (``3`` of ``result_3``)."""
        return self.run.removeprefix("result_")


@dataclass(frozen=True, slots=True)
class TrainingScore:
    """One round's result folder: its official score (if any) and its runs."""

    round: str
    submitter: str
    system: str
    system_key: str
    benchmark: str
    location: str
    accelerators: int | None
    score_minutes: float | None
    """The official score (olympic mean x scaling factor); ``None``: the folder has none."""
    olympic_mean_minutes: float | None
    scaling_factor: float
    runs: tuple[TrainingRun, ...]
    is_example: bool = False


def _reasons(extra: Mapping[str, ExtraValue]) -> dict[str, str]:
    """``{run: reason}`` from a score's ``non_converged`` text (``file: reason | ...``)."""
    text = extra.get("non_converged")
    out: dict[str, str] = {}
    for part in str(text).split(" | ") if isinstance(text, str) else ():
        file, _, reason = part.partition(": ")
        out[file.removesuffix(".txt")] = reason
    return out


def _untimed_runs(score: ExportRow, timed: set[str]) -> list[TrainingRun]:
    """The runs named in a score's ``runs`` text that have no stored sample (no time)."""
    text = score.extra.get("runs")
    reasons = _reasons(score.extra)
    out = []
    for part in text.split("; ") if isinstance(text, str) else ():
        match = _RUN_LINE.fullmatch(part)
        if match is None or match["minutes"] is not None or match["file"] in timed:
            continue
        run = match["file"]
        out.append(TrainingRun(run, None, match["role"], False, reasons.get(run, "")))
    return out


def _run(row: ExportRow) -> TrainingRun:
    role = row.extra.get("role")
    reason = row.extra.get("invalid_reason")
    return TrainingRun(
        run=row.run_label or row.artifact_path.rsplit("/", 1)[-1].removesuffix(".txt"),
        minutes=row.value,
        role=role if isinstance(role, str) else "used",
        converged=row.valid,
        reason=reason if isinstance(reason, str) else "",
    )


def _natural(run: TrainingRun) -> tuple[int, str]:
    digits = re.sub(r"\D", "", run.run)
    return (int(digits) if digits else -1, run.run)


def _score(rows: Sequence[ExportRow]) -> TrainingScore:
    head = rows[0]
    score = next((r for r in rows if r.metric == SCORE_METRIC), None)
    runs = [_run(r) for r in rows if r.metric == RUN_METRIC]
    if score is not None:
        runs += _untimed_runs(score, {r.run for r in runs})
    extra = score.extra if score is not None else {}
    system = SystemRecord(name=head.system, submitter=head.submitter, division=head.division)
    return TrainingScore(
        round=head.round or head.software_version,
        submitter=head.submitter or "",
        system=head.system,
        system_key=system.platform_key,
        benchmark=head.benchmark,
        location=head.location or "",
        accelerators=head.accelerators_total,
        score_minutes=score.value if score is not None else None,
        olympic_mean_minutes=numeric_value(extra.get("olympic_mean_unscaled_minutes")),
        scaling_factor=numeric_value(extra.get("scaling_factor")) or 1.0,
        runs=tuple(sorted(runs, key=_natural)),
        is_example=any(r.is_example for r in rows),
    )


def training_scores(rows: Iterable[ExportRow]) -> tuple[TrainingScore, ...]:
    """One score per (round, system, benchmark folder) of the stored Training ``rows``.

    Rows of other software or metrics are left out; the scores are sorted by
    benchmark, system, submitter and round.
    """
    scores = [_score(group) for group in training_folders(rows)]
    return tuple(
        sorted(scores, key=lambda s: (s.benchmark, s.system, s.submitter, s.round, s.location))
    )


@dataclass(frozen=True, slots=True)
class AnalysisCounts:
    """What ``tracker analyze`` counts, for the overview to say the same numbers."""

    series: int
    """Series analysed (across versions)."""
    samples: int
    invalid_samples: int
    compared: int
    """Comparisons: each series' newest version against its previous one, where nothing
    but the software changed (twins counted once)."""
    verdicts: tuple[tuple[str, int], ...]
    """Comparisons per verdict (every verdict, in the analysis' order)."""
    configuration_changed: int
    """Series whose configuration changed between the versions (not compared)."""


@dataclass(frozen=True, slots=True)
class PowerResult:
    """One stored result with the power measured while it ran (MLPerf power results)."""

    round: str
    benchmark: str
    scenario: str
    system: str
    system_key: str
    value: float
    """The performance result."""
    unit: str
    power_w: float
    """The mean power of the system under test, in watts."""
    metric: str = ""
    accelerators: int | None = None
    division: str = ""
    availability: str = ""


def power_result(row: ExportRow) -> PowerResult | None:
    """The result of ``row`` with its measured power (watts, the official figure first),
    or ``None`` when it has none, is invalid or is not a throughput."""
    extra = row.extra
    power = numeric_value(extra.get("official_power_w")) or numeric_value(extra.get("power_w"))
    if power is None or power <= 0 or not row.valid or not row.higher_is_better:
        return None
    system = SystemRecord(name=row.system, submitter=row.submitter, division=row.division)
    return PowerResult(
        round=row.round or row.software_version,
        benchmark=row.benchmark,
        scenario=row.scenario,
        system=row.system,
        system_key=system.platform_key,
        value=row.value,
        unit=row.unit,
        power_w=power,
        metric=row.metric,
        accelerators=row.accelerators_total,
        division=row.division or "",
    )


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
    configurations: tuple[tuple[str, Configuration], ...] = ()
    """Per version (MLPerf round), in version order: what the round's description says the
    system is (:class:`~tracker.records.results.Configuration`)."""


@dataclass(frozen=True, slots=True)
class PairRun:
    """The comparison of every series of ``software`` from ``baseline`` to ``candidate``.

    One pair is one Benjamini–Hochberg family. ``is_latest`` marks each software's
    newest consecutive pair, ``is_baseline`` its newest version against its first.
    ``run`` compares the series whose change is a software one (the comparability rule,
    :mod:`tracker.analyze.groupings`; twins counted once); ``changes`` are the series
    whose configuration changed (not compared), ``besides`` what changed besides the
    software of each compared series (absent: nothing), ``twins`` per series key the
    series it stands for.
    """

    software: str
    baseline: str
    candidate: str
    run: ComparisonRun
    is_latest: bool = False
    is_baseline: bool = False
    changes: tuple[ConfigurationChange, ...] = ()
    besides: Mapping[str, str] = field(default_factory=dict)
    twins: Mapping[str, Sequence[str]] = field(default_factory=dict)


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
    stack_rankings: tuple[StackRanking, ...] = ()
    """Software stacks of one platform within a round, ranked (the platform pages)."""
    round_gains: tuple[RoundGain, ...] = ()
    """Each round against the one before it (:func:`tracker.analyze.platforms.round_gains`):
    the round pages' "what moved"."""
    power: tuple[PowerResult, ...] = ()
    """Results with measured power (the round pages' performance per watt)."""
    analysis: AnalysisCounts | None = None
    """What ``tracker analyze`` counts (``None``: not given; the overview then counts pairs)."""
    gains: tuple[SeriesGain, ...] = ()
    """The software gain of each compared series, its newest version against the previous
    one (as ``tracker analyze``); the overview's gains and losses."""


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
