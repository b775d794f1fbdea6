"""The member index of a tar or zip archive, with every hostile entry refused.

:mod:`tracker.sources.archive` builds its source tree on these indexes. An index lists
an archive's members without extracting anything and refuses (raises
:class:`~tracker.errors.ParseError` naming the archive and the member) what an
honest archive of result files never holds: hard links, devices, FIFOs,
sparse files, encrypted or unreadably compressed zip members, a tar member
whose data runs past its header's size or stops short of it, a zip member
whose local header disagrees with the central directory, zip members sharing
their data (the overlapping-entries bomb), hostile tar headers (oversized extended
headers, sizes below zero or past any file offset, headers tarfile's code fails on).
Symbolic links are listed as :class:`Symlink` (the tree decides on them).
"""

from __future__ import annotations

import lzma
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NoReturn

from tracker.errors import ParseError
from tracker.sources.tar import (
    HOSTILE,
    Inflated,
    Malformed,
    Refused,
    TarHeader,
    TarWalk,
    compression,
)

__all__ = ["Index", "Member", "Symlink", "TarIndex", "ZipIndex"]

_TAR_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError)
KEPT_BYTES = 512 << 20
"""At most this many bytes of wanted members are kept from the index pass (the rest: read later)."""
_CLEAN_ENDS = frozenset({"EOFHeaderError", "EmptyHeaderError"})
"""How :mod:`tarfile` says a member list ended well: a zero block, or the end of the file."""
_LINK_TARGET_LIMIT = 4096
_SIZE_LIMIT = 1 << 62
"""Bytes no tar member holds: a larger size (of up to 2**88 in base-256) overflows file offsets."""
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"
_DATA_DESCRIPTOR = 0x08
_ENCRYPTED = 0x01
_UTF8_NAME = 0x800
_ZIP64 = 0xFFFFFFFF
_ZIP_METHODS = frozenset(
    {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
)
_UNIX_KINDS = {
    0o010000: "a FIFO (named pipe)",
    0o020000: "a character device",
    0o060000: "a block device",
    0o140000: "a socket",
}
_S_IFMT, _S_IFREG, _S_IFDIR, _S_IFLNK = 0o170000, 0o100000, 0o040000, 0o120000


@dataclass(frozen=True, slots=True)
class Member:
    """A regular file of the archive."""

    name: str
    """The member's name in the archive (before the top folder is stripped)."""
    size: int
    order: int
    compressed: int | None


@dataclass(frozen=True, slots=True)
class Symlink:
    """A symbolic link of the archive (never followed, never read as a file)."""

    name: str
    target: str


class TarIndex:
    """The members of a (possibly compressed) tar archive, read in one pass.

    The pass decompresses the stream once, forward only (:class:`Inflated`),
    walks its headers (:class:`~tracker.sources.tar.TarWalk`: what
    :mod:`tarfile` would list, at a fraction of its cost) and keeps the data of
    each member that ``wanted`` accepts (by name and size), read just after the
    member's header was checked; a member read later that was not kept costs a
    second pass over the archive.
    """

    def __init__(
        self, path: Path, shown: str, wanted: Callable[[str, int], bool] | None = None
    ) -> None:
        self.shown = shown
        self.path = path
        self._wanted = wanted
        self._kept: dict[str, bytes] = {}
        self._room = KEPT_BYTES
        self._later: tarfile.TarFile | None = None
        """The archive opened again for members that were not kept (seekable, slow)."""
        self._data: dict[str, tuple[int, int]] = {}
        """Where each regular member's data starts in the tar stream, and its size."""
        try:
            kind = compression(path)
            stream: Inflated | IO[bytes] = Inflated(path, kind) if kind else path.open("rb")
        except OSError as error:
            raise ParseError(shown, f"not a readable tar archive ({error})") from None
        self._stream = stream
        self._walk = TarWalk(stream)
        try:
            self._first = self._walk.next()
        except Refused as refused:
            stream.close()
            raise ParseError(shown, str(refused)) from None
        except Malformed as error:
            stream.close()
            raise _malformed(shown, error) from None
        except _TAR_ERRORS as error:
            stream.close()
            raise ParseError(shown, f"not a readable tar archive ({error})") from None

    def members(self) -> Iterator[Member | Symlink | None]:
        """Every member in archive order (``None`` for a folder); hostile ones raise."""
        last = ""
        walk = self._walk
        try:
            for order, entry in enumerate(self._entries()):
                last = entry.name
                member = self._member(order, entry)
                yield member  # checked by the caller before any of its data is decompressed
                if isinstance(member, Member) and self._keep(member):
                    self._kept[member.name] = walk.read(entry)
        except Refused as refused:
            raise ParseError(self.shown, str(refused)) from None
        except Malformed as error:
            raise _malformed(self.shown, error) from None
        except _TAR_ERRORS as error:
            after = f" after member {last!r}" if last else ""
            raise ParseError(
                self.shown, f"the archive is damaged or truncated{after} ({error})"
            ) from None
        ended = walk.ended_on
        if ended is not None and type(ended).__name__ not in _CLEAN_ENDS:
            raise ParseError(
                self.shown,
                f"refused: the data after member {last!r} is not a tar header ({ended}): "
                f"{last!r} holds more than its header says, or the archive is damaged",
            )

    def _entries(self) -> Iterator[TarHeader]:
        entry, self._first = self._first, None
        while entry is not None:
            yield entry
            entry = self._walk.next()

    def _member(self, order: int, entry: TarHeader) -> Member | Symlink | None:
        kind = entry.kind
        if kind == tarfile.DIRTYPE:
            return None
        if kind == tarfile.SYMTYPE:
            return Symlink(entry.name, entry.linkname)
        if entry.sparse:
            _refuse(self.shown, entry.name, "a sparse file")
        if kind in tarfile.REGULAR_TYPES:
            if not 0 <= entry.size < _SIZE_LIMIT:
                _refuse(self.shown, entry.name, f"said to hold {entry.size} bytes, {HOSTILE}")
            self._data[entry.name] = (entry.data_at, entry.size)
            return Member(entry.name, entry.size, order, None)
        if kind == tarfile.LNKTYPE:
            _refuse(
                self.shown,
                entry.name,
                f"a hard link to {entry.linkname!r}; make the archive with "
                "`tar --hard-dereference`",
            )
        kinds = {tarfile.CHRTYPE: "a character device", tarfile.BLKTYPE: "a block device"}
        _refuse(self.shown, entry.name, kinds.get(kind, _other(kind)))

    def _keep(self, member: Member) -> bool:
        if self._wanted is None or member.size > self._room:
            return False
        if not self._wanted(member.name, member.size):
            return False
        self._room -= member.size
        return True

    def take(self, member: Member) -> bytes | None:
        """The data of ``member`` if the index pass kept it (handed out once)."""
        return self._kept.pop(member.name, None)

    def close(self) -> None:
        self._stream.close()
        if self._later is not None:
            self._later.close()
        self._kept.clear()

    def open(self, member: Member) -> IO[bytes]:
        if self._later is None:
            self._later = tarfile.open(self.path, mode="r:*")
        info = tarfile.TarInfo(member.name)
        info.offset_data, info.size = self._data[member.name]
        stream = self._later.extractfile(info)
        if stream is None:
            raise ParseError(self.shown, f"{member.name}: not a regular file")
        return stream


def _malformed(shown: str, error: Malformed) -> ParseError:
    """The refusal of a header tarfile's code failed on (Python's advice in its error cut off)."""
    reason = str(error.error).partition(";")[0]
    return ParseError(
        shown,
        f"refused: member {error.header!r} has a header tarfile cannot read ({reason}), {HOSTILE}",
    )


def _other(kind: bytes) -> str:
    return "a FIFO (named pipe)" if kind == tarfile.FIFOTYPE else f"of unknown type {kind!r}"


class ZipIndex:
    """The members of a zip archive, from its central directory, checked against the data."""

    def __init__(self, path: Path, shown: str) -> None:
        self.shown = shown
        self.path = path
        try:
            self.archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError) as error:
            raise ParseError(shown, f"not a readable zip archive ({error})") from None
        self.infos: dict[str, zipfile.ZipInfo] = {}

    def members(self) -> Iterator[Member | Symlink | None]:
        """Every member (``None`` for a folder); hostile ones raise."""
        spans: list[tuple[int, int, str]] = []
        try:
            with self.path.open("rb") as raw:
                for info in self.archive.infolist():
                    spans.append((*self._data_span(raw, info), info.filename))
                    yield self._member(info)
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
            raise ParseError(self.shown, f"the archive is damaged ({error})") from None
        spans.sort()
        for (_, end, name), (start, _, other) in zip(spans, spans[1:], strict=False):
            if start < end:
                _refuse(
                    self.shown,
                    other,
                    f"stored inside the data of {name!r} (overlapping entries: a zip bomb?)",
                )

    def _member(self, info: zipfile.ZipInfo) -> Member | Symlink | None:
        kind = (info.external_attr >> 16) & _S_IFMT
        if info.is_dir() or kind == _S_IFDIR:
            return None
        if info.flag_bits & _ENCRYPTED:
            _refuse(self.shown, info.filename, "encrypted")
        if info.compress_type not in _ZIP_METHODS:
            _refuse(self.shown, info.filename, f"compressed with method {info.compress_type}")
        if kind == _S_IFLNK:
            if info.file_size > _LINK_TARGET_LIMIT:
                _refuse(self.shown, info.filename, f"a link of {info.file_size} bytes")
            target = self.archive.read(info).decode("utf-8", "replace")
            return Symlink(info.filename, target)
        if kind and kind != _S_IFREG:
            _refuse(self.shown, info.filename, _UNIX_KINDS.get(kind, f"of unknown type {kind:o}"))
        self.infos[info.filename] = info
        return Member(info.filename, info.file_size, info.header_offset, info.compress_size)

    def _data_span(self, raw: IO[bytes], info: zipfile.ZipInfo) -> tuple[int, int]:
        """Where the member's local header starts and its data ends; lies refuse the archive."""
        raw.seek(info.header_offset)
        head = raw.read(_LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size or not head.startswith(_LOCAL_SIGNATURE):
            _refuse(self.shown, info.filename, f"missing (no local header at {info.header_offset})")
        _sig, _v, _s, flags, method, _t, _d, crc, packed, size, name_len, extra_len = (
            _LOCAL_HEADER.unpack(head)
        )
        name = raw.read(name_len).decode("utf-8" if flags & _UTF8_NAME else "cp437", "replace")
        extra = raw.read(extra_len)
        if name != info.orig_filename:
            _refuse(self.shown, info.filename, f"named {name!r} in its local header")
        if not flags & _DATA_DESCRIPTOR:
            if _ZIP64 in (packed, size):
                size, packed = _zip64_sizes(extra, size, packed)
            told = (method, crc, size, packed)
            if told != (info.compress_type, info.CRC, info.file_size, info.compress_size):
                _refuse(
                    self.shown,
                    info.filename,
                    f"{size} bytes ({packed} compressed) by its local header but "
                    f"{info.file_size} ({info.compress_size}) by the central directory: the "
                    "archive lies about its sizes",
                )
        start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
        end = start + info.compress_size
        if end > self.archive.start_dir:
            _refuse(self.shown, info.filename, "longer than the space its data has")
        return info.header_offset, end

    def close(self) -> None:
        self.archive.close()

    def take(self, member: Member) -> bytes | None:
        """Nothing is kept from a zip's index (its members are read in place)."""
        return None

    def open(self, member: Member) -> IO[bytes]:
        return self.archive.open(self.infos[member.name])


Index = TarIndex | ZipIndex


def _zip64_sizes(extra: bytes, size: int, packed: int) -> tuple[int, int]:
    """The sizes a local header's zip64 extra field gives (in place of 0xFFFFFFFF)."""
    while len(extra) >= 4:
        kind, length = struct.unpack("<HH", extra[:4])
        data = extra[4 : 4 + length]
        if kind == 1:
            values = [v for (v,) in struct.iter_unpack("<Q", data[: len(data) // 8 * 8])]
            if size == _ZIP64 and values:
                size = values.pop(0)
            if packed == _ZIP64 and values:
                packed = values.pop(0)
            break
        extra = extra[4 + length :]
    return size, packed


def _refuse(shown: str, name: str, what: str) -> NoReturn:
    raise ParseError(shown, f"refused: member {name!r} is {what}")
