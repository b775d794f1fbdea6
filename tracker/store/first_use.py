"""First use of a database: the schema is brought to head once, however many processes start.

Several processes may open a new database at the same moment (parallel
ingests). Each reads the revision and, finding it behind, runs the upgrade.

* PostgreSQL: the migrations take an advisory lock (``migrations/env.py``)
  and Alembic runs them in one transaction, so the second process waits and
  then finds the schema at head.
* SQLite, a new (empty) file: the schema is created at head in one transaction,
  from the models (what the migrations make; a test compares the two), without
  Alembic, under the lock below.
* SQLite, an existing file: Alembic commits after each migration (SQLite DDL is not
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

from sqlalchemy import Column, Engine, MetaData, PrimaryKeyConstraint, String, Table, inspect, text
from sqlalchemy.exc import DBAPIError

from tracker.errors import StoreError
from tracker.paths import migrations_dir
from tracker.store.engine import writing
from tracker.store.target import HEAD_REVISION

if sys.platform != "win32":
    import fcntl

__all__ = ["HEAD_REVISION", "is_shipped_revision", "stored_revision", "upgrade_to_head"]


_VERSION_TABLE = "alembic_version"


def stored_revision(engine: Engine) -> str | None:
    """The schema revision the database is at, ``None`` for one without the tracker's schema.

    One query, and no Alembic: a database at head is checked as cheaply as can be. Only
    when that query fails is the version table looked for (a new database: ``None``), and
    only a version table of several heads is left to Alembic (which says what is wrong).
    """
    query = text(f"SELECT version_num FROM {_VERSION_TABLE}")
    with engine.connect() as connection:
        try:
            rows = connection.execute(query).all()
        except DBAPIError:
            connection.rollback()  # PostgreSQL: the failed query ended the transaction
            if not inspect(connection).has_table(_VERSION_TABLE):
                return None
            # another process has just created it (a new file opened by several at once),
            # or the query fails for another reason: then it fails again here
            rows = connection.execute(query).all()
    if len(rows) > 1:
        from tracker.store.schema import current_revision

        return current_revision(engine)
    return str(rows[0][0]) if rows else None


def upgrade_to_head(engine: Engine, revision: str | None, sqlite_file: Path | None) -> None:
    """Bring the schema from ``revision`` (just read: :func:`stored_revision`) to the newest
    one unless it is there; migrate once. Alembic is imported only to migrate.

    A database at a revision this tracker does not ship (a newer tracker
    migrated it) is a :class:`StoreError`: it is never touched.
    """
    if revision == HEAD_REVISION:
        return
    if revision is not None and not is_shipped_revision(revision):
        raise StoreError(_newer_schema(engine, revision))
    lock = _lock_folder(sqlite_file)
    try:
        if stored_revision(engine) != HEAD_REVISION and not _created_at_head(engine):
            _migrate(engine)
    finally:
        if lock is not None:
            os.close(lock)  # releases the flock


def _migrate(engine: Engine) -> None:
    """Run the migrations from the database's revision to head."""
    from alembic.util import CommandError

    from tracker.store.schema import upgrade_schema

    try:
        upgrade_schema(writing(engine))
    except CommandError:  # a newer tracker migrated it meanwhile
        raise StoreError(_newer_schema(engine, stored_revision(engine) or "?")) from None


_VERSION = Table(
    _VERSION_TABLE,
    MetaData(),
    Column("version_num", String(32), nullable=False),
    PrimaryKeyConstraint("version_num", name=f"{_VERSION_TABLE}_pkc"),
)
"""Alembic's version table, as Alembic creates it."""


def _created_at_head(engine: Engine) -> bool:
    """Give a new, empty SQLite database its whole schema in one transaction: the models'
    tables and the head revision, as the migrations would leave it (``tests/store/
    test_new_database.py`` compares the two), without importing or running Alembic.

    ``False``, and nothing done, for any other database: PostgreSQL, or a SQLite file
    that holds anything at all (the migrations, which refuse what they do not expect, run).
    """
    if engine.url.get_backend_name() != "sqlite":
        return False
    from tracker.store.models import Source

    with writing(engine).begin() as connection:
        if connection.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar():
            return False
        Source.metadata.create_all(connection, checkfirst=False)
        _VERSION.create(connection, checkfirst=False)
        connection.execute(_VERSION.insert().values(version_num=HEAD_REVISION))
    return True


def is_shipped_revision(revision: str) -> bool:
    """Whether ``revision`` is one of the migrations this tracker ships."""
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    try:
        return ScriptDirectory(str(migrations_dir())).get_revision(revision) is not None
    except CommandError:
        return False


def _newer_schema(engine: Engine, revision: str) -> str:
    shown = engine.url.render_as_string(hide_password=True)
    return (
        f"the database {shown} is at schema revision {revision}, which this tracker does "
        f"not know (its newest is {HEAD_REVISION}): a newer tracker migrated it; upgrade "
        "the tracker to use it, or give another --database-url"
    )


def _lock_folder(sqlite_file: Path | None) -> int | None:
    """A descriptor of the SQLite database's folder, locked exclusively; ``None`` if none.

    Where the folder cannot be opened (it does not exist, say) there is no lock:
    SQLite reports the problem when it opens the file.
    """
    if sys.platform == "win32" or sqlite_file is None:
        return None
    try:
        descriptor = os.open(sqlite_file.resolve().parent, os.O_RDONLY)
    except (OSError, ValueError):
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
    except OSError:
        os.close(descriptor)
        return None
    return descriptor
