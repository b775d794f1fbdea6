"""Findings and analysis runs: one run's findings saved by fingerprint with its settings,
listed, and triaged.

Findings: one analysis run's findings saved by fingerprint, listed, and triaged.

A person's triage is never overwritten by an analysis that ran at the same time.
The analysis reads the stored findings and writes them back in one transaction,
and every stored finding is read under a row lock there (``SELECT ... FOR UPDATE``
on PostgreSQL; SQLite's write transactions take the database's write lock first):
a ``findings set-status`` that commits before the analysis's read is seen by it,
and one that comes later waits for the analysis to commit and is applied on top
of it (it, too, reads its finding under the row lock). Two analyses at once take
the locks in the same order (by id), so one waits for the other; a conflict with
a concurrent writer (a finding both inserted) makes the transaction run again.

Analysis runs: the settings each stored analysis used, saved with its findings.

:func:`add_run` writes one row inside the transaction that saves the run's
findings (above), so a run's settings are stored exactly
when its findings are; :func:`latest_run` reads the newest back for the report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session
from sqlmodel import col

from tracker.errors import StoreError
from tracker.records.findings import (
    FINDING_STATUSES,
    AnalysisRunSettings,
    FindingRecord,
    FindingsSaved,
    StoredFinding,
)
from tracker.store.engine import reason_of, retried_transaction, writing
from tracker.store.models import AnalysisRun, Finding, SoftwareVersion

__all__ = ["add_run", "latest_run", "list_findings", "save_findings", "set_finding_status"]


def add_run(
    session: Session, settings: AnalysisRunSettings, analysed_at: datetime, findings: int
) -> None:
    """Add the row of one analysis run to ``session`` (committed with its findings)."""
    book = None if settings.price_book is None else dict(sorted(settings.price_book.items()))
    session.add(
        AnalysisRun(
            analysed_at=analysed_at,
            target_tokens_per_s_per_user=settings.target_tokens_per_s_per_user,
            efficiency_floor=settings.efficiency_floor,
            efficiency_drop_floor=settings.efficiency_drop_floor,
            price_book=book,
            price_book_source=settings.price_book_source or None,
            settings=dict(settings.other),
            findings=findings,
        )
    )


def latest_run(engine: Engine) -> AnalysisRunSettings | None:
    """The settings of the newest stored analysis run; ``None`` when none was stored."""
    query = select(AnalysisRun).order_by(col(AnalysisRun.id).desc()).limit(1)
    with Session(engine) as session:
        row = session.scalars(query).first()
        if row is None:
            return None
        return AnalysisRunSettings(
            target_tokens_per_s_per_user=row.target_tokens_per_s_per_user,
            efficiency_floor=row.efficiency_floor,
            efficiency_drop_floor=row.efficiency_drop_floor,
            price_book=_prices(row.price_book),
            price_book_source=row.price_book_source or "",
            other=dict(row.settings or {}),
            analysed_at=_utc(row.analysed_at),
        )


def _prices(stored: Any) -> dict[str, float] | None:
    """The stored price book, with anything that is not a positive price left out."""
    if not isinstance(stored, dict):
        return None
    return {
        str(name): float(price)
        for name, price in stored.items()
        if isinstance(price, int | float)
        and not isinstance(price, bool)
        and math.isfinite(price)
        and price > 0
    }


def _utc(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes: they were written in UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def save_findings(
    engine: Engine,
    findings: Sequence[FindingRecord],
    analysed_at: datetime,
    evaluated: Callable[[StoredFinding], bool],
    settings: AnalysisRunSettings | None = None,
    superseded: Callable[[StoredFinding], str | None] = lambda _finding: None,
) -> FindingsSaved:
    """Store one analysis run's findings (see :meth:`tracker.store.facade.Store.save_findings`).

    ``evaluated`` is called inside the transaction, after the stored findings
    were read (and locked) and before anything is written. ``settings``, when
    given, are stored as the run's (:mod:`tracker.store.findings`) in the same transaction.
    """

    def save(session: Session) -> FindingsSaved:
        saved = _save_findings(session, findings, analysed_at, evaluated, superseded)
        if settings is not None:
            add_run(session, settings, analysed_at, len({f.fingerprint for f in findings}))
        return saved

    def failed(error: SQLAlchemyError, _cause: str | None) -> StoreError:
        return StoreError(f"could not store the findings: {reason_of(error)}; nothing changed")

    return retried_transaction(engine, save, failed)[0]


def list_findings(engine: Engine, status: str | None) -> list[StoredFinding]:
    """Stored findings, oldest first; only those with ``status`` when given."""
    query = select(Finding).order_by(col(Finding.id))
    if status is not None:
        query = query.where(col(Finding.status) == _checked_status(status))
    with Session(engine) as session:
        return [_stored_finding(row) for row in session.scalars(query)]


def set_finding_status(
    engine: Engine, finding_id: int, status: str, note: str | None
) -> StoredFinding:
    """Set one finding's status and note (read under a row lock: an analysis saving
    its findings at the same time commits first, and this change is applied on top)."""
    with Session(writing(engine)) as session, session.begin():
        row = session.get(Finding, finding_id, with_for_update=True)
        if row is None:
            raise StoreError(
                f"no finding has id {finding_id}; list them with `tracker findings --status all`"
            )
        row.status = _checked_status(status)
        row.status_note = note
        row.updated_at = datetime.now(UTC)
        session.flush()
        return _stored_finding(row)


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
    superseded: Callable[[StoredFinding], str | None],
) -> FindingsSaved:
    versions: dict[tuple[str | None, str | None], int | None] = {
        (software, version): vid
        for software, version, vid in session.execute(
            select(
                col(SoftwareVersion.software), col(SoftwareVersion.version), col(SoftwareVersion.id)
            )
        )
    }
    # Locked until the transaction ends: a concurrent set-status waits for this
    # analysis and then applies its change; the statuses read here are the latest.
    locked = select(Finding).order_by(col(Finding.id)).with_for_update()
    stored = {row.fingerprint: row for row in session.scalars(locked)}
    names = ("new", "updated", "reopened", "closed", "no_longer_found", "superseded")
    counts = dict.fromkeys(names, 0)
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
    _close(stored, seen, at, evaluated, superseded, counts)
    return FindingsSaved(**counts)


def _close(
    stored: dict[str, Finding],
    seen: set[str],
    at: datetime,
    evaluated: Callable[[StoredFinding], bool],
    superseded: Callable[[StoredFinding], str | None],
    counts: dict[str, int],
) -> None:
    """The stored current findings this run did not find: superseded (made under other
    settings), fixed (open, and looked at again) or no longer found (triaged)."""
    when = f"{at:%Y-%m-%d %H:%M} UTC"
    for fingerprint, row in stored.items():
        if fingerprint in seen or not row.is_current:
            continue
        finding = _stored_finding(row)
        why = superseded(finding)
        if why:
            row.is_current, row.updated_at = False, at
            note = f"superseded by the analysis of {when}: {why}"
            if row.status_note and row.status != "open":
                note += f" (was {row.status}: {row.status_note})"
            row.status, row.status_note = "superseded", note
            counts["superseded"] += 1
            continue
        if not evaluated(finding):
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


_COLUMNS = {f.name for f in fields(StoredFinding)} - {
    "baseline_version",
    "candidate_version",
    "evidence",
}
"""The fields of a stored finding that are its row's columns, as stored."""


def _stored_finding(row: Finding) -> StoredFinding:
    """The row's columns, with the versions its evidence names."""
    assert row.id is not None
    evidence = dict(row.evidence)
    baseline, candidate = evidence.get("baseline"), evidence.get("candidate")
    return StoredFinding(
        **row.model_dump(include=_COLUMNS),
        baseline_version=baseline if isinstance(baseline, str) else None,
        candidate_version=candidate if isinstance(candidate, str) else None,
        evidence=evidence,
    )
