"""MLPerf Training pages: the Training page, one page per benchmark, their charts and
sentences, and the overview's lines.

MLPerf Training: the Training page, one page per benchmark, and the overview's sentences.

Time to train is in minutes and lower is better. Each system's series (one
benchmark across rounds) gets a chart (below):
the official score (olympic mean x scaling factor) as the point, the olympic
mean of the runs used with their min–max as a bar, and every run in a strip
around it: runs used as points, the fastest and slowest dropped by the
olympic mean marked apart, runs that did not converge marked as such (hover:
run index, minutes, why it was dropped). A run that never stopped has no time
to draw; the table beside the chart names it with its reason.

The sentences (:func:`training_lines`) put the analysis in words: the software
gain of each system from one round to the next (:func:`tracker.stats.series_gain`
on the analysis series, direction-aware) and the scaling efficiency of each
scaling group (same submitter and accelerator, more of them).

The chart of one system's MLPerf Training series: its score per round and every run.

The x axis is the rounds (one tick each, in report order). At a round's tick
stand the score (◆, olympic mean × scaling factor) and the olympic mean of the
runs used with their min–max; the runs themselves are spread in a strip
around the tick, each at its own small, fixed offset (:func:`run_offsets`, in
file order: ``result_0`` leftmost), so no run hides another with the same
time. Runs used, the fastest and slowest the olympic mean drops, runs that did
not converge and runs of a folder without a score are separate traces with
their own markers (hover: round, run, minutes, why it was dropped).

MLPerf Training in words: the sentences and hover texts of the Training pages.

Time to train is in minutes, lower is better: a gain of 1.043× means the
newer round trains 1.043 times as fast. Scaling efficiency compares
accelerator-minutes (time x accelerators): E = (T0 x N0) / (T x N), 1.0 for
perfect scaling.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from tracker.report.charts import Chart, label, line_trace, marker_trace, xy_chart
from tracker.report.common import Page, PageLink, SystemNames
from tracker.report.filters import format_count, format_number
from tracker.report.inputs import (
    SCORE_METRIC,
    TRAINING_SOFTWARE,
    ReportInput,
    TrainingRun,
    TrainingScore,
)
from tracker.report.urls import slug
from tracker.stats import ScalingGroup, SeriesGain, series_gain

__all__ = [
    "MAX_CHARTS",
    "MAX_OVERVIEW_LINES",
    "STRIP_WIDTH",
    "TrainingBenchmarkPage",
    "TrainingIndexPage",
    "TrainingLine",
    "TrainingRow",
    "build_training_pages",
    "gain_text",
    "minutes",
    "run_hover",
    "run_kind",
    "run_offsets",
    "run_summary",
    "training_scaling_text",
    "score_hover",
    "training_chart",
    "training_href",
    "training_lines",
    "untimed_text",
]


_ARROW = "\N{RIGHTWARDS ARROW}"
_WHY = {
    "used": "used in the olympic mean",
    "dropped (fastest)": "dropped: the fastest run (olympic mean)",
    "dropped (slowest)": "dropped: the slowest run (olympic mean)",
    "not scored": "its folder has no score",
}


def minutes(value: float, digits: int = 2) -> str:
    """``29.60 min`` (thousands separated)."""
    return f"{value:,.{digits}f} min"


def gain_text(system: str, benchmark: str, gain: SeriesGain) -> str:
    """``hpf_n8, llama2_70b_lora: v5.0 → v5.1, 29.60 → 28.37 minutes to train: 1.043× faster
    (software gain)``; ``gain.gain`` is direction-aware (above 1: faster)."""
    head = (
        f"{system}, {benchmark}: {gain.baseline} {_ARROW} {gain.candidate}, "
        f"{gain.baseline_level:,.2f} {_ARROW} {gain.candidate_level:,.2f} minutes to train"
    )
    if round(gain.gain, 3) == 1.0:
        return f"{head}: unchanged"
    if gain.gain > 1.0:
        return f"{head}: {gain.gain:.3f}× faster (software gain)"
    return f"{head}: {1.0 / gain.gain:.3f}× slower (software loss)"


def training_scaling_text(
    submitter: str,
    benchmark: str,
    version: str,
    systems: tuple[str, str],
    accelerators: tuple[int, int],
    times: tuple[float, float],
    efficiency: float,
    floor: float,
) -> str:
    """``Corp, bert (v5.1): a → b, 8 → 32 accelerators (4×), 10.00 → 3.00 minutes to train
    (3.33× faster; 80 → 96 accelerator-minutes): scaling efficiency 0.83, below the 0.90 floor``."""
    (n0, n1), (t0, t1) = accelerators, times
    speedup = t0 / t1 if t1 > 0 else float("nan")
    verdict = "below" if efficiency < floor else "at or above"
    return (
        f"{submitter}, {benchmark} ({version}): {systems[0]} {_ARROW} {systems[1]}, "
        f"{n0:,} {_ARROW} {n1:,} accelerators ({format_number(n1 / n0)}×), "
        f"{t0:,.2f} {_ARROW} {t1:,.2f} minutes to train ({speedup:.2f}× faster; "
        f"{format_number(t0 * n0)} {_ARROW} {format_number(t1 * n1)} accelerator-minutes): "
        f"scaling efficiency {efficiency:.2f}, {verdict} the {floor:.2f} floor"
    )


def score_hover(score: TrainingScore) -> str:
    """What the score point of a round says: how it was computed from the runs."""
    used = sum(run.role == "used" for run in score.runs)
    runs = f"{used} of {format_count(len(score.runs), 'run')} used"
    if score.score_minutes is None:
        failed = sum(not run.converged for run in score.runs)
        return f"no score: {format_count(failed, 'run')} did not converge; {runs}"
    mean = score.olympic_mean_minutes
    how = f"olympic mean {minutes(mean, 4)}" if mean is not None else "olympic mean"
    return (
        f"score {minutes(score.score_minutes, 4)} = {how} × scaling factor "
        f"{score.scaling_factor:.6g}; {runs}"
    )


def _why(run: TrainingRun) -> str:
    if not run.converged:
        return f"not converged: {run.reason}" if run.reason else "not converged"
    return _WHY.get(run.role, run.role)


def run_hover(round_label: str, run: TrainingRun) -> str:
    """``v5.0 · run 3 (result_3) · 24.8860 min · dropped: the fastest run (olympic mean)``."""
    time = minutes(run.minutes, 4) if run.minutes is not None else "no time"
    return f"{round_label} · run {run.index} ({run.run}) · {time} · {_why(run)}"


def run_summary(score: TrainingScore) -> str:
    """``8 of 10 runs used; dropped: fastest result_3, slowest result_7``."""
    used = sum(run.role == "used" for run in score.runs)
    dropped = [
        f"{label} {run.run}"
        for label, role in (("fastest", "dropped (fastest)"), ("slowest", "dropped (slowest)"))
        for run in score.runs
        if run.role == role
    ]
    dropped += [f"not converged {run.run}" for run in score.runs if not run.converged]
    text = f"{used} of {format_count(len(score.runs), 'run')} used"
    if score.score_minutes is None:
        text = f"no score ({text})"
    return text + (f"; dropped: {', '.join(dropped)}" if dropped else "")


def untimed_text(run: TrainingRun) -> str:
    """A run that did not converge: ``result_4 (no time: no run_stop): <reason>``."""
    time = minutes(run.minutes, 4) if run.minutes is not None else "no time"
    return f"{run.run} ({time}): {run.reason or 'did not converge'}"


STRIP_WIDTH = 0.5
"""Width of the strip of one round's runs, in rounds (the ticks are 1 apart)."""
_MAX_STEP = 0.08
"""Largest gap between two neighbouring runs (a folder of 3 runs stays near its tick)."""

