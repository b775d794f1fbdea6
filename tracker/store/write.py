"""Writing a source in one transaction (many rows at once), and the stored results a source
disagrees with (an upstream correction).

Writing a source: its artifacts, results and the systems, versions, benchmarks
and metrics they refer to, in one transaction, retried when a concurrent writer
conflicts with it.

Many rows into one table at once, in the session's transaction.

Stored results that a source disagrees with: an upstream correction of a published round.

A published MLPerf result is one sample per round and location (its sample key
does not depend on the file's bytes), so a corrected round re-ingested finds its
results stored. Where the stored value or validity differs from the source's,
the store reports it (:class:`Correction`) and keeps the stored result, unless
the caller asks to replace it: the result (same id) then takes the source's
value, validity, artifact, line and extra, and its ``extra["history"]`` keeps
the earlier values, oldest first.

A result read from another kind of source than the stored one (a round's
results table after its logs) is the same value within
:data:`ACROSS_KINDS_TOLERANCE`: a table rounds what the logs say.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from sqlalchemy import Engine, Table, insert, inspect, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session
from sqlmodel import col

from tracker.errors import StoreError
from tracker.records.results import (
    Correction,
    MetricRecord,
    ResultRecord,
    SaveOutcome,
    SoftwareRecord,
    SourceRecord,
    SystemRecord,
)
from tracker.store.engine import SAVE_ATTEMPTS, reason_of, retried_transaction
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
from tracker.store.systems import load_aliases
from tracker.versions import version_sort_key

__all__ = [
    "BATCH_ROWS",
    "Correction",
    "DRIVER_DIALECTS",
    "Differing",
    "SaveOutcome",
    "compare_stored",
    "insert_rows",
    "replace_stored",
    "save_source",
]


BATCH_ROWS = 2000
"""Rows per multi-row statement where SQLAlchemy builds them (PostgreSQL)."""
DRIVER_DIALECTS = frozenset({"sqlite"})
"""Where the rows go straight to the driver (see :func:`insert_rows`)."""


def insert_rows(session: Session, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert ``rows`` (each with the same columns) into ``table`` in ``session``'s transaction.

    On SQLite the rows go to the driver's ``executemany`` as tuples, each value
    through its column type's own bind processor (JSON encoding, booleans,
    floats), as SQLAlchemy would send them: its per-row parameter handling
    around that costs about as much as the inserts themselves. Elsewhere
    (PostgreSQL), SQLAlchemy's batched multi-row inserts are used.
    """
    if not rows:
        return
    session.flush()  # rows the session holds first (a driver statement would not flush them)
    connection = session.connection()
    dialect = connection.dialect
    if dialect.name not in DRIVER_DIALECTS:
        for start in range(0, len(rows), BATCH_ROWS):
            session.execute(insert(table), rows[start : start + BATCH_ROWS])
        return
    names = list(rows[0])
    processors: list[tuple[int, Callable[[Any], Any]]] = []
    for at, name in enumerate(names):
        kind = table.c[name].type
        processor = kind.dialect_impl(dialect).bind_processor(dialect)
        if processor is not None:
            processors.append((at, processor))
    values: Callable[[dict[str, Any]], Any] = operator.itemgetter(*names)
    if len(names) == 1:  # itemgetter of one name gives the value, not a tuple
        values = lambda row: (row[names[0]],)  # noqa: E731
    params: list[tuple[Any, ...]] = []
    for row in rows:
        found = values(row)
        if processors:
            listed = list(found)
            for at, process in processors:
                listed[at] = process(listed[at])
            found = tuple(listed)
        params.append(found)
    columns = ", ".join(f'"{name}"' for name in names)
    marks = ", ".join("?" * len(names))
    connection.exec_driver_sql(f'INSERT INTO "{table.name}" ({columns}) VALUES ({marks})', params)


_CHUNK = 500

ACROSS_KINDS_TOLERANCE = 1e-3
"""Relative difference under which a value read from another kind of source (a
results table, a summary log's digits) is the stored one: the precision the
reader itself allows between a round's logs and its table."""


@dataclass(frozen=True, slots=True)
class Differing:
    """A stored result (its row id) and the source's record that disagrees with it."""

    result_id: int
    record: ResultRecord
    correction: Correction


