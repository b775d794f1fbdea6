"""What every command shares: ``Error: ...``, the store, output files and progress on stderr.

What every command shares: the error shown as ``Error: ...``, the store, output files.

The group class turns a :class:`TrackerError` (and an operating-system error no
command caught) into ``Error: <message>`` with exit code :data:`EXIT_DATA_ERROR`,
and keeps writing into ``/dev/null`` once the reader of stdout or stderr is gone
(:class:`ClosablePipe`), so that ``tracker gate | head -1`` keeps the gate's exit
code. ``--database-url`` is an option of the group and of every command
(:func:`add_database_url_option`). Progress (bars, or plain lines outside a
terminal) is below.

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

Progress on stderr: bars on a terminal, plain lines everywhere else.

On a terminal, ``ingest``, ``pull``, ``demo`` and ``report`` draw rich progress
bars that vanish when done. When stderr is not a terminal (a CI log, a pipe, a
file) the same progress is written as plain lines: the first step at once, then
at most one line every :data:`PLAIN_EVERY_S` seconds, and the last step, so a
long job shows it is alive without flooding the log. ``analyze`` says when it
starts and how long it took. A failed download attempt that is retried is
always one line (``download: URL: attempt 1 of 4 failed (...); trying again in
1 s``), on a terminal as well, so a dead host is never silent.

``TRACKER_PROGRESS`` chooses: ``auto`` (the default, as above), ``lines`` (plain
lines even on a terminal) or ``none`` (no progress at all, retries included).
"""

from __future__ import annotations

import errno
import os
import secrets
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TypeVar, cast

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TransferSpeedColumn,
)
from rich.text import Text

from tracker.errors import EXIT_DATA_ERROR, ConfigError, OutputError, TrackerError
from tracker.paths import DEFAULT_CACHE_DIR, file_kind
from tracker.store import DatabaseTarget, Store
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

    Any other exception is a bug: it is shown as ``Error: ...`` with exit 2 too (never
    exit 1, which means only "the gate found a regression"), its traceback only with
    ``--debug``. Ctrl-C ends the command with ``Aborted!`` and exit 130.

    Its output survives a reader that stops reading (``tracker gate | head -1``) and a
    standard stream that was closed before the command started (``>&-``): see
    :class:`ClosablePipe` and :func:`closable_pipes`.
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        with closable_pipes():
            return super().main(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TrackerError as error:
            raise TrackerCommandError(str(error)) from None
        except (click.exceptions.ClickException, click.exceptions.Exit, BrokenPipeError):
            raise
        except click.exceptions.Abort:
            _aborted()
        except KeyboardInterrupt:
            _aborted()
        except OSError as error:
            if ctx.meta.get(DEBUG):
                traceback.print_exc()
            where = f" {os.fsdecode(error.filename)}" if error.filename is not None else ""
            raise TrackerCommandError(
                f"cannot use{where}: {error.strerror or error}; check that path and its "
                "permissions, then run the command again"
            ) from None
        except Exception as error:  # a bug: said in words, never exit 1 (a gate's verdict)
            if ctx.meta.get(DEBUG):
                traceback.print_exc()
            raise TrackerCommandError(unexpected_error(error)) from None


DEBUG = "tracker.debug"
"""Key of ``ctx.meta``: ``--debug`` was given (tracebacks of unexpected errors are shown)."""
EXIT_INTERRUPTED = 130
"""Exit code after Ctrl-C (128 + SIGINT, as a shell reports it)."""


def _aborted() -> None:
    click.echo("Aborted!", err=True)
    raise click.exceptions.Exit(EXIT_INTERRUPTED)


def unexpected_error(error: BaseException) -> str:
    """The message of an exception the tracker did not expect: what it says, in words (no
    class name, no traceback), and the next step."""
    said = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if isinstance(error, MemoryError):
        said = "out of memory"
    elif isinstance(error, RecursionError):
        said = "too deeply nested"
    what = f" ({said})" if said else ""
    return (
        f"the command stopped on an unexpected error{what}; this is a bug of the tracker: "
        "run the command again with --debug for the details, and report them"
    )


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
    (into ``/dev/null`` if the reader is gone) and put back at its end.

    A standard stream closed before the command started (``tracker gate >&-``) is opened
    on ``/dev/null`` first, so that the command runs to its own exit code, and so that no
    file the command opens (the database) takes its place as descriptor 1. Text the
    stream's encoding cannot carry (``PYTHONIOENCODING=ascii`` and a label's ``→``) is
    written as escapes (``\\u2192``), never a traceback.
    """
    _open_closed_descriptors()
    stdout = sys.stdout if sys.stdout is not None else _devnull_stream()
    stderr = sys.stderr if sys.stderr is not None else _devnull_stream()
    escaping = [_escape_unencodable(stream) for stream in (stdout, stderr)]
    pipes = ClosablePipe(stdout), ClosablePipe(stderr)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = pipes
    try:
        yield
    finally:
        for pipe in pipes:
            pipe.flush()
        sys.stdout, sys.stderr = saved
        for stream, errors in zip((stdout, stderr), escaping, strict=True):
            if errors is not None:
                with suppress(ValueError, AttributeError):
                    getattr(stream, "reconfigure")(errors=errors)  # noqa: B009


def _open_closed_descriptors() -> None:
    """Descriptors 0, 1 and 2, when closed, opened on ``/dev/null``."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, os.O_RDWR)
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)


