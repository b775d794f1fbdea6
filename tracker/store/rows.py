"""Rows to records: the plain records :mod:`tracker.store.read` builds from query rows."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeAlias

from tracker.records import ExportRow, SeriesPoint, SweepSample
from tracker.store.models import (
    Artifact,
    Benchmark,
    Metric,
    Result,
    SoftwareVersion,
    Source,
    System,
    SystemDescription,
)

__all__ = ["Labels", "export_row", "group_points", "sweep_sample"]

Labels: TypeAlias = dict[type[Any], dict[int, tuple[Any, ...]]]
"""Each label table (model) as id → the label columns :mod:`tracker.store.read` reads."""


def group_points(
    rows: Iterable[Any],
    labels: Labels,
    examples: dict[int | None, bool],
) -> Iterator[SeriesPoint]:
    """One point per run of rows with the same series and version (the rows come grouped)."""
    current: tuple[Any, ...] | None = None
    values: list[float] = []
    valid = 0
    example = False
    for version, system, benchmark, metric, workload, value, is_valid, source in rows:
        key = (version, system, benchmark, metric, workload)
        if key != current:
            if current is not None:
                yield _point(current, labels, values, valid, example)
            current, values, valid, example = key, [], 0, False
        values.append(value)
        valid += 1 if is_valid else 0
        example = example or bool(examples.get(source))
    if current is not None:
        yield _point(current, labels, values, valid, example)


def _point(
    key: tuple[Any, ...],
    labels: Labels,
    values: list[float],
    valid: int,
    example: bool,
) -> SeriesPoint:
    version, system, benchmark, metric, workload = key
    software, version_label = labels[SoftwareVersion][version]
    system_key, name = labels[System][system][:2]
    benchmark_name, scenario = labels[Benchmark][benchmark]
    metric_name, unit, higher = labels[Metric][metric]
    return SeriesPoint(
        software=software,
        version=version_label,
        system=name,
        benchmark=benchmark_name,
        scenario=scenario,
        workload=workload,
        metric=metric_name,
        unit=unit,
        higher_is_better=bool(higher),
        values=tuple(values),
        valid_count=valid,
        is_example=example,
        system_key=system_key,
    )


def export_row(
    result: Result,
    source: Source,
    system: System,
    version: SoftwareVersion,
    benchmark: Benchmark,
    metric: Metric,
    artifact: Artifact,
    description: SystemDescription | None = None,
) -> ExportRow:
    """One result with its labels (the system as the result's round describes it)."""
    described = description or system
    return ExportRow(
        source_kind=source.kind,
        round=result.round,
        division=system.division,
        submitter=system.submitter,
        system=system.name,
        location=result.location,
        benchmark=benchmark.name,
        scenario=benchmark.scenario,
        metric=metric.name,
        value=result.value,
        unit=metric.unit,
        higher_is_better=metric.higher_is_better,
        valid=result.is_valid,
        accelerator=described.accelerator,
        nodes=described.nodes,
        accelerators_total=described.accelerators_total,
        software=version.software,
        software_version=version.version,
        concurrency=result.concurrency,
        workload=result.workload,
        sweep_key=result.sweep_key,
        software_stack=result.software_stack,
        run_label=result.run_label,
        is_example=source.is_example,
        source_location=source.location,
        artifact_path=artifact.path,
        line=result.line,
        extra=dict(result.extra),
    )


def sweep_sample(
    sweep_key: str,
    workload: str,
    software: str,
    version: str,
    system_key: str,
    benchmark: str,
    scenario: str,
    accelerator: str | None,
    accelerators_total: int | None,
    concurrency: float | None,
    value: float,
    is_valid: bool,
    extra: dict[str, Any],
) -> SweepSample:
    """One sweep point; its ``extra`` gives the curve workload, tokens/s/user and the count."""

    def number(name: str) -> float | None:
        found = extra.get(name)
        if isinstance(found, bool) or not isinstance(found, int | float):
            return None
        return float(found)

    def text(name: str) -> str | None:
        found = extra.get(name)
        return found if isinstance(found, str) and found else None

    def input_tokens_per_s() -> float | None:  # the tool's, else from the mean lengths
        if (found := number("input_tokens_per_s")) is not None:
            return found
        for kind in ("measured", "requested"):
            isl, osl = number(f"isl_{kind}"), number(f"osl_{kind}")
            if isl is not None and osl:
                return value * isl / osl
        return None

    count = number("accelerators_total")
    return SweepSample(
        sweep_key=sweep_key,
        software=software,
        version=version,
        system_key=system_key,
        benchmark=benchmark,
        scenario=scenario,
        curve_workload=text("curve_workload") or "",
        accelerator=accelerator or text("accelerator"),
        accelerators_total=int(count) if count is not None else accelerators_total,
        concurrency=concurrency,
        output_tokens_per_s=value,
        tokens_per_s_per_user=number("output_tokens_per_s_per_user"),
        tokens_per_s_per_user_statistic=text("tokens_per_s_per_user_statistic"),
        is_valid=is_valid,
        workload=workload,
        input_tokens_per_s=input_tokens_per_s(),
    )
