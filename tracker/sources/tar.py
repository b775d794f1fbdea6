"""Tar streams read by hand: compressed streams read forward in large steps, member headers
parsed to exactly what :mod:`tarfile` reads, and the way back to tarfile's own code.

A compressed tar stream read forward only, decompressed in large steps.

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

Tar member headers read by hand, to exactly what :mod:`tarfile` reads from them.

:mod:`tarfile` spends about 12 µs of Python on each 512-byte header (every
number field through ``nti``, the checksum summed twice byte by byte, pax
records by regex) and builds a ``TarInfo`` for each: on a round of 14,000
members, half of them behind a pax header for their long names, the tar walk
was the main thread's largest cost. Here :func:`parse_header` reads a header
with one precompiled struct and sums it with :func:`zlib.adler32`,
:func:`pax_fields` reads well-formed pax records, and :class:`TarWalk` strings
headers together as ``TarFile.next`` does (GNU long names and link names, pax
``path``, ``linkpath`` and ``size``, where the next header starts), giving the
same names, sizes, types, offsets and errors.

Whatever the fast path is not sure of is read again by tarfile's own code from
the same bytes (:class:`Replay`): the end of the archive, a bad checksum, a
number field tarfile would refuse or that is base-256, sparse files, global pax
headers (and every header after one that changes names or sizes),
``hdrcharset``, pax records that are not well formed, chains of extended
headers deeper than :data:`_DEEPEST`. Those cost what they cost before.

Hostile headers are :class:`Refused` before they are read: an extended header
over :data:`EXTENDED_HEADER_LIMIT` or below zero (``read(-1024)`` reads all),
chains over :data:`CHAIN_LIMIT`, headers over :data:`HEADERS_LIMIT` for one
member. Errors of no tar kind from tarfile's code come out as :class:`Malformed`.

The limits of the tar header walk and the way back to :mod:`tarfile`'s own header code.

This module reads headers by hand; whatever it is not sure of is
read again by tarfile's code from the same bytes (:class:`Replay`, :class:`ReplayHeader`),
with the same limits: an extended header over :data:`EXTENDED_HEADER_LIMIT` or below
zero, chains over :data:`CHAIN_LIMIT`, headers over :data:`HEADERS_LIMIT` for one member
are :class:`Refused` before they are read.
"""

from __future__ import annotations

import bz2
import codecs
import io
import lzma
import queue
import struct
import sys
import tarfile
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Self, cast

__all__ = [
    "AHEAD",
    "CHAIN_LIMIT",
    "EXTENDED_HEADER_LIMIT",
    "TarHeader",
    "HEADERS_LIMIT",
    "HOSTILE",
    "Inflated",
    "Malformed",
    "PIECE",
    "Refused",
    "Replay",
    "ReplayHeader",
    "ReplaySource",
    "SWITCH_INTERVAL_S",
    "Stream",
    "TarWalk",
    "check_extended",
    "check_headers",
    "compression",
    "header_text",
    "parse_header",
    "pax_fields",
]


EXTENDED_HEADER_LIMIT = 1 << 20
"""Bytes a pax or GNU long-name header may hold (it is read into memory at once)."""
HEADERS_LIMIT = 2 * EXTENDED_HEADER_LIMIT
"""Bytes all the headers of one member may hold together (extended headers, sparse maps)."""
CHAIN_LIMIT = 16
"""Extended headers one member may have in a row (tarfile's code recurses on each)."""
_FALLBACK_EXTENDED = frozenset(
    {tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE}
    | {tarfile.SOLARIS_XHDTYPE, tarfile.XGLTYPE}
)
_ENCODING = tarfile.ENCODING
HOSTILE = "which no tar writes: the archive is damaged or hostile; fetch or make it again"


class Stream(Protocol):
    """A forward-readable binary stream (an open file, or :class:`~.inflate.Inflated`)."""

    def read(self, size: int = -1, /) -> bytes: ...
    def seek(self, position: int, whence: int = 0, /) -> int: ...
    def tell(self) -> int: ...


