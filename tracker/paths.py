"""Where the files that ship with the tracker live.

In an installed wheel, ``templates/``, ``migrations/`` and ``jobs/`` are
copied into ``tracker/_data/``; in a source checkout (or an editable install)
they sit at the repository root, beside the ``tracker`` package.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DEFAULT_CACHE_DIR", "jobs_dir", "migrations_dir", "templates_dir"]

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
