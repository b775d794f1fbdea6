"""First use of a database: the schema is brought to head once, however many processes start.

Several processes may open a new database at the same moment (parallel
ingests). Each reads the revision and, finding it behind, runs the upgrade.

* PostgreSQL: the migrations take an advisory lock (``migrations/env.py``)
  and Alembic runs them in one transaction, so the second process waits and
  then finds the schema at head.
* SQLite: Alembic commits after each migration (SQLite DDL is not
  transactional to Alembic), so a process waiting for the write lock could get
  it between two migrations of another, plan its upgrade from there and run
  the next migration a second time ("index ... already exists"). So the whole
  upgrade runs under an exclusive ``flock`` and the revision is read again
  once it is held.

The lock is taken on the database's folder, not on the database file: closing
any descriptor of a file drops every POSIX lock the process holds on it,
SQLite's own included (a connection in write-ahead-log mode holds a shared lock
on the file as long as it is open), so the tracker never opens and closes a
descriptor of the database file itself. Locking the folder creates no file; it
also makes first uses of other new databases in the same folder wait, for the
fraction of a second an upgrade takes. In-memory databases, URI file names and
systems without ``flock`` go without the lock, as before.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Engine

from tracker.errors import StoreError
from tracker.paths import migrations_dir
from tracker.store.engine import writing
from tracker.store.schema import current_revision, head_revision, upgrade_schema

if sys.platform != "win32":
    import fcntl

__all__ = ["is_shipped_revision", "upgrade_to_head"]


def upgrade_to_head(engine: Engine) -> None:
    """Bring the schema to the newest revision unless it is there; migrate once.

    A database at a revision this tracker does not ship (a newer tracker
    migrated it) is a :class:`StoreError`: it is never touched.
    """
    revision = current_revision(engine)
    if revision == head_revision():
        return
    if revision is not None and not is_shipped_revision(revision):
        raise StoreError(_newer_schema(engine, revision))
    lock = _lock_sqlite_folder(engine)
    try:
        if current_revision(engine) != head_revision():
            upgrade_schema(writing(engine))
    except CommandError:  # a newer tracker migrated it meanwhile
        raise StoreError(_newer_schema(engine, current_revision(engine) or "?")) from None
    finally:
        if lock is not None:
            os.close(lock)  # releases the flock


def is_shipped_revision(revision: str) -> bool:
    """Whether ``revision`` is one of the migrations this tracker ships."""
    try:
        return ScriptDirectory(str(migrations_dir())).get_revision(revision) is not None
    except CommandError:
        return False


def _newer_schema(engine: Engine, revision: str) -> str:
    shown = engine.url.render_as_string(hide_password=True)
    return (
        f"the database {shown} is at schema revision {revision}, which this tracker does "
        f"not know (its newest is {head_revision()}): a newer tracker migrated it; upgrade "
        "the tracker to use it, or give another --database-url"
    )


def _lock_sqlite_folder(engine: Engine) -> int | None:
    """A descriptor of the SQLite database's folder, locked exclusively; ``None`` if none.

    Where the folder cannot be opened (it does not exist, say) there is no lock:
    SQLite reports the problem when it opens the file.
    """
    if sys.platform == "win32":
        return None
    folder = _sqlite_folder(engine)
    if folder is None:
        return None
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
    except OSError:
        os.close(descriptor)
        return None
    return descriptor


def _sqlite_folder(engine: Engine) -> Path | None:
    """The folder of the SQLite database file, or ``None`` for another database."""
    database = engine.url.database
    if engine.url.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:"):  # a URI file name (``?uri=true``): left alone
        return None
    return Path(database).resolve().parent
