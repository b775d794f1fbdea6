"""Reading: the queries behind :class:`tracker.store.facade.Store`'s lists and streams, and
the plain records built from their rows.

Reading: the queries behind :class:`tracker.store.facade.Store`'s lists and streams.

The streams of every result (analysis samples, series points) read the small
label tables first and then the results by their ids alone, in batches, so
memory stays bounded and no row is joined; the export and the sweeps join the
labels in the query (:func:`_join_labels`).

Rows to records: the plain records the queries above build from their rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import fields as dataclass_fields
from typing import Any, TypeAlias, TypeVarTuple

from sqlalchemy import Connection, Engine, Select, func, inspect, select
from sqlalchemy.orm import Session
from sqlmodel import col

from tracker.records.results import (
    AnalysisSample,
    Configuration,
    ExportRow,
    SeriesPoint,
    SweepSample,
    VersionInfo,
)
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

__all__ = [
    "Labels",
    "count_rows",
    "export_row",
    "group_points",
    "source_exists",
    "iter_analysis_samples",
    "iter_export_rows",
    "iter_series_points",
    "iter_sweep_samples",
    "list_versions",
    "sweep_sample",
]


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


def count_rows(engine: Engine) -> dict[str, int]:
    """Rows per table."""
    counts: dict[str, int] = {}
    with Session(engine) as session:
        for model in (
            Source,
            Artifact,
            System,
            SystemDescription,
            SoftwareVersion,
            Benchmark,
            Metric,
            Result,
        ):
            table = inspect(model).local_table
            name = str(model.__tablename__)
            counts[name] = session.scalar(select(func.count()).select_from(table)) or 0
    return counts


def source_exists(engine: Engine, identity_sha256: str) -> bool:
    """Whether a source with this identity (content + labels) is stored."""
    with Session(engine) as session:
        found = session.scalar(
            select(col(Source.id)).where(col(Source.identity_sha256) == identity_sha256)
        )
        return found is not None


def list_versions(engine: Engine) -> list[VersionInfo]:
    """Every known software version, unordered."""
    with Session(engine) as session:
        rows = session.scalars(select(SoftwareVersion)).all()
        return [
            VersionInfo(
                software=v.software,
                version=v.version,
                sort_key=v.sort_key,
                release_date=v.release_date,
            )
            for v in rows
        ]


def iter_export_rows(
    engine: Engine, batch_size: int, software: str | None = None
) -> Iterator[ExportRow]:
    """Every stored result with its labels (only ``software``'s when given), in a stable order."""
    columns = (Result, Source, System, SoftwareVersion, Benchmark, Metric, Artifact)
    query = (
        _with_description(_join_labels(select(*columns, SystemDescription)))
        .join(Artifact, col(Result.artifact_id) == col(Artifact.id))
        .order_by(col(Result.id))
        .execution_options(yield_per=batch_size)
    )
    if software is not None:
        query = query.where(col(SoftwareVersion.software) == software)
    with Session(engine) as session:
        for row in session.execute(query):
            yield export_row(*row)


def iter_series_points(engine: Engine, order: str, batch_size: int) -> Iterator[SeriesPoint]:
    """One point per (series, version), grouped by ``order`` (see ``Store.iter_series_points``)."""
    if order not in _POINT_ORDERS:
        raise ValueError(f"order must be one of {sorted(_POINT_ORDERS)}, not {order!r}")
    with engine.connect() as connection:
        labels = _analysis_labels(connection)
        examples = {
            source: bool(example)
            for source, example in connection.execute(
                select(col(Source.id), col(Source.is_example))
            )
        }
        query = select(*_POINT_COLUMNS).order_by(*_POINT_ORDERS[order], col(Result.id))
        rows = connection.execution_options(yield_per=batch_size).execute(query)
        yield from group_points(rows, labels, examples)


def iter_analysis_samples(engine: Engine, batch_size: int) -> Iterator[AnalysisSample]:
    """Every stored result as the analysis reads it, valid or not, streamed by id."""
    with engine.connect() as connection:
        labels = _analysis_labels(connection)
        versions, systems = labels[SoftwareVersion], labels[System]
        benchmarks, metrics = labels[Benchmark], labels[Metric]
        described = _round_descriptions(connection, systems)
        query = select(*_ANALYSIS_COLUMNS).order_by(col(Result.id))
        rows = connection.execution_options(yield_per=batch_size).execute(query)
        for system, version, benchmark, metric, workload, value, valid, stack, sweep, kind in rows:
            sv, bm, mt = versions[version], benchmarks[benchmark], metrics[metric]
            sy, conf = described.get((system, version)) or (systems[system], None)
            yield AnalysisSample(
                sv[0], sv[1], sy[0], sy[1], sy[2], sy[3], sy[4], sy[5], sy[6], sy[7],
                bm[0], bm[1], workload, mt[0], mt[1], mt[2], value, valid, stack, sweep,
                kind or None, conf,
            )  # fmt: skip


_SAMPLE_LABELS = ("accelerator", "nodes", "accelerators_total", "host_cpu")
_DESCRIPTION_COLUMNS = _SAMPLE_LABELS + tuple(
    f.name for f in dataclass_fields(Configuration) if f.name not in {*_SAMPLE_LABELS, "division"}
)
"""The description's columns the analysis reads: the labels of :class:`AnalysisSample`
(the first four), then the rest of its :class:`Configuration` (the division is the
system's)."""


def _round_descriptions(
    connection: Connection, systems: dict[int, tuple[Any, ...]]
) -> dict[tuple[int, int], tuple[tuple[Any, ...], Configuration]]:
    """(system id, version id) → the system's label columns (``systems``: key, name,
    submitter, division, then the description) with that round's description, and the
    round's :class:`Configuration` of it (one record per description, shared)."""
    columns = [getattr(SystemDescription, name) for name in _DESCRIPTION_COLUMNS]
    query = select(
        col(SystemDescription.system_id), col(SystemDescription.software_version_id), *columns
    )
    out: dict[tuple[int, int], tuple[tuple[Any, ...], Configuration]] = {}
    for system, version, *described in connection.execute(query):
        fields = dict(zip(_DESCRIPTION_COLUMNS, described, strict=True))
        division = systems[system][3]
        fields["cpu_only"] = bool(fields["cpu_only"])
        out[(system, version)] = (
            (*systems[system][:4], *described[:4]),
            Configuration(division=division, **fields),
        )
    return out


def _with_description(query: Select[*_Ts]) -> Select[*_Ts]:
    """Join each result's row to its system's description in the result's round (if any)."""
    return query.outerjoin(
        SystemDescription,
        (col(SystemDescription.system_id) == col(Result.system_id))
        & (col(SystemDescription.software_version_id) == col(Result.software_version_id)),
    )


def iter_sweep_samples(engine: Engine, metric: str) -> Iterator[SweepSample]:
    """The points of every sweep (results with a sweep key), their ``metric`` result only."""
    query = (
        _with_description(_join_labels(select(*_SWEEP_COLUMNS)))
        .where(col(Result.sweep_key).is_not(None), col(Metric.name) == metric)
        .order_by(col(Result.sweep_key), col(Result.id))
    )
    with Session(engine) as session:
        for row in session.execute(query.execution_options(yield_per=2000)):
            yield sweep_sample(*row)


_ANALYSIS_COLUMNS = (
    col(Result.system_id),
    col(Result.software_version_id),
    col(Result.benchmark_id),
    col(Result.metric_id),
    col(Result.workload),
    col(Result.value),
    col(Result.is_valid),
    col(Result.software_stack),
    col(Result.sweep_key),
    col(Result.extra)["weight_data_types"].as_string(),  # the precision class, where stated
)
_LABEL_COLUMNS: dict[type[Any], tuple[Any, ...]] = {
    SoftwareVersion: (col(SoftwareVersion.software), col(SoftwareVersion.version)),
    System: (
        col(System.key),
        col(System.name),
        col(System.submitter),
        col(System.division),
        col(System.accelerator),
        col(System.nodes),
        col(System.accelerators_total),
        col(System.host_cpu),
    ),
    Benchmark: (col(Benchmark.name), col(Benchmark.scenario)),
    Metric: (col(Metric.name), col(Metric.unit), col(Metric.higher_is_better)),
}
"""With the results' columns, in the order of :class:`AnalysisSample`'s fields."""


def _analysis_labels(connection: Connection) -> Labels:
    """Each label table as id → its columns of :data:`_LABEL_COLUMNS`."""
    return {
        model: {row[0]: tuple(row[1:]) for row in connection.execute(select(model.id, *columns))}
        for model, columns in _LABEL_COLUMNS.items()
    }


_SWEEP_COLUMNS = (
    col(Result.sweep_key),
    col(Result.workload),
    col(SoftwareVersion.software),
    col(SoftwareVersion.version),
    col(System.key),
    col(Benchmark.name),
    col(Benchmark.scenario),
    func.coalesce(col(SystemDescription.accelerator), col(System.accelerator)),
    func.coalesce(col(SystemDescription.accelerators_total), col(System.accelerators_total)),
    col(Result.concurrency),
    col(Result.value),
    col(Result.is_valid),
    col(Result.extra),
)

_Ts = TypeVarTuple("_Ts")


def _join_labels(query: Select[*_Ts]) -> Select[*_Ts]:
    """Join a query over results to the tables that label them."""
    return (
        query.join(Source, col(Result.source_id) == col(Source.id))
        .join(System, col(Result.system_id) == col(System.id))
        .join(SoftwareVersion, col(Result.software_version_id) == col(SoftwareVersion.id))
        .join(Benchmark, col(Result.benchmark_id) == col(Benchmark.id))
        .join(Metric, col(Result.metric_id) == col(Metric.id))
    )


_POINT_COLUMNS = (
    col(Result.software_version_id),
    col(Result.system_id),
    col(Result.benchmark_id),
    col(Result.metric_id),
    col(Result.workload),
    col(Result.value),
    col(Result.is_valid),
    col(Result.source_id),
)
_POINT_ORDERS: dict[str, tuple[Any, ...]] = {
    "benchmark": (
        col(Result.benchmark_id),
        col(Result.system_id),
        col(Result.software_version_id),
        col(Result.metric_id),
        col(Result.workload),
    ),
    "system": (
        col(Result.system_id),
        col(Result.benchmark_id),
        col(Result.software_version_id),
        col(Result.metric_id),
        col(Result.workload),
    ),
}
"""What :meth:`Store.iter_series_points` reads, and its orders: a point's rows are adjacent."""
