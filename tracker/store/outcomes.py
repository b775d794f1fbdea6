"""What storing a source did: plain records, importable without the database libraries
(the ingest use case names them whether or not it opens the database)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Correction", "SaveOutcome"]


@dataclass(frozen=True, slots=True)
class Correction:
    """A stored result whose value or validity a source disagrees with."""

    location: str
    """The result's location in the source (or its file's path)."""
    stored_value: float
    stored_valid: bool
    value: float
    valid: bool


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
    differing: tuple[Correction, ...] = ()
    """Stored results whose value or validity this source disagrees with, kept as stored."""
    replaced: tuple[Correction, ...] = ()
    """Stored results that took this source's value (``replace=True``)."""
