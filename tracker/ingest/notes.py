"""The notes an ingest gives about a source: results stored as invalid, and stored
results the source disagrees with (an upstream correction of an MLPerf round)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracker.records import ResultRecord

if TYPE_CHECKING:
    from tracker.store.corrections import Correction

__all__ = [
    "CORRECTIONS_LISTED",
    "INVALID_LISTED",
    "correction_note",
    "invalid_entry",
    "invalid_note",
]

INVALID_LISTED = 3
"""How many invalid results the ingest summary names (the rest are counted)."""

CORRECTIONS_LISTED = 3
"""How many stored results that differ from a source the ingest names (the rest are counted)."""


def invalid_note(invalid: tuple[str, ...]) -> str:
    """One line for the results stored as invalid: their count and the first few."""
    count = len(invalid)
    listed = "; ".join(invalid[:INVALID_LISTED])
    more = f"; and {count - INVALID_LISTED} more" if count > INVALID_LISTED else ""
    return f"{count} result{'' if count == 1 else 's'} stored as invalid: {listed}{more}"


def correction_note(corrections: tuple[Correction, ...], *, replaced: bool) -> str:
    """One line for the stored results that differ from a source: their count and the first few."""
    count = len(corrections)
    listed = ", ".join(_correction(c) for c in corrections[:CORRECTIONS_LISTED])
    more = f", and {count - CORRECTIONS_LISTED} more" if count > CORRECTIONS_LISTED else ""
    results = f"{count} stored result{'' if count == 1 else 's'}"
    if replaced:
        return f"{results} replaced by this source's values: {listed}{more}"
    return (
        f"{results} differ{'s' if count == 1 else ''} from this source (an upstream correction?): "
        f"{listed}{more}; run again with --replace to take the new values"
    )


def _correction(c: Correction) -> str:
    old, new = f"{c.stored_value:,}", f"{c.value:,}"
    if c.stored_valid != c.valid:
        old += " (valid)" if c.stored_valid else " (invalid)"
        new += " (valid)" if c.valid else " (invalid)"
    return f"{c.location}: {old} → {new}"


def invalid_entry(result: ResultRecord) -> str:
    """How a result stored as invalid is named: where it is, and why (when the reader said)."""
    reason = result.extra.get("invalid_reason")
    where = result.location or result.artifact_path
    return f"{where}: {reason}" if isinstance(reason, str) and reason else where