class Refused(Exception):
    """Headers refused before they are read (the module's docstring says which)."""


def header_text(field: bytes) -> str:
    """A NUL-terminated header field as tarfile decodes it (``nts``)."""
    return field.partition(b"\0")[0].decode(_ENCODING, "surrogateescape")


def check_extended(name: str, size: int) -> None:
    """Refuse an extended header too big to read into memory, or below zero (read it all)."""
    if size > EXTENDED_HEADER_LIMIT:
        raise Refused(
            f"refused: an extended header ({name!r}) of {size} bytes, over the "
            f"{EXTENDED_HEADER_LIMIT}-byte limit (a decompression bomb?)"
        )
    if size < 0:
        raise Refused(f"refused: an extended header ({name!r}) of {size} bytes, {HOSTILE}")


def check_headers(first: bytes, total: int) -> None:
    """Refuse a member whose headers (the first block ``first``) hold over :data:`HEADERS_LIMIT`."""
    if total > HEADERS_LIMIT:
        raise Refused(
            f"refused: the headers of member {header_text(first[:100])!r} hold more than "
            f"{HEADERS_LIMIT} bytes (a decompression bomb?)"
        )


class ReplayHeader(tarfile.TarInfo):
    """A header read by tarfile's code, refusing a hostile extended header before reading it
    and a chain of more than :data:`CHAIN_LIMIT` before recursing on it."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
        info = super().frombuf(buf, encoding, errors)
        if info.type in _FALLBACK_EXTENDED:
            check_extended(info.name, info.size)
        return info

    @classmethod
    def fromtarfile(cls, tarfile: tarfile.TarFile) -> Self:
        source = cast(ReplaySource, tarfile)
        source.headers += 1
        if source.headers > CHAIN_LIMIT + 1:  # the extended ones, then the member's own
            raise Refused(
                f"refused: member {source.fileobj.name!r} has more than {CHAIN_LIMIT} "
                f"extended headers in a row, {HOSTILE}"
            )
        return super().fromtarfile(tarfile)


class Replay:
    """``stream`` as if ``head``, just read from it, were not read yet (to HEADERS_LIMIT)."""

    def __init__(self, head: bytes, stream: Stream) -> None:
        self._head = head
        self._at = 0
        self._stream = stream
        self._taken = len(head)

    @property
    def name(self) -> str:
        return header_text(self._head[:100])

    def read(self, size: int = -1) -> bytes:
        left = len(self._head) - self._at
        if 0 <= size <= left:
            self._at += size
            return self._head[self._at - size : self._at]
        more = size - left if size >= 0 else HEADERS_LIMIT
        self._taken += more
        check_headers(self._head, self._taken)
        self._at = len(self._head)
        return self._head[len(self._head) - left :] + self._stream.read(more)

    def tell(self) -> int:
        return self._stream.tell() - (len(self._head) - self._at)


class ReplaySource:
    """What tarfile's header code reads through (the ``tarfile`` of ``TarInfo.fromtarfile``)."""

    encoding = _ENCODING
    errors = "surrogateescape"

    def __init__(self, fileobj: Replay, pax_headers: dict[str, str]) -> None:
        self.fileobj = fileobj
        self.pax_headers = pax_headers
        self.offset = 0
        """Where the next header starts (set by tarfile's code)."""
        self.headers = 0
        """Headers read so far for this member (extended ones, then the member's own)."""


