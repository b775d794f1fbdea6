"""The database: the only interface that opens sessions and runs queries.

Everything above it passes and receives plain records (:mod:`tracker.records`).
A source is written in one transaction, so it is stored all or nothing.
:class:`Store` delegates to the modules beside it: :mod:`~tracker.store.engine`
(URLs, connections), :mod:`~tracker.store.first_use` (the schema upgrade),
:mod:`~tracker.store.read`, :mod:`~tracker.store.write` and
:mod:`~tracker.store.findings`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime

from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from tracker.errors import StoreError
from tracker.records import (
    AnalysisSample,
    ExportRow,
    FindingRecord,
    FindingsSaved,
    ResultRecord,
    SeriesPoint,
    SourceRecord,
    StoredFinding,
    SweepSample,
    VersionInfo,
)
from tracker.store import findings as _findings
from tracker.store import read, write
from tracker.store.engine import create_store_engine, normalise_database_url
from tracker.store.first_use import upgrade_to_head
from tracker.store.schema import current_revision
from tracker.store.write import SaveOutcome

__all__ = ["SaveOutcome", "Store", "normalise_database_url"]


class Store:
    """A tracker database. Open it with :meth:`Store.open`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str, *, upgrade: bool = True) -> Store:
        """Connect to ``url`` and, unless ``upgrade`` is false, bring the schema up to date.

        Processes opening a new database at once migrate it once: the others
        wait and find it at head (see :mod:`tracker.store.first_use`).
        """
        store = cls(create_store_engine(url))
        try:
            if upgrade:
                upgrade_to_head(store.engine)
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

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def revision(self) -> str | None:
        """The schema revision the database is at."""
        return current_revision(self.engine)

    def count_rows(self) -> dict[str, int]:
        """Rows per table, for summaries and tests."""
        return read.count_rows(self.engine)

    def has_source(self, identity_sha256: str) -> bool:
        """Whether a source with this identity (content + labels) is stored."""
        return read.has_source(self.engine, identity_sha256)

    def save_source(self, source: SourceRecord, results: Sequence[ResultRecord]) -> SaveOutcome:
        """Store a source, its artifacts and its results in one transaction.

        A source already stored (same identity) is left alone; results whose
        sample key is already stored (the same file under the same labels,
        reached through another source) are skipped, not duplicated.

        Processes may store at the same time: a transaction that conflicts with
        another writer (a deadlock, a serialization failure, a system, version,
        result or the very source inserted by the other first) is rolled back
        and run again, after a growing random wait, up to
        :data:`tracker.store.engine.SAVE_ATTEMPTS` times; a source another
        process stored meanwhile is then "already stored".
        """
        return write.save_source(self.engine, source, results)

    def list_versions(self) -> list[VersionInfo]:
        """Every known software version (unordered; see :func:`tracker.versions.order_versions`)."""
        return read.list_versions(self.engine)

    def iter_export_rows(self, *, batch_size: int = 1000) -> Iterator[ExportRow]:
        """Every stored result with its labels, streamed in a stable order."""
        return read.iter_export_rows(self.engine, batch_size)

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
        return read.iter_series_points(self.engine, order, batch_size)

    def iter_analysis_samples(self, *, batch_size: int = 5000) -> Iterator[AnalysisSample]:
        """Every stored result as the analysis reads it, valid or not, streamed by id.

        The label tables are small and read first; the results are streamed by
        their ids alone (a third of the cost of joining every row).
        """
        return read.iter_analysis_samples(self.engine, batch_size)

    def iter_sweep_samples(self, *, metric: str) -> Iterator[SweepSample]:
        """The points of every sweep (results with a sweep key), their ``metric`` result only.

        Sweep points come from serving tools; their ``extra`` gives the curve
        workload, tokens/s/user and its statistic, and the accelerator count.
        """
        return read.iter_sweep_samples(self.engine, metric)

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
        return _findings.save_findings(self.engine, findings, analysed_at, evaluated)

    def list_findings(self, *, status: str | None = None) -> list[StoredFinding]:
        """Stored findings, oldest first; only those with ``status`` when given."""
        return _findings.list_findings(self.engine, status)

    def set_finding_status(
        self, finding_id: int, *, status: str, note: str | None = None
    ) -> StoredFinding:
        """Triage one finding: set its status (and note); analysis keeps it while it holds."""
        return _findings.set_finding_status(self.engine, finding_id, status, note)
