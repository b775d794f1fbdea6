"""Where the database is: its URL parsed once, and what a SQLite file at head answers alone.

:class:`DatabaseTarget` is the database a command was given (``--database-url`` or
``TRACKER_DATABASE_URL``): the URL as written, parsed on first use into a
:class:`DatabaseURL` (SQLAlchemy's own URL grammar, without importing SQLAlchemy),
which says the backend, the SQLite file (once) and the URL with its password hidden.
Only SQLite (through Python's sqlite3) and PostgreSQL (through psycopg 3) are accepted;
anything else is a :class:`~tracker.errors.StoreError` that names the two forms.

The rest answers the one question an unchanged source asks. An ingest or a pull of a
source it recognises (a snapshot whose trail still matches, an archive whose identity
is unchanged, a ``304`` from the server) only needs to know that the database holds
that source. On a SQLite file at the schema's head that is one query, and asking it
through SQLAlchemy cost more than the rest of the command (importing SQLAlchemy,
SQLModel and the models: about 0.4 s of CPU). :meth:`tracker.store.facade.Store.open`
with ``defer=True`` uses this module to leave the database closed while a SQLite file
at head can answer, and opens it as always at the first other use.

With ``create``, a SQLite file that does not exist yet is deferred too
(:func:`can_create`): an ingest read by worker processes creates it while they
read, which hides the same cost.

Every answer here is "yes", "no", or "cannot tell" (``None``: not a plain SQLite
file URL, no such file, not at head, any error); "cannot tell" makes the
caller open the database the usual way, which reports what is wrong.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import parse_qsl, quote, quote_plus, unquote

from tracker.errors import StoreError

__all__ = [
    "HEAD_REVISION",
    "NEXT_STEP",
    "DatabaseTarget",
    "DatabaseURL",
    "can_create",
    "cannot_write",
    "file_at_head",
    "has_source",
    "normalise_database_url",
    "parse_database_url",
    "sqlite_path",
]

HEAD_REVISION = "fe8411506392"
"""The newest migration this tracker ships (``migrations/versions``; a new migration changes
it, and ``tests/store/test_new_database.py`` checks it against Alembic's head). A database at
it is used as it is, without importing Alembic (a tenth of a second of every command)."""

_BUSY_TIMEOUT_S = 1.0
NEXT_STEP = "check --database-url / TRACKER_DATABASE_URL"
"""The next step after most database errors: the URL may name the wrong database."""
_BACKENDS = ("sqlite", "postgresql")
_DRIVERS = ("sqlite", "sqlite+pysqlite", "postgresql+psycopg")
_URL_FORMS = "use sqlite:///FILE or postgresql+psycopg://USER@HOST/DB"
_URL = re.compile(
    r"""
    (?P<name>[\w\+]+)://
    (?:(?P<username>[^:/]*)(?::(?P<password>[^@]*))?@)?
    (?:(?:\[(?P<ipv6host>[^/\?]+)\]|(?P<ipv4host>[^/:\?]+))?(?::(?P<port>[^/\?]*))?)?
    (?:/(?P<database>[^\?]*))?
    (?:\?(?P<query>.*))?
    """,
    re.X,
)
"""SQLAlchemy's URL grammar (``sqlalchemy.engine.url``), so both read a URL alike."""


def normalise_database_url(url: str) -> str:
    """``postgres://`` and ``postgresql://`` mean psycopg 3; other URLs are kept."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


@dataclass(frozen=True, slots=True)
class DatabaseURL:
    """A database URL, parsed: its parts, as SQLAlchemy's ``URL.create`` takes them."""

    drivername: str
    username: str | None
    password: str | None
    host: str | None
    port: int | None
    database: str | None
    query: Mapping[str, str | tuple[str, ...]]
    sqlite_file: Path | None
    """The file of a SQLite database; ``None`` in memory (and for PostgreSQL)."""
    plain_file: Path | None
    """The file of a plain ``sqlite:///FILE`` URL (nothing to decode, no options): a file
    :mod:`sqlite3` can be asked about directly; ``None`` for any other URL."""

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.drivername.partition("+")[0]

    @property
    def shown(self) -> str:
        """The URL with its password hidden, for messages (written as SQLAlchemy writes it)."""
        text = f"{self.drivername}://"
        if self.username is not None:
            text += quote(self.username, safe=" +")
            text += ":***@" if self.password is not None else "@"
        if self.host is not None:
            text += f"[{self.host}]" if ":" in self.host else self.host
        if self.port is not None:
            text += f":{self.port}"
        if self.database is not None:
            text += "/" + quote(self.database, safe=" +/")
        if self.query:
            text += "?" + "&".join(
                f"{quote_plus(key)}={quote_plus(value)}"
                for key in sorted(self.query)
                for value in _values(self.query[key])
            )
        return text


def _values(value: str | tuple[str, ...]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else value


def parse_database_url(url: str) -> DatabaseURL:
    """``url`` parsed; a URL that is not SQLite or PostgreSQL through psycopg 3 (the
    drivers the tracker is built and tested with) is a :class:`StoreError`."""
    given = normalise_database_url(url)
    found = _URL.match(given)
    try:
        if found is None:
            raise ValueError(url)
        port = int(found["port"]) if found["port"] else None
    except ValueError:
        raise StoreError(f"database URL {url!r} is not a URL; {_URL_FORMS}") from None
    query: dict[str, str | tuple[str, ...]] = {}
    for key, value in parse_qsl(found["query"] or ""):
        old = query.get(key)
        query[key] = value if old is None else (*((old,) if isinstance(old, str) else old), value)
    database = None if found["database"] is None else unquote(found["database"])
    parsed = DatabaseURL(
        drivername=found["name"],
        username=None if found["username"] is None else unquote(found["username"]),
        password=None if found["password"] is None else unquote(found["password"]),
        host=found["ipv4host"] or found["ipv6host"],
        port=port,
        database=database,
        query=query,
        sqlite_file=None,
        plain_file=None,
    )
    _check_supported(parsed)
    if parsed.backend != "sqlite":
        return parsed
    file = _sqlite_file(database or "", query)
    plain = given == f"sqlite:///{database}" and not (database or "").startswith("file:")
    return replace(parsed, sqlite_file=file, plain_file=file if plain else None)


def _check_supported(url: DatabaseURL) -> None:
    if url.backend not in _BACKENDS:
        raise StoreError(
            f"database URL {url.shown!r} is not a SQLite or PostgreSQL database: the tracker "
            f"supports only these two (not {url.backend}); {_URL_FORMS}"
        )
    if url.drivername not in _DRIVERS:
        raise StoreError(
            f"database URL {url.shown!r}: the driver {url.drivername!r} is not supported; "
            f"the tracker talks to SQLite through Python's sqlite3 and to PostgreSQL through "
            f"psycopg 3: {_URL_FORMS}"
        )


def _sqlite_file(database: str, query: Mapping[str, str | tuple[str, ...]]) -> Path | None:
    """The file a SQLite URL names; ``None`` for an in-memory database.

    ``sqlite://`` and ``sqlite:///:memory:`` are in memory, as is a
    ``file:`` URI (``?uri=true``) with ``mode=memory`` or the name ``:memory:``.
    """
    if query.get("uri") in ("true", "1") and database.startswith("file:"):
        path, _, options = database[len("file:") :].partition("?")
        if path.startswith("//"):  # file://HOST/PATH: only an empty host or localhost
            path = "/" + path[2:].partition("/")[2]
        if "mode=memory" in options or query.get("mode") == "memory":
            return None
        database = unquote(path)
    if database in ("", ":memory:"):
        return None
    return Path(database)


class DatabaseTarget:
    """The database of a command: the URL as given, parsed once, on first use.

    Creating one never fails (``tracker gate --help`` with a wrong
    ``TRACKER_DATABASE_URL`` still helps); :attr:`url` raises the
    :class:`StoreError` of a URL the tracker cannot use.
    """

    __slots__ = ("_parsed", "given")

    def __init__(self, given: str) -> None:
        self.given = given
        self._parsed: DatabaseURL | None = None

    @property
    def url(self) -> DatabaseURL:
        """The URL, parsed (once)."""
        if self._parsed is None:
            self._parsed = parse_database_url(self.given)
        return self._parsed

    def __repr__(self) -> str:
        return f"DatabaseTarget({self.given!r})"


def sqlite_path(url: str) -> Path | None:
    """The file of a plain ``sqlite:///FILE`` URL; ``None`` for any other URL (or one the
    tracker cannot use)."""
    try:
        return parse_database_url(url).plain_file
    except StoreError:
        return None


def file_at_head(path: Path) -> bool:
    """Whether ``path`` is a SQLite file whose schema is at :data:`HEAD_REVISION`."""
    return _ask(path, None) is not None


def can_create(path: Path) -> bool:
    """Whether ``path`` names no file (not even a broken link) in a folder this process may
    write: a new database there is created when it is first used. ``False`` for anything
    else (the caller then opens it at once, and the usual errors name what is wrong)."""
    try:
        return (
            not os.path.lexists(path)
            and path.parent.is_dir()
            and os.access(path.parent, os.W_OK | os.X_OK)
        )
    except (OSError, ValueError):  # a name no file can have
        return False


def cannot_write(path: Path) -> bool:
    """Whether ``path`` is a database file this process may read but not write (the file,
    or its folder, where SQLite keeps its journal: a read-only folder or file system)."""
    try:
        return (
            path.is_file()
            and os.access(path, os.R_OK)
            and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK))
        )
    except (OSError, ValueError):  # a name no file can have
        return False


def has_source(path: Path, identity_sha256: str) -> bool | None:
    """Whether the SQLite file at head holds the source of this identity; ``None``: cannot
    tell (see the module docstring)."""
    return _ask(path, identity_sha256)


def _ask(path: Path, identity_sha256: str | None) -> bool | None:
    try:
        if not path.is_file():
            return None
        uri = f"{path.resolve().as_uri()}?mode=rw"  # never creates a file
        connection = sqlite3.connect(uri, uri=True, timeout=_BUSY_TIMEOUT_S)
        with closing(connection):
            rows = connection.execute("SELECT version_num FROM alembic_version").fetchall()
            if rows != [(HEAD_REVISION,)]:
                return None
            if identity_sha256 is None:
                return True
            found = connection.execute(
                "SELECT 1 FROM source WHERE identity_sha256 = ? LIMIT 1", (identity_sha256,)
            ).fetchone()
            return found is not None
    except (sqlite3.Error, OSError, ValueError):
        return None
