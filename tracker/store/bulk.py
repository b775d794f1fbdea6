"""Many rows into one table at once, in the session's transaction."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Table, insert
from sqlalchemy.orm import Session

__all__ = ["BATCH_ROWS", "DRIVER_DIALECTS", "insert_rows"]

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
