"""Analysis runs: the settings each stored analysis used, saved with its findings.

:func:`add_run` writes one row inside the transaction that saves the run's
findings (:mod:`tracker.store.findings`), so a run's settings are stored exactly
when its findings are; :func:`latest_run` reads the newest back for the report.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session
from sqlmodel import col

from tracker.analysis_records import AnalysisRunSettings
from tracker.store.models import AnalysisRun

__all__ = ["add_run", "latest_run"]


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
