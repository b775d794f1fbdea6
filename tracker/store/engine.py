"""Engines: connection settings, and the retry of conflicting writes.

The URL is parsed once, by :mod:`tracker.store.target`; here:

* :func:`check_sqlite_url`, :func:`refuse_missing_folder` and :func:`advice_after`:
  what to say when a database cannot be opened or used, with the next step;
* :func:`create_store_engine`: an engine for a ``sqlite:///`` or PostgreSQL URL;
  SQLite connections get foreign keys, the write-ahead log and full sync, and
  write transactions (:func:`writing`) begin IMMEDIATE;
* :func:`conflict` and :func:`retry_delay`: which errors a concurrent writer
  causes, and how long to wait before running the transaction again;
  :func:`retried_transaction` runs a write transaction with those retries.
"""

from __future__ import annotations

import logging
import random
import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import URL, Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.orm import Session

from tracker.errors import StoreError, without_sql
from tracker.store.target import NEXT_STEP, DatabaseURL, cannot_write

__all__ = [
    "NEXT_STEP",
    "SAVE_ATTEMPTS",
    "advice_after",
    "check_sqlite_url",
    "conflict",
    "create_store_engine",
    "read_only_connection",
    "reason_of",
    "refuse_missing_folder",
    "retried_transaction",
    "retry_delay",
    "sqlalchemy_url",
    "writing",
]

_SQLITE_BUSY_TIMEOUT_S = 30.0
"""How long a SQLite connection waits for another process's write lock before failing."""
_WRITE_OPTION = "tracker_write"
"""Execution option of write transactions: on SQLite they begin IMMEDIATE (write lock first)."""
SAVE_ATTEMPTS = 8
"""Tries of one source's transaction when it conflicts with a concurrent writer."""
_RETRY_DELAY_S = (0.05, 2.0)
"""The first wait before a retry and the longest; the wait doubles, with jitter."""
_CONFLICT_SQLSTATES = {
    "40001": "a serialization failure",
    "40P01": "a deadlock",
    "23505": "a row inserted by a concurrent writer",  # unique_violation: get-or-create races
    "55P03": "a lock held by a concurrent writer",
}
"""PostgreSQL errors that a concurrent writer causes; retrying the transaction resolves them."""
_POSTGRES_EXTRA = "pip install 'mlperf-results-tracker[postgres]'"


def sqlalchemy_url(url: DatabaseURL) -> URL:
    """``url`` as SQLAlchemy's :class:`URL`, built from its parts (nothing parsed again)."""
    return URL.create(
        url.drivername,
        username=url.username,
        password=url.password,
        host=url.host,
        port=url.port,
        database=url.database,
        query=dict(url.query),
    )


def check_sqlite_url(url: DatabaseURL, *, create: bool, memory: bool) -> None:
    """Refuse an in-memory database unless ``memory``, a missing file unless ``create``."""
    path = url.sqlite_file
    if path is None:
        if not memory:
            raise StoreError(
                f"{url.shown} is an in-memory database: what "
                "this command stores or reads is gone when it ends; use sqlite:///FILE"
            )
        return
    refuse_missing_folder(path, url, create=create)
    try:
        exists = path.exists()
    except (OSError, ValueError):  # a name no file can have (a NUL byte), too long a name
        exists = False
    if not exists and not create:
        raise StoreError(f"no database at {path}; run `tracker ingest` first or {NEXT_STEP}")


def refuse_missing_folder(path: Path, url: DatabaseURL, *, create: bool) -> None:
    """A SQLite file whose folder does not exist (or is a file): a :class:`StoreError`
    that names the folder (SQLite itself only says "unable to open database file")."""
    folder = path.parent
    try:
        if folder.is_dir():
            return
        missing = not folder.exists()
    except (OSError, ValueError):  # a name no folder can have: SQLite reports it
        return
    what = "does not exist" if missing else "is a file, not a folder"
    step = f"create it (mkdir -p {folder}) or {NEXT_STEP}" if missing else NEXT_STEP
    if create:
        raise StoreError(
            f"cannot open the database {url.shown}: the folder {folder} {what}; {step}"
        )
    raise StoreError(f"no database at {path}: the folder {folder} {what}; {NEXT_STEP}")