_MALFORMED = (ValueError, OverflowError, IndexError)
"""What tarfile's code raises on some hostile headers (a pax length of 5,000 digits, a size
past any file offset, a sparse map cut short)."""
_BLOCK = tarfile.BLOCKSIZE
_FIELDS = struct.Struct("100s24s12s12s8sc100s72x16s155s12x")
"""name, mode + uid + gid, size, mtime, chksum, type, linkname, (magic, version, uname,
gname: never refused by tarfile), devmajor + devminor, prefix."""
_PLAIN_IDS: set[bytes] = set()
"""Mode, owner and device fields already found to be octal text (an archive has few)."""
_PLAIN_IDS_LIMIT = 1024
_SIGNED = struct.Struct("148b8x356b")
_LONG_NAMES = frozenset({tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK})
_PAX = frozenset({tarfile.XHDTYPE, tarfile.SOLARIS_XHDTYPE})
_EXTENDED = _LONG_NAMES | _PAX | {tarfile.XGLTYPE}
_REGULAR = frozenset(tarfile.REGULAR_TYPES)
_SUPPORTED = frozenset(tarfile.SUPPORTED_TYPES)
_GNU = frozenset(tarfile.GNU_TYPES)
_NATIVE = codecs.lookup(_ENCODING).name == "utf-8"
"""Names decode as tarfile decodes them only if its encoding is UTF-8 (else tarfile reads all)."""
_DEEPEST = 4
"""Extended headers in a row read here (tarfile recurses on each: a deeper chain goes to it)."""
_GLOBAL_KEYS = ("path", "linkpath", "size", "hdrcharset")
_LENGTH_DIGITS = 20
"""The most digits of a pax record's length that every tarfile version reads."""
_SHORTEST_RECORD = len(b"5 k=\n")


class Malformed(Exception):
    """A header tarfile's code fails on with ``error``, of no tar kind; ``header`` is the
    name in its first block (the member before, where seeking past that one's data failed)."""

    def __init__(self, header: str, error: Exception) -> None:
        super().__init__(f"{header!r}: {error}")
        self.header = header
        self.error = error


class _Unusual(Exception):
    """A header the fast path leaves to :mod:`tarfile` (raised before anything is decided)."""


@dataclass(slots=True)
class TarHeader:
    """A member as ``TarFile.next`` lists it, its extended headers applied."""

    name: str
    size: int
    kind: bytes
    """The type flag (``tarfile.REGTYPE``, ``tarfile.DIRTYPE``, ...)."""
    linkname: str
    data_at: int
    """Where the member's data starts in the (decompressed) stream."""
    next_at: int
    """Where the next header starts."""
    sparse: bool = False


def parse_header(block: bytes, offset: int) -> TarHeader | None:
    """The header ``block`` at ``offset``, as ``TarInfo.frombuf`` and ``_proc_builtin`` read it.

    ``None`` where tarfile's own code must decide: a block that is short, all
    zeros (the end) or sparse, a checksum that does not match, a number field
    that is not plain octal text (tarfile refuses some of those and reads
    base-256 ones).
    """
    if len(block) != _BLOCK or not _NATIVE:
        return None
    name, ids, size, mtime, chksum, kind, link, devices, prefix = _FIELDS.unpack(block)
    try:
        stated = int(chksum.rstrip(b"\0 ") or b"0", 8)
        length = int(size.rstrip(b"\0 ") or b"0", 8)
        int(mtime.rstrip(b"\0 ") or b"0", 8)
        _check_ids(ids + devices)
    except ValueError:
        return None
    if kind == tarfile.GNUTYPE_SPARSE or not _checksum_matches(block, stated):
        return None
    text = header_text(name)
    if kind == tarfile.AREGTYPE and text.endswith("/"):
        kind = tarfile.DIRTYPE
    if prefix[0] and kind not in _GNU:
        text = f"{header_text(prefix)}/{text}"
    if kind == tarfile.DIRTYPE:
        text = text.rstrip("/")
    data_at = offset + _BLOCK
    target = header_text(link) if link[0] else ""
    return TarHeader(text, length, kind, target, data_at, data_at + _data_blocks(kind, length))


