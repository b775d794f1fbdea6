"""What every command shares: the error shown as ``Error: ...``, the store, output files.

The group class turns a :class:`TrackerError` (and an operating-system error no
command caught) into ``Error: <message>`` with exit code :data:`EXIT_DATA_ERROR`,
and keeps writing into ``/dev/null`` once the reader of stdout or stderr is gone
(:class:`ClosablePipe`), so that ``tracker gate | head -1`` keeps the gate's exit
code. ``--database-url`` is an option of the group and of every command
(:func:`add_database_url_option`). Progress (bars, or plain lines outside a
terminal) is in :mod:`tracker.cli.progress`.

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

import errno
import os
import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from tracker.errors import EXIT_DATA_ERROR, OutputError, TrackerError
from tracker.paths import DEFAULT_CACHE_DIR

if TYPE_CHECKING:
    from tracker.store.facade import Store
from tracker.text_safety import terminal_text

DEFAULT_DATABASE_URL = "sqlite:///tracker.db"


class TrackerCommandError(click.ClickException):
    """A :class:`TrackerError` shown as ``Error: ...`` with exit code 2 (control
    characters in it shown as text, line by line)."""

    exit_code = EXIT_DATA_ERROR

    def __init__(self, message: str) -> None:
        super().__init__("\n".join(terminal_text(line) for line in message.split("\n")))


class TrackerGroup(click.Group):
    """A command group that shows a :class:`TrackerError` as ``Error: ...`` (exit 2), and
    an operating-system error no command turned into one (a path it cannot use) as well.

    Its output survives a reader that stops reading (``tracker gate | head -1``):
    see :class:`ClosablePipe`.
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        with closable_pipes():
            return super().main(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TrackerError as error:
            raise TrackerCommandError(str(error)) from None
        except BrokenPipeError:
            raise
        except OSError as error:
            where = f" {error.filename}" if error.filename is not None else ""
            raise TrackerCommandError(
                f"cannot use{where}: {error.strerror or error}; check that path and its "
                "permissions, then run the command again"
            ) from None


class ClosablePipe:
    """``sys.stdout`` or ``sys.stderr``, for a reader that may close the pipe early.

    When the reader is gone (``BrokenPipeError``), the stream is pointed at
    ``/dev/null`` and writing goes on: the command finishes what it was doing
    and exits with its own code (a gate piped into ``head -1`` still exits 0
    or 1), with no traceback and no "Exception ignored" at exit.
    """

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self._discard_output()
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._discard_output()

    def _discard_output(self) -> None:
        """Point the stream's descriptor at ``/dev/null`` (what it still buffers goes there)."""
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self.stream.fileno())
            finally:
                os.close(devnull)
        except (OSError, ValueError):  # no descriptor (a test's stream): nothing to redirect
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextmanager
def closable_pipes() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`ClosablePipe` for the block; flushed
    (into ``/dev/null`` if the reader is gone) and put back at its end."""
    stdout, stderr = sys.stdout, sys.stderr
    pipes = ClosablePipe(stdout), ClosablePipe(stderr)
    sys.stdout, sys.stderr = pipes
    try:
        yield
    finally:
        for pipe in pipes:
            pipe.flush()
        sys.stdout, sys.stderr = stdout, stderr


DATABASE_URL_GIVEN = "tracker.database_url_given"
"""Key of ``ctx.meta``: true when ``--database-url`` was given on the command line."""


def take_database_url(ctx: click.Context, given_on_command_line: bool, url: str | None) -> None:
    """Make ``url`` the database of this run (the root context's object), if given."""
    if url is None:
        return
    root = ctx.find_root()
    root.obj = url
    if given_on_command_line:
        root.meta[DATABASE_URL_GIVEN] = True


def database_url_option() -> click.Option:
    """``--database-url`` after the command's name (``tracker ingest --database-url URL``):
    the same as before it; given both ways, this one wins."""

    def remember(ctx: click.Context, _param: click.Parameter, url: str | None) -> None:
        take_database_url(ctx, True, url)

    return click.Option(
        ["--database-url"],
        expose_value=False,
        callback=remember,
        help="SQLAlchemy URL of the database; the same as `tracker --database-url URL` "
        "(also TRACKER_DATABASE_URL).",
    )


def add_database_url_option(command: click.Command) -> None:
    """Give ``command`` and, for a group, each of its commands the ``--database-url`` option."""
    if not any(param.name == "database_url" for param in command.params):
        command.params.append(database_url_option())
    if isinstance(command, click.Group):
        for subcommand in command.commands.values():
            add_database_url_option(subcommand)


def now() -> str:
    """The current UTC time to the second, ISO 8601."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@contextmanager
def open_store(
    ctx: click.Context,
    *,
    upgrade: bool = True,
    create: bool = False,
    memory: bool = False,
    defer: bool = False,
) -> Iterator[Store]:
    """The store at the root context's database URL, closed on the way out.

    A missing SQLite file is created only with ``create``; an in-memory
    database is accepted only with ``memory`` (see the module's notes);
    ``defer``: see :meth:`Store.open` (an unchanged source costs no SQLAlchemy; a new
    file is created while an ingest's workers read, and in any case by the end).
    """
    from tracker.store.facade import Store  # here, so that --help never loads the database

    url = ctx.find_root().obj
    store = Store.open(url, upgrade=upgrade, create=create, memory=memory, defer=defer)
    try:
        yield store
    except Exception:
        with suppress(TrackerError):  # the error that ended the command is the one told
            store.create_if_new()
        raise
    else:
        store.create_if_new()  # a new database exists after the command, as it always did
    finally:
        store.close()


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
        why = _why_not_written(path, error) if error.errno == errno.ENOTDIR else error.strerror
        raise OutputError(f"cannot write {path}: {why}; choose another --out") from None
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


@contextmanager
def writing_into(out: Path, option: str = "--out") -> Iterator[None]:
    """An operating-system error inside the block (the folder ``out`` cannot be made or
    written: a parent that is a file, no permission, a read-only file system) as an
    :class:`OutputError` that names ``out`` and the next step; a parent that is a file
    is refused before the block runs."""

    def unwritable(why: str) -> OutputError:
        return OutputError(
            f"cannot write into {out}: {why}; choose another {option}: a folder that exists, "
            "or can be made, and can be written"
        )

    existing = next((path for path in out.parents if os.path.lexists(path)), None)
    if existing is not None and not existing.is_dir():
        raise unwritable(f"{existing} is a file, not a folder")
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as error:
        if not _is_about(out, error):  # another file (the group reports it)
            raise
        raise unwritable(_why_not_written(out, error)) from None


def _is_about(out: Path, error: OSError) -> bool:
    """Whether ``error`` is about ``out``: a path in it or beside it, or one of its folders."""
    if error.filename is None:
        return False
    path = Path(os.path.abspath(os.fsdecode(error.filename)))
    target = Path(os.path.abspath(out))
    return target.parent in path.parents or path in target.parents


def _why_not_written(out: Path, error: OSError) -> str:
    """The reason of ``error`` in words: which part of ``out`` is a file, or the system's."""
    if error.errno == errno.ENOTDIR:
        for folder in (out, *out.parents):
            if folder.exists() and not folder.is_dir():
                return f"{folder} is a file, not a folder"
    named = "" if error.filename is None else os.fsdecode(error.filename)
    where = f" ({named})" if named and Path(named) != out else ""
    return f"{error.strerror or error}{where}"


def echo_label(text: str, *, err: bool = False) -> None:
    """Print one line that carries labels, its control characters shown as text."""
    click.echo(terminal_text(text), err=err)