RUN_STYLE = {
    "used": ("run used", "circle", "#0969da", 7),
    "fastest": ("dropped: fastest", "triangle-down-open", "#bc4c00", 10),
    "slowest": ("dropped: slowest", "triangle-up-open", "#bc4c00", 10),
    "not converged": ("not converged", "x", "#cf222e", 10),
    "not scored": ("run of a folder with no score", "circle-open", "#6e7781", 8),
}
"""Per kind of run: legend name, marker symbol, colour and size."""

_Points = tuple[list[float], list[float | None], list[str]]


def run_offsets(count: int) -> list[float]:
    """Where ``count`` runs of one round sit, relative to the round's tick.

    Evenly spaced, centred on the tick, at most :data:`STRIP_WIDTH` wide and
    at most ``_MAX_STEP`` apart; the same for the same count on every page.
    """
    if count <= 1:
        return [0.0] * count
    step = min(STRIP_WIDTH / (count - 1), _MAX_STEP)
    middle = (count - 1) / 2
    return [round((i - middle) * step, 4) for i in range(count)]


def run_kind(run: TrainingRun) -> str:
    """The marker a run gets: used, fastest, slowest, not converged or not scored."""
    role = run.role
    if not run.converged or role.startswith("dropped (not converged"):
        return "not converged"
    if role == "dropped (fastest)":
        return "fastest"
    if role == "dropped (slowest)":
        return "slowest"
    return role if role in RUN_STYLE else "used"


