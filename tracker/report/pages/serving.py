"""The serving page: throughput against interactivity, read at a target.

Per curve (software, system, benchmark, workload): every measured point of
every version's sweep as (tokens/s/user, output tokens/s per accelerator), the
Pareto front, the interactivity target as a vertical line and the interpolated
throughput at the target; then the throughput at the target across versions
("not reached" is shown as such, never as zero). With a price book, each version's
cost per 1M input, output and total tokens at the target (the system's $/hour over
its tokens/hour there, :func:`tracker.stats.serving.token_costs`), median over its sweeps.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from tracker.records.findings import SweepTarget
from tracker.report.charts import (
    Chart,
    Spec,
    label,
    line_trace,
    marker_trace,
    version_color,
    vline,
    xy_chart,
)
from tracker.report.common import Page, benchmark_href
from tracker.report.filters import format_number
from tracker.report.inputs import ReportInput, SettingsUsed
from tracker.stats.serving import TokenCosts, token_costs

__all__ = ["ServingCost", "ServingCurve", "ServingPage", "ServingRow", "build_serving_page"]


@dataclass(frozen=True, slots=True)
class ServingCost:
    """One version's cost per 1M tokens at the target, median over its priced sweeps."""

    input_usd: float | None
    """$/1M input tokens (none: lengths unknown)."""
    output_usd: float | None
    """$/1M output tokens."""
    output_usd_min: float | None
    """Lowest $/1M output tokens of them."""
    output_usd_max: float | None
    """Highest $/1M output tokens of them."""
    total_usd: float | None
    """$/1M input + output tokens."""
    priced: int
    """How many of its sweeps are priced."""
    note: str
    """Why none is priced (not in the price book, ...)."""


@dataclass(frozen=True, slots=True)
class ServingRow:
    """The sweeps (trials) of one version, read at the target: median and range."""

    version: str
    """Version."""
    trials: int
    """Sweeps of this version (trials)."""
    reached: int
    """How many of its sweeps' fronts cover the target."""
    at_target: float | None
    """Median throughput at the target over the sweeps that reach it."""
    at_target_min: float | None
    """Smallest of them."""
    at_target_max: float | None
    """Largest of them."""
    system_at_target: float | None
    """Median of the whole system's tokens/s at the target."""
    accelerators: int | None
    """Accelerators of the system, if known."""
    best_measured: float | None
    """Median best measured throughput."""
    statistic: str
    """The tokens/s/user statistic used."""
    reason: str
    """Why a sweep did not reach it, when one did not."""
    sweeps: tuple[str, ...]
    """The sweep keys, in order."""
    cost: ServingCost | None = None
    """Cost per 1M tokens at the target; none: no price book."""


def _median(values: Sequence[float]) -> float | None:
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return None
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def _cost(targets: Sequence[SweepTarget]) -> ServingCost:
    """The cost of one version at the target (see :class:`ServingCost`)."""
    found: list[TokenCosts] = [
        token_costs(t.cost_at_target, input_tokens_per_s=t.input_tokens_per_s_at_target)
        for t in targets
        if t.cost_at_target is not None
    ]
    output = [c.output_usd for c in found if c.output_usd is not None]
    inputs = [c.input_usd for c in found if c.input_usd is not None]
    totals = [c.total_usd for c in found if c.total_usd is not None]
    note = "" if found else next((t.cost_note for t in targets if t.cost_note), "not reached")
    return ServingCost(
        input_usd=_median(inputs) if len(inputs) == len(found) else None,
        output_usd=_median(output),
        output_usd_min=min(output, default=None),
        output_usd_max=max(output, default=None),
        total_usd=_median(totals) if len(totals) == len(found) else None,
        priced=len(found),
        note=note,
    )


def _row(version: str, targets: Sequence[SweepTarget], priced: bool) -> ServingRow:
    at = [v for t in targets if (v := t.result.tokens_per_s_per_accelerator) is not None]
    whole = [v for t in targets if (v := t.tokens_per_s_at_target) is not None]
    best = [v for t in targets if (v := t.result.best_measured) is not None]
    return ServingRow(
        version=version,
        trials=len(targets),
        reached=len(at),
        at_target=_median(at),
        at_target_min=min(at, default=None),
        at_target_max=max(at, default=None),
        system_at_target=_median(whole),
        accelerators=targets[0].accelerators,
        best_measured=_median(best),
        statistic=targets[0].result.statistic,
        reason=next((t.result.reason for t in targets if t.result.reason), ""),
        sweeps=tuple(t.sweep_key for t in targets),
        cost=_cost(targets) if priced else None,
    )


@dataclass(frozen=True, slots=True)
class ServingCurve:
    """The serving curves of one software, system, benchmark and workload."""

    title: str
    """System, benchmark, scenario, workload."""
    software: str
    """Software name."""
    unit: str
    """Unit of the throughput axis."""
    href: str
    """The benchmark page."""
    charts: tuple[Chart, ...]
    """The curves with the target; then the throughput at it per version."""
    rows: tuple[ServingRow, ...]
    """One per version (its sweeps folded), newest first."""


@dataclass(frozen=True, slots=True)
class ServingPage(Page):
    """The context of ``serving.html``."""

    target: float
    """Interactivity target, tokens/s/user."""
    curves: tuple[ServingCurve, ...]
    """Sorted by software and title."""
    settings: SettingsUsed | None
    """The analysis settings used and where they came from."""


def _curve_title(t: SweepTarget) -> str:
    system = t.system.partition("/")[2] or t.system
    return " · ".join(x for x in (system, t.benchmark, t.scenario, t.curve_workload) if x)


