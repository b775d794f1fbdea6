"""Archives read in place as source trees: ``.tar.gz``/``.tgz``/``.tar`` (and bz2, xz) and ``.zip``.

Nothing is extracted to disk. Opening an archive reads its member index (for
a compressed tar, one pass over the stream); a member is read only when a
reader asks for it, and :meth:`ArchiveTree.read_order` hands readers the
archive's own order, so reading everything a reader needs is one more pass.

Archives are never trusted: an absolute member name, a ``..`` component, or
more unpacked bytes or members than the limits allow refuse the whole
archive (:class:`~tracker.errors.ParseError`); links, devices and other
non-regular members are never followed or read (they are left out of the
tree and listed in :attr:`ArchiveTree.refused`). A single top-level folder (as
in GitHub's ``<repo>-<ref>/``) is stripped, so paths are repository-relative.
"""

from __future__ import annotations

import hashlib
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from tracker.errors import ParseError
from tracker.records import ArtifactRecord
from tracker.tree import BufferedLines

__all__ = ["ArchiveLimits", "ArchiveTree", "is_archive", "open_archive"]

_GZIP, _BZIP2, _XZ = b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00"
_ZIP = (b"PK\x03\x04", b"PK\x05\x06")
_CHUNK = 1 << 20
_ARCHIVE_KEY = "archive:"
_WHOLE_MEMBER_LIMIT = 8 << 20
"""Members up to this size are read at once; bigger ones are streamed line by line."""
_READ_ERRORS = (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError, zlib.error)


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """Bounds an archive must stay within to be read at all."""

    max_total_bytes: int = 64 << 30
    max_ratio: float = 250.0
    """Unpacked bytes per archive byte (whole archive; per member for a zip)."""
    max_members: int = 2_000_000


def is_archive(path: Path) -> bool:
    """Whether ``path`` is a tar (possibly compressed) or zip archive, by its first bytes."""
    try:
        with path.open("rb") as stream:
            head = stream.read(512)
    except OSError:
        return False
    return head.startswith((_GZIP, _BZIP2, _XZ, *_ZIP)) or head[257:262] == b"ustar"


def open_archive(
    path: Path,
    *,
    location: str | None = None,
    sha256: str | None = None,
    limits: ArchiveLimits | None = None,
) -> ArchiveTree:
    """The archive at ``path`` as a source tree (its index is read now).

    ``sha256``, when known (a download), spares hashing the archive again.
    """
    shown = location if location is not None else str(path)
    try:
        with path.open("rb") as stream:
            is_zip = stream.read(4) in _ZIP
    except OSError as error:
        raise ParseError(shown, f"cannot read ({error.strerror})") from None
    kind = _ZipIndex if is_zip else _TarIndex
    return ArchiveTree(path, kind(path, shown), location=shown, sha256=sha256, limits=limits)


@dataclass(frozen=True, slots=True)
class _Member:
    name: str
    """The member's name in the archive (before the top folder is stripped)."""
    size: int
    order: int
    compressed: int | None


class _TarIndex:
    def __init__(self, path: Path, shown: str) -> None:
        self.shown = shown
        try:
            self.archive = tarfile.open(path, mode="r:*")  # kept open: members are read later
        except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
            raise ParseError(shown, f"not a readable tar archive ({error})") from None
        self.infos: dict[str, tarfile.TarInfo] = {}

    def members(self) -> Iterator[tuple[_Member | None, str]]:
        """Every member: ``(member, name)``, member ``None`` for a non-regular one."""
        try:
            for order, info in enumerate(self.archive):
                if info.isdir():
                    continue
                if not info.isfile():
                    yield None, info.name
                    continue
                self.infos[info.name] = info
                yield _Member(info.name, info.size, order, None), info.name
        except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
            raise ParseError(self.shown, f"the archive is damaged or truncated ({error})") from None

    def close(self) -> None:
        self.archive.close()

    def open(self, member: _Member) -> IO[bytes]:
        stream = self.archive.extractfile(self.infos[member.name])
        if stream is None:
            raise ParseError(self.shown, f"{member.name}: not a regular file")
        return stream


class _ZipIndex:
    def __init__(self, path: Path, shown: str) -> None:
        self.shown = shown
        try:
            self.archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as error:
            raise ParseError(shown, f"not a readable zip archive ({error})") from None
        self.infos: dict[str, zipfile.ZipInfo] = {}

    def members(self) -> Iterator[tuple[_Member | None, str]]:
        for info in self.archive.infolist():
            if info.is_dir():
                continue
            kind = stat.S_IFMT(info.external_attr >> 16)
            if kind and kind != stat.S_IFREG:  # a link or device (no type bits: a plain file)
                yield None, info.filename
                continue
            self.infos[info.filename] = info
            yield (
                _Member(info.filename, info.file_size, info.header_offset, info.compress_size),
                info.filename,
            )

    def close(self) -> None:
        self.archive.close()

    def open(self, member: _Member) -> IO[bytes]:
        return self.archive.open(self.infos[member.name])


_Index = _TarIndex | _ZipIndex