def _devnull_stream() -> IO[str]:
    """A text stream into ``/dev/null`` (for a standard stream Python found closed)."""
    return open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process


def _escape_unencodable(stream: IO[str]) -> str | None:
    """Make ``stream`` write what its encoding cannot carry as escapes; return its
    former error handler (``None`` when unchanged)."""
    errors = getattr(stream, "errors", None)
    if errors != "strict" or not hasattr(stream, "reconfigure"):
        return None
    try:
        getattr(stream, "reconfigure")(errors="backslashreplace")  # noqa: B009
    except (ValueError, AttributeError):
        return None
    return "strict"


DATABASE_URL_GIVEN = "tracker.database_url_given"
"""Key of ``ctx.meta``: true when ``--database-url`` was given on the command line."""


def take_database_url(ctx: click.Context, given_on_command_line: bool, url: str | None) -> None:
    """Make ``url`` the database of this run (the root context's object), if given."""
    if url is None:
        return
    root = ctx.find_root()
    root.obj = DatabaseTarget(url)
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


def database_target(ctx: click.Context) -> DatabaseTarget:
    """The database this command was given (the root context's object)."""
    target = ctx.find_root().obj
    assert isinstance(target, DatabaseTarget), "the tracker group sets the database"
    return target


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
    reads_only: bool = False,
) -> Iterator[Store]:
    """The store at the root context's database URL, closed on the way out.

    A missing SQLite file is created only with ``create``; an in-memory
    database is accepted only with ``memory`` (see the module's notes);
    ``defer``: see :meth:`Store.open` (an unchanged source costs no SQLAlchemy; a new
    file is created while an ingest's workers read, and in any case by the end);
    ``reads_only``: the command never writes, so a SQLite file in a read-only folder
    is opened read-only (:meth:`Store.open`).
    """
    target = database_target(ctx)
    store = Store.open(
        target, upgrade=upgrade, create=create, memory=memory, defer=defer, reads_only=reads_only
    )
    try:
        yield store
    except BaseException:
        raise  # a command that failed leaves no new, empty database behind
    else:
        store.create_if_new()  # a new database exists after a command that succeeded
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
def atomic_output(path: Path, option: str = "--out") -> Iterator[IO[str]]:
    """A text stream for ``path``, written under a temporary name beside it and renamed
    when the block ends; on any failure the temporary file is removed and ``path``
    is left as it was (an :class:`OutputError` says so for a write that failed).

    ``path`` must be a regular file, or nothing yet: a device (``/dev/null``), a FIFO,
    a symbolic link (``/dev/stdout``) or a folder is refused before anything is
    written, never replaced by a file."""
    _refuse_unusual_output(path, option)
    temporary = path.with_name(f".{path.name}.tmp-{secrets.token_hex(4)}")
    try:
        stream = temporary.open("x", encoding="utf-8", newline="")
    except OSError as error:
        why = _why_not_written(path, error) if error.errno == errno.ENOTDIR else error.strerror
        raise OutputError(f"cannot write {path}: {why}; choose another {option}") from None
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