def advice_after(reason: str, doing: str, url: DatabaseURL | None) -> str:
    """The next step after a database error whose first line is ``reason``, while
    ``doing`` (a verb) with the database at ``url`` (``None``: not known here)."""
    text = reason.lower()
    if "readonly" in text or "read-only" in text:
        return "the database is read-only here: check the permissions of the file and its folder"
    if "unable to open database file" in text:
        file = url.sqlite_file if url is not None else None
        if file is not None and cannot_write(file):
            return (
                "the database is read-only here (its file or folder cannot be written): "
                "commands that only read (report, gate, export, findings) use it as it is; "
                "run this one where it can be written"
            )
        return f"check that the folder exists and can be written, or {NEXT_STEP}"
    if "not a database" in text:
        return (
            "point --database-url (or TRACKER_DATABASE_URL) at the tracker's database, "
            "or at a new file name to start one"
        )
    if "disk" in text and "full" in text:
        return "free some disk space and run the command again"
    if url is None or url.backend != "postgresql":
        return NEXT_STEP if doing == "open" else "run the command again"
    if "database" in text and "does not exist" in text:
        return (
            f"create it first (createdb {url.database}, or CREATE DATABASE as a user allowed "
            f"to) or {NEXT_STEP}"
        )
    if "role" in text and "does not exist" in text or "authentication failed" in text:
        return f"check the user name and password in the URL, or {NEXT_STEP}"
    if doing == "open":
        return f"{NEXT_STEP} and that the server is running"
    return "run the command again; if it fails again, check the database server's log"


_DRIVER_CLASS = re.compile(r"^\((?:\w+\.)*\w+\)\s*")
"""``(sqlite3.OperationalError) `` at the start of SQLAlchemy's text of an error."""


def reason_of(error: Exception) -> str:
    """The first line of what the database said about ``error``, in its words: no SQL, no
    ``(sqlite3.OperationalError)`` (a Python class name means nothing to the user), and
    the advice for a read-only database or a full disk after it."""
    orig = getattr(error, "orig", None)
    text = without_sql(str(orig if orig is not None else error)).strip()
    first = _DRIVER_CLASS.sub("", text.splitlines()[0]) if text else ""
    if not first:
        return "the database refused it"
    lowered = first.lower()
    if "readonly" in lowered or "read-only" in lowered or ("disk" in lowered and "full" in lowered):
        return f"{first} ({advice_after(first, 'write', None)})"
    return first


def create_store_engine(url: DatabaseURL, *, read_only: bool = False) -> Engine:
    """An engine for ``url``, set up for the tracker's SQLite or PostgreSQL use;
    ``read_only``: a SQLite file opened for reading alone (:func:`read_only_connection`)."""
    parsed = sqlalchemy_url(url)
    if url.backend == "sqlite":
        file = url.sqlite_file
        if read_only and file is not None:
            engine = create_engine(parsed, creator=lambda: read_only_connection(file))
        else:
            engine = create_engine(parsed, connect_args={"timeout": _SQLITE_BUSY_TIMEOUT_S})
        event.listen(engine, "connect", _configure_sqlite_connection)
        event.listen(engine, "begin", _begin_sqlite_transaction)
        return engine
    connect_args: dict[str, Any] = {"application_name": "tracker"}
    if "application_name" in parsed.query:
        del connect_args["application_name"]
    # No server-side prepared statements: psycopg prepares a query after its 5th
    # run, and PostgreSQL then keeps the generic plan made when the table was
    # small (a fresh database, no ANALYZE yet), e.g. a sequential scan for the
    # sample-key lookup; one process ingesting 6 rounds of 20,000 rows into a
    # fresh database took 145 s with it and 17 s without.
    connect_args["prepare_threshold"] = None
    logging.getLogger("psycopg").addFilter(_drop_pipeline_echo)
    try:
        return create_engine(parsed, pool_pre_ping=True, connect_args=connect_args)
    except ModuleNotFoundError as error:
        raise StoreError(
            f"the PostgreSQL driver psycopg is not installed ({error.name}); install the "
            f"tracker's postgres extra: {_POSTGRES_EXTRA} (pip install '.[postgres]' in a checkout)"
        ) from None


