"""The database: the only module that opens sessions and runs queries.

Everything above it passes and receives plain records (:mod:`tracker.records`).
A source is written in one transaction, so it is stored all or nothing.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, TypeVarTuple, cast

from sqlalchemy import (
    Connection,
    Engine,
    Select,
    Table,
    create_engine,
    event,
    func,
    insert,
    inspect,
    select,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session
from sqlmodel import col

from tracker.errors import StoreError
from tracker.records import (
    FINDING_STATUSES,
    AnalysisSample,
    ExportRow,
    FindingRecord,
    FindingsSaved,
    MetricRecord,
    ResultRecord,
    SeriesPoint,
    SoftwareRecord,
    SourceRecord,
    StoredFinding,
    SweepSample,
    SystemRecord,
    VersionInfo,
)
from tracker.store.models import (
    Artifact,
    Benchmark,
    Finding,
    Metric,
    Result,
    SoftwareVersion,
    Source,
    System,
)
from tracker.store.schema import current_revision, head_revision, upgrade_schema
from tracker.versions import version_sort_key

__all__ = ["SaveOutcome", "Store", "normalise_database_url"]

_SQLITE_BUSY_TIMEOUT_S = 30.0
"""How long a SQLite connection waits for another process's write lock before failing."""
_WRITE_OPTION = "tracker_write"
"""Execution option of write transactions: on SQLite they begin IMMEDIATE (write lock first)."""
_SAVE_ATTEMPTS = 8
"""Tries of one source's transaction when it conflicts with a concurrent writer."""
_RETRY_DELAY_S = (0.05, 2.0)
"""The first wait before a retry and the longest; the wait doubles, with jitter."""
_CONFLICT_SQLSTATES = {
    "40001": "a serialization failure",
    "40P01": "a deadlock",
    "23505": "a row inserted by a concurrent writer",  # unique_violation: get-or-create races
    "55P03": "a lock held by a concurrent writer",
}
"""PostgreSQL errors that a concurrent writer causes; retrying the transaction resolves them."""
_BATCH = 2000
_RESULT_TABLE = cast(Table, inspect(Result).local_table)  # Core inserts: cheaper per row
_ARTIFACT_TABLE = cast(Table, inspect(Artifact).local_table)


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    """What one :meth:`Store.save_source` call did."""

    source_was_known: bool
    results_stored: int
    results_already_stored: int
    retries: int = 0
    """Times the transaction was rolled back and run again after a conflict with a
    concurrent writer (a deadlock, a serialization failure, a row another process
    inserted first, a SQLite lock held too long)."""


