"""Rows stored straight through the SQLite driver are the rows SQLAlchemy would store."""

from __future__ import annotations

import math
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Connection,
    DateTime,
    Float,
    Integer,
    MetaData,
    Table,
    Text,
    create_engine,
    insert,
)
from sqlalchemy.orm import Session

from tracker.ingest.run import ingest_source
from tracker.records.results import SourceSpec
from tracker.store import write as bulk
from tracker.store.facade import Store
from tracker.store.write import insert_rows

_ROWS = [
    {
        "id": 1,
        "flag": True,
        "ratio": 0.1 + 0.2,
        "count": 3,
        "name": "café ✓ \"quoted\" 'single'",
        "payload": {"nested": [1, 2.5, None, True], "é": "x", "big": 2**70, "nan": math.nan},
        "at": datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
    },
    {"id": 2, "flag": False, "ratio": 7, "count": None, "name": "", "payload": None, "at": None},
    {
        "id": 3,
        "flag": None,
        "ratio": -0.0,
        "count": -7,
        "name": "b",
        "payload": [1e-300, "a"],
        "at": datetime(1999, 12, 31),
    },
]


def _table(metadata: MetaData, name: str) -> Table:
    return Table(
        name,
        metadata,
        Column("id", Integer, primary_key=True),
        Column("flag", Boolean),
        Column("ratio", Float),
        Column("count", Integer),
        Column("name", Text),
        Column("payload", JSON),
        Column("at", DateTime),
    )


def _stored(path: Path, table: str) -> list[tuple[object, ...]]:
    columns = ("flag", "ratio", "count", "name", "payload", "at")
    typed = ", ".join(f"typeof({c}), {c}" for c in columns)
    with sqlite3.connect(path) as connection:
        return connection.execute(f"SELECT id, {typed} FROM {table} ORDER BY id").fetchall()


def test_driver_rows_equal_sqlalchemy_rows_on_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "rows.db"
    metadata = MetaData()
    through_driver, through_core = _table(metadata, "driver"), _table(metadata, "core")
    engine = create_engine(f"sqlite:///{path}")
    metadata.create_all(engine)
    with Session(engine) as session, session.begin():
        insert_rows(session, through_driver, _ROWS)
        session.execute(insert(through_core), _ROWS)
    engine.dispose()
    assert _stored(path, "driver") == _stored(path, "core")
    assert len(_stored(path, "driver")) == len(_ROWS)


def test_a_stored_round_is_the_same_either_way(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = SourceSpec(location=str(shared_data / "mlperf-inference" / "v5.1"), kind="auto")
    sent = _sent_to_the_driver(monkeypatch)
    stored = {}
    for name, dialects in (("driver", frozenset({"sqlite"})), ("core", frozenset())):
        monkeypatch.setattr(bulk, "DRIVER_DIALECTS", dialects)
        sent.clear()
        path = tmp_path / f"{name}.db"
        with Store.open(f"sqlite:///{path}") as store:
            ingest_source(store, spec, strict=False, cache_dir=None, jobs=1)
        with sqlite3.connect(path) as connection:
            stored[name] = [sorted(sent)] + [
                connection.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
                for table in ("artifact", "result", "system", "system_description")
            ]
    assert stored["driver"][0] == [
        'INSERT INTO "artifact"',
        'INSERT INTO "result"',
        'INSERT INTO "system"',
        'INSERT INTO "system_description"',
    ]
    assert stored["core"][0] == []
    assert stored["driver"][1:] == stored["core"][1:]
    assert len(stored["driver"][2]) == 82  # the v5.1 results


def _sent_to_the_driver(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The start of each INSERT sent straight to the driver from now on."""
    sent: list[str] = []
    original = Connection.exec_driver_sql

    def recorded(self: Connection, statement: str, *args: Any, **kwargs: Any) -> Any:
        if statement.startswith("INSERT"):
            sent.append(" ".join(statement.split()[:3]))
        return original(self, statement, *args, **kwargs)

    monkeypatch.setattr(Connection, "exec_driver_sql", recorded)
    return sent
