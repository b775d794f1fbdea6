"""Progress on stderr: bars on a terminal, plain lines everywhere else.

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

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

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
from rich.text import Text

from tracker.errors import ConfigError
from tracker.text_safety import terminal_text

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


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int, str], None]]:
    """``update(done, total, what)``: a bar on a terminal, else ``label: 3/47 what`` lines."""
    mode = progress_mode()
    if mode == "none":
        yield _ignore
        return
    if mode == "lines":
        throttle = Throttle()

        def line(done: int, total: int, what: str) -> None:
            if throttle.due(final=done >= total):
                echo_progress(f"{label}: {done}/{total} {what}")

        yield line
        return
    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int, _what: str) -> None:
            bar.update(task, completed=done, total=total)

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
def download_bar() -> Iterator[Any]:
    """``update(received, total)``: a download bar on a terminal, else ``download: 12.0 MB
    of 96.0 MB`` lines."""
    mode = progress_mode()
    if mode == "none":
        yield _ignore
        return
    if mode == "lines":
        throttle = Throttle()

        def line(received: int, total: int | None) -> None:
            final = total is not None and received >= total
            if throttle.due(final=final):
                of = "" if total is None else f" of {total / 1e6:.1f} MB"
                echo_progress(f"download: {received / 1e6:.1f} MB{of}")

        yield line
        return
    with Progress(
        TextColumn("download"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task("download", total=None)

        def update(received: int, total: int | None) -> None:
            bar.update(task, completed=received, total=total)

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