def normalise_database_url(url: str) -> str:
    """``postgres://`` and ``postgresql://`` mean psycopg 3; other URLs are kept."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def _create_engine(url: str) -> Engine:
    try:
        parsed = make_url(normalise_database_url(url))
    except ArgumentError:
        raise StoreError(
            f"database URL {url!r} is not a URL; use sqlite:///FILE or postgresql+psycopg://..."
        ) from None
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(parsed, connect_args={"timeout": _SQLITE_BUSY_TIMEOUT_S})
        event.listen(engine, "connect", _configure_sqlite_connection)
        event.listen(engine, "begin", _begin_sqlite_transaction)
        return engine
    connect_args: dict[str, Any] = {"application_name": "tracker"}
    if "application_name" in parsed.query:
        del connect_args["application_name"]
    # No server-side prepared statements: psycopg prepares a query after its 5th
    # run, and PostgreSQL then keeps the generic plan made when the table was
    # small (a fresh database, no ANALYZE yet), e.g. a sequential scan for the
    # sample-key lookup; one process ingesting 6 rounds of 20,000 rows into a
    # fresh database took 145 s with it and 17 s without.
    connect_args["prepare_threshold"] = None
    logging.getLogger("psycopg").addFilter(_drop_pipeline_echo)
    try:
        return create_engine(parsed, pool_pre_ping=True, connect_args=connect_args)
    except ModuleNotFoundError as error:
        raise StoreError(
            f"the driver for {parsed.drivername} is not installed ({error.name}); "
            "install it with: pip install 'tracker[postgres]'"
        ) from None


def _configure_sqlite_connection(dbapi_connection: Any, _record: Any) -> None:
    """Foreign keys on, write-ahead log, full sync; transactions begun by SQLAlchemy.

    The write-ahead log lets readers (a report, a gate) run while an ingest
    writes, and a killed writer leaves only uncommitted log frames, which the
    next connection ignores. pysqlite's own transaction handling is turned off
    (``isolation_level = None``) so that :func:`_begin_sqlite_transaction`
    decides how each transaction begins.
    """
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    try:
        cursor.execute("PRAGMA journal_mode=WAL")  # persistent; a no-op once set
    except sqlite3.OperationalError:
        pass  # a read-only file keeps its rollback journal, which is crash-safe too
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.close()


def _begin_sqlite_transaction(connection: Connection) -> None:
    """BEGIN IMMEDIATE for writes, so a writer waits for the lock (busy timeout) up front.

    A deferred transaction that reads and then writes would have to upgrade its
    lock midway, which fails at once (no waiting) when another process wrote in
    between; taking the write lock first makes concurrent writers queue instead.
    """
    write = connection.get_execution_options().get(_WRITE_OPTION, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _drop_pipeline_echo(record: logging.LogRecord) -> bool:
    """Drop psycopg's warning that repeats the error a failed batch insert raises.

    A batch insert that hits a unique violation (a race :meth:`Store.save_source`
    retries) also makes psycopg log "error ignored terminating <Pipeline>";
    the error itself is raised and handled, so the warning is only noise on stderr.
    """
    return not (record.msg == "error ignored terminating %r: %s" and "Pipeline" in str(record.args))


def _conflict(error: DBAPIError) -> str | None:
    """What a concurrent writer did to make ``error`` happen, if it is such an error."""
    sqlstate = getattr(error.orig, "sqlstate", None)  # psycopg
    if isinstance(sqlstate, str):
        return _CONFLICT_SQLSTATES.get(sqlstate)
    code = getattr(error.orig, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in (5, 6):  # SQLITE_BUSY, SQLITE_LOCKED
        return "a lock held by a concurrent writer"
    return None


def _retry_delay(retry: int) -> float:
    first, longest = _RETRY_DELAY_S
    return min(longest, first * 2.0**retry) * random.uniform(0.5, 1.5)


class Store:
    """A tracker database. Open it with :meth:`Store.open`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str, *, upgrade: bool = True) -> Store:
        """Connect to ``url`` and, unless ``upgrade`` is false, bring the schema up to date."""
        store = cls(_create_engine(url))
        try:
            if upgrade and current_revision(store.engine) != head_revision():
                # concurrent first uses queue: PostgreSQL on an advisory lock
                # (migrations/env.py), SQLite on the write lock taken first
                upgrade_schema(store._writing())
        except OperationalError as error:
            store.close()
            raise StoreError(
                f"cannot open the database {store.url}: {error.orig}; "
                "check --database-url / TRACKER_DATABASE_URL and that the server is running"
            ) from None
        return store

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return self.engine.url.render_as_string(hide_password=True)

    def close(self) -> None:
        """Release the connections."""
        self.engine.dispose()

    def _writing(self) -> Engine:
        """The engine for write transactions (on SQLite they take the write lock first)."""
        return self.engine.execution_options(**{_WRITE_OPTION: True})

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def revision(self) -> str | None:
        """The schema revision the database is at."""
        return current_revision(self.engine)

    def count_rows(self) -> dict[str, int]:
        """Rows per table, for summaries and tests."""
        counts: dict[str, int] = {}
        with Session(self.engine) as session:
            for model in (Source, Artifact, System, SoftwareVersion, Benchmark, Metric, Result):
                table = inspect(model).local_table
                name = str(model.__tablename__)
                counts[name] = session.scalar(select(func.count()).select_from(table)) or 0
        return counts

    def has_source(self, identity_sha256: str) -> bool:
        """Whether a source with this identity (content + labels) is stored."""
        with Session(self.engine) as session:
            found = session.scalar(
                select(col(Source.id)).where(col(Source.identity_sha256) == identity_sha256)
            )
            return found is not None

    def save_source(self, source: SourceRecord, results: Sequence[ResultRecord]) -> SaveOutcome:
        """Store a source, its artifacts and its results in one transaction.

        A source already stored (same identity) is left alone; results whose
        sample key is already stored (the same file under the same labels,
        reached through another source) are skipped, not duplicated.

        Processes may store at the same time: a transaction that conflicts with
        another writer (a deadlock, a serialization failure, a system, version,
        result or the very source inserted by the other first) is rolled back
        and run again, after a growing random wait, up to :data:`_SAVE_ATTEMPTS`
        times; a source another process stored meanwhile is then "already stored".
        """
        retry = 0
        while True:
            try:
                with Session(self._writing()) as session, session.begin():
                    outcome = _Writer(session).save(source, results)
                return replace(outcome, retries=retry)
            except DBAPIError as error:
                conflict = _conflict(error)
                if conflict is None:
                    raise StoreError(
                        f"could not store {source.location}: {error}; nothing of it was stored"
                    ) from None
                if retry + 1 == _SAVE_ATTEMPTS:
                    raise StoreError(
                        f"could not store {source.location}: {conflict} made each of "
                        f"{_SAVE_ATTEMPTS} tries fail ({error.orig}); nothing of it was stored; "
                        "run the ingest again"
                    ) from None
            except SQLAlchemyError as error:
                raise StoreError(
                    f"could not store {source.location}: {error}; nothing of it was stored"
                ) from None
            time.sleep(_retry_delay(retry))
            retry += 1

    def list_versions(self) -> list[VersionInfo]:
        """Every known software version (unordered; see :func:`tracker.versions.order_versions`)."""
        with Session(self.engine) as session:
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

    def iter_export_rows(self, *, batch_size: int = 1000) -> Iterator[ExportRow]:
        """Every stored result with its labels, streamed in a stable order."""
        query = (
            _join_labels(
                select(Result, Source, System, SoftwareVersion, Benchmark, Metric, Artifact)
            )
            .join(Artifact, col(Result.artifact_id) == col(Artifact.id))
            .order_by(col(Result.id))
            .execution_options(yield_per=batch_size)
        )
        with Session(self.engine) as session:
            for row in session.execute(query):
                yield _export_row(*row)

    def iter_series_points(
        self, *, order: str = "benchmark", batch_size: int = 5000
    ) -> Iterator[SeriesPoint]:
        """The samples of each series at each version, one point per (series, version), streamed.

        ``order`` groups the points: ``"benchmark"`` yields every point of one
        benchmark and scenario together, ``"system"`` every point of one system
        (its identity, submitter and name: two systems of one name stay apart).
        Groups, and points within a group, follow the stored ids (stable for one
        database); sort them by their labels where the order is shown. Like
        :meth:`iter_analysis_samples`, the label tables are read first and the
        results streamed by their ids in batches, so memory stays bounded.
        """
        if order not in _POINT_ORDERS:
            raise ValueError(f"order must be one of {sorted(_POINT_ORDERS)}, not {order!r}")
        with self.engine.connect() as connection:
            labels = _analysis_labels(connection)
            examples = {
                source: bool(example)
                for source, example in connection.execute(
                    select(col(Source.id), col(Source.is_example))
                )
            }
            query = select(*_POINT_COLUMNS).order_by(*_POINT_ORDERS[order], col(Result.id))
            rows = connection.execution_options(yield_per=batch_size).execute(query)
            yield from _group_points(rows, labels, examples)

    def iter_analysis_samples(self, *, batch_size: int = 5000) -> Iterator[AnalysisSample]:
        """Every stored result as the analysis reads it, valid or not, streamed by id.

        The label tables are small and read first; the results are streamed by
        their ids alone (a third of the cost of joining every row).
        """
        with self.engine.connect() as connection:
            labels = _analysis_labels(connection)
            versions, systems = labels[SoftwareVersion], labels[System]
            benchmarks, metrics = labels[Benchmark], labels[Metric]
            query = select(*_ANALYSIS_COLUMNS).order_by(col(Result.id))
            rows = connection.execution_options(yield_per=batch_size).execute(query)
            for system, version, benchmark, metric, workload, value, valid, stack, sweep in rows:
                sv, sy, bm, mt = (
                    versions[version],
                    systems[system],
                    benchmarks[benchmark],
                    metrics[metric],
                )
                yield AnalysisSample(
                    sv[0], sv[1], sy[0], sy[1], sy[2], sy[3], sy[4], sy[5], sy[6], sy[7],
                    bm[0], bm[1], workload, mt[0], mt[1], mt[2], value, valid, stack, sweep,
                )  # fmt: skip

    def iter_sweep_samples(self, *, metric: str) -> Iterator[SweepSample]:
        """The points of every sweep (results with a sweep key), their ``metric`` result only.

        Sweep points come from serving tools; their ``extra`` gives the curve
        workload, tokens/s/user and its statistic, and the accelerator count.
        """
        query = (
            _join_labels(select(*_SWEEP_COLUMNS))
            .where(col(Result.sweep_key).is_not(None), col(Metric.name) == metric)
            .order_by(col(Result.sweep_key), col(Result.id))
        )
        with Session(self.engine) as session:
            for row in session.execute(query.execution_options(yield_per=2000)):
                yield _sweep_sample(*row)

    def save_findings(
        self,
        findings: Sequence[FindingRecord],
        *,
        analysed_at: datetime,
        evaluated: Callable[[StoredFinding], bool] = lambda _finding: True,
    ) -> FindingsSaved:
        """Store one analysis run's findings by fingerprint, keeping their triage states.

        * found and not stored yet: stored as "open";
        * found and stored: kind, method, Δ%, versions and evidence are replaced,
          the status is kept; a finding the analysis had closed ("fixed" and not
          current) is reopened as "open", with a note;
        * stored, current, not found, and about something the run ``evaluated``
          (what the finding is about was analysed again): no longer current;
          "open" becomes "fixed" with a note, "acknowledged", "expected" and
          "fixed" stay as people set them. Findings about what the run did not
          look at are left alone.
        """
        try:
            with Session(self._writing()) as session, session.begin():
                return _save_findings(session, findings, analysed_at, evaluated)
        except SQLAlchemyError as error:
            raise StoreError(f"could not store the findings: {error}; nothing changed") from None

    def list_findings(self, *, status: str | None = None) -> list[StoredFinding]:
        """Stored findings, oldest first; only those with ``status`` when given."""
        query = select(Finding).order_by(col(Finding.id))
        if status is not None:
            query = query.where(col(Finding.status) == _checked_status(status))
        with Session(self.engine) as session:
            return [_stored_finding(row) for row in session.scalars(query)]

    def set_finding_status(
        self, finding_id: int, *, status: str, note: str | None = None
    ) -> StoredFinding:
        """Triage one finding: set its status (and note); analysis keeps it while it holds."""
        with Session(self._writing()) as session, session.begin():
            row = session.get(Finding, finding_id)
            if row is None:
                raise StoreError(
                    f"no finding has id {finding_id}; "
                    "list them with `tracker findings --status all`"
                )
            row.status = _checked_status(status)
            row.status_note = note
            row.updated_at = datetime.now(UTC)
            session.flush()
            return _stored_finding(row)


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


