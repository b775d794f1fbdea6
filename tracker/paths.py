"""Where the files that ship with the tracker live, and what a path on disk is.

In an installed wheel, ``templates/``, ``migrations/`` and ``jobs/`` are
copied into ``tracker/_data/``; in a source checkout (or an editable install)
they sit at the repository root, beside the ``tracker`` package.

:data:`READ_FLAGS` opens a file to read without waiting on a FIFO;
:func:`file_kind` names what a path is when it is not a regular file, for the
messages that refuse it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = [
    "DEFAULT_CACHE_DIR",
    "READ_FLAGS",
    "file_kind",
    "jobs_dir",
    "lstat_mode",
    "migrations_dir",
    "templates_dir",
]

DEFAULT_CACHE_DIR = Path.home() / ".cache" / "tracker"
"""Downloads and ingest snapshots, unless ``TRACKER_CACHE_DIR`` says otherwise."""

_PACKAGE_DIR = Path(__file__).resolve().parent


def _shipped_dir(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"the tracker's {name}/ folder is missing from {_PACKAGE_DIR}; reinstall the package"
    )


def templates_dir() -> Path:
    """The Jinja2 templates folder (``templates/``)."""
    return _shipped_dir("templates")


def migrations_dir() -> Path:
    """The Alembic scripts folder (``migrations/``)."""
    return _shipped_dir("migrations")


def jobs_dir() -> Path:
    """The folder of shipped ingest jobs (``jobs/``)."""
    return _shipped_dir("jobs")


READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
"""Opening a FIFO must not wait for a writer: it is then refused as not a regular file."""
_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str | None:
    """What a file of ``mode`` (``st_mode``) is in words when it is not a regular file
    (``a character device``); ``None`` for a regular file.

    >>> file_kind(stat.S_IFIFO), file_kind(stat.S_IFREG)
    ('a FIFO', None)
    """
    return next((name for test, name in _KINDS if test(mode)), None)


def lstat_mode(path: Path) -> int | None:
    """``path``'s ``st_mode`` without following a link; ``None`` when nothing is there."""
    try:
        return os.lstat(path).st_mode
    except FileNotFoundError:
        return None
