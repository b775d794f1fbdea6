"""Tar member headers read by hand, to exactly what :mod:`tarfile` reads from them.

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
"""

from __future__ import annotations

import codecs
import struct
import tarfile
import zlib
from dataclasses import dataclass
from typing import cast

from tracker.sources.tar_fallback import (
    CHAIN_LIMIT,
    EXTENDED_HEADER_LIMIT,
    HEADERS_LIMIT,
    Refused,
    Replay,
    ReplayHeader,
    ReplaySource,
    Stream,
    check_extended,
    check_headers,
    header_text,
)

__all__ = [
    "CHAIN_LIMIT",
    "EXTENDED_HEADER_LIMIT",
    "HEADERS_LIMIT",
    "Entry",
    "Malformed",
    "Refused",
    "Stream",
    "TarWalk",
    "pax_fields",
    "parse_header",
]

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
_ENCODING = tarfile.ENCODING
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
class Entry:
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


def parse_header(block: bytes, offset: int) -> Entry | None:
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
    return Entry(text, length, kind, target, data_at, data_at + _data_blocks(kind, length))


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


def _apply_pax(entry: Entry, fields: dict[bytes, bytes]) -> None:
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

    def next(self) -> Entry | None:
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

    def read(self, entry: Entry) -> bytes:
        """The data of ``entry``, the member just listed (as ``extractfile(...).read()``)."""
        if entry.size <= 0:
            return b""
        if self._stream.tell() != entry.data_at:
            self._stream.seek(entry.data_at)
        data = self._stream.read(entry.size)
        if len(data) != entry.size:
            raise tarfile.ReadError("unexpected end of data")
        return data

    def _chain(self, offset: int, read: list[bytes], depth: int) -> Entry:
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

    def _by_tarfile(self, head: bytes) -> Entry:
        """The member whose headers begin with ``head`` (already read), read by tarfile's code."""
        self.by_tarfile += 1
        source = ReplaySource(Replay(head, self._stream), self._global)
        info = ReplayHeader.fromtarfile(cast(tarfile.TarFile, source))
        self._plain = not any(key in self._global for key in _GLOBAL_KEYS) and not any(
            key.startswith("GNU.sparse.") for key in self._global
        )
        sparse = info.sparse is not None
        return Entry(
            info.name, info.size, info.type, info.linkname, info.offset_data, source.offset, sparse
        )

    def _end(self, error: tarfile.HeaderError, start: int) -> None:
        """The end of the member list on ``error``, or the error ``TarFile.next`` makes of it."""
        kind = type(error).__name__
        if kind == "SubsequentHeaderError" or (start == 0 and kind != "EOFHeaderError"):
            said = "empty file" if kind == "EmptyHeaderError" else str(error)
            raise tarfile.ReadError(said) from None
        self.ended_on = error