def compare_stored(
    session: Session, unique: Mapping[str, ResultRecord], kind: str
) -> tuple[set[str], list[Differing]]:
    """The sample keys of ``unique`` already stored, and those stored with another value.

    ``kind`` is the kind of the source ``unique`` comes from: a value stored from a
    source of the same kind must be equal, one of another kind close (see
    :data:`ACROSS_KINDS_TOLERANCE`); the validity must be the same.
    """
    keys = list(unique)
    stored: set[str] = set()
    differing: list[Differing] = []
    for start in range(0, len(keys), _CHUNK):
        chunk = keys[start : start + _CHUNK]
        query = (
            select(
                col(Result.id),
                col(Result.sample_key),
                col(Result.value),
                col(Result.is_valid),
                col(Source.kind),
            )
            .join(Source, col(Source.id) == col(Result.source_id))
            .where(col(Result.sample_key).in_(chunk))
        )
        for result_id, key, value, valid, stored_kind in session.execute(query):
            stored.add(key)
            record = unique[key]
            if valid == record.is_valid and _same(value, record.value, stored_kind == kind):
                continue
            assert result_id is not None
            correction = Correction(
                location=record.location or record.artifact_path,
                stored_value=value,
                stored_valid=valid,
                value=record.value,
                valid=record.is_valid,
            )
            differing.append(Differing(result_id, record, correction))
    differing.sort(key=lambda d: (d.correction.location, d.result_id))
    return stored, differing


def _same(stored: float, value: float, same_kind: bool) -> bool:
    if same_kind:
        return stored == value
    return abs(value - stored) <= ACROSS_KINDS_TOLERANCE * max(abs(stored), 1e-12)


def replace_stored(
    session: Session,
    differing: Sequence[Differing],
    source_id: int,
    artifacts: Mapping[str, int],
) -> None:
    """Give each differing result the source's values, its earlier ones kept in its history."""
    ids = [d.result_id for d in differing]
    earlier: dict[int, tuple[dict[str, Any], str]] = {}
    for start in range(0, len(ids), _CHUNK):
        query = (
            select(col(Result.id), col(Result.extra), col(Source.location))
            .join(Source, col(Source.id) == col(Result.source_id))
            .where(col(Result.id).in_(ids[start : start + _CHUNK]))
        )
        earlier.update({rid: (extra or {}, where) for rid, extra, where in session.execute(query)})
    replaced_at = datetime.now(UTC).isoformat(timespec="seconds")
    for d in differing:
        record = d.record
        if record.artifact_path not in artifacts:
            raise StoreError(f"result refers to {record.artifact_path}, which is not in its source")
        extra, where = earlier[d.result_id]
        history = extra.get("history")
        entry = {
            "value": d.correction.stored_value,
            "valid": d.correction.stored_valid,
            "source": where,
            "replaced_at": replaced_at,
        }
        session.execute(
            update(Result)
            .where(col(Result.id) == d.result_id)
            .values(
                source_id=source_id,
                artifact_id=artifacts[record.artifact_path],
                line=record.line,
                value=record.value,
                is_valid=record.is_valid,
                location=record.location,
                extra={
                    **record.extra,
                    "history": [*(history if isinstance(history, list) else []), entry],
                },
            )
        )


_RESULT_TABLE = cast(Table, inspect(Result).local_table)  # Core inserts: cheaper per row
_ARTIFACT_TABLE = cast(Table, inspect(Artifact).local_table)
_SYSTEM_TABLE = cast(Table, inspect(System).local_table)
_DESCRIPTION_TABLE = cast(Table, inspect(SystemDescription).local_table)


def save_source(
    engine: Engine,
    source: SourceRecord,
    results: Sequence[ResultRecord],
    *,
    replace_differing: bool = False,
) -> SaveOutcome:
    """Store a source and its results in one transaction, retried after conflicts.

    See :meth:`tracker.store.facade.Store.save_source`.
    """

    def save(session: Session) -> SaveOutcome:
        return _Writer(session).save(source, results, replace_differing)

    def failed(error: SQLAlchemyError, cause: str | None) -> StoreError:
        if cause is None:
            return StoreError(
                f"could not store {source.location}: {reason_of(error)}; nothing of it was stored"
            )
        return StoreError(
            f"could not store {source.location}: {cause} made each of "
            f"{SAVE_ATTEMPTS} tries fail ({reason_of(error)}); nothing of it was stored; "
            "run the ingest again"
        )

    outcome, retries = retried_transaction(engine, save, failed)
    return replace(outcome, retries=retries)


_Label = TypeVar("_Label", SoftwareVersion, Benchmark, Metric)
"""A label table whose rows :meth:`_Writer._row_id` gets or creates."""


