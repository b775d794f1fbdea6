"""What every command shares: the error shown as ``Error: ...``, the store, progress bars.

The group class turns a :class:`TrackerError` into ``Error: <message>`` with
exit code :data:`EXIT_DATA_ERROR`; the progress bars draw on stderr and hide
themselves when stderr is not a terminal.

Everything printed that carries a label (from flags or from files) goes through
:func:`tracker.text_safety.terminal_text`: control characters and escape
sequences are shown as text, never run by the terminal (rich tables get
:class:`rich.text.Text` cells, so rich markup in a label is shown as well).

:func:`open_store` opens the database of ``--database-url``. Only the commands
that store what they are given (``ingest``, ``pull``, ``db upgrade``, ``demo``)
create a SQLite file that does not exist; every other command (``report``,
``gate``, ``findings``, ``export``, ``analyze``, ``db current``) reads what an
ingest stored and refuses a missing file, or a database without the tracker's
tables, with ``Error: ... no database at PATH``. An in-memory database
(``sqlite://``) keeps nothing once the command ends: only ``demo``, which
ingests, analyses, reports and gates in one process, accepts it.

:func:`atomic_output` writes a file the way every file is written: under a
temporary name beside it, renamed at the end; a failure (disk full) removes the
temporary file and leaves the earlier file, if any, as it was.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TransferSpeedColumn,
)

from tracker.errors import EXIT_DATA_ERROR, OutputError, TrackerError
from tracker.paths import DEFAULT_CACHE_DIR

if TYPE_CHECKING:
    from tracker.store.facade import Store
from tracker.text_safety import terminal_text

DEFAULT_DATABASE_URL = "sqlite:///tracker.db"
err_console = Console(stderr=True)


class TrackerCommandError(click.ClickException):
    """A :class:`TrackerError` shown as ``Error: ...`` with exit code 2 (control
    characters in it shown as text, line by line)."""

    exit_code = EXIT_DATA_ERROR

    def __init__(self, message: str) -> None:
        super().__init__("\n".join(terminal_text(line) for line in message.split("\n")))


class TrackerGroup(click.Group):
    """A command group that shows a :class:`TrackerError` as ``Error: ...`` (exit 2)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TrackerError as error:
            raise TrackerCommandError(str(error)) from None


def now() -> str:
    """The current UTC time to the second, ISO 8601."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@contextmanager
def open_store(
    ctx: click.Context, *, upgrade: bool = True, create: bool = False, memory: bool = False
) -> Iterator[Store]:
    """The store at the root context's database URL, closed on the way out.

    A missing SQLite file is created only with ``create``; an in-memory
    database is accepted only with ``memory`` (see the module's notes).
    """
    from tracker.store.facade import Store  # here, so that --help never loads the database

    store = Store.open(ctx.find_root().obj, upgrade=upgrade, create=create, memory=memory)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def progress_bar(label: str) -> Iterator[Any]:
    """A progress bar on stderr (hidden when stderr is not a terminal)."""
    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int, _what: str) -> None:
            bar.update(task, completed=done, total=total)

        yield update


@contextmanager
def count_bar(label: str) -> Iterator[Any]:
    """A counter of pages written on stderr, total unknown (hidden when not a terminal)."""
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed} pages"),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(pages: int, relative: str) -> None:
            bar.update(task, completed=pages, description=f"report: {relative}")

        yield update


@contextmanager
def download_bar() -> Iterator[Any]:
    """A download progress bar on stderr (hidden when stderr is not a terminal)."""
    with Progress(
        TextColumn("download"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    ) as bar:
        task = bar.add_task("download", total=None)

        def update(received: int, total: int | None) -> None:
            bar.update(task, completed=received, total=total)

        yield update


def cache_dir() -> Path:
    """Downloads and snapshots: ``TRACKER_CACHE_DIR``, else ``$XDG_CACHE_HOME/tracker``."""
    if os.environ.get("TRACKER_CACHE_DIR"):
        return Path(os.environ["TRACKER_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "tracker"
    return DEFAULT_CACHE_DIR


@contextmanager
def atomic_output(path: Path) -> Iterator[IO[str]]:
    """A text stream for ``path``, written under a temporary name beside it and renamed
    when the block ends; on any failure the temporary file is removed and ``path``
    is left as it was (an :class:`OutputError` says so for a write that failed)."""
    temporary = path.with_name(f".{path.name}.tmp-{secrets.token_hex(4)}")
    try:
        stream = temporary.open("x", encoding="utf-8", newline="")
    except OSError as error:
        raise OutputError(f"cannot write {path}: {error.strerror}; choose another --out") from None
    try:
        with stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise OutputError(
            f"cannot write {path}: {error.strerror or error}; nothing was written "
            f"(an earlier {path.name}, if any, is unchanged)"
        ) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def echo_label(text: str, *, err: bool = False) -> None:
    """Print one line that carries labels, its control characters shown as text."""
    click.echo(terminal_text(text), err=err)