def _analysis_labels(connection: Connection) -> dict[type[Any], dict[int, tuple[Any, ...]]]:
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
    col(System.accelerator),
    col(System.accelerators_total),
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


def _group_points(
    rows: Iterable[Any],
    labels: dict[type[Any], dict[int, tuple[Any, ...]]],
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
    labels: dict[type[Any], dict[int, tuple[Any, ...]]],
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


def _export_row(
    result: Result,
    source: Source,
    system: System,
    version: SoftwareVersion,
    benchmark: Benchmark,
    metric: Metric,
    artifact: Artifact,
) -> ExportRow:
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
        accelerator=system.accelerator,
        nodes=system.nodes,
        accelerators_total=system.accelerators_total,
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


class _Writer:
    """Get-or-create helpers for one transaction, with per-transaction caches."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.systems: dict[str, int] = {}
        self.versions: dict[tuple[str, str], int] = {}
        self.benchmarks: dict[tuple[str, str], int] = {}
        self.metrics: dict[tuple[str, str], int] = {}

    def save(self, source: SourceRecord, results: Sequence[ResultRecord]) -> SaveOutcome:
        known = self.session.scalar(
            select(col(Source.id)).where(col(Source.identity_sha256) == source.identity_sha256)
        )
        if known is not None:
            return SaveOutcome(True, 0, len(results))
        source_row = Source(
            kind=source.kind,
            location=source.location,
            content_sha256=source.content_sha256,
            identity_sha256=source.identity_sha256,
            is_example=source.is_example,
            ingested_at=datetime.now(UTC),
        )
        self.session.add(source_row)
        self.session.flush()
        assert source_row.id is not None
        artifacts = self._save_artifacts(source_row.id, source)
        fresh = self._new_results(results)
        self._prepare_systems(record.system for _key, record in fresh)
        rows = [self._result_values(source_row.id, artifacts, key, r) for key, r in fresh]
        for start in range(0, len(rows), _BATCH):
            self.session.execute(insert(_RESULT_TABLE), rows[start : start + _BATCH])
        return SaveOutcome(False, len(fresh), len(results) - len(fresh))

    def _save_artifacts(self, source_id: int, source: SourceRecord) -> dict[str, int]:
        rows = [
            {"source_id": source_id, "path": a.path, "sha256": a.sha256, "size_bytes": a.size_bytes}
            for a in source.artifacts
        ]
        for start in range(0, len(rows), _BATCH):
            self.session.execute(insert(_ARTIFACT_TABLE), rows[start : start + _BATCH])
        found = self.session.execute(
            select(col(Artifact.path), col(Artifact.id)).where(col(Artifact.source_id) == source_id)
        )
        return {path: artifact_id for path, artifact_id in found if artifact_id is not None}

    def _new_results(self, results: Sequence[ResultRecord]) -> list[tuple[str, ResultRecord]]:
        """The results not stored yet, with their sample keys (computed once)."""
        unique = {r.sample_key: r for r in results}
        keys = list(unique)
        stored: set[str] = set()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            stored.update(
                self.session.scalars(
                    select(col(Result.sample_key)).where(col(Result.sample_key).in_(chunk))
                )
            )
        return [(key, record) for key, record in unique.items() if key not in stored]

    def _prepare_systems(self, records: Iterable[SystemRecord]) -> None:
        """Find or create every system of a batch with a few queries, not a few per system."""
        wanted = {r.key: r for r in records if r.key not in self.systems}
        keys = list(wanted)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            for row in self.session.scalars(select(System).where(col(System.key).in_(chunk))):
                _fill_system_gaps(row, wanted[row.key])
                assert row.id is not None
                self.systems[row.key] = row.id
        missing = [wanted[k] for k in keys if k not in self.systems]
        if not missing:
            return
        self.session.flush()
        for start in range(0, len(missing), _BATCH):
            batch = missing[start : start + _BATCH]
            self.session.execute(
                insert(System), [{"key": r.key, **_system_fields(r)} for r in batch]
            )
            created = self.session.execute(
                select(col(System.key), col(System.id)).where(
                    col(System.key).in_([r.key for r in batch])
                )
            )
            self.systems.update({key: sid for key, sid in created if sid is not None})

    def _result_values(
        self, source_id: int, artifacts: dict[str, int], key: str, r: ResultRecord
    ) -> dict[str, Any]:
        if r.artifact_path not in artifacts:
            raise StoreError(f"result refers to {r.artifact_path}, which is not in its source")
        return {
            "sample_key": key,
            "source_id": source_id,
            "artifact_id": artifacts[r.artifact_path],
            "line": r.line,
            "system_id": self._system_id(r.system),
            "software_version_id": self._version_id(r.software),
            "benchmark_id": self._benchmark_id(r.benchmark, r.scenario),
            "metric_id": self._metric_id(r.metric),
            "workload": r.workload,
            "concurrency": r.concurrency,
            "value": r.value,
            "is_valid": r.is_valid,
            "run_label": r.run_label,
            "sweep_key": r.sweep_key,
            "software_stack": r.software_stack,
            "location": r.location,
            "round": r.round,
            "extra": dict(r.extra),
        }

    def _system_id(self, record: SystemRecord) -> int:
        """The row of a system, created on first sight; details it lacks are filled in.

        A system seen again with details the row does not have yet (a system first
        named by a local run's label, later described by an MLPerf system JSON)
        gets them; details already stored are never overwritten, so the outcome
        does not depend on the order of ingestion.
        """
        if record.key not in self.systems:
            row = self.session.scalar(select(System).where(col(System.key) == record.key))
            if row is None:
                row = System(key=record.key, **_system_fields(record))
                self.session.add(row)
            else:
                _fill_system_gaps(row, record)
            self.session.flush()
            assert row.id is not None
            self.systems[record.key] = row.id
        return self.systems[record.key]

    def _version_id(self, record: SoftwareRecord) -> int:
        key = (record.software, record.version)
        if key not in self.versions:
            row = self.session.scalar(
                select(SoftwareVersion).where(
                    col(SoftwareVersion.software) == record.software,
                    col(SoftwareVersion.version) == record.version,
                )
            )
            if row is None:
                row = SoftwareVersion(
                    software=record.software,
                    version=record.version,
                    sort_key=version_sort_key(record.version),
                    release_date=record.release_date,
                    stack=record.stack,
                )
                self.session.add(row)
                self.session.flush()
            assert row.id is not None
            self.versions[key] = row.id
        return self.versions[key]

    def _benchmark_id(self, name: str, scenario: str) -> int:
        key = (name, scenario)
        if key not in self.benchmarks:
            row = self.session.scalar(
                select(Benchmark).where(
                    col(Benchmark.name) == name, col(Benchmark.scenario) == scenario
                )
            )
            if row is None:
                row = Benchmark(name=name, scenario=scenario)
                self.session.add(row)
                self.session.flush()
            assert row.id is not None
            self.benchmarks[key] = row.id
        return self.benchmarks[key]

    def _metric_id(self, record: MetricRecord) -> int:
        key = (record.name, record.unit)
        if key not in self.metrics:
            row = self.session.scalar(
                select(Metric).where(
                    col(Metric.name) == record.name, col(Metric.unit) == record.unit
                )
            )
            if row is None:
                row = Metric(
                    name=record.name, unit=record.unit, higher_is_better=record.higher_is_better
                )
                self.session.add(row)
                self.session.flush()
            elif row.higher_is_better != record.higher_is_better:
                raise StoreError(
                    f"metric {record.name} ({record.unit}) is stored as "
                    f"{'higher' if row.higher_is_better else 'lower'} is better; "
                    "a parser now says the opposite: fix the parser's metric table"
                )
            assert row.id is not None
            self.metrics[key] = row.id
        return self.metrics[key]


def _fill_system_gaps(row: System, record: SystemRecord) -> None:
    for name, value in _system_fields(record).items():
        if value is not None and getattr(row, name) is None:
            setattr(row, name, value)


def _system_fields(record: SystemRecord) -> dict[str, Any]:
    return {
        "name": record.name,
        "submitter": record.submitter,
        "accelerator": record.accelerator,
        "accelerators_per_node": record.accelerators_per_node,
        "nodes": record.nodes,
        "accelerators_total": record.accelerators_total,
        "host_cpu": record.host_cpu,
        "division": record.division,
        "availability": record.availability,
        "raw_json": record.raw_json,
    }


def _sweep_sample(
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
    def number(name: str) -> float | None:
        found = extra.get(name)
        if isinstance(found, bool) or not isinstance(found, int | float):
            return None
        return float(found)

    def text(name: str) -> str | None:
        found = extra.get(name)
        return found if isinstance(found, str) and found else None

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
    )


def _checked_status(status: str) -> str:
    if status not in FINDING_STATUSES:
        raise StoreError(
            f"unknown finding status {status!r}; use one of {', '.join(FINDING_STATUSES)}"
        )
    return status


def _save_findings(
    session: Session,
    findings: Sequence[FindingRecord],
    at: datetime,
    evaluated: Callable[[StoredFinding], bool],
) -> FindingsSaved:
    versions: dict[tuple[str | None, str | None], int | None] = {
        (software, version): vid
        for software, version, vid in session.execute(
            select(
                col(SoftwareVersion.software), col(SoftwareVersion.version), col(SoftwareVersion.id)
            )
        )
    }
    stored = {row.fingerprint: row for row in session.scalars(select(Finding))}
    counts = dict.fromkeys(("new", "updated", "reopened", "closed", "no_longer_found"), 0)
    when = f"{at:%Y-%m-%d %H:%M} UTC"
    seen: set[str] = set()
    for record in findings:
        if record.fingerprint in seen:
            continue
        seen.add(record.fingerprint)
        values: dict[str, Any] = {
            "kind": record.kind,
            "series_key": record.series_key,
            "method": record.method,
            "change_pct": record.change_pct,
            "evidence": dict(record.evidence),
            "baseline_version_id": versions.get((record.software, record.baseline_version)),
            "candidate_version_id": versions.get((record.software, record.candidate_version)),
            "is_current": True,
            "updated_at": at,
        }
        row = stored.get(record.fingerprint)
        if row is None:
            session.add(Finding(fingerprint=record.fingerprint, created_at=at, **values))
            counts["new"] += 1
            continue
        if row.status == "fixed" and not row.is_current:
            row.status, row.status_note = "open", f"reopened by the analysis of {when}: found again"
            counts["reopened"] += 1
        else:
            counts["updated"] += 1
        for name, value in values.items():
            setattr(row, name, value)
    for fingerprint, row in stored.items():
        if fingerprint in seen or not row.is_current or not evaluated(_stored_finding(row)):
            continue
        row.is_current, row.updated_at = False, at
        if row.status == "open":
            row.status, row.status_note = (
                "fixed",
                f"closed by the analysis of {when}: no longer found",
            )
            counts["closed"] += 1
        else:
            counts["no_longer_found"] += 1
    return FindingsSaved(**counts)


def _stored_finding(row: Finding) -> StoredFinding:
    assert row.id is not None
    evidence = dict(row.evidence)
    baseline, candidate = evidence.get("baseline"), evidence.get("candidate")
    return StoredFinding(
        id=row.id,
        fingerprint=row.fingerprint,
        kind=row.kind,
        series_key=row.series_key,
        method=row.method,
        baseline_version=baseline if isinstance(baseline, str) else None,
        candidate_version=candidate if isinstance(candidate, str) else None,
        change_pct=row.change_pct,
        evidence=evidence,
        status=row.status,
        status_note=row.status_note,
        is_current=row.is_current,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )
