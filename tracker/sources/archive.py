"""Archives read in place as source trees, and recognised unchanged before they are opened.

Archives read in place as source trees: ``.tar.gz``/``.tgz``/``.tar`` (and bz2, xz) and ``.zip``.

Nothing is extracted to disk. Opening a tar reads its member index in one
forward pass over the stream (:mod:`tracker.sources.tar`), keeping in
memory the data of the members a reader may ask for (:func:`worth_keeping`:
not source trees, images, binaries, accuracy or trace logs), so an ingest
decompresses the archive once; a member that was not kept is read in a second
pass if a reader asks for it after all. A zip's members are read in place.
An unchanged archive is recognised before it is opened at all
(below).

Archives are never trusted, and a hostile entry refuses the whole archive
(:class:`~tracker.errors.ParseError` naming the archive and the member): an
absolute member name or a ``..`` component, a name given twice or used both as
a file and a folder, hard links, devices, FIFOs and sparse files, a symbolic
link pointing outside the archive, member data that disagrees with its header
(see :mod:`tracker.sources.archive_index`), and more unpacked bytes, members or
compression than the limits allow, checked on each header before its data is
decompressed. Symbolic links within the archive (git keeps them, so GitHub's
archives have them) are never followed: they are left out of the tree and
listed in :attr:`ArchiveTree.skipped`. A member found damaged when it is read
(a zip CRC mismatch, a truncated stream) refuses the source too: the reader
sees a :class:`~tracker.errors.ParseError` for that file, and
:meth:`ArchiveTree.artifacts` raises it again, so nothing of the archive is
stored. A single top-level folder (as in GitHub's ``<repo>-<ref>/``) is
stripped, so paths are repository-relative.

An unchanged archive or download recognised before it is opened (nothing decompressed).

An archive's trail (:meth:`tracker.sources.archive.ArchiveTree.trail`) holds the
sha256 of its bytes and, beside it, the *identity* of the file it was read
from: size, mtime, ctime, inode and a hash of its first and last blocks (for a
gzip stream the last block ends with the CRC and length of everything
unpacked). On the next ingest of the same source, :func:`unchanged_archive`
compares them with the file as it is now:

* the identity is the same: unchanged, at the cost of one ``stat`` and two
  small reads;
* the identity differs (the file was touched, copied or replaced) but the size
  is the same: its bytes are hashed (a sha256 pass costs a small part of a
  decompression) and compared with the recorded sha256;
* a download's sha256 is known without reading it (the cache recorded it when
  the body arrived, and a ``304 Not Modified`` answer reuses that body): it is
  compared as is.

Anything else (no recorded sha256, a different size or hash) means the
archive is read in full, so a stale snapshot can only cost time, never data.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import tarfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from tracker.errors import ParseError
from tracker.records.results import ArtifactRecord
from tracker.sources.archive_index import Index, Member, Symlink, TarIndex, ZipIndex
from tracker.sources.trail import Trail
from tracker.sources.tree import MAX_FILE_BYTES, BufferedLines, HashedLines

__all__ = [
    "ARCHIVE_KEY",
    "ArchiveLimits",
    "ArchiveTree",
    "IDENTITY_KEY",
    "archive_trail",
    "file_identity",
    "is_archive",
    "open_archive",
    "unchanged_archive",
]


ARCHIVE_KEY = "archive:"
"""The trail entry holding ``sha256:<hex>`` of the archive's bytes."""
IDENTITY_KEY = "archive-file:"
"""The trail entry holding the identity of the file those bytes were read from."""
_BLOCK = 64 << 10
_CHUNK = 1 << 20


def file_identity(path: Path) -> str | None:
    """Size, mtime, ctime, inode and a hash of the first and last blocks; ``None`` if unreadable."""
    try:
        with path.open("rb") as stream:
            stat = os.fstat(stream.fileno())
            digest = hashlib.sha256(stream.read(_BLOCK))
            if stat.st_size > _BLOCK:
                stream.seek(max(_BLOCK, stat.st_size - _BLOCK))
                digest.update(stream.read(_BLOCK))
    except OSError:
        return None
    return (
        f"{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}:"
        f"{digest.hexdigest()[:32]}"
    )


def file_sha256(path: Path) -> str | None:
    """The sha256 of the file's bytes; ``None`` if it cannot be read."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            while chunk := stream.read(_CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def archive_trail(sha256: str, identity: str | None) -> tuple[tuple[str, str], ...]:
    """An archive's trail: its identity (when known) and its sha256, sorted by key."""
    entries = [(ARCHIVE_KEY, f"sha256:{sha256}")]
    if identity is not None:
        entries.append((IDENTITY_KEY, identity))
    return tuple(sorted(entries))


