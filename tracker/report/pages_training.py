"""MLPerf Training: the Training page, one page per benchmark, and the overview's sentences.

Time to train is in minutes and lower is better. Each system's series (one
benchmark across rounds) gets a chart (:mod:`tracker.report.training_chart`):
the official score (olympic mean x scaling factor) as the point, the olympic
mean of the runs used with their min–max as a bar, and every run in a strip
around it: runs used as points, the fastest and slowest dropped by the
olympic mean marked apart, runs that did not converge marked as such (hover:
run index, minutes, why it was dropped). A run that never stopped has no time
to draw; the table beside the chart names it with its reason.

The sentences (:func:`training_lines`) put the analysis in words: the software
gain of each system from one round to the next (:func:`tracker.analysis.series_gain`
on the analysis series, direction-aware) and the scaling efficiency of each
scaling group (same submitter and accelerator, more of them).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from tracker.analysis import ScalingGroup, series_gain
from tracker.report.charts import Chart
from tracker.report.common import PageLink, SystemNames
from tracker.report.filters import format_count
from tracker.report.inputs import ReportInput
from tracker.report.training_chart import training_chart
from tracker.report.training_input import (
    SCORE_METRIC,
    TRAINING_SOFTWARE,
    TrainingScore,
)
from tracker.report.training_text import gain_text, minutes, run_summary, scaling_text, untimed_text
from tracker.report.urls import slug

__all__ = [
    "MAX_CHARTS",
    "MAX_OVERVIEW_LINES",
    "TrainingBenchmarkPage",
    "TrainingIndexPage",
    "TrainingLine",
    "TrainingRow",
    "build_training_pages",
    "training_href",
    "training_lines",
]

MAX_CHARTS = 60
"""Series charts on one benchmark's page (every folder is in its table)."""
MAX_OVERVIEW_LINES = 20
"""Sentences on the overview (all on the Training page)."""
INDEX_HREF = "training.html"

_Keyed = list[tuple[tuple[str, ...], "TrainingLine"]]
"""Sentences with their sort keys."""


def training_href(benchmark: str) -> str:
    """The Training page of one benchmark."""
    return f"training/{slug(benchmark)}.html"


@dataclass(frozen=True, slots=True)
class TrainingLine:
    """One sentence of the Training summary."""

    text: str = field(metadata={"help": "The sentence (plain text)."})
    href: str = field(metadata={"help": "The benchmark's Training page."})
    kind: str = field(metadata={"help": "'gain' (across rounds) or 'scaling'."})
    better: bool = field(metadata={"help": "Whether the change is for the better."})


@dataclass(frozen=True, slots=True)
class TrainingRow:
    """One round's folder of one system: its score and what became of its runs."""

    round: str = field(metadata={"help": "The round (e.g. v5.1)."})
    system: str = field(metadata={"help": "System label."})
    system_href: str = field(metadata={"help": "The system's page."})
    accelerators: int | None = field(metadata={"help": "Accelerators of the system."})
    score: float | None = field(metadata={"help": "Official score, minutes; None: no score."})
    olympic_mean: float | None = field(metadata={"help": "Olympic mean of the runs used."})
    scaling_factor: float = field(metadata={"help": "scaling.json factor (1 without one)."})
    shown: tuple[str, str, str] = field(
        metadata={"help": "Score, olympic mean (minutes, 4 decimals; empty: none), factor."}
    )
    runs: str = field(metadata={"help": "Runs used and dropped, in words."})
    not_converged: tuple[str, ...] = field(
        metadata={"help": "Each run that did not converge, with its reason."}
    )


@dataclass(frozen=True, slots=True)
class TrainingBenchmarkPage:
    """The context of ``training.html`` for one benchmark."""

    title: str = field(metadata={"help": "Page title."})
    generated_at: str = field(metadata={"help": "When the report was built, as given."})
    is_example: bool = field(metadata={"help": "True when any result shown is example data."})
    benchmark: str = field(metadata={"help": "Benchmark name."})
    lines: tuple[TrainingLine, ...] = field(metadata={"help": "Gains and scaling, in words."})
    charts: tuple[Chart, ...] = field(metadata={"help": "One chart per system, the first few."})
    charts_total: int = field(metadata={"help": "How many systems (series) there are."})
    rows: tuple[TrainingRow, ...] = field(metadata={"help": "Every folder: round, system."})


@dataclass(frozen=True, slots=True)
class TrainingIndexPage:
    """The context of ``training_index.html``: every benchmark and the sentences."""

    title: str = field(metadata={"help": "Page title."})
    generated_at: str = field(metadata={"help": "When the report was built, as given."})
    is_example: bool = field(metadata={"help": "True when any result shown is example data."})
    lines: tuple[TrainingLine, ...] = field(metadata={"help": "Gains and scaling, in words."})
    benchmarks: tuple[PageLink, ...] = field(metadata={"help": "Each benchmark's page."})
    folders: int = field(metadata={"help": "Result folders (round, system, benchmark) read."})


def _rounds(data: ReportInput) -> list[str]:
    order = [v.version for v in data.versions if v.software == TRAINING_SOFTWARE]
    extra = sorted({s.round for s in data.training} - set(order))
    return [*order, *extra]