def read_only_connection(file: Path) -> sqlite3.Connection:
    """A connection that only reads ``file`` (a database in a read-only folder or file
    system). SQLite reads a database in write-ahead-log mode only where it can make the
    log's index beside it; where it cannot and there is no log to read (a database
    closed cleanly), the file is opened as immutable: nobody can change it here."""
    uri = file.resolve().as_uri()
    connection = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=_SQLITE_BUSY_TIMEOUT_S)
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return connection
    except sqlite3.OperationalError:
        connection.close()
        try:
            log_bytes = Path(f"{file}-wal").stat().st_size
        except OSError:
            log_bytes = 0
        if log_bytes:
            raise  # the log holds what the file does not: reading the file alone would lie
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True)


def writing(engine: Engine) -> Engine:
    """The engine for write transactions (on SQLite they take the write lock first)."""
    return engine.execution_options(**{_WRITE_OPTION: True})


def _configure_sqlite_connection(dbapi_connection: Any, _record: Any) -> None:
    """Foreign keys on, write-ahead log, full sync; transactions begun by SQLAlchemy.

    The write-ahead log lets readers (a report, a gate) run while an ingest
    writes, and a killed writer leaves only uncommitted log frames, which the
    next connection ignores. pysqlite's own transaction handling is turned off
    (``isolation_level = None``) so that :func:`_begin_sqlite_transaction`
    decides how each transaction begins.
    """
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    try:
        cursor.execute("PRAGMA journal_mode=WAL")  # persistent; a no-op once set
    except sqlite3.OperationalError:
        pass  # a read-only file keeps its rollback journal, which is crash-safe too
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.close()


def _begin_sqlite_transaction(connection: Connection) -> None:
    """BEGIN IMMEDIATE for writes, so a writer waits for the lock (busy timeout) up front.

    A deferred transaction that reads and then writes would have to upgrade its
    lock midway, which fails at once (no waiting) when another process wrote in
    between; taking the write lock first makes concurrent writers queue instead.
    """
    write = connection.get_execution_options().get(_WRITE_OPTION, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _drop_pipeline_echo(record: logging.LogRecord) -> bool:
    """Drop psycopg's warning that repeats the error a failed batch insert raises.

    A batch insert that hits a unique violation (a race :meth:`Store.save_source`
    retries) also makes psycopg log "error ignored terminating <Pipeline>";
    the error itself is raised and handled, so the warning is only noise on stderr.
    """
    return not (record.msg == "error ignored terminating %r: %s" and "Pipeline" in str(record.args))


def conflict(error: DBAPIError) -> str | None:
    """What a concurrent writer did to make ``error`` happen, if it is such an error."""
    sqlstate = getattr(error.orig, "sqlstate", None)  # psycopg
    if isinstance(sqlstate, str):
        return _CONFLICT_SQLSTATES.get(sqlstate)
    code = getattr(error.orig, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in (5, 6):  # SQLITE_BUSY, SQLITE_LOCKED
        return "a lock held by a concurrent writer"
    return None


def retry_delay(retry: int) -> float:
    """Seconds to wait before try ``retry + 2``: doubling from the first wait, with jitter."""
    first, longest = _RETRY_DELAY_S
    return min(longest, first * 2.0**retry) * random.uniform(0.5, 1.5)


T = TypeVar("T")


def retried_transaction(
    engine: Engine,
    work: Callable[[Session], T],
    failed: Callable[[SQLAlchemyError, str | None], StoreError],
) -> tuple[T, int]:
    """What ``work`` returns, run in one write transaction, and how many times it was run
    again after a conflict with a concurrent writer (at most :data:`SAVE_ATTEMPTS` tries).

    Any other database error, or a conflict on the last try, raises ``failed(error,
    cause)``: ``cause`` names the conflict (:func:`conflict`), ``None`` for another error.
    """
    retry = 0
    while True:
        try:
            with Session(writing(engine)) as session, session.begin():
                return work(session), retry
        except DBAPIError as error:
            cause = conflict(error)
            if cause is None or retry + 1 == SAVE_ATTEMPTS:
                raise failed(error, cause) from None
        except SQLAlchemyError as error:
            raise failed(error, None) from None
        time.sleep(retry_delay(retry))
        retry += 1