def unchanged_archive(
    path: Path, trail: tuple[tuple[str, str], ...] | Trail, *, sha256: str | None = None
) -> tuple[tuple[str, str], ...] | None:
    """The trail of the archive at ``path`` if it holds the bytes ``trail`` recorded, else ``None``.

    ``sha256``, when known (a download), is the file's hash. The trail returned
    carries the file's identity now: when it differs from ``trail``, save it,
    and the next check is a ``stat`` again.
    """
    if len(trail) > 2:
        return None  # a folder's trail (an archive's has two entries): not decoded here
    recorded = dict(trail)
    wanted = recorded.get(ARCHIVE_KEY, "")
    if not wanted.startswith("sha256:"):
        return None  # not an archive's trail (a folder's): never taken for unchanged here
    identity = file_identity(path)
    if identity is None:
        return None
    if sha256 is None:
        if identity == recorded.get(IDENTITY_KEY):
            return archive_trail(wanted.removeprefix("sha256:"), identity)
        known = recorded.get(IDENTITY_KEY, "").split(":", 1)[0]
        if known and known != identity.split(":", 1)[0]:
            return None  # another size: changed, no need to hash it
        sha256 = file_sha256(path)
    if sha256 is None or f"sha256:{sha256.lower()}" != wanted:
        return None
    return archive_trail(sha256.lower(), identity)


_GZIP, _BZIP2, _XZ = b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00"
_ZIP = (b"PK\x03\x04", b"PK\x05\x06")
_WHOLE_MEMBER_LIMIT = 8 << 20
"""Members up to this size are read at once; bigger ones are streamed line by line."""
_UNUSUAL_PARTS = frozenset({"", ".", ".."})
_NEVER_READ = frozenset({"mlperf_log_accuracy.json", "mlperf_log_trace.json"})
_NEVER_READ_SUFFIXES = frozenset(
    "py pyc c cc cpp cu cuh h hpp java go rs js ts css html sh cmake patch diff ipynb so o a "
    "whl pt pth onnx bin npy npz pkl engine plan png jpg jpeg gif svg bmp pdf gz tgz zip tar "
    "xz bz2 zst".split()
)
_READ_ERRORS = (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError, zlib.error)


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """Bounds an archive must stay within to be read at all."""

    max_total_bytes: int = 64 << 30
    max_ratio: float = 250.0
    """Unpacked bytes per archive byte (whole archive; per member for a zip)."""
    max_members: int = 2_000_000
    max_member_bytes: int = MAX_FILE_BYTES
    """Unpacked bytes of one member (1 GiB, as for a file of a folder), checked on its
    header before any of its data is decompressed, and again on the bytes read."""


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
    index = ZipIndex(path, shown) if is_zip else TarIndex(path, shown, wanted=worth_keeping)
    return ArchiveTree(path, index, location=shown, sha256=sha256, limits=limits)


def worth_keeping(name: str, size: int) -> bool:
    """Whether a member is worth keeping in memory from a tar's one pass (a reader may read it).

    Only a guess that saves a second pass: source trees, images, binaries,
    accuracy and trace logs are never read by a reader and are left out; a
    member left out that a reader asks for after all is read in a second pass.
    """
    if size > _WHOLE_MEMBER_LIMIT:
        return False
    folder, _slash, base = name.rpartition("/")
    if base in _NEVER_READ or f"/{folder}/".find("/code/") >= 0:
        return False
    return base.rpartition(".")[2].lower() not in _NEVER_READ_SUFFIXES


