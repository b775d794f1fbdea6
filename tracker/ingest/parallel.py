"""Folders on all cores: a large folder source read by a pool of worker processes, with
fewer garbage collections while it is read and stored.

Folders on all cores: a large folder source read by a pool of worker processes.

A reader that can read a source in parts (an MLPerf Inference round:
:func:`tracker.formats.mlperf_inference.read_parallel.read_round_parallel`) is given an
ordered map over ``jobs`` worker processes (:func:`worker_pool`);
each worker reads and parses its part's files and returns plain records, and
the results are stored by the one writer, in one transaction, as the serial
path stores them (:func:`tracker.ingest.run.ingest_source`). The pool starts
only when the source is large enough to pay for it, and only with more than
one job (``--jobs``; default: the cores this process may run on).

The workers are forked when this process runs no other thread (on Linux: the
cheapest start, about 30 ms); otherwise (a progress bar's thread, another
system) they come from a fork server, which starts them from a clean process
(about 0.3 s once). Workers ignore Ctrl-C: the source's process gets it, kills
them and stores nothing of the source. An error in a worker is raised by the
source's process (a file the reader refuses is an error of the reading, as in one process).

Fewer garbage collections while a source is read and stored.

Reading a large source allocates millions of small objects (parsed values,
records, rows), nearly all of them freed by reference counting or kept
until the source is stored. Python's cyclic collector, at its default
thresholds (a young collection every 700 allocations, a full one each time
the heap has grown by a quarter), walks them again and again: measured on a
20,008-folder round read in one process, a quarter of the ingest's CPU time
(15.1 s with the defaults, 11.2 s with no collection at all). Inside
:func:`fewer_collections` a young collection runs every 100,000 allocations
instead, so the cycles a reading leaves (few and small) are still collected.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkContext, ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from tracker.formats.reader import ProgressCallback, Reader, Reading
from tracker.records.results import SourceSpec
from tracker.sources.tree import PartedFolderTree, SourceTree

if TYPE_CHECKING:
    from tracker.formats.mlperf_inference.read_parallel import UnitMap

__all__ = [
    "INGEST_THRESHOLDS",
    "MIN_PARALLEL_FOLDERS",
    "default_jobs",
    "fewer_collections",
    "read_source",
    "use_ingest_thresholds",
    "worker_pool",
]


INGEST_THRESHOLDS = (100_000, 50, 100)
"""The collector's thresholds while a source is read and stored (each at least the default)."""


