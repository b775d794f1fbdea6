"""A compressed tar stream read forward only, decompressed in large steps.

:mod:`gzip` (and :mod:`bz2`, :mod:`lzma`) files seek forward by decompressing
8 KiB at a time into Python objects; a round of 25,000 members, most of them
skipped, spends more time there than in :mod:`zlib` itself. :class:`Inflated`
decompresses up to :data:`PIECE` bytes per call and serves :mod:`tarfile`'s
reads and forward seeks from that buffer, so skipping a member costs its
decompression and nothing more. It cannot seek backwards (a member read out of
order needs a second pass, see :mod:`tracker.sources.archive_index`).

Decompression runs ahead in a thread of its own (:class:`_Ahead`, at most
:data:`AHEAD` pieces): :mod:`zlib`, :mod:`bz2` and :mod:`lzma` release the GIL
while they decompress, so the tar headers are walked and the kept members
copied on one core while the next pieces are inflated on the other. They take
the GIL back after every output block (seven for a 16 MiB piece), and a thread
that wants it back waits for the interpreter's switch interval (5 ms by
default) while the walking thread runs Python code; that wait cost a quarter
of the wall time on two cores. While a decompression thread runs, the switch
interval is therefore :data:`SWITCH_INTERVAL_S` (restored when the last one
stops): on a round-shaped archive ingest ÷ a minimal ``tarfile`` read went
from 1.24× to 0.98× wall, at the same CPU time (benchmarks/bench_archive_ingest.py).

Like the stdlib readers it accepts several concatenated streams (and zero
padding after a gzip stream), and raises :class:`EOFError` for a stream cut
short, :class:`zlib.error` / :class:`OSError` / :class:`lzma.LZMAError` for
damaged data (raised in the reader's thread, where the piece was wanted).
"""

from __future__ import annotations

import bz2
import io
import lzma
import queue
import sys
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, cast

__all__ = ["AHEAD", "PIECE", "SWITCH_INTERVAL_S", "Inflated", "compression"]

PIECE = 16 << 20
"""The most bytes one decompression call returns (bounds memory whatever the ratio)."""
AHEAD = 3
"""Pieces decompressed ahead of the reader (memory: ``AHEAD × PIECE`` at the most)."""
SWITCH_INTERVAL_S = 0.0005
"""The interpreter's switch interval while a decompression thread runs (module docstring)."""
_CHUNK = 4 << 20
_MAGIC = {b"\x1f\x8b": "gz", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz"}


class _Decompressor(Protocol):
    eof: bool
    unused_data: bytes

    def decompress(self, data: bytes, max_length: int = ...) -> bytes: ...


def compression(path: Path) -> str | None:
    """``"gz"``, ``"bz2"`` or ``"xz"`` by the file's first bytes; ``None`` for anything else."""
    with path.open("rb") as stream:
        head = stream.read(6)
    return next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), None)


def _new(kind: str) -> _Decompressor:
    if kind == "gz":
        return cast(_Decompressor, zlib.decompressobj(16 + zlib.MAX_WBITS))
    if kind == "bz2":
        return cast(_Decompressor, bz2.BZ2Decompressor())
    return cast(_Decompressor, lzma.LZMADecompressor())


class _QuickSwitching:
    """Lowers :func:`sys.setswitchinterval` to :data:`SWITCH_INTERVAL_S` while one or more
    decompression threads run, and restores the interval found when the last one stops."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._saved = 0.0

    def __enter__(self) -> None:
        with self._lock:
            if self._running == 0:
                self._saved = sys.getswitchinterval()
                sys.setswitchinterval(min(self._saved, SWITCH_INTERVAL_S))
            self._running += 1

    def __exit__(self, *_exc: object) -> None:
        with self._lock:
            self._running -= 1
            if self._running == 0:
                sys.setswitchinterval(self._saved)


_QUICK_SWITCHING = _QuickSwitching()


class _Ahead:
    """``produce()`` called in a thread of its own until it returns ``b""`` or raises;
    :meth:`next` hands its results over in order (an exception is raised there)."""

    def __init__(self, produce: Callable[[], bytes]) -> None:
        self._produce = produce
        self._queue: queue.Queue[bytes | BaseException] = queue.Queue(maxsize=AHEAD)
        self._stop = threading.Event()
        self._last: bytes | BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="inflate-ahead", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with _QUICK_SWITCHING:
            try:
                while not self._stop.is_set():
                    piece = self._produce()
                    self._put(piece)
                    if not piece:
                        return
            except BaseException as error:  # handed to the reader, raised there
                self._put(error)

    def _put(self, item: bytes | BaseException) -> None:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def next(self) -> bytes:
        """The next piece (``b""`` at the end, again and again); the producer's error, raised."""
        item = self._last if self._last is not None else self._queue.get()
        if isinstance(item, BaseException):
            self._last = item
            raise item
        if not item:
            self._last = item
        return item

    def close(self) -> None:
        """Stop the thread (it may be waiting to hand a piece over) and wait for it."""
        self._stop.set()
        while self._thread.is_alive():
            try:
                self._queue.get_nowait()
            except queue.Empty:
                self._thread.join(0.05)