def not_regular(path: Path) -> str | None:
    """What ``path`` is when it is there and not a regular file (``a character device``);
    ``None`` for a regular file or nothing. Links are not followed."""
    try:
        mode = os.lstat(path).st_mode
    except (OSError, ValueError):
        return None
    return file_kind(mode)


def _refuse_unusual_output(path: Path, option: str) -> None:
    what = not_regular(path)
    if what is None:
        return
    stdout = ", or - for stdout" if option == "--out" else ""
    raise OutputError(
        f"{option} {path} is {what}, not a regular file: the tracker writes only files "
        f"(it never replaces {what}); give a file name{stdout}"
    )


DATABASE_FILE_SUFFIXES = ("", "-wal", "-shm", "-journal")
"""A SQLite database and the journal files beside it."""


def refuse_database_overlap(
    database: DatabaseTarget,
    out: Path,
    option: str = "--out",
    *,
    folder: bool = False,
    reader: str = "command",
) -> None:
    """A :class:`ConfigError` when ``out`` is the SQLite database of this command (or one of
    its journal files) or, for a ``folder``, holds it: writing would destroy what is read."""
    try:
        file = database.url.sqlite_file
    except TrackerError:  # a URL the tracker cannot use: opening it says why
        return
    if file is None:
        return
    written = Path(os.path.realpath(out))
    for suffix in DATABASE_FILE_SUFFIXES:
        read = Path(f"{file}{suffix}")
        real = Path(os.path.realpath(read))
        same = written == real or _same_file(out, read)
        if folder and (same or real.is_relative_to(written)):
            raise ConfigError(
                f"{option} {out} holds the database ({read}): the tracker never writes over "
                "its database; give a folder that does not hold it"
            )
        if same:
            raise ConfigError(
                f"{option} {out} is the database the {reader} reads ({read}); give another "
                "file name"
            )


def _same_file(one: Path, other: Path) -> bool:
    try:
        return os.path.samefile(one, other)
    except (OSError, ValueError):
        return False


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


PLAIN_EVERY_S = 5.0
"""The least time between two plain progress lines of one task (first and last excepted)."""

err_console = Console(stderr=True)


def echo_progress(line: str) -> None:
    """One plain progress line on stderr, its control characters shown as text."""
    click.echo(terminal_text(line), err=True)


def echo_plain(line: str) -> None:
    """A progress line that only plain progress shows (a terminal has its bars)."""
    if plain_progress():
        echo_progress(line)


PROGRESS_MODES = ("auto", "lines", "none")


def progress_mode() -> str:
    """``lines``, ``bars`` or ``none``: how progress is shown (``TRACKER_PROGRESS``)."""
    chosen = os.environ.get("TRACKER_PROGRESS", "").strip().lower() or "auto"
    if chosen not in PROGRESS_MODES:
        raise ConfigError(
            f"TRACKER_PROGRESS={chosen!r} is not a progress mode; use one of "
            f"{', '.join(PROGRESS_MODES)} (or unset it)"
        )
    if chosen == "auto":
        return "bars" if err_console.is_terminal else "lines"
    return chosen


def _ignore(*_progress: Any) -> None:
    """Progress that ``TRACKER_PROGRESS=none`` does not show."""


def plain_progress() -> bool:
    """Whether progress is written as plain lines (by default: stderr is not a terminal)."""
    return progress_mode() == "lines"