def use_ingest_thresholds() -> tuple[int, int, int]:
    """Raise the collector's thresholds to :data:`INGEST_THRESHOLDS` (never lower one); the
    thresholds before, to restore. A worker process of the ingest calls it once."""
    before: tuple[int, int, int] = gc.get_threshold()
    raised = (max(now, wanted) for now, wanted in zip(before, INGEST_THRESHOLDS, strict=True))
    gc.set_threshold(*raised)
    return before


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Within the block, the collector runs at :data:`INGEST_THRESHOLDS`; after it, at the
    thresholds it had before (whatever the block raised)."""
    before = use_ingest_thresholds()
    try:
        yield
    finally:
        gc.set_threshold(*before)


_Task = TypeVar("_Task")
_Outcome = TypeVar("_Outcome")
_CHUNKS_PER_WORKER = 16
"""Tasks are handed out in chunks, about this many per worker (a slow chunk is not the last)."""
_PRELOAD = ["tracker.formats.mlperf_inference.read_parallel"]
"""What a fork server imports once, before it starts any worker."""


class _PartedRead(Protocol):
    def __call__(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
        pool: UnitMap,
        min_folders: int,
    ) -> Reading: ...


MIN_PARALLEL_FOLDERS: int | None = None
"""Result folders (about) below which a source is read in one process; ``None``: the parted
reader's own (:data:`~tracker.formats.mlperf_inference.read_parallel.MIN_PARALLEL_FOLDERS`).
Tests lower it."""


def _parted_read(kind: str) -> tuple[_PartedRead, int] | None:
    """How a source of ``kind`` is read in parts and from how many result folders; ``None``
    for a kind that is read in one process. The parted reader is imported here, when used
    (an ingest of another kind, or with one job, never loads it)."""
    if kind != "mlperf-inference":
        return None
    from tracker.formats.mlperf_inference.read_parallel import MIN_PARALLEL_FOLDERS as least
    from tracker.formats.mlperf_inference.read_parallel import read_round_parallel

    return read_round_parallel, least


def default_jobs() -> int:
    """The number of cores this process may run on (at least 1)."""
    counted = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if counted is not None:
        return max(1, int(counted() or 1))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def read_source(
    reader: Reader,
    kind: str,
    tree: SourceTree,
    spec: SourceSpec,
    *,
    strict: bool,
    progress: ProgressCallback | None,
    jobs: int,
    while_workers_read: Callable[[], None] | None = None,
) -> Reading:
    """What ``reader`` finds in ``tree``: read in parts by ``jobs`` processes where the kind
    allows it and the source is large enough (the parted reader's threshold of result folders,
    or :data:`MIN_PARALLEL_FOLDERS` when set), else by ``reader`` in this process.

    ``while_workers_read`` is called once in this process as soon as the workers have
    their first tasks (the ingest opens a new database then: its cost is hidden); never
    when the source is read in this process."""
    parted = None if jobs <= 1 or not isinstance(tree, PartedFolderTree) else _parted_read(kind)
    if parted is None:
        return reader.read(tree, spec, strict=strict, progress=progress)
    read_in_parts, least = parted
    with worker_pool(jobs, while_workers_read) as pool:
        return read_in_parts(
            tree,
            spec,
            strict=strict,
            progress=progress,
            pool=pool,
            min_folders=least if MIN_PARALLEL_FOLDERS is None else MIN_PARALLEL_FOLDERS,
        )


@contextmanager
def worker_pool(
    jobs: int, while_workers_read: Callable[[], None] | None = None
) -> Iterator[Callable[[Callable[[_Task], _Outcome], Sequence[_Task]], Iterator[_Outcome]]]:
    """An ordered map over up to ``jobs`` worker processes, started on its first use.

    The tasks go out in chunks, each to the first idle worker; each worker has a
    pipe of its own (no lock is shared, so ending a worker can block nothing).
    ``while_workers_read`` runs in this process once the first chunks are out
    (an error it raises ends the workers, as any other).
    Leaving the block normally stops the workers; leaving it by an exception
    (Ctrl-C, an error in a worker) kills them at once.
    """
    workers: list[tuple[BaseProcess, Connection]] = []

    def ordered_map(
        function: Callable[[_Task], _Outcome], tasks: Sequence[_Task]
    ) -> Iterator[_Outcome]:
        size = max(1, len(tasks) // (jobs * _CHUNKS_PER_WORKER))
        chunks = [tasks[start : start + size] for start in range(0, len(tasks), size)]
        context = _context()
        blocked = _block_interrupts()  # a worker ignores Ctrl-C from its first instruction
        try:
            for _ in range(min(jobs, len(chunks))):
                mine, theirs = context.Pipe()
                process = context.Process(target=_serve, args=(function, theirs), daemon=True)
                process.start()
                theirs.close()
                workers.append((process, mine))
        finally:
            _unblock_interrupts(blocked)
        connections = [connection for _process, connection in workers[-len(chunks) :]]
        return _ordered(chunks, connections, while_workers_read)

    try:
        yield ordered_map
    except BaseException:
        for process, _connection in workers:
            process.kill()
        raise
    else:
        for _process, connection in workers:
            connection.send(None)
    finally:
        for process, connection in workers:
            process.join()
            connection.close()


def _ordered(
    chunks: Sequence[Sequence[_Task]],
    connections: list[Connection],
    while_workers_read: Callable[[], None] | None,
) -> Iterator[Any]:
    """The outcomes of the chunks, in order, as the workers on ``connections`` give them;
    ``while_workers_read`` is called once the first chunks are out."""
    pending = iter(enumerate(chunks))
    busy: dict[Connection, int] = {}
    done: dict[int, list[Any]] = {}
    for connection in connections:
        _hand_out(connection, pending, busy)
    if while_workers_read is not None:
        while_workers_read()
    following = 0
    while busy:
        for ready in wait(list(busy)):
            assert isinstance(ready, Connection)
            done[busy.pop(ready)] = _received(ready)
            _hand_out(ready, pending, busy)
        while following in done:
            yield from done.pop(following)
            following += 1


def _hand_out(
    connection: Connection,
    pending: Iterator[tuple[int, Sequence[Any]]],
    busy: dict[Connection, int],
) -> None:
    index, chunk = next(pending, (-1, ()))
    if index >= 0:
        connection.send(chunk)
        busy[connection] = index


def _received(connection: Connection) -> list[Any]:
    try:
        succeeded, value = connection.recv()
    except EOFError:
        raise RuntimeError("a worker process of the ingest ended before its work") from None
    if not succeeded:
        raise value
    assert isinstance(value, list)
    return value


def _serve(function: Callable[[Any], Any], connection: Connection) -> None:
    """A worker: apply ``function`` to each chunk it is sent, until it is sent ``None``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the source's process
    use_ingest_thresholds()  # a forked worker has them already; a fork server's does not
    _unblock_interrupts(not hasattr(signal, "pthread_sigmask"))
    while (chunk := connection.recv()) is not None:
        try:
            outcome: tuple[bool, Any] = (True, [function(task) for task in chunk])
        except Exception as error:  # raised again by the source's process
            outcome = (False, error)
        connection.send(outcome)


def _block_interrupts() -> bool:
    """Hold Ctrl-C back while workers start: they inherit the mask, and this process gets
    it after (not lost in a fork hook); whether it was held back already."""
    if not hasattr(signal, "pthread_sigmask"):
        return True
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _unblock_interrupts(held_before: bool) -> None:
    if not held_before:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _context() -> ForkContext | ForkServerContext | SpawnContext:
    """Fork where it is safe (Linux, no other thread), else a fork server, else spawn."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and threading.active_count() == 1 and "fork" in methods:
        return multiprocessing.get_context("fork")
    if "forkserver" not in methods:
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    return context
