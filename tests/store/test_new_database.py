"""A new SQLite database gets its schema without Alembic, exactly as the migrations make it;
a database at head is checked with one query, without Alembic; any other runs the migrations.

The schema of a new SQLite file is created from the models at head in one transaction
(:func:`tracker.store.first_use.upgrade_to_head`): these tests prove it is the schema the
migrations make, table by table and index by index, and that the head it records is
Alembic's.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, text

from tracker.errors import StoreError
from tracker.store.facade import Store
from tracker.store.first_use import HEAD_REVISION, stored_revision
from tracker.store.schema import (
    check_schema,
    current_revision,
    downgrade_schema,
    head_revision,
    upgrade_schema,
)


def _clauses(sql: str) -> tuple[str, ...]:
    """A ``CREATE TABLE`` statement as its head, its columns in order, then its constraints
    sorted (SQLite keeps constraints in the order they were written, which means nothing);
    any other statement as it is. A table a migration made anew (Alembic's batch mode on
    SQLite) is named ``IF NOT EXISTS "name"``: its head is written as a new table's."""
    start, end = sql.find("(\n"), sql.rfind("\n)")
    if not sql.startswith("CREATE TABLE") or start < 0 or end < start:
        return (sql,)
    clauses = [clause.strip() for clause in sql[start + 2 : end].split(", \n")]
    columns = [c for c in clauses if not c.startswith("CONSTRAINT")]
    constraints = sorted(c for c in clauses if c.startswith("CONSTRAINT"))
    head = re.sub(
        r'^CREATE TABLE (?:IF NOT EXISTS )?"?(\w+)"?$', r"CREATE TABLE \1", sql[:start].strip()
    )
    return (head, *columns, *constraints)


def _schema_and_rows(path: Path) -> tuple[list[tuple[Any, ...]], dict[str, list[Any]]]:
    """Every table, index, view and trigger of a SQLite file (with the SQL that made it),
    and every row of every table."""
    connection = sqlite3.connect(path)
    try:
        objects = connection.execute(
            "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master"
            " WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
        ).fetchall()
        tables = [name for kind, name, _table, _sql in objects if kind == "table"]
        rows = {t: connection.execute(f'SELECT * FROM "{t}"').fetchall() for t in tables}
    finally:
        connection.close()
    return [(kind, name, table, _clauses(sql)) for kind, name, table, sql in objects], rows


def test_the_head_revision_is_the_newest_migration() -> None:
    assert HEAD_REVISION == head_revision(), (
        "a migration was added: set HEAD_REVISION in tracker/store/target.py to its revision"
    )


def test_a_new_sqlite_file_gets_the_schema_the_migrations_make(tmp_path: Path) -> None:
    migrated, created = tmp_path / "migrated.db", tmp_path / "created.db"
    with Store.open(f"sqlite:///{migrated}", upgrade=False) as store:
        upgrade_schema(store.engine)
    with Store.open(f"sqlite:///{created}") as store:
        check_schema(store.engine)  # Alembic finds nothing to change
        assert current_revision(store.engine) == head_revision()
    assert _schema_and_rows(created) == _schema_and_rows(migrated)


@contextmanager
def _statements() -> Iterator[list[str]]:
    """The SQL statements every engine runs inside the block."""
    seen: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        seen.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", record)


def test_a_database_at_head_is_checked_with_one_query(database_url: str) -> None:
    Store.open(database_url).close()
    with _statements() as seen:
        Store.open(database_url).close()
    assert [s for s in seen if s.strip().upper() != "BEGIN"] == [
        "SELECT version_num FROM alembic_version"
    ]


def test_a_sqlite_file_with_other_tables_is_migrated_and_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE notes (body TEXT)")
    connection.execute("INSERT INTO notes VALUES ('kept')")
    connection.commit()
    connection.close()
    with Store.open(f"sqlite:///{path}") as store:
        assert store.revision() == head_revision()
        assert set(store.count_rows().values()) == {0}
        with store.engine.connect() as read:
            assert read.execute(text("SELECT body FROM notes")).all() == [("kept",)]


def test_a_database_migrated_down_to_nothing_is_migrated_up_again(database_url: str) -> None:
    with Store.open(database_url) as store:
        downgrade_schema(store.engine)
        assert stored_revision(store.engine) is None  # an empty version table
    with Store.open(database_url) as store:
        check_schema(store.engine)
        assert store.revision() == head_revision()


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database\n" * 100, encoding="utf-8")
    with pytest.raises(StoreError, match="file is not a database"):
        Store.open(f"sqlite:///{path}")
    assert path.read_text(encoding="utf-8") == "not a database\n" * 100