class Throttle:
    """Says when a plain line is due: the first call, the final one, and then every
    :data:`PLAIN_EVERY_S` seconds (``clock`` in seconds, monotonic)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._next_s: float | None = None

    def due(self, *, final: bool = False) -> bool:
        now_s = self._clock()
        if final or self._next_s is None or now_s >= self._next_s:
            self._next_s = now_s + PLAIN_EVERY_S
            return True
        return False


_Update = TypeVar("_Update", bound=Callable[..., None])


@contextmanager
def _shown(
    line: _Update,
    label: str,
    columns: tuple[ProgressColumn, ...],
    on_bar: Callable[[Progress, TaskID], _Update],
) -> Iterator[_Update]:
    """``line`` when progress is plain lines, nothing when it is off, else a transient rich
    bar of ``columns``: ``on_bar(bar, task)`` gives its update."""
    mode = progress_mode()
    if mode == "none":
        yield cast(_Update, _ignore)
        return
    if mode == "lines":
        yield line
        return
    with Progress(*columns, console=err_console, transient=True) as bar:
        yield on_bar(bar, bar.add_task(label, total=None))


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int, str], None]]:
    """``update(done, total, what)``: a bar on a terminal, else ``label: 3/47 what`` lines."""
    throttle = Throttle()

    def line(done: int, total: int, what: str) -> None:
        if throttle.due(final=done >= total):
            echo_progress(f"{label}: {done}/{total} {what}")

    def on_bar(bar: Progress, task: TaskID) -> Callable[[int, int, str], None]:
        return lambda done, total, _what: bar.update(task, completed=done, total=total)

    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn())
    plain: Callable[[int, int, str], None] = line
    with _shown(plain, label, columns, on_bar) as update:
        yield update


@contextmanager
def count_bar(label: str) -> Iterator[Callable[[int, str], None]]:
    """``update(pages, relative)``: a page counter on a terminal, else ``LABEL ...``, then
    ``report: 40 pages written (compare/x.html)`` lines and, at the end, the total and the
    time it took."""
    mode = progress_mode()
    if mode == "none":
        yield _ignore
        return
    if mode == "lines":
        throttle, started_s = Throttle(), time.monotonic()
        written = [0]
        echo_progress(f"{label} ...")

        def line(pages: int, relative: str) -> None:
            written[0] = pages
            if throttle.due():
                echo_progress(f"report: {_pages(pages)} written ({relative})")

        yield line
        elapsed_s = time.monotonic() - started_s
        echo_progress(f"report: {_pages(written[0])} written in {elapsed_s:.1f} s")
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed} pages"),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(pages: int, relative: str) -> None:
            bar.update(task, completed=pages, description=f"report: {relative}")

        yield update


def _pages(count: int) -> str:
    return f"{count} page" if count == 1 else f"{count} pages"


@contextmanager
def download_bar() -> Iterator[Callable[[int, int | None], None]]:
    """``update(received, total)``: a download bar on a terminal, else ``download: 12.0 MB
    of 96.0 MB`` lines."""
    throttle = Throttle()

    def line(received: int, total: int | None) -> None:
        if throttle.due(final=total is not None and received >= total):
            of = "" if total is None else f" of {total / 1e6:.1f} MB"
            echo_progress(f"download: {received / 1e6:.1f} MB{of}")

    def on_bar(bar: Progress, task: TaskID) -> Callable[[int, int | None], None]:
        return lambda received, total: bar.update(task, completed=received, total=total)

    columns = (TextColumn("download"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    plain: Callable[[int, int | None], None] = line
    with _shown(plain, "download", columns, on_bar) as update:
        yield update


def echo_retry(sentence: str) -> None:
    """A download attempt failed and another follows: one line, terminal or not (above
    the bars on a terminal)."""
    line, mode = f"download: {sentence}", progress_mode()
    if mode == "lines":
        echo_progress(line)
    elif mode == "bars":
        err_console.print(Text(terminal_text(line)), soft_wrap=True)


@contextmanager
def analysis_lines(what: str) -> Iterator[None]:
    """``analyze: WHAT ...`` when the block starts and ``analyze: done in 1.2 s`` when it
    ends, when progress is plain; on a terminal, a spinner while it runs."""
    mode = progress_mode()
    if mode == "none":
        yield
        return
    if mode == "bars":
        with err_console.status(Text(f"analyze: {terminal_text(what)}")):
            yield
        return
    started_s = time.monotonic()
    echo_progress(f"analyze: {what} ...")
    yield
    echo_progress(f"analyze: done in {time.monotonic() - started_s:.1f} s")