class ArchiveTree:
    """A tar or zip archive as a :class:`~tracker.sources.tree.SourceTree`."""

    def __init__(
        self,
        path: Path,
        index: Index,
        *,
        location: str,
        sha256: str | None,
        limits: ArchiveLimits | None,
    ) -> None:
        self.path = path
        self.location = location
        self._identity = file_identity(path)
        """The file's identity when it was opened (its trail: see :mod:`.archive_identity`)."""
        self._index = index
        self._sha256 = sha256
        self._read: dict[str, ArtifactRecord] = {}
        self._damage: ParseError | None = None
        self.skipped: list[str] = []
        """Symbolic links within the archive, left out of the tree (names as in the archive)."""
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

    def _checked_members(self, limits: ArchiveLimits) -> dict[str, Member]:
        members: dict[str, Member] = {}
        links: set[str] = set()
        total, size = 0, self.path.stat().st_size
        for entry in self._index.members():
            if entry is None:
                continue
            clean = _safe_name(entry.name, self.location)
            if clean in members or clean in links:
                raise ParseError(self.location, f"refused: member {entry.name!r} appears twice")
            if isinstance(entry, Symlink):
                _check_link(clean, entry, self.location)
                links.add(clean)
                self.skipped.append(entry.name)
                continue
            total += entry.size
            self._check_size(entry, total, size, len(members), limits)
            members[clean] = entry
        _check_paths(set(members) | links, self.location)
        return members

    def _check_size(
        self, member: Member, total: int, size: int, count: int, limits: ArchiveLimits
    ) -> None:
        """Refuse a bomb on the member's header, before any of its data is decompressed."""
        if member.size > limits.max_member_bytes:
            raise ParseError(
                self.location,
                f"refused: one file of {member.size} bytes, over the "
                f"{limits.max_member_bytes >> 30} GiB limit of one file, at member "
                f"{member.name!r} (a decompression bomb?)",
            )
        if total > limits.max_total_bytes or count >= limits.max_members:
            raise ParseError(
                self.location,
                f"refused: unpacks to more than {limits.max_total_bytes} bytes or "
                f"{limits.max_members} files, at member {member.name!r} (a decompression bomb?)",
            )
        if member.compressed is not None and member.size > limits.max_ratio * max(
            member.compressed, 1024
        ):
            raise ParseError(
                self.location,
                f"refused: member {member.name!r} is compressed suspiciously well "
                f"({member.size} bytes from {member.compressed}; a zip bomb?)",
            )
        if total > limits.max_ratio * max(size, 64 << 10):
            raise ParseError(
                self.location,
                f"refused: unpacks to {total} bytes or more from {size}, at member "
                f"{member.name!r} (a decompression bomb?)",
            )

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
        return archive_trail(self.sha256, self._identity)

    def trail_matches(self, trail: Iterable[tuple[str, str]]) -> bool:
        return dict(trail).get(ARCHIVE_KEY) == f"sha256:{self.sha256}"

    def _open(self, path: str) -> IO[bytes]:
        member = self._members.get(path)
        if member is None:
            raise ParseError(self.shown_path(path), "no such file in the archive")
        try:
            return self._index.open(member)
        except _READ_ERRORS as error:
            raise self._unreadable(path, error) from None

    def read_bytes(self, path: str) -> bytes:
        member = self._members.get(path)
        data = self._index.take(member) if member is not None else None
        if data is None:
            with self._open(path) as stream:
                try:
                    data = stream.read(MAX_FILE_BYTES + 1)
                except _READ_ERRORS as error:
                    raise self._unreadable(path, error) from None
            if len(data) > MAX_FILE_BYTES:  # the header said less: the archive lies
                raise self._unreadable(path, ValueError("more bytes than its header says"))
        self._read[path] = ArtifactRecord(path, hashlib.sha256(data).hexdigest(), len(data))
        return data

    @contextmanager
    def open_lines(self, path: str) -> Iterator[Iterator[bytes]]:
        member = self._members.get(path)
        if member is not None and member.size <= _WHOLE_MEMBER_LIMIT:
            yield BufferedLines(self.read_bytes(path))
            return
        with self._open(path) as stream:
            hashed = HashedLines(stream, lambda size: self._cap(path, size))
            try:
                yield hashed.lines()
                self._read[path] = hashed.finish(path)
            except _READ_ERRORS as error:
                raise self._unreadable(path, error) from None

    def _cap(self, path: str, size: int) -> None:
        if size > MAX_FILE_BYTES:
            raise self._unreadable(path, ValueError("more bytes than its header says"))

    def _unreadable(self, path: str, error: Exception) -> ParseError:
        """The error for a member that cannot be read; it refuses the whole archive."""
        damage = ParseError(
            self.shown_path(path),
            f"cannot read from the archive ({error}); the archive is damaged or lies about "
            "this member, so nothing of it is stored",
        )
        self._damage = self._damage or damage
        return damage

    def artifact(self, path: str) -> ArtifactRecord | None:
        return self._read.get(path)

    def artifacts(self) -> tuple[ArtifactRecord, ...]:
        """What was read, for the source's record; a damaged member found meanwhile raises."""
        if self._damage is not None:
            raise ParseError(self._damage.path, self._damage.message)
        return tuple(self._read[p] for p in sorted(self._read))

    def shown_path(self, path: str) -> str:
        return f"{self.location}/{path}"


def _safe_name(name: str, shown: str) -> str:
    """A member name as a relative POSIX path; hostile names refuse the archive."""
    text = name.replace("\\", "/")
    parts = text.split("/")
    if "\x00" not in text and text[1:2] != ":" and not _UNUSUAL_PARTS.intersection(parts):
        return text  # the common case: already clean (as PurePosixPath would give it)
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


def _check_link(clean: str, link: Symlink, shown: str) -> None:
    """Refuse a symbolic link whose target is outside the archive."""
    target = link.target.replace("\\", "/")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(clean), target))
    outside = joined == ".." or joined.startswith("../")
    if not target or target.startswith("/") or target[1:2] == ":" or outside:
        raise ParseError(
            shown,
            f"refused: member {link.name!r} is a symbolic link to {link.target!r}, "
            "outside the archive",
        )


def _check_paths(names: set[str], shown: str) -> None:
    """Refuse a member that sits below another member (a file or link used as a folder)."""
    folders: set[str] = set()
    for name in names:
        parent = name.rpartition("/")[0]
        while parent and parent not in folders:
            folders.add(parent)
            parent = parent.rpartition("/")[0]
    for folder in sorted(names & folders)[:1]:
        inside = min(name for name in names if name.startswith(f"{folder}/"))
        raise ParseError(
            shown, f"refused: member {inside!r} is inside {folder!r}, which is a file or a link"
        )


def _common_top(members: dict[str, Member]) -> str:
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
