"""The database: the only interface that opens sessions and runs queries.

Everything above it passes and receives plain records (:mod:`tracker.records.results`).
A source is written in one transaction, so it is stored all or nothing.
:class:`Store` delegates to the modules beside it: :mod:`~tracker.store.engine`
(URLs, connections), :mod:`~tracker.store.first_use` (the schema upgrade),
:mod:`~tracker.store.read`, :mod:`~tracker.store.write`,
:mod:`~tracker.store.findings` and :mod:`~tracker.store.systems`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from tracker.errors import StoreError, TrackerError
from tracker.records.results import (
    AnalysisSample,
    ExportRow,
    ResultRecord,
    SaveOutcome,
    SeriesPoint,
    SourceRecord,
    SweepSample,
    VersionInfo,
)
from tracker.store.target import (
    HEAD_REVISION,
    NEXT_STEP,
    DatabaseTarget,
    DatabaseURL,
    can_create,
    cannot_write,
    file_at_head,
    has_source,
    normalise_database_url,
)

# SQLAlchemy and the modules built on it are imported by the methods that use them
# (:mod:`tracker.store.target`: an unchanged source is recognised without them); the
# findings and analysis runs too: an ingest never loads them (nor Alembic, unless the
# schema must be migrated).
if TYPE_CHECKING:
    from sqlalchemy import Engine

    from tracker.records.findings import (
        AnalysisRunSettings,
        FindingRecord,
        FindingsSaved,
        StoredFinding,
    )
    from tracker.store.systems import AliasOutcome, SystemSummary

__all__ = [
    "DatabaseTarget",
    "SaveOutcome",
    "SchemaStatus",
    "Store",
    "normalise_database_url",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SchemaStatus:
    """Where a database's schema stands against this tracker's migrations."""

    revision: str | None
    """The revision the database is at; ``None``: no schema yet."""
    head: str
    """The newest revision this tracker ships."""
    known: bool
    """Whether ``revision`` is one this tracker ships (``False`` for a newer tracker's)."""

    @property
    def at_head(self) -> bool:
        return self.revision == self.head


class Store:
    """A tracker database. Open it with :meth:`Store.open`."""

    def __init__(
        self, url: DatabaseURL, engine: Engine | None, *, deferred: _Deferred | None = None
    ) -> None:
        self._url = url
        self._engine = engine
        self._deferred = deferred

    @classmethod
    def open(
        cls,
        url: str | DatabaseTarget,
        *,
        upgrade: bool = True,
        create: bool = True,
        memory: bool = True,
        defer: bool = False,
        reads_only: bool = False,
    ) -> Store:
        """Connect to ``url`` and, unless ``upgrade`` is false, bring the schema up to date.

        Processes opening a new database at once migrate it once: the others
        wait and find it at head (see :mod:`tracker.store.first_use`).

        ``create=False`` is for commands that read what an ingest stored: a
        SQLite file that does not exist is an error (it is not created), and so
        is, when upgrading, a database without the tracker's tables.
        ``memory=False`` refuses an in-memory SQLite database (``sqlite://``),
        whose content is gone when the process ends. Every failure is a
        :class:`StoreError` that says what failed, never the SQL.

        ``defer=True`` (ingest, pull): a SQLite file already at the schema's head
        (nothing to create, migrate or report) is opened at its first use, and
        :meth:`has_source` is answered without SQLAlchemy until then
        (:mod:`tracker.store.target`). So is, with ``create``, a file that does not
        exist yet in a folder this process may write: it is created at its first use,
        or by :meth:`open_now` (an ingest read by worker processes creates it while
        they read). Any other database is opened at once.

        ``reads_only=True`` (report, gate, findings, export, db current): the command
        never writes, so a SQLite file this process may not write (a read-only folder
        or file system) is opened read-only instead of refused; its schema must then
        be at head already.
        """
        parsed = (url if isinstance(url, DatabaseTarget) else DatabaseTarget(url)).url
        path = parsed.plain_file
        if defer and upgrade and path is not None:
            if file_at_head(path):
                return cls(parsed, None, deferred=_Deferred(path, create, memory, new=False))
            if create and can_create(path):
                return cls(parsed, None, deferred=_Deferred(path, create, memory, new=True))
        read_only = reads_only and path is not None and cannot_write(path)
        return cls._opened(
            parsed, upgrade=upgrade, create=create, memory=memory, read_only=read_only
        )

    @classmethod
    def _opened(
        cls, url: DatabaseURL, *, upgrade: bool, create: bool, memory: bool, read_only: bool = False
    ) -> Store:
        from tracker.store.engine import check_sqlite_url, create_store_engine

        if url.backend == "sqlite":
            check_sqlite_url(url, create=create, memory=memory)
        store = cls(url, create_store_engine(url, read_only=read_only))
        try:
            with store._reported("open"):
                store._check_schema(upgrade=upgrade, create=create)
        except ValueError as error:  # the driver refuses the file name (a NUL byte)
            store.close()
            raise StoreError(
                f"cannot open the database {store.url}: {error}; {NEXT_STEP}"
            ) from None
        except BaseException:
            store.close()
            raise
        return store

    def _check_schema(self, *, upgrade: bool, create: bool) -> None:
        from tracker.store.first_use import stored_revision, upgrade_to_head

        revision = stored_revision(self.engine)  # connects: a wrong file fails here
        if upgrade and revision is None and not create:
            raise StoreError(
                f"the database {self.url} holds no tracker data (no tables); "
                f"run `tracker ingest` first or {NEXT_STEP}"
            )
        if upgrade:
            upgrade_to_head(self.engine, revision, self._url.sqlite_file)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine; a deferred store is opened here, on its first use."""
        if self._engine is None:
            assert self._deferred is not None
            d = self._deferred
            opened = Store._opened(self._url, upgrade=True, create=d.create, memory=d.memory)
            self._engine, self._deferred = opened.engine, None
        return self._engine

    def open_now(self) -> None:
        """Open a deferred store now (create its file, bring its schema to head): a no-op
        for a store that is open. Errors are those of :meth:`open`."""
        _engine = self.engine

    def create_if_new(self) -> None:
        """Create the file of a deferred new database now, so that it exists after the
        command whatever happened (as an open at once would leave it); a no-op otherwise."""
        if self._engine is None and self._deferred is not None and self._deferred.new:
            self.open_now()

    @contextmanager
    def _reported(self, doing: str) -> Iterator[None]:
        """Database errors while ``doing`` (a verb) as a :class:`StoreError` in words."""
        from sqlalchemy.exc import DBAPIError, SQLAlchemyError

        from tracker.store.engine import advice_after

        try:
            yield
        except TrackerError:
            raise
        except OverflowError:
            raise StoreError(
                f"cannot {doing} the database {self.url}: a number is too large for it; "
                "check the values given"
            ) from None
        except DBAPIError as error:
            reason = str(error.orig).strip().splitlines()[0] if str(error.orig).strip() else ""
            advice = advice_after(reason, doing, self._url)
            raise StoreError(
                f"cannot {doing} the database {self.url}: "
                f"{reason or type(error.orig).__name__}; {advice}"
            ) from None
        except SQLAlchemyError as error:
            raise StoreError(
                f"cannot {doing} the database {self.url}: {type(error).__name__}; {NEXT_STEP}"
            ) from None

    def _streamed(self, doing: str, rows: Iterator[T]) -> Iterator[T]:
        with self._reported(doing):
            yield from rows

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return self._url.shown

    def close(self) -> None:
        """Release the connections."""
        if self._engine is not None:
            self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def revision(self) -> str | None:
        """The schema revision the database is at."""
        from tracker.store.first_use import stored_revision

        with self._reported("read"):
            return stored_revision(self.engine)

    def schema_status(self) -> SchemaStatus:
        """The schema's revision against this tracker's migrations (``tracker db current``)."""
        from tracker.store.first_use import is_shipped_revision

        revision = self.revision()
        known = revision in (None, HEAD_REVISION) or is_shipped_revision(revision)
        return SchemaStatus(revision, HEAD_REVISION, known)

    def count_rows(self) -> dict[str, int]:
        """Rows per table, for summaries and tests."""
        from tracker.store import read

        with self._reported("read"):
            return read.count_rows(self.engine)

    def has_source(self, identity_sha256: str) -> bool:
        """Whether a source with this identity (content + labels) is stored."""
        if self._engine is None and self._deferred is not None:
            found = has_source(self._deferred.path, identity_sha256)
            if found is not None:
                return found
        from tracker.store import read

        with self._reported("read"):
            return read.source_exists(self.engine, identity_sha256)

    def save_source(
        self,
        source: SourceRecord,
        results: Sequence[ResultRecord],
        *,
        replace_differing: bool = False,
    ) -> SaveOutcome:
        """Store a source, its artifacts and its results in one transaction.

        A source already stored (same identity) is left alone; results whose
        sample key is already stored (the same file under the same labels,
        reached through another source) are skipped, not duplicated. A stored
        result whose value or validity the source disagrees with (a corrected
        MLPerf round) is kept and reported (``SaveOutcome.differing``), or, with
        ``replace_differing``, takes the source's values, its earlier ones kept
        in ``extra["history"]`` (``SaveOutcome.replaced``;
        :mod:`tracker.store.write`).

        Processes may store at the same time: a transaction that conflicts with
        another writer (a deadlock, a serialization failure, a system, version,
        result or the very source inserted by the other first) is rolled back
        and run again, after a growing random wait, up to
        :data:`tracker.store.engine.SAVE_ATTEMPTS` times; a source another
        process stored meanwhile is then "already stored".
        """
        from tracker.store import write

        with self._reported("write to"):
            return write.save_source(
                self.engine, source, results, replace_differing=replace_differing
            )

    def list_versions(self) -> list[VersionInfo]:
        """Every known software version (unordered; see :func:`tracker.versions.order_versions`)."""
        from tracker.store import read

        with self._reported("read"):
            return read.list_versions(self.engine)

    def iter_export_rows(
        self, *, batch_size: int = 1000, software: str | None = None
    ) -> Iterator[ExportRow]:
        """Every stored result with its labels (only ``software``'s when given), streamed in a
        stable order."""
        from tracker.store import read

        return self._streamed("read", read.iter_export_rows(self.engine, batch_size, software))

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
        from tracker.store import read

        return self._streamed("read", read.iter_series_points(self.engine, order, batch_size))

    def iter_analysis_samples(self, *, batch_size: int = 5000) -> Iterator[AnalysisSample]:
        """Every stored result as the analysis reads it, valid or not, streamed by id.

        The label tables are small and read first; the results are streamed by
        their ids alone (a third of the cost of joining every row).
        """
        from tracker.store import read

        return self._streamed("read", read.iter_analysis_samples(self.engine, batch_size))

    def iter_sweep_samples(self, *, metric: str) -> Iterator[SweepSample]:
        """The points of every sweep (results with a sweep key), their ``metric`` result only.

        Sweep points come from serving tools; their ``extra`` gives the curve
        workload, tokens/s/user and its statistic, and the accelerator count.
        """
        from tracker.store import read

        return self._streamed("read", read.iter_sweep_samples(self.engine, metric))

    def save_findings(
        self,
        findings: Sequence[FindingRecord],
        *,
        analysed_at: datetime,
        evaluated: Callable[[StoredFinding], bool] = lambda _finding: True,
        settings: AnalysisRunSettings | None = None,
        superseded: Callable[[StoredFinding], str | None] = lambda _finding: None,
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

        * stored, current, not found, and made under settings the run does not use
          (``superseded`` gives the reason, e.g. another interactivity target):
          "superseded", no longer current, whatever its status (the note keeps a
          triage note) — never merged with the run's own findings.

        ``settings`` (the run's) are stored with them, in the same transaction.
        """
        from tracker.store.findings import save_findings

        with self._reported("write to"):
            return save_findings(
                self.engine, findings, analysed_at, evaluated, settings, superseded
            )

    def latest_analysis_settings(self) -> AnalysisRunSettings | None:
        """The settings of the newest stored analysis run; ``None`` when none was stored."""
        from tracker.store.findings import latest_run

        with self._reported("read"):
            return latest_run(self.engine)

    def list_findings(self, *, status: str | None = None) -> list[StoredFinding]:
        """Stored findings, oldest first; only those with ``status`` when given."""
        from tracker.store.findings import list_findings

        with self._reported("read"):
            return list_findings(self.engine, status)

    def set_finding_status(
        self, finding_id: int, *, status: str, note: str | None = None
    ) -> StoredFinding:
        """Triage one finding: set its status (and note); analysis keeps it while it holds."""
        from tracker.store.findings import set_finding_status

        with self._reported("write to"):
            return set_finding_status(self.engine, finding_id, status, note)

    def list_systems(self) -> list[SystemSummary]:
        """Every stored system with the versions it has results in and its aliases."""
        from tracker.store import systems

        with self._reported("read"):
            return systems.list_systems(self.engine)

    def alias_system(self, alias_key: str, key: str) -> AliasOutcome:
        """Link a renamed system: ``alias_key`` names the system ``key`` from now on."""
        from tracker.store import systems

        with self._reported("write to"):
            return systems.alias_system(self.engine, alias_key, key)


@dataclass(frozen=True, slots=True)
class _Deferred:
    """A SQLite file at head, or one to create, opened on first use (:meth:`Store.open`
    with ``defer``)."""

    path: Path
    create: bool
    memory: bool
    new: bool
    """The file did not exist when the store was opened: it is created at first use."""
