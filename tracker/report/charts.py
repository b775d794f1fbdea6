"""Chart specs: plain plotly.js figure JSON (``{"data": [...], "layout": {...}}``).

No plotly figure objects: the specs are dicts built here, written into the page
as a ``data-figure`` attribute (escaped like any other text) and drawn by
``static/report.js`` with the vendored plotly.js basic bundle (scatter and
bar traces, shapes: nothing here may need another trace type). Every text
from the data goes through one sanitiser, :func:`tracker.text_safety.chart_text`
(here :func:`label`), before it reaches
a chart: plotly renders a subset of HTML (links included) in trace names, tick
labels, hover text, axis titles and annotations, so ``<``, ``>`` and ``&``
become entities and a version or system name stays text. Text x values (the
versions of a category axis: its tick labels and the ``%{x}`` of hover text)
and the axes' ``categoryarray`` and ``ticktext`` are escaped here too; hover
templates are the only markup, built from fixed text and labelled units.
Non-finite numbers become ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracker.text_safety import chart_text, chart_value

__all__ = [
    "Chart",
    "gain_bar_chart",
    "label",
    "line_trace",
    "log_axis",
    "ranked_bar_chart",
    "version_color",
    "marker_trace",
    "wrap_title",
    "xy_chart",
]

Spec = dict[str, Any]

_FONT = {"family": "system-ui, -apple-system, Segoe UI, Roboto, Arial, sans-serif", "size": 12}
_TITLE_WIDTH = 32
"""Characters per line of an axis title (fits the height of the smallest chart)."""
_COLORS = (
    "#0969da",
    "#bc4c00",
    "#8250df",
    "#1b7c83",
    "#bf3989",
    "#6e7781",
    "#4d2d00",
    "#0550ae",
    "#9a6700",
    "#3e1f79",
    "#57606a",
    "#0a3069",
)
"""Categorical colours of lines (systems, benchmarks): no red and no green, which mean a
regression and an improvement on every page."""
_VERSION_COLORS = ("#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")
"""A sequential palette (light to dark blue) for versions: the newest is the darkest."""


@dataclass(frozen=True, slots=True)
class Chart:
    """One interactive chart of a page."""

    id: str
    """Element id, unique within the page."""
    title: str
    """Caption shown above the chart (plain text)."""
    spec: Spec
    """The plotly.js figure: data and layout (JSON)."""


def label(text: str) -> str:
    """``text`` safe for plotly's text rendering (names, hover text, titles)."""
    return chart_text(text)


def color(index: int) -> str:
    """The ``index``-th colour of the palette (cycled)."""
    return _COLORS[index % len(_COLORS)]


def version_color(index: int, count: int) -> str:
    """The colour of the ``index``-th of ``count`` versions in order: a sequential scale,
    oldest lightest, newest darkest (never the verdicts' red or green); the palest blues
    are left out (too faint on white)."""
    scale = _VERSION_COLORS[2:]
    if count <= 1:
        return scale[-1]
    return scale[round((len(scale) - 1) * min(index, count - 1) / (count - 1))]


def _num(value: float | None) -> float | None:
    """A finite number to 6 significant digits (plenty for a chart; keeps the pages small)."""
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.6g}")


def line_trace(
    name: str,
    x: Sequence[Any],
    y: Sequence[float | None],
    *,
    index: int,
    hover: str,
    mode: str = "lines+markers",
    dash: str = "solid",
    group: str | None = None,
    in_legend: bool = True,
    spread: tuple[Sequence[float | None], Sequence[float | None]] | None = None,
    text: Sequence[str] | None = None,
    line_color: str | None = None,
) -> Spec:
    """A line with markers; ``hover`` is a plotly hovertemplate (already safe text).

    The hover box names the trace (plotly's default for a template without ``<extra>``).
    Traces of one ``group`` share one legend entry (the others set ``in_legend=False``);
    ``spread`` (lows, highs) draws error bars from each low to each high (min–max);
    ``text`` is one text per point (escaped here), ``%{text}`` in ``hover``;
    ``line_color`` replaces the ``index``-th palette colour (:func:`version_color`).
    """
    colour = line_color or color(index)
    line: Spec = {"color": colour, "width": 2}
    if dash != "solid":
        line["dash"] = dash
    trace: Spec = {
        "type": "scatter",
        "mode": mode,
        "name": label(name),
        "x": [chart_value(v) for v in x],
        "y": [_num(v) for v in y],
        "line": line,
        "marker": {"color": colour, "size": 7},
        "hovertemplate": hover,
    }
    if spread is not None:
        trace["error_y"] = _error_bars(y, *spread, colour)
    if text is not None:
        trace["text"] = [label(t) for t in text]
    return _grouped(trace, group, in_legend)