class _Writer:
    """Get-or-create helpers for one transaction, with per-transaction caches."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.systems: dict[str, int] = {}
        self.descriptions: set[tuple[int, int]] = set()
        self.aliases = load_aliases(session)
        self.versions: dict[tuple[str, ...], int] = {}
        self.benchmarks: dict[tuple[str, ...], int] = {}
        self.metrics: dict[tuple[str, ...], int] = {}

    def save(
        self, source: SourceRecord, results: Sequence[ResultRecord], replace_differing: bool
    ) -> SaveOutcome:
        known = self.session.scalar(
            select(col(Source.id)).where(col(Source.identity_sha256) == source.identity_sha256)
        )
        unique = {r.sample_key: r for r in results}
        if known is not None:  # stored already; a result may have been replaced since
            _stored, differing = compare_stored(self.session, unique, source.kind)
            outcome = SaveOutcome(True, 0, len(results))
            return self._corrected(outcome, known, None, differing, replace_differing)
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
        stored, differing = compare_stored(self.session, unique, source.kind)
        fresh = [(key, record) for key, record in unique.items() if key not in stored]
        self._prepare_systems(record.system for _key, record in fresh)
        self._prepare_descriptions(record for _key, record in fresh)
        rows = [self._result_values(source_row.id, artifacts, key, r) for key, r in fresh]
        insert_rows(self.session, _RESULT_TABLE, rows)
        outcome = SaveOutcome(False, len(fresh), len(results) - len(fresh))
        return self._corrected(outcome, source_row.id, artifacts, differing, replace_differing)

    def _corrected(
        self,
        outcome: SaveOutcome,
        source_id: int,
        artifacts: dict[str, int] | None,
        differing: list[Differing],
        replace_differing: bool,
    ) -> SaveOutcome:
        """``outcome`` with the differing results replaced (``replace_differing``) or reported."""
        corrections = tuple(d.correction for d in differing)
        if not (differing and replace_differing):
            return replace(outcome, differing=corrections)
        if artifacts is None:
            artifacts = self._artifacts(source_id)
        replace_stored(self.session, differing, source_id, artifacts)
        already = outcome.results_already_stored - len(differing)
        return replace(outcome, results_already_stored=already, replaced=corrections)

    def _save_artifacts(self, source_id: int, source: SourceRecord) -> dict[str, int]:
        rows = [
            {"source_id": source_id, "path": a.path, "sha256": a.sha256, "size_bytes": a.size_bytes}
            for a in source.artifacts
        ]
        insert_rows(self.session, _ARTIFACT_TABLE, rows)
        return self._artifacts(source_id)

    def _artifacts(self, source_id: int) -> dict[str, int]:
        """The artifact ids of a stored source, by path."""
        found = self.session.execute(
            select(col(Artifact.path), col(Artifact.id)).where(col(Artifact.source_id) == source_id)
        )
        return {path: artifact_id for path, artifact_id in found if artifact_id is not None}

    def _prepare_systems(self, records: Iterable[SystemRecord]) -> None:
        """Find or create every system of a batch with a few queries, not a few per system."""
        wanted: dict[str, SystemRecord] = {}
        for r in records:
            key = self._key(r)
            if key not in self.systems:
                wanted.setdefault(key, r)
        keys = list(wanted)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            for row in self.session.scalars(select(System).where(col(System.key).in_(chunk))):
                _fill_gaps(row, _system_fields(wanted[row.key]))
                assert row.id is not None
                self.systems[row.key] = row.id
        missing = [key for key in keys if key not in self.systems]
        for start in range(0, len(missing), BATCH_ROWS):
            batch = missing[start : start + BATCH_ROWS]
            rows = [{"key": key, **_system_fields(wanted[key])} for key in batch]
            insert_rows(self.session, _SYSTEM_TABLE, rows)
            created = self.session.execute(
                select(col(System.key), col(System.id)).where(col(System.key).in_(batch))
            )
            self.systems.update({key: sid for key, sid in created if sid is not None})

    def _key(self, record: SystemRecord) -> str:
        """The key of the system ``record`` names: its platform key, through the aliases."""
        return self.aliases.get(record.platform_key, record.platform_key)

    def _prepare_descriptions(self, results: Iterable[ResultRecord]) -> None:
        """Each system's description in each round of the batch (SystemDescription rows).

        A round's description is created from the first record that names it and
        completed (never overwritten) by later ones, so what one round says of a
        system never depends on what another round said or on the order of ingestion.
        """
        wanted: dict[tuple[int, int], SystemRecord] = {}
        for r in results:
            pair = (self._system_id(r.system), self._version_id(r.software))
            if pair not in self.descriptions:
                wanted.setdefault(pair, r.system)
        if not wanted:
            return
        system_ids = sorted({system for system, _version in wanted})
        for start in range(0, len(system_ids), 500):
            chunk = system_ids[start : start + 500]
            query = select(SystemDescription).where(col(SystemDescription.system_id).in_(chunk))
            for row in self.session.scalars(query):
                pair = (row.system_id, row.software_version_id)
                if pair in wanted:
                    _fill_gaps(row, _description_fields(wanted.pop(pair)))
                    self.descriptions.add(pair)
        rows = [
            {"system_id": system, "software_version_id": version, **_description_fields(r)}
            for (system, version), r in wanted.items()
        ]
        insert_rows(self.session, _DESCRIPTION_TABLE, rows)
        self.descriptions.update(wanted)

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
        key = self._key(record)
        if key not in self.systems:
            row = self.session.scalar(select(System).where(col(System.key) == key))
            if row is None:
                row = System(key=key, **_system_fields(record))
                self.session.add(row)
            else:
                _fill_gaps(row, _system_fields(record))
            self.session.flush()
            assert row.id is not None
            self.systems[key] = row.id
        return self.systems[key]

    def _row_id(
        self,
        ids: dict[tuple[str, ...], int],
        model: type[_Label],
        match: dict[str, str],
        new: Callable[[], _Label],
    ) -> tuple[int, _Label | None]:
        """The id of the ``model`` row whose columns are ``match``, created by ``new`` on first
        sight (``ids`` caches the ids), with the row this call found or created (``None``:
        the id was cached)."""
        key = tuple(match.values())
        if key in ids:
            return ids[key], None
        row = self.session.scalar(select(model).filter_by(**match))
        if row is None:
            row = new()
            self.session.add(row)
            self.session.flush()
        assert row.id is not None
        ids[key] = row.id
        return row.id, row

    def _version_id(self, record: SoftwareRecord) -> int:
        match = {"software": record.software, "version": record.version}
        return self._row_id(
            self.versions,
            SoftwareVersion,
            match,
            lambda: SoftwareVersion(
                software=record.software,
                version=record.version,
                sort_key=version_sort_key(record.version),
                release_date=record.release_date,
                stack=record.stack,
            ),
        )[0]

    def _benchmark_id(self, name: str, scenario: str) -> int:
        match = {"name": name, "scenario": scenario}
        return self._row_id(
            self.benchmarks, Benchmark, match, lambda: Benchmark(name=name, scenario=scenario)
        )[0]

    def _metric_id(self, record: MetricRecord) -> int:
        match = {"name": record.name, "unit": record.unit}
        higher = record.higher_is_better
        found, row = self._row_id(
            self.metrics,
            Metric,
            match,
            lambda: Metric(name=record.name, unit=record.unit, higher_is_better=higher),
        )
        if row is not None and row.higher_is_better != higher:
            raise StoreError(
                f"metric {record.name} ({record.unit}) is stored as "
                f"{'higher' if row.higher_is_better else 'lower'} is better; "
                "a parser now says the opposite: fix the parser's metric table"
            )
        return found


def _fill_gaps(row: System | SystemDescription, fields: dict[str, Any]) -> None:
    """Set each of ``fields`` the row does not have yet (a known value is never replaced)."""
    for name, value in fields.items():
        if value is not None and getattr(row, name) is None:
            setattr(row, name, value)


_IDENTITY = frozenset({"name", "submitter", "division"})
"""The fields of a :class:`SystemRecord` that name the system; the others describe it."""
_SYSTEM_COLUMNS = frozenset(System.model_fields)
"""The system row's columns: a record's other fields (its round's configuration) only its
round's description keeps (the system's row keeps the first description seen)."""


def _description_fields(record: SystemRecord) -> dict[str, Any]:
    """The columns of a system's description: the fields that describe it."""
    return {k: v for k, v in asdict(record).items() if k not in _IDENTITY}


def _system_fields(record: SystemRecord) -> dict[str, Any]:
    """The columns of a system's row: the fields of its record it has a column for."""
    return {k: v for k, v in asdict(record).items() if k in _SYSTEM_COLUMNS}