def _gain_lines(data: ReportInput, names: SystemNames) -> _Keyed:
    out: _Keyed = []
    for series in data.series:
        info = data.infos.get(series.key)
        if info is None or (info.software, info.metric) != (TRAINING_SOFTWARE, SCORE_METRIC):
            continue
        for before, after in zip(series.versions, series.versions[1:], strict=False):
            gain = series_gain(series, before, after)
            if gain is None:
                continue
            named = names.of(info.system)
            system = f"{named.submitter} {named.name}" if named.submitter else named.label
            text = gain_text(system, info.benchmark, gain)
            line = TrainingLine(text, training_href(info.benchmark), "gain", gain.gain >= 1.0)
            out.append(((info.benchmark, "0", system, after), line))
    return out


def _scaling_lines(data: ReportInput, names: SystemNames) -> _Keyed:
    out: _Keyed = []
    for software, group in data.scaling:
        if software != TRAINING_SOFTWARE or group.key.metric != SCORE_METRIC:
            continue
        out.extend(_group_lines(group, names, data.efficiency_floor))
    return out


def _group_lines(group: ScalingGroup, names: SystemNames, floor: float) -> _Keyed:
    base = group.points[0]
    base_names = ", ".join(names.of(k).label for k in base.labels)
    out: _Keyed = []
    for point in group.points[1:]:
        text = scaling_text(
            group.key.submitter,
            group.key.benchmark,
            group.version,
            (base_names, ", ".join(names.of(k).label for k in point.labels)),
            (base.accelerators, point.accelerators),
            (base.value, point.value),
            point.efficiency,
            floor,
        )
        href = training_href(group.key.benchmark)
        ok = point.efficiency >= floor
        sort = (
            group.key.benchmark,
            "1",
            group.key.submitter,
            group.version,
            f"{point.accelerators:09d}",
        )
        out.append((sort, TrainingLine(text, href, "scaling", ok)))
    return out


def training_lines(data: ReportInput, names: SystemNames) -> tuple[TrainingLine, ...]:
    """Every gain across rounds and every scaling step of Training, by benchmark."""
    found = _gain_lines(data, names) + _scaling_lines(data, names)
    return tuple(line for _key, line in sorted(found, key=lambda kl: (kl[0], kl[1].text)))


def _row(score: TrainingScore, names: SystemNames) -> TrainingRow:
    system = names.of(score.system_key, score.system)
    return TrainingRow(
        round=score.round,
        system=system.label,
        system_href=system.href,
        accelerators=score.accelerators,
        score=score.score_minutes,
        olympic_mean=score.olympic_mean_minutes,
        scaling_factor=score.scaling_factor,
        shown=(
            minutes(score.score_minutes, 4) if score.score_minutes is not None else "",
            minutes(mean, 4) if (mean := score.olympic_mean_minutes) is not None else "",
            f"{score.scaling_factor:.6g}",
        ),
        runs=run_summary(score),
        not_converged=tuple(untimed_text(r) for r in score.runs if not r.converged),
    )


def _benchmark_page(
    benchmark: str,
    scores: Sequence[TrainingScore],
    lines: Sequence[TrainingLine],
    names: SystemNames,
    rounds: list[str],
    generated_at: str,
) -> TrainingBenchmarkPage:
    order = {r: i for i, r in enumerate(rounds)}
    by_system: dict[str, list[TrainingScore]] = defaultdict(list)
    for score in scores:
        by_system[score.system_key].append(score)
    series = sorted(by_system.items(), key=lambda kv: (names.of(kv[0]).label, kv[0]))
    charts: list[Chart] = []
    rows: list[TrainingRow] = []
    for key, found in series:
        found.sort(key=lambda s: (order.get(s.round, len(order)), s.location))
        label = names.of(key, found[0].system).label
        if len(charts) < MAX_CHARTS:
            charts.append(training_chart(len(charts) + 1, label, found, rounds))
        rows.extend(_row(s, names) for s in found)
    href = training_href(benchmark)
    return TrainingBenchmarkPage(
        title=f"{benchmark} · MLPerf Training",
        generated_at=generated_at,
        is_example=any(s.is_example for s in scores),
        benchmark=benchmark,
        lines=tuple(line for line in lines if line.href == href),
        charts=tuple(charts),
        charts_total=len(series),
        rows=tuple(rows),
    )


def build_training_pages(
    data: ReportInput, names: SystemNames, lines: Sequence[TrainingLine], *, generated_at: str
) -> tuple[TrainingIndexPage, list[tuple[str, TrainingBenchmarkPage]]]:
    """The Training page and each benchmark's page (with its path)."""
    rounds = _rounds(data)
    by_benchmark: dict[str, list[TrainingScore]] = defaultdict(list)
    for score in data.training:
        by_benchmark[score.benchmark].append(score)
    pages = [
        (
            training_href(b),
            _benchmark_page(b, by_benchmark[b], lines, names, rounds, generated_at),
        )
        for b in sorted(by_benchmark)
    ]
    links = tuple(
        PageLink(
            page.benchmark,
            href,
            f"{format_count(page.charts_total, 'system')}, "
            f"{format_count(len(page.rows), 'result folder')}",
        )
        for href, page in pages
    )
    index = TrainingIndexPage(
        title="MLPerf Training",
        generated_at=generated_at,
        is_example=any(s.is_example for s in data.training),
        lines=tuple(lines),
        benchmarks=links,
        folders=len(data.training),
    )
    return index, pages