class Inflated:
    """The decompressed bytes of ``path`` as a forward-only file for :mod:`tarfile`."""

    mode = "rb"

    def __init__(self, path: Path, kind: str) -> None:
        self.name = str(path)
        self._kind = kind
        self._raw = path.open("rb")
        self._engine: _Decompressor | None = None
        self._pending = b""
        """Compressed bytes not yet handed to the decompressor."""
        self._buffer = b""
        self._offset = 0
        """Where in ``_buffer`` the stream position is."""
        self._position = 0
        self._ended = False
        self._ahead: _Ahead | None = None
        """Started at the first read: opening and closing unread costs no thread."""

    def _next_piece(self) -> bytes:
        if self._ahead is None:
            self._ahead = _Ahead(self._piece)
        return self._ahead.next()

    def _piece(self) -> bytes:
        """The next decompressed bytes; ``b""`` at a clean end of the last stream."""
        while True:
            engine = self._engine
            if engine is None or engine.eof:
                if not self._start(engine.unused_data if engine is not None else b""):
                    return b""
                continue
            data, self._pending = self._pending, b""
            if not data and getattr(engine, "needs_input", True):
                data = self._raw.read(_CHUNK)
                if not data:  # the file ended: only what the engine holds is left
                    out = engine.decompress(b"", PIECE)
                    if out or engine.eof:
                        return out or self._piece()
                    raise EOFError(
                        "Compressed file ended before the end-of-stream marker was reached"
                    )
            out = engine.decompress(data, PIECE)
            self._pending = getattr(engine, "unconsumed_tail", b"")
            if out:
                return out

    def _start(self, rest: bytes) -> bool:
        """Begin the next stream with ``rest`` and what follows; ``False`` at the end of the file.

        After the first stream, zero padding is skipped and anything that is not
        another stream ends the data (as :mod:`gzip`, :mod:`bz2` and :mod:`lzma` do).
        """
        first = self._engine is None
        magic = next(m for m, kind in _MAGIC.items() if kind == self._kind)
        while True:
            if not first:
                rest = rest.lstrip(b"\0")
            if len(rest) >= len(magic) or (first and rest):
                break
            more = self._raw.read(_CHUNK)
            if not more:
                if rest:
                    break
                return False
            rest += more
        if not first and not rest.startswith(magic):
            return False
        self._engine = _new(self._kind)
        self._pending = rest
        return True

    def read(self, size: int = -1) -> bytes:
        wanted = size if size >= 0 else 1 << 62
        while len(self._buffer) - self._offset < wanted and not self._ended:
            piece = self._next_piece()
            if not piece:
                self._ended = True
                break
            self._buffer = self._buffer[self._offset :] + piece
            self._offset = 0
        out = self._buffer[self._offset : self._offset + wanted]
        self._offset += len(out)
        self._position += len(out)
        return out

    def seek(self, position: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_CUR:
            position += self._position
        elif whence != io.SEEK_SET:
            raise io.UnsupportedOperation("only forward seeks from the start or the position")
        if position < self._position:
            raise io.UnsupportedOperation("a compressed stream is read forward only")
        skip = position - self._position
        while skip > len(self._buffer) - self._offset and not self._ended:
            skip -= len(self._buffer) - self._offset
            self._position += len(self._buffer) - self._offset
            self._buffer, self._offset = b"", 0
            piece = self._next_piece()
            if not piece:
                self._ended = True
                break
            self._buffer = piece
        step = min(skip, len(self._buffer) - self._offset)
        self._offset += step
        self._position += step
        return self._position

    def tell(self) -> int:
        return self._position

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.close()
        self._raw.close()
