"""Throughput at an interactivity target, per stored sweep, and its cost (for analyze.run).

One sweep is the points that share a ``sweep_key`` (one concurrency sweep of one
software version, system, benchmark and curve workload). Each valid point
with a tokens/s/user value gives ``(x, y)`` = (tokens/s/user, output tokens/s
per accelerator); repeated points of one concurrency (trials) are reduced to
their medians (a point is one workload: concurrency or request rate).
:func:`tracker.stats.throughput_at_interactivity` reads the
front at the target (PCHIP, no extrapolation). When the sweep's accelerator
count is unknown, ``y`` is the whole system's tokens/s and the derived metric
says so.

The throughput at the target is tracked as a derived series per curve, keyed
like measured ones with the curve workload as the workload and
``output_tokens_per_s_per_accelerator at 50 tokens/s/user (<statistic>)`` as the
metric; several sweeps of one version are its repeats. A version whose front
does not reach the target is left out of that series ("not reached" is not zero).

Cost (when a price book is given): $/1M output tokens at the target and at the
sweep's peak (its best measured tokens/s), priced by accelerator model, or by
system name for local runs whose files do not name the accelerator. The input
tokens/s at the target is the output's times the sweep's median input tokens per
output token (the tool's input rate, else ISL/OSL), for $/1M input and total tokens.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from tracker.records.findings import SeriesInfo, SweepTarget
from tracker.records.keys import SeriesKey, split_key
from tracker.records.results import SweepSample
from tracker.stats import CostEstimate, Reach, estimate_cost, price_for
from tracker.stats import throughput_at_interactivity as read_front
from tracker.stats.serving import Interpolation

__all__ = ["SweepTarget", "derived_metric", "sweep_targets"]


def derived_metric(target: float, statistic: str, *, per_accelerator: bool) -> str:
    """The metric name of the derived series."""
    base = "output_tokens_per_s_per_accelerator" if per_accelerator else "output_tokens_per_s"
    return f"{base} at {target:g} tokens/s/user ({statistic})"


def _points(sweep: list[SweepSample]) -> tuple[list[float], list[float], str]:
    by_load: dict[tuple[str, float | None], list[SweepSample]] = defaultdict(list)
    statistic = ""
    for point in sweep:
        if point.is_valid and point.tokens_per_s_per_user is not None:
            by_load[(point.workload, point.concurrency)].append(point)
            statistic = statistic or (point.tokens_per_s_per_user_statistic or "")
    xs = [statistics.median(p.tokens_per_s_per_user or 0.0 for p in g) for g in by_load.values()]
    ys = [statistics.median(p.output_tokens_per_s for p in g) for g in by_load.values()]
    return xs, ys, statistic or "unnamed tokens/s/user statistic"


def _input_ratio(sweep: list[SweepSample]) -> float | None:
    """Median input tokens per output token over the sweep's valid points (``None``: unknown)."""
    ratios = [
        p.input_tokens_per_s / p.output_tokens_per_s
        for p in sweep
        if p.is_valid and p.input_tokens_per_s is not None and p.output_tokens_per_s > 0.0
    ]
    return statistics.median(ratios) if ratios else None


def _price(
    book: Mapping[str, float], head: SweepSample, total_at_target: float | None, peak: float
) -> tuple[CostEstimate | None, CostEstimate | None, str]:
    name = head.accelerator or head.system_key.partition("/")[2]
    priced = name if price_for(book, name) is not None else head.system_key.partition("/")[2]
    if price_for(book, priced) is None:
        return None, None, f"{name!r} is not in the price book"
    count = head.accelerators_total
    if count is None:
        return None, None, "the accelerator count is unknown (ingest with --accelerators)"
    at_target = (
        estimate_cost(book, accelerator=priced, accelerators=count, tokens_per_s=total_at_target)
        if total_at_target is not None
        else None
    )
    at_peak = estimate_cost(book, accelerator=priced, accelerators=count, tokens_per_s=peak)
    return at_target, at_peak, ""


def _target(
    sweep: list[SweepSample],
    *,
    target: float,
    method: Interpolation,
    book: Mapping[str, float] | None,
) -> SweepTarget | None:
    head = sweep[0]
    xs, totals, stat = _points(sweep)
    if not xs:
        return None
    count = head.accelerators_total
    ys = [t / count for t in totals] if count else totals
    result = read_front(xs, ys, target=target, statistic=stat, method=method)
    per_acc = result.tokens_per_s_per_accelerator
    total = None if per_acc is None else per_acc * (count or 1)
    metric = derived_metric(target, stat, per_accelerator=count is not None)
    ratio = _input_ratio(sweep)
    labels = (head.benchmark, head.scenario, head.curve_workload, metric)
    found = SweepTarget(
        key=str(SeriesKey(head.software, head.system_key, *labels)),
        software=head.software,
        version=head.version,
        system=head.system_key,
        benchmark=head.benchmark,
        scenario=head.scenario,
        curve_workload=head.curve_workload,
        sweep_key=head.sweep_key,
        accelerator=head.accelerator,
        accelerators=count,
        result=result,
        tokens_per_s_at_target=total,
        peak_tokens_per_s=max(totals),
        input_tokens_per_s_at_target=None if ratio is None or total is None else total * ratio,
    )
    if book is None:
        return found
    at_target, at_peak, note = _price(book, head, total, max(totals))
    return replace(found, cost_at_target=at_target, cost_at_peak=at_peak, cost_note=note)


@dataclass(frozen=True, slots=True)
class SweepReading:
    """Every sweep read at the target, and the derived series' samples."""

    targets: tuple[SweepTarget, ...]
    values: dict[str, dict[str, dict[str, list[float]]]]
    """software → derived series key → version → throughput at the target."""
    infos: dict[str, SeriesInfo]
    without_interactivity: int
    """Sweeps none of whose points has a tokens/s/user value."""


def sweep_targets(
    samples: Iterable[SweepSample],
    *,
    target: float,
    method: Interpolation,
    price_book: Mapping[str, float] | None,
) -> SweepReading:
    """Read every sweep at ``target`` tokens/s/user (see the module docstring)."""
    sweeps: dict[str, list[SweepSample]] = defaultdict(list)
    for sample in samples:
        sweeps[sample.sweep_key].append(sample)
    targets: list[SweepTarget] = []
    values: dict[str, dict[str, dict[str, list[float]]]] = {}
    infos: dict[str, SeriesInfo] = {}
    skipped = 0
    for key in sorted(sweeps):
        found = _target(sweeps[key], target=target, method=method, book=price_book)
        if found is None:
            skipped += 1
            continue
        targets.append(found)
        metric = split_key(found.key)[-1]
        unit = "tokens/s/accelerator" if found.per_accelerator else "tokens/s"
        infos.setdefault(
            found.key,
            SeriesInfo(
                found.software,
                found.system,
                found.benchmark,
                found.scenario,
                found.curve_workload,
                metric,
                unit,
                True,
            ),
        )
        by_version = values.setdefault(found.software, {}).setdefault(found.key, {})
        value = found.result.tokens_per_s_per_accelerator
        if found.result.reach is Reach.REACHED and value is not None:
            by_version.setdefault(found.version, []).append(value)
    return SweepReading(tuple(targets), values, infos, skipped)