def training_chart(
    number: int, title: str, scores: Sequence[TrainingScore], rounds: Sequence[str]
) -> Chart:
    """One system's series: score, olympic mean with min–max of the runs used, every run."""
    position = {r: float(i) for i, r in enumerate(rounds)}
    xs = [position[s.round] for s in scores]
    names = [label(s.round) for s in scores]
    hover = "%{customdata}: <b>%{y:,.4~g} minutes</b><br>%{text}"
    score = line_trace(
        "score (olympic mean × scaling factor)",
        xs,
        [s.score_minutes for s in scores],
        index=0,
        hover=hover,
        text=[score_hover(s) for s in scores],
    )
    score["marker"].update(symbol="diamond", size=13)  # the score stands out of its runs
    traces = [{**score, "customdata": names}]
    used = [
        [r.minutes for r in s.runs if r.role == "used" and r.minutes is not None] for s in scores
    ]
    if any(used):
        mean = line_trace(
            "olympic mean of the runs used, min–max of them",
            xs,
            [s.olympic_mean_minutes for s in scores],
            index=7,
            hover=hover,
            mode="markers",
            spread=([min(u, default=None) for u in used], [max(u, default=None) for u in used]),
            text=[f"{format_count(len(u), 'run')} used, before the scaling factor" for u in used],
        )
        traces.append({**mean, "customdata": names})
    points = _run_points(scores, position)
    for kind, (name, symbol, colour, size) in RUN_STYLE.items():
        if kind in points:
            x, y, text = points[kind]
            traces.append(
                marker_trace(name, x, y, symbol=symbol, marker_color=colour, text=text, size=size)
            )
    axis = {
        "type": "linear",
        "tickmode": "array",
        "tickvals": list(position.values()),
        "ticktext": list(rounds),
        "range": [-0.5, len(rounds) - 0.5],
        "showgrid": False,
    }
    return xy_chart(
        f"chart-{number}",
        f"{title}: time to train (minutes, lower is better)",
        traces,
        x_title="round",
        y_title="time to train, minutes (↓ better)",
        x_axis=axis,
    )


def _run_points(scores: Sequence[TrainingScore], position: dict[str, float]) -> dict[str, _Points]:
    """Each timed run at its round's tick plus its offset, by kind."""
    points: dict[str, _Points] = defaultdict(lambda: ([], [], []))
    for score in scores:
        offsets = run_offsets(len(score.runs))
        for run, offset in zip(score.runs, offsets, strict=True):
            if run.minutes is None:
                continue  # a run that never stopped has no time; the table names it
            x, y, text = points[run_kind(run)]
            x.append(round(position[score.round] + offset, 4))
            y.append(run.minutes)
            text.append(run_hover(score.round, run))
    return points


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

    text: str
    """The sentence (plain text)."""
    href: str
    """The benchmark's Training page."""
    kind: str
    """'gain' (across rounds) or 'scaling'."""
    better: bool
    """Whether the change is for the better."""


@dataclass(frozen=True, slots=True)
class TrainingRow:
    """One round's folder of one system: its score and what became of its runs."""

    round: str
    """The round (e.g. v5.1)."""
    system: str
    """System label."""
    system_href: str
    """The system's page."""
    accelerators: int | None
    """Accelerators of the system."""
    score: float | None
    """Official score, minutes; None: no score."""
    olympic_mean: float | None
    """Olympic mean of the runs used."""
    scaling_factor: float
    """scaling.json factor (1 without one)."""
    shown: tuple[str, str, str]
    """Score, olympic mean (minutes, 4 decimals; empty: none), factor."""
    runs: str
    """Runs used and dropped, in words."""
    not_converged: tuple[str, ...]
    """Each run that did not converge, with its reason."""


@dataclass(frozen=True, slots=True)
class TrainingBenchmarkPage(Page):
    """The context of ``training.html`` for one benchmark."""

    benchmark: str
    """Benchmark name."""
    lines: tuple[TrainingLine, ...]
    """Gains and scaling, in words."""
    charts: tuple[Chart, ...]
    """One chart per system, the first few."""
    charts_total: int
    """How many systems (series) there are."""
    rows: tuple[TrainingRow, ...]
    """Every folder: round, system."""


@dataclass(frozen=True, slots=True)
class TrainingIndexPage(Page):
    """The context of ``training_index.html``: every benchmark and the sentences."""

    lines: tuple[TrainingLine, ...]
    """Gains and scaling, in words."""
    benchmarks: tuple[PageLink, ...]
    """Each benchmark's page."""
    folders: int
    """Result folders (round, system, benchmark) read."""


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
        text = training_scaling_text(
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
