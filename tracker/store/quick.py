"""The one question an unchanged source asks, answered by Python's sqlite3 alone.

An ingest or a pull of a source it recognises (a snapshot whose trail still
matches, an archive whose identity is unchanged, a ``304`` from the server)
only needs to know that the database holds that source. On a SQLite file at
the schema's head that is one query, and asking it through SQLAlchemy cost
more than the rest of the command (importing SQLAlchemy, SQLModel and the
models: about 0.4 s of CPU). :meth:`tracker.store.facade.Store.open`
with ``defer=True`` uses this module to leave the database closed while a
SQLite file at head can answer, and opens it as always at the first other use.

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
from contextlib import closing
from pathlib import Path

__all__ = ["HEAD_REVISION", "can_create", "file_at_head", "has_source", "sqlite_path"]

HEAD_REVISION = "682f0ce132ea"
"""The newest migration this tracker ships (``migrations/versions``; a new migration changes
it, and ``tests/store/test_new_database.py`` checks it against Alembic's head). A database at
it is used as it is, without importing Alembic (a tenth of a second of every command)."""

_PLAIN_SQLITE = re.compile(r"sqlite:///([^?#%]+)")
"""``sqlite:///FILE`` with nothing SQLAlchemy would decode or read as options."""
_BUSY_TIMEOUT_S = 1.0


def sqlite_path(url: str) -> Path | None:
    """The file of a plain ``sqlite:///FILE`` URL; ``None`` for any other URL."""
    found = _PLAIN_SQLITE.fullmatch(url)
    if found is None or found.group(1) in (":memory:", "") or found.group(1).startswith("file:"):
        return None
    return Path(found.group(1))


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