def _grouped(trace: Spec, group: str | None, in_legend: bool) -> Spec:
    if group is not None:
        trace["legendgroup"] = label(group)
    if not in_legend:
        trace["showlegend"] = False
    return trace


def _error_bars(
    y: Sequence[float | None],
    lows: Sequence[float | None],
    highs: Sequence[float | None],
    bar_color: str,
) -> Spec:
    """Asymmetric error bars from each ``y`` down to its low and up to its high."""

    def gap(a: float | None, b: float | None) -> float | None:
        return _num(abs(a - b)) if a is not None and b is not None else None

    return {
        "type": "data",
        "symmetric": False,
        "array": [gap(h, v) for v, h in zip(y, highs, strict=True)],
        "arrayminus": [gap(v, lo) for v, lo in zip(y, lows, strict=True)],
        "color": bar_color,
        "thickness": 1.5,
        "width": 6,
    }


def marker_trace(
    name: str,
    x: Sequence[Any],
    y: Sequence[float | None],
    *,
    symbol: str,
    marker_color: str,
    text: Sequence[str],
    size: int = 14,
    opacity: float = 1.0,
    group: str | None = None,
    in_legend: bool = True,
) -> Spec:
    """Markers only (change points, findings, measured sweep points), with hover text."""
    trace: Spec = {
        "type": "scatter",
        "mode": "markers",
        "name": label(name),
        "x": [chart_value(v) for v in x],
        "y": [_num(v) for v in y],
        "text": [label(t) for t in text],
        "opacity": opacity,
        "marker": {
            "symbol": symbol,
            "size": size,
            "color": marker_color,
            "line": {"width": 2, "color": marker_color},
        },
        "hovertemplate": "%{text}<extra></extra>",
    }
    return _grouped(trace, group, in_legend)


def wrap_title(title: str, width: int = _TITLE_WIDTH) -> str:
    """``title`` escaped, in lines of at most ``width`` characters (``<br>`` between).

    An axis title longer than its axis is cut off by the chart's edge; broken at
    spaces it stays whole (a word longer than ``width`` keeps a line of its own).
    """
    lines: list[str] = []
    for word in title.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(label(line) for line in lines)


def _axis(title: str, **extra: Any) -> Spec:
    """An axis; its ``categoryarray`` and ``ticktext`` (text shown as ticks) are escaped."""
    for key in ("categoryarray", "ticktext"):
        if key in extra:
            extra[key] = [chart_value(v) for v in extra[key]]
    title_spec = {"text": wrap_title(title), "standoff": 12}  # clear of the tick labels
    return {"title": title_spec, "automargin": True, "zeroline": False, **extra}


