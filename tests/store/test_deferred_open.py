"""`Store.open(defer=True)`: a SQLite file at head answers "is this source stored?" through
Python's sqlite3 and is opened at its first other use; any other database is opened at
once, with the same errors (:mod:`tracker.store.target`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tracker.errors import StoreError
from tracker.records.results import SourceRecord
from tracker.store import target as quick
from tracker.store.facade import Store

STORED = "a" * 64


def _file_at_head(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    with Store.open(url) as store:
        store.save_source(SourceRecord("loadgen", "runs/a", STORED, STORED), [])
    return url


def _fails_at_open_as_before(url: str) -> None:
    """Opening ``url`` with ``defer`` fails at once, with the error an open without it gives."""
    with pytest.raises(StoreError) as deferred:
        Store.open(url, defer=True)
    with pytest.raises(StoreError) as at_once:
        Store.open(url)
    assert str(deferred.value) == str(at_once.value)


def test_a_file_at_head_answers_without_opening_and_opens_on_first_other_use(
    tmp_path: Path,
) -> None:
    with Store.open(_file_at_head(tmp_path), defer=True) as store:
        assert store._engine is None  # the deferral itself, which the CLI tests see as imports
        assert store.has_source(STORED) and not store.has_source("b" * 64)
        assert store._engine is None
        assert store.url == f"sqlite:///{tmp_path / 'tracker.db'}"
        assert store.count_rows()["source"] == 1  # opened here
        assert store._engine is not None
        assert store.has_source(STORED)


def test_the_quick_answer_is_the_stored_one_after_a_write(tmp_path: Path) -> None:
    url = _file_at_head(tmp_path)
    with Store.open(url, defer=True) as store:
        store.save_source(SourceRecord("loadgen", "runs/b", "c" * 64, "c" * 64), [])
    assert quick.has_source(tmp_path / "tracker.db", "c" * 64) is True


def test_a_new_file_is_created_at_its_first_use(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    with Store.open(url, defer=True) as store:
        assert store._engine is None and not (tmp_path / "new.db").exists()
        store.save_source(SourceRecord("loadgen", "runs/a", STORED, STORED), [])
        assert store._engine is not None
    assert quick.has_source(tmp_path / "new.db", STORED) is True


def test_create_if_new_creates_a_new_file_and_leaves_a_file_at_head_closed(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    with Store.open(url, defer=True) as store:
        store.create_if_new()
        assert store._engine is not None
    assert quick.file_at_head(tmp_path / "new.db")
    with Store.open(url, defer=True) as store:
        store.create_if_new()
        assert store._engine is None  # at head already: an unchanged source needs no SQLAlchemy
        store.open_now()
        assert store._engine is not None


@pytest.mark.parametrize("where", ["missing-folder", "file-as-folder", "existing-link"])
def test_a_new_file_that_cannot_be_created_fails_at_open_as_before(
    tmp_path: Path, where: str
) -> None:
    if where == "missing-folder":
        path = tmp_path / "missing" / "new.db"
    elif where == "file-as-folder":
        (tmp_path / "notes").write_text("a file", encoding="utf-8")
        path = tmp_path / "notes" / "new.db"
    else:  # a link to nowhere: SQLite would create its target; it is opened (and told) at once
        path = tmp_path / "new.db"
        path.symlink_to(tmp_path / "elsewhere" / "target.db")
    assert not quick.can_create(path)
    url = f"sqlite:///{path}"
    _fails_at_open_as_before(url)


def test_an_older_schema_is_migrated_at_once(tmp_path: Path) -> None:
    url = _file_at_head(tmp_path)
    connection = sqlite3.connect(tmp_path / "tracker.db")
    connection.execute("UPDATE alembic_version SET version_num = 'older'")
    connection.commit()
    connection.close()
    assert not quick.file_at_head(tmp_path / "tracker.db")
    _fails_at_open_as_before(url)  # an unknown revision, named the same


def test_a_file_that_is_no_database_fails_at_open_as_before(tmp_path: Path) -> None:
    (tmp_path / "notes.db").write_bytes(b"not a database, but notes " * 100)
    url = f"sqlite:///{tmp_path / 'notes.db'}"
    _fails_at_open_as_before(url)
    assert quick.has_source(tmp_path / "notes.db", STORED) is None


def test_a_missing_file_is_not_created_by_the_quick_question(tmp_path: Path) -> None:
    assert quick.has_source(tmp_path / "missing.db", STORED) is None
    assert not (tmp_path / "missing.db").exists()


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///tracker.db", "tracker.db"),
        ("sqlite:////var/lib/tracker.db", "/var/lib/tracker.db"),
        ("sqlite://", None),
        ("sqlite:///:memory:", None),
        ("sqlite:///file:x.db?mode=ro&uri=true", None),
        ("sqlite:///a%20b.db", None),
        ("sqlite+pysqlite:///tracker.db", None),
        ("postgresql+psycopg://root@127.0.0.1/test", None),
    ],
)
def test_only_plain_sqlite_file_urls_are_deferred(url: str, path: str | None) -> None:
    assert quick.sqlite_path(url) == (None if path is None else Path(path))
