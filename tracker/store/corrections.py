"""Stored results that a source disagrees with: an upstream correction of a published round.

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session
from sqlmodel import col

from tracker.errors import StoreError
from tracker.records import ResultRecord
from tracker.store.models import Result, Source
from tracker.store.outcomes import Correction

__all__ = ["Correction", "Differing", "compare_stored", "replace_stored"]

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
