"""The chart of one system's MLPerf Training series: its score per round and every run.

The x axis is the rounds (one tick each, in report order). At a round's tick
stand the score (◆, olympic mean × scaling factor) and the olympic mean of the
runs used with their min–max; the runs themselves are spread in a strip
around the tick, each at its own small, fixed offset (:func:`run_offsets`, in
file order: ``result_0`` leftmost), so no run hides another with the same
time. Runs used, the fastest and slowest the olympic mean drops, runs that did
not converge and runs of a folder without a score are separate traces with
their own markers (hover: round, run, minutes, why it was dropped).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from tracker.report.charts import Chart, label, line_trace, marker_trace, xy_chart
from tracker.report.filters import format_count
from tracker.report.training_input import TrainingRun, TrainingScore
from tracker.report.training_text import run_hover, score_hover

__all__ = ["STRIP_WIDTH", "run_kind", "run_offsets", "training_chart"]

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