def xy_chart(
    chart_id: str,
    title: str,
    traces: Sequence[Spec],
    *,
    x_title: str,
    y_title: str,
    x_axis: Spec | None = None,
    y_axis: Spec | None = None,
    shapes: Sequence[Spec] = (),
    height: int = 380,
    legend_title: str = "",
) -> Chart:
    """A chart of x/y traces with hover and zoom (plotly's defaults), legend below."""
    legend: Spec = {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"}
    if legend_title:
        legend["title"] = {"text": label(legend_title), "side": "top"}
    layout: Spec = {
        "font": _FONT,
        "height": height,
        "margin": {"l": 60, "r": 20, "t": 20, "b": 40},
        "hovermode": "closest",
        "legend": legend,
        "xaxis": _axis(x_title, **(x_axis or {})),
        "yaxis": _axis(y_title, **(y_axis or {})),
        "shapes": list(shapes),
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
    }
    return Chart(id=chart_id, title=title, spec={"data": list(traces), "layout": layout})


_RATIO_TICKS = (
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    0.8,
    1.0,
    1.25,
    1.5,
    2.0,
    5.0,
    10.0,
    20.0,
    50.0,
    100.0,
)


def _ratio_ticks(low: float, high: float) -> list[float]:
    """The ratios labelled on a log-ratio axis spanning ``low``–``high`` (1 always)."""
    inside = [t for t in _RATIO_TICKS if low / 1.05 <= t <= high * 1.05]
    if len(inside) > 7:
        inside = [t for t in inside if t not in (0.8, 1.25, 1.5)]
    return sorted({*inside, 1.0})


def _ratio_text(ratio: float) -> str:
    return f"{ratio:g}×"


def gain_bar_chart(
    chart_id: str,
    title: str,
    names: Sequence[str],
    gains: Sequence[float],
    *,
    x_title: str,
    hover: Sequence[str],
) -> Chart:
    """Horizontal bars of direction-aware gains on a ratio (log) axis, from 1×: a 2× gain
    and a 2× loss are as long, and one outlier does not flatten every other bar. Green
    for a gain, red for a loss (improvement and regression, the verdicts' colours)."""
    logs = [math.log10(g) for g in gains]
    low, high = min(1.0, *gains), max(1.0, *gains)
    ticks = _ratio_ticks(low, high)
    x_axis = _axis(
        x_title,
        zeroline=True,
        tickmode="array",
        tickvals=[_num(math.log10(t)) for t in ticks],
        ticktext=[_ratio_text(t) for t in ticks],
    )
    colours = ["#1a7f37" if g >= 1.0 else "#cf222e" for g in gains]
    bars = _horizontal_bars(names, logs, hover, colours, x_axis, height=28 * len(names) + 80)
    return Chart(id=chart_id, title=title, spec=bars)


def _horizontal_bars(
    names: Sequence[str],
    values: Sequence[float],
    hover: Sequence[str],
    colour: str | list[str],
    x_axis: Spec,
    *,
    height: int,
) -> Spec:
    """The spec of horizontal bars, one per name, the first at the top (at least 220 px)."""
    trace = {
        "type": "bar",
        "orientation": "h",
        "y": [label(n) for n in names],
        "x": [_num(v) for v in values],
        "text": [label(h) for h in hover],
        "hovertemplate": "%{text}<extra></extra>",
        "textposition": "none",
        "marker": {"color": colour},
    }
    layout: Spec = {
        "font": _FONT,
        "height": max(220, height),
        "margin": {"l": 20, "r": 20, "t": 10, "b": 40},
        "xaxis": x_axis,
        "yaxis": {"automargin": True, "autorange": "reversed", "type": "category"},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
    }
    return {"data": [trace], "layout": layout}


def log_axis(**extra: Any) -> Spec:
    """A log axis labelled at powers of ten only (no crowded minor-tick labels 2…9)."""
    return {"type": "log", "dtick": 1, "minor": {"showgrid": False}, **extra}


def ranked_bar_chart(
    chart_id: str,
    title: str,
    names: Sequence[str],
    values: Sequence[float],
    *,
    x_title: str,
    hover: Sequence[str],
    log: bool = False,
) -> Chart:
    """Horizontal bars in the order given (best first, at the top), one neutral colour:
    a ranking, not a verdict. ``log``: a log axis (values far apart)."""
    x_axis = _axis(x_title + (" (log scale)" if log else ""), **(log_axis() if log else {}))
    bars = _horizontal_bars(names, values, hover, _COLORS[0], x_axis, height=24 * len(names) + 90)
    return Chart(id=chart_id, title=title, spec=bars)


def hline(y: float, text: str) -> Spec:
    """A dashed horizontal line across the plot (e.g. the efficiency floor)."""
    return {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": y,
        "y1": y,
        "line": {"color": "#cf222e", "width": 1.5, "dash": "dash"},
        "label": {"text": label(text), "textposition": "end", "font": {"size": 11}},
    }


def vline(x: float, text: str) -> Spec:
    """A dashed vertical line up the plot (e.g. the interactivity target), labelled along
    the line in its middle, so the label stays inside the plot on a narrow screen."""
    return {
        "type": "line",
        "yref": "paper",
        "y0": 0,
        "y1": 1,
        "x0": x,
        "x1": x,
        "line": {"color": "#cf222e", "width": 1.5, "dash": "dash"},
        "label": {
            "text": label(text),
            "textposition": "end",
            "yanchor": "top",
            "xanchor": "right",
            "font": {"size": 11},
        },
    }