def _measured(
    data: ReportInput, targets: Sequence[SweepTarget]
) -> dict[str, list[tuple[float, float]]]:
    """Every valid measured point of the curve's sweeps by version: (tokens/s/user, output
    tokens/s per accelerator)."""
    keys = {t.sweep_key for t in targets}
    raw: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for p in data.sweep_points:
        if p.sweep_key in keys and p.is_valid and p.tokens_per_s_per_user:
            per = p.output_tokens_per_s / (p.accelerators_total or 1)
            raw[p.version].append((p.tokens_per_s_per_user, per))
    return raw


def _version_traces(
    version: str,
    index: int,
    count: int,
    points: Sequence[tuple[float, float]],
    runs: Sequence[SweepTarget],
    unit: str,
    target: float,
) -> list[Spec]:
    """One version's traces: its measured points, each trial's Pareto front and the star
    at the target."""
    color = version_color(index, count)
    traces: list[Spec] = []
    if points:
        traces.append(
            marker_trace(
                f"{version} measured",
                [x for x, _ in points],
                [y for _, y in points],
                symbol="circle",
                marker_color=color,
                text=[
                    f"{version}: {format_number(y)} {unit} at {format_number(x)} tokens/s/user"
                    for x, y in points
                ],
                size=7,
                opacity=0.45,
                group=version,
                in_legend=False,
            )
        )
    for trial, t in enumerate(runs):
        front = t.result.front
        traces.append(
            line_trace(
                _legend_name(version, len(runs)),
                [x for x, _ in front],
                [y for _, y in front],
                index=index,
                line_color=color,
                hover="%{x:,.4~g} tokens/s/user: <b>%{y:,.4~g} " + label(unit) + "</b>",
                group=version,
                in_legend=trial == 0,
            )
        )
        value = t.result.tokens_per_s_per_accelerator
        if value is not None:
            traces.append(_star(version, value, unit, target, color))
    return traces


def _star(version: str, value: float, unit: str, target: float, color: str) -> Spec:
    """The star of one trial at the interactivity target."""
    return marker_trace(
        f"{version} at target",
        [target],
        [value],
        symbol="star",
        marker_color=color,
        text=[f"{version}: {format_number(value)} {unit} at {target:g} tokens/s/user"],
        size=16,
        group=version,
        in_legend=False,
    )


def _trend_chart(
    chart_id: str,
    software: str,
    versions: list[str],
    rows: Sequence[ServingRow],
    unit: str,
    target: float,
) -> Chart:
    """The throughput at the target per version: the median of the trials, min–max."""
    return xy_chart(
        chart_id,
        f"Throughput at {target:g} tokens/s/user, per version (median, min–max of trials)",
        [
            line_trace(
                "at target (median of trials)",
                versions,
                [r.at_target for r in rows],
                index=0,
                hover="%{x}: <b>%{y:,.4~g} " + label(unit) + "</b> (median)",
                spread=([r.at_target_min for r in rows], [r.at_target_max for r in rows]),
            )
        ],
        x_title=f"{software} version",
        y_title=f"{unit} (↑ better)",
        x_axis={"type": "category", "categoryorder": "array", "categoryarray": versions},
        y_axis={"rangemode": "tozero"},
        height=280,
    )


def _curve(data: ReportInput, targets: Sequence[SweepTarget], chart_index: int) -> ServingCurve:
    head = targets[0]
    order = {v.version: i for i, v in enumerate(data.versions) if v.software == head.software}
    targets = sorted(
        targets, key=lambda t: (order.get(t.version, len(order)), t.version, t.sweep_key)
    )
    unit = "output tokens/s per accelerator" if head.per_accelerator else "output tokens/s"
    raw = _measured(data, targets)
    versions = list(dict.fromkeys(t.version for t in targets))
    target = data.target_tokens_per_s_per_user
    traces = [
        trace
        for i, version in enumerate(versions)
        for trace in _version_traces(
            version,
            i,
            len(versions),
            sorted(raw.get(version, [])),
            [t for t in targets if t.version == version],
            unit,
            target,
        )
    ]
    statistic = head.result.statistic
    curves = xy_chart(
        f"chart-{chart_index}",
        f"Throughput against interactivity ({statistic})",
        traces,
        x_title=f"tokens/s/user ({statistic}); → more interactive",
        y_title=f"{unit} (↑ better)",
        shapes=[vline(target, f"target {target:g} tokens/s/user")],
        legend_title="Pareto front per version; ★ at the target",
    )
    priced = data.settings is not None and data.settings.has_price_book
    rows = [_row(v, [t for t in targets if t.version == v], priced) for v in versions]
    trend = _trend_chart(f"chart-{chart_index + 1}", head.software, versions, rows, unit, target)
    return ServingCurve(
        title=_curve_title(head),
        software=head.software,
        unit=unit,
        href=benchmark_href(head.benchmark, head.scenario),
        charts=(curves, trend),
        rows=tuple(reversed(rows)),
    )


def _legend_name(version: str, trials: int) -> str:
    return f"{version} ({trials} trials)" if trials > 1 else version


def build_serving_page(data: ReportInput, *, generated_at: str, is_example: bool) -> ServingPage:
    """Every serving curve with its target line and interpolated point."""
    grouped: dict[tuple[str, str], list[SweepTarget]] = defaultdict(list)
    for t in data.targets:
        grouped[(t.software, _curve_title(t))].append(t)
    curves = tuple(_curve(data, grouped[key], 2 * i + 1) for i, key in enumerate(sorted(grouped)))
    return ServingPage(
        title="Serving: throughput at an interactivity target",
        generated_at=generated_at,
        is_example=is_example,
        target=data.target_tokens_per_s_per_user,
        curves=curves,
        settings=data.settings,
    )
