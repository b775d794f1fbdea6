"""The database URL is parsed once, by the tracker's own reading of SQLAlchemy's grammar."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tracker.errors import StoreError
from tracker.store import DatabaseTarget, Store, normalise_database_url
from tracker.store import target as target_module
from tracker.store.engine import sqlalchemy_url
from tracker.store.target import parse_database_url

URLS = [
    "sqlite:///tracker.db",
    "sqlite:////var/lib/tracker.db",
    "sqlite://",
    "sqlite:///:memory:",
    "sqlite:///file:x.db?mode=ro&uri=true",
    "sqlite:///a%20b.db",
    "sqlite+pysqlite:///t.db",
    "postgresql+psycopg://root@127.0.0.1/test",
    "postgres://u:p%40ss@h:5432/db?sslmode=require&x=1&x=2",
    "postgresql://user@[::1]:5432/db",
    "postgresql+psycopg://us:er:pw@host/db",
    "postgresql+psycopg://root@127.0.0.1:5432/test?options=-csearch_path%3Dabc",
]


@pytest.mark.parametrize("url", URLS)
def test_a_url_reads_as_sqlalchemy_reads_it(url: str) -> None:
    ours = parse_database_url(url)
    theirs = make_url(normalise_database_url(url))
    assert sqlalchemy_url(ours) == theirs
    assert ours.shown == theirs.render_as_string(hide_password=True)


@pytest.mark.parametrize(
    ("url", "file"),
    [
        ("sqlite:///tracker.db", "tracker.db"),
        ("sqlite:///a%20b.db", "a b.db"),
        ("sqlite:///file:/tmp/x.db?mode=ro&uri=true", "/tmp/x.db"),
        ("sqlite:///file::memory:?uri=true", None),
        ("sqlite://", None),
        ("postgresql+psycopg://root@127.0.0.1/test", None),
    ],
)
def test_the_sqlite_file_is_known_from_the_parse(url: str, file: str | None) -> None:
    assert parse_database_url(url).sqlite_file == (None if file is None else Path(file))


def test_a_target_is_made_without_checking_and_refused_when_used() -> None:
    target = DatabaseTarget("mysql://tracker@db.example/results")  # no error yet
    with pytest.raises(StoreError, match="not a SQLite or PostgreSQL database"):
        _ = target.url


def test_opening_a_store_parses_its_url_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = target_module.parse_database_url

    def counted(url: str) -> object:
        calls.append(url)
        return real(url)

    monkeypatch.setattr(target_module, "parse_database_url", counted)
    url = f"sqlite:///{tmp_path / 'once.db'}"
    with Store.open(DatabaseTarget(url)) as store:
        assert store.count_rows()["result"] == 0
        assert store.schema_status().at_head
    assert calls == [url]
