"""The limits of the tar header walk and the way back to :mod:`tarfile`'s own header code.

:mod:`tracker.sources.tar_headers` reads headers by hand; whatever it is not sure of is
read again by tarfile's code from the same bytes (:class:`Replay`, :class:`ReplayHeader`),
with the same limits: an extended header over :data:`EXTENDED_HEADER_LIMIT` or below
zero, chains over :data:`CHAIN_LIMIT`, headers over :data:`HEADERS_LIMIT` for one member
are :class:`Refused` before they are read.
"""

from __future__ import annotations

import tarfile
from typing import Protocol, Self, cast

__all__ = [
    "CHAIN_LIMIT",
    "EXTENDED_HEADER_LIMIT",
    "HEADERS_LIMIT",
    "HOSTILE",
    "Refused",
    "Replay",
    "ReplayHeader",
    "ReplaySource",
    "Stream",
    "check_extended",
    "check_headers",
    "header_text",
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
