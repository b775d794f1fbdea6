"""The exceptions the tracker raises.

Every error the library raises on purpose is a :class:`TrackerError`; the CLI
catches that one class and prints ``Error: <message>``. The tree::

    TrackerError            base class; never raised directly
    ├── ParseError          a file does not hold what its format promises
    ├── FetchError          a download failed (HTTP status, timeout, checksum)
    ├── StoreError          the database refused or is in an unexpected state
    ├── ConfigError         a command-line option, job file or setting is wrong
    └── OutputError         a file the command writes could not be written

Messages name the file, field or version concerned and, where there is one,
the next step for the user. A :class:`StoreError` never carries the SQL
statement or parameters that SQLAlchemy appends to the text of its errors
(:func:`without_sql`): a message says what failed in words.

The exit codes of the ``tracker`` command are defined here once:
:data:`EXIT_OK`, :data:`EXIT_GATE_FAILED` (a gate found a failing item),
:data:`EXIT_DATA_ERROR` (usage, configuration or data error, shown as
``Error: ...``) and :data:`EXIT_STRICT_SUSPECT` (a strict gate whose worst
result is suspect or inconclusive).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "EXIT_DATA_ERROR",
    "EXIT_GATE_FAILED",
    "EXIT_OK",
    "EXIT_STRICT_SUSPECT",
    "ConfigError",
    "FetchError",
    "OutputError",
    "ParseError",
    "StoreError",
    "TrackerError",
    "without_sql",
]

EXIT_OK: Final = 0
"""Success; a gate with nothing failing."""
EXIT_GATE_FAILED: Final = 1
"""A gate found at least one failing item (a regression not acknowledged)."""
EXIT_DATA_ERROR: Final = 2
"""A usage, configuration or data error (``Error: ...`` on stderr)."""
EXIT_STRICT_SUSPECT: Final = 3
"""Only with ``gate --strict``: nothing failing, but the worst result is suspect or inconclusive."""


class TrackerError(Exception):
    """Base class of every error the tracker raises on purpose."""


class ParseError(TrackerError):
    """Raised when a result file is malformed.

    ``path`` names the file as the user gave it (or as it sits inside an
    archive); ``line`` is 1-based where the problem has one.
    """

    def __init__(self, path: str, message: str, *, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}: line {line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class FetchError(TrackerError):
    """Raised when a remote source cannot be fetched completely and intact."""

    def __init__(self, url: str, message: str) -> None:
        self.url = url
        super().__init__(f"{url}: {message}")


class StoreError(TrackerError):
    """Raised when the database cannot be opened, migrated or written.

    The message is kept free of SQL (see :func:`without_sql`), whatever text
    of a database error it quotes.
    """

    def __init__(self, message: str) -> None:
        super().__init__(without_sql(message))


class ConfigError(TrackerError):
    """Raised for a wrong option, ingest job or setting."""


class OutputError(TrackerError):
    """Raised when a file the command writes cannot be written (disk full, no permission).

    The file is written under a temporary name and renamed at the end, so a
    failed write leaves the earlier file, if any, as it was.
    """


_SQL_START = "\n[SQL: "
_SQL_HELP = re.compile(r"\n?\(Background on this error at: [^)\s]*\)")


def without_sql(message: str) -> str:
    """``message`` without the SQL statement, parameters and help link that SQLAlchemy
    appends to the text of its errors (``[SQL: ...]``, ``[parameters: ...]``,
    ``(Background on this error at: ...)``); text after them is kept.

    >>> without_sql("could not: (sqlite3.IntegrityError) UNIQUE failed: x.id\\n[SQL: INSERT "
    ...     "INTO x]\\n[parameters: (1,)]\\n(Background on this error at: https://sqlalche.me/e/20/gkpj)"
    ...     "; nothing stored")
    'could not: (sqlite3.IntegrityError) UNIQUE failed: x.id; nothing stored'
    """
    start = message.find(_SQL_START)
    if start < 0:
        return _SQL_HELP.sub("", message)
    help_link = _SQL_HELP.search(message, start)
    rest = message[help_link.end() :] if help_link is not None else ""
    return without_sql(message[:start] + rest)