def _check_ids(fields: bytes) -> None:
    """Raise :class:`ValueError` unless the five 8-byte fields (mode, uid, gid, devmajor,
    devminor: the index needs none of them) are numbers tarfile reads (it refuses the rest)."""
    if fields in _PLAIN_IDS:
        return
    for at in range(0, 40, 8):
        int(fields[at : at + 8].rstrip(b"\0 ") or b"0", 8)
    if len(_PLAIN_IDS) < _PLAIN_IDS_LIMIT:
        _PLAIN_IDS.add(fields)


def _checksum_matches(block: bytes, stated: int) -> bool:
    """Whether ``stated`` is the block's unsigned or signed checksum (tarfile takes either).

    Each half sums exactly as adler32's first half (at most 256 × 255 < 65521).
    """
    unsigned = (
        (zlib.adler32(block[:256], 0) & 0xFFFF)
        + (zlib.adler32(block[256:], 0) & 0xFFFF)
        - sum(block[148:156])
        + 256
    )
    if stated == unsigned:
        return True
    return not block.isascii() and stated == 256 + sum(_SIGNED.unpack_from(block))


def _padded(size: int) -> int:
    """``size`` rounded up to whole blocks (as ``TarInfo._block``, negative sizes too)."""
    return -(-size // _BLOCK) * _BLOCK


def _data_blocks(kind: bytes, size: int) -> int:
    """The bytes of data after a header: only regular files and unknown types have any."""
    return _padded(size) if kind in _REGULAR or kind not in _SUPPORTED else 0


def pax_fields(data: bytes) -> dict[bytes, bytes] | None:
    """The records of a pax header (keyword → value, the last one winning), as tarfile reads them.

    ``None`` where tarfile's own code must decide: ``hdrcharset``, GNU sparse
    maps, or a record that is not well formed (every tarfile version reads
    well-formed records alike; they differ on the rest). The records end at
    the end of ``data`` or at a NUL byte (the padding of the last block).
    """
    if b"hdrcharset" in data or b"GNU.sparse." in data:
        return None
    fields: dict[bytes, bytes] = {}
    at = 0
    while at < len(data) and data[at]:
        space = data.find(b" ", at, at + _LENGTH_DIGITS + 1)
        digits = data[at:space]
        if space <= at or not digits.isdigit():
            return None
        length = int(digits)
        end = at + length - 1  # the record's newline
        if length < _SHORTEST_RECORD or end >= len(data) or data[end] != 0x0A:
            return None
        equals = data.find(b"=", space + 1, end)
        if equals <= space + 1:
            return None
        fields[data[space + 1 : equals]] = data[equals + 1 : end]
        at = end + 1
    return fields


def _apply_pax(entry: TarHeader, fields: dict[bytes, bytes]) -> None:
    """Patch ``entry`` with a pax header's path, linkpath and size (as ``_apply_pax_info``)."""
    path = fields.get(b"path")
    if path is not None:
        entry.name = path.decode("utf-8", "surrogateescape").rstrip("/")
    link = fields.get(b"linkpath")
    if link is not None:
        entry.linkname = link.decode("utf-8", "surrogateescape")
    size = fields.get(b"size")
    if size is not None:
        try:
            entry.size = int(size.decode("utf-8", "surrogateescape"))
        except ValueError:
            entry.size = 0
        entry.next_at = entry.data_at + _data_blocks(entry.kind, entry.size)


class TarWalk:
    """The members of a tar stream, read forward once, as ``TarFile.next`` lists them.

    Errors are tarfile's: :class:`tarfile.ReadError` for data missing, for a
    damaged first header or one after an extended header; :class:`Refused` and
    :class:`Malformed` for hostile headers. A member list ended by any other
    header error than a zero block or the end of the data leaves it in :attr:`ended_on`.
    """

    def __init__(self, stream: Stream) -> None:
        self._stream = stream
        self._next_at = 0
        self._global: dict[str, str] = {}
        """The global pax records so far (tarfile's ``TarFile.pax_headers``)."""
        self._plain = True
        """Whether no global record changes names or sizes (else tarfile reads every header)."""
        self._last = ""
        """The name of the member last listed."""
        self.ended_on: tarfile.HeaderError | None = None
        self.by_tarfile = 0
        """Members (or ends) whose headers tarfile's own code read."""

    def next(self) -> TarHeader | None:
        """The next member, or ``None`` after the last."""
        start, stream = self._next_at, self._stream
        read: list[bytes] = []
        try:
            if start != stream.tell():  # skip the data, and make sure it is all there
                stream.seek(start - 1)
                if not stream.read(1):
                    raise tarfile.ReadError("unexpected end of data")
            try:
                entry = self._chain(start, read, 0)
            except _Unusual:
                entry = self._by_tarfile(b"".join(read))
        except tarfile.HeaderError as error:
            self._end(error, start)
            return None
        except zlib.error as error:
            raise tarfile.ReadError(f"zlib error: {error}") from None
        except _MALFORMED as error:
            raise Malformed(header_text(read[0][:100]) if read else self._last, error) from None
        self._next_at = entry.next_at
        self._last = entry.name
        return entry

    def read(self, entry: TarHeader) -> bytes:
        """The data of ``entry``, the member just listed (as ``extractfile(...).read()``)."""
        if entry.size <= 0:
            return b""
        if self._stream.tell() != entry.data_at:
            self._stream.seek(entry.data_at)
        data = self._stream.read(entry.size)
        if len(data) != entry.size:
            raise tarfile.ReadError("unexpected end of data")
        return data

    def _chain(self, offset: int, read: list[bytes], depth: int) -> TarHeader:
        """The member whose headers start at ``offset``; every byte read is added to ``read``."""
        block = self._stream.read(_BLOCK)
        read.append(block)
        entry = parse_header(block, offset) if self._plain and depth <= _DEEPEST else None
        if entry is None:
            raise _Unusual
        kind = entry.kind
        if kind not in _EXTENDED:
            return entry
        check_extended(entry.name, entry.size)
        if depth:  # one extended header alone is within the limit (checked just above)
            check_headers(read[0], sum(map(len, read)) + _padded(entry.size))
        if kind == tarfile.XGLTYPE:
            raise _Unusual
        data = self._stream.read(_padded(entry.size))
        read.append(data)
        fields: dict[bytes, bytes] | None = None
        if kind in _PAX:
            fields = pax_fields(data)
            if fields is None:
                raise _Unusual
        following = self._chain(entry.data_at + len(data), read, depth + 1)
        if fields is not None:
            _apply_pax(following, fields)
            return following
        if kind == tarfile.GNUTYPE_LONGNAME:
            following.name = header_text(data)
        else:
            following.linkname = header_text(data)
        if following.kind == tarfile.DIRTYPE:
            following.name = following.name.removesuffix("/")
        return following

    def _by_tarfile(self, head: bytes) -> TarHeader:
        """The member whose headers begin with ``head`` (already read), read by tarfile's code."""
        self.by_tarfile += 1
        source = ReplaySource(Replay(head, self._stream), self._global)
        info = ReplayHeader.fromtarfile(cast(tarfile.TarFile, source))
        self._plain = not any(key in self._global for key in _GLOBAL_KEYS) and not any(
            key.startswith("GNU.sparse.") for key in self._global
        )
        sparse = info.sparse is not None
        return TarHeader(
            info.name, info.size, info.type, info.linkname, info.offset_data, source.offset, sparse
        )

    def _end(self, error: tarfile.HeaderError, start: int) -> None:
        """The end of the member list on ``error``, or the error ``TarFile.next`` makes of it."""
        kind = type(error).__name__
        if kind == "SubsequentHeaderError" or (start == 0 and kind != "EOFHeaderError"):
            said = "empty file" if kind == "EmptyHeaderError" else str(error)
            raise tarfile.ReadError(said) from None
        self.ended_on = error


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