class ArchiveTree:
    """A tar or zip archive as a :class:`~tracker.tree.SourceTree`."""

    def __init__(
        self,
        path: Path,
        index: _Index,
        *,
        location: str,
        sha256: str | None,
        limits: ArchiveLimits | None,
    ) -> None:
        self.path = path
        self.location = location
        self._index = index
        self._sha256 = sha256
        self._read: dict[str, ArtifactRecord] = {}
        self.refused: list[str] = []
        try:
            members = self._checked_members(limits or ArchiveLimits())
        except ParseError:
            index.close()
            raise
        self._top = _common_top(members)
        cut = len(self._top) + 1 if self._top else 0
        self._members = {name[cut:]: member for name, member in members.items()}
        self._files = sorted(self._members)
        self._dirs = _folders(self._files)

    def _checked_members(self, limits: ArchiveLimits) -> dict[str, _Member]:
        members: dict[str, _Member] = {}
        total = 0
        for member, name in self._index.members():
            clean = _safe_name(name, self.location)
            if member is None:
                self.refused.append(clean)
                continue
            total += member.size
            if total > limits.max_total_bytes or len(members) >= limits.max_members:
                raise ParseError(
                    self.location,
                    f"refused: unpacks to more than {limits.max_total_bytes} bytes or "
                    f"{limits.max_members} files (a decompression bomb?)",
                )
            if member.compressed is not None and member.size > limits.max_ratio * max(
                member.compressed, 1024
            ):
                raise ParseError(self.location, f"refused: {clean} is compressed suspiciously well")
            members[clean] = _Member(name, member.size, member.order, member.compressed)
        size = self.path.stat().st_size
        if total > limits.max_ratio * max(size, 64 << 10):
            raise ParseError(
                self.location,
                f"refused: unpacks to {total} bytes from {size} (a decompression bomb?)",
            )
        return members

    def close(self) -> None:
        """Release the archive file."""
        self._index.close()

    @property
    def root_name(self) -> str:
        return self._top or _stem(self.path.name)

    @property
    def sha256(self) -> str:
        """The archive file's own hash (what its trail records)."""
        if self._sha256 is None:
            digest = hashlib.sha256()
            with self.path.open("rb") as stream:
                while chunk := stream.read(_CHUNK):
                    digest.update(chunk)
            self._sha256 = digest.hexdigest()
        return self._sha256

    def files(self) -> list[str]:
        return self._files

    def list_dir(self, path: str) -> tuple[list[str], list[str]]:
        dirs, files = self._dirs.get(path.strip("/"), (set(), []))
        return sorted(dirs), sorted(files)

    def exists(self, path: str) -> bool:
        return path in self._members

    def read_order(self, paths: Iterable[str]) -> list[str]:
        def position(path: str) -> int:
            member = self._members.get(path)
            return member.order if member is not None else -1

        return sorted(paths, key=position)

    def trail(self) -> tuple[tuple[str, str], ...]:
        return ((_ARCHIVE_KEY, f"sha256:{self.sha256}"),)

    def trail_matches(self, trail: Iterable[tuple[str, str]]) -> bool:
        return dict(trail).get(_ARCHIVE_KEY) == f"sha256:{self.sha256}"

    def _open(self, path: str) -> IO[bytes]:
        member = self._members.get(path)
        if member is None:
            raise ParseError(self.shown_path(path), "no such file in the archive")
        try:
            return self._index.open(member)
        except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
            raise ParseError(
                self.shown_path(path), f"cannot read from the archive ({error})"
            ) from None

    def read_bytes(self, path: str) -> bytes:
        try:
            with self._open(path) as stream:
                data = stream.read()
        except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
            raise ParseError(
                self.shown_path(path), f"cannot read from the archive ({error})"
            ) from None
        self._read[path] = ArtifactRecord(path, hashlib.sha256(data).hexdigest(), len(data))
        return data

    @contextmanager
    def open_lines(self, path: str) -> Iterator[Iterator[bytes]]:
        member = self._members.get(path)
        if member is not None and member.size <= _WHOLE_MEMBER_LIMIT:
            yield BufferedLines(self.read_bytes(path))
            return
        digest = hashlib.sha256()
        size = 0
        with self._open(path) as stream:

            def lines() -> Iterator[bytes]:
                nonlocal size
                for line in stream:
                    digest.update(line)
                    size += len(line)
                    yield line

            try:
                yield lines()
                while chunk := stream.read(_CHUNK):
                    digest.update(chunk)
                    size += len(chunk)
            except _READ_ERRORS as error:
                raise self._unreadable(path, error) from None
        self._read[path] = ArtifactRecord(path, digest.hexdigest(), size)

    def _unreadable(self, path: str, error: Exception) -> ParseError:
        return ParseError(self.shown_path(path), f"cannot read from the archive ({error})")

    def artifact(self, path: str) -> ArtifactRecord | None:
        return self._read.get(path)

    def artifacts(self) -> tuple[ArtifactRecord, ...]:
        return tuple(self._read[p] for p in sorted(self._read))

    def shown_path(self, path: str) -> str:
        return f"{self.location}/{path}"


def _safe_name(name: str, shown: str) -> str:
    """A member name as a relative POSIX path; hostile names refuse the archive."""
    text = name.replace("\\", "/")
    pure = PurePosixPath(text)
    if (
        not text
        or "\x00" in text
        or pure.is_absolute()
        or (len(text) > 1 and text[1] == ":")
        or ".." in pure.parts
    ):
        raise ParseError(shown, f"refused: member {name!r} would land outside the archive")
    return "/".join(part for part in pure.parts if part not in ("", "."))


def _common_top(members: dict[str, _Member]) -> str:
    tops = {name.split("/", 1)[0] for name in members}
    if len(tops) != 1 or any("/" not in name for name in members):
        return ""
    return tops.pop()


def _folders(files: list[str]) -> dict[str, tuple[set[str], list[str]]]:
    folders: dict[str, tuple[set[str], list[str]]] = {"": (set(), [])}
    for path in files:
        parts = path.split("/")
        for depth in range(len(parts) - 1):
            parent = "/".join(parts[:depth])
            folders.setdefault(parent, (set(), []))[0].add(parts[depth])
        folders.setdefault("/".join(parts[:-1]), (set(), []))[1].append(parts[-1])
    return folders


def _stem(name: str) -> str:
    for suffix in (".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tar", ".zip"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name
