"""The files of one source, and a record of every file read from it.

A reader sees a source only through a :class:`SourceTree`: relative POSIX
paths, bytes and line streams. The tree hashes what is read, so the source's
artifacts (path, sha256, size) come for free and the content hash of a source
covers exactly the files its results came from. ``FolderTree`` reads a local
folder; archives and downloads provide the same interface (:mod:`tracker.sources.archive`).

A tree also keeps a *trail*: a signature of every folder it listed and every
file it probed or read (size, mtime, ctime, inode for a folder tree; the
archive's sha256 for an archive). When a later ingest finds the same trail
(:meth:`SourceTree.trail_matches`), nothing the readers saw can have changed,
so the source need not be read again (see :mod:`tracker.sources.snapshots`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Protocol

from tracker.errors import ParseError
from tracker.records import ArtifactRecord
from tracker.sources.trail import (
    ABSENT,
    Trail,
    dir_signature,
    file_signature,
    signature,
    signatures,
)

__all__ = ["BufferedLines", "FileTree", "FolderTree", "SourceTree", "content_sha256"]


class SourceTree(Protocol):
    """Read access to the files of one source."""

    location: str
    """The source as the user named it (folder, archive or URL)."""

    def files(self) -> list[str]:
        """Every file, as a sorted list of relative POSIX paths."""
        ...

    def read_bytes(self, path: str) -> bytes:
        """The whole content of ``path`` (recorded as an artifact)."""
        ...

    def open_lines(self, path: str) -> AbstractContextManager[Iterator[bytes]]:
        """A context manager streaming the lines of ``path`` (recorded as an artifact)."""
        ...

    def artifact(self, path: str) -> ArtifactRecord | None:
        """The record of ``path`` if it has been read completely."""
        ...

    def artifacts(self) -> tuple[ArtifactRecord, ...]:
        """Every file read so far, sorted by path."""
        ...

    def shown_path(self, path: str) -> str:
        """How to name ``path`` in a message: the source location joined with it."""
        ...

    @property
    def root_name(self) -> str:
        """The name of the tree's top folder (folder name, or an archive's top folder)."""
        ...

    def list_dir(self, path: str) -> tuple[list[str], list[str]]:
        """The sub-folder names and file names directly inside ``path`` ("" = the root).

        Both lists are sorted; a missing folder gives two empty lists.
        """
        ...

    def exists(self, path: str) -> bool:
        """Whether ``path`` is a file of the tree."""
        ...

    def read_order(self, paths: Iterable[str]) -> list[str]:
        """``paths`` in the order that is cheapest to read (archive order for an archive)."""
        ...

    def trail(self) -> tuple[tuple[str, str], ...]:
        """A signature of everything listed, probed or read so far, sorted by path."""
        ...

    def trail_matches(self, trail: Iterable[tuple[str, str]]) -> bool:
        """Whether everything in an earlier :meth:`trail` is still exactly as it was."""
        ...


_CHUNK = 1 << 20
_WHOLE_FILE_LIMIT = 8 << 20
"""Files up to this size are read at once; bigger ones are streamed line by line."""


class BufferedLines:
    """The lines of a file read whole, ends kept; ``buffer`` is the file itself.

    Iterating gives the same lines as iterating the open file would (split
    after each ``\\n``); a parser may scan ``buffer`` in place instead, which
    spares copying lines it skips (see :func:`tracker.parsers.loadgen.parse_detail_log`).
    """

    __slots__ = ("_position", "buffer")

    def __init__(self, buffer: bytes) -> None:
        self.buffer = buffer
        self._position = 0

    def __iter__(self) -> BufferedLines:
        return self

    def __next__(self) -> bytes:
        start = self._position
        if start >= len(self.buffer):
            raise StopIteration
        end = self.buffer.find(b"\n", start)
        self._position = len(self.buffer) if end < 0 else end + 1
        return self.buffer[start : self._position]


class FolderTree:
    """A local folder as a source tree."""

    def __init__(self, root: Path, *, location: str | None = None) -> None:
        self.root = root
        self._root_text = str(root)
        self._prefix = os.path.join(self._root_text, "")
        """The root with a trailing separator: a path is ``_prefix + relative path``."""
        self.location = location if location is not None else str(root)
        self._shown_prefix = os.path.join(self.location, "")
        self._read: dict[str, ArtifactRecord] = {}
        self._files: list[str] | None = None
        self._trail: dict[str, str] = {}

    @property
    def root_name(self) -> str:
        return self.root.resolve().name

    def files(self) -> list[str]:
        if self._files is None:
            found: list[str] = []
            self._walk("", found)
            self._files = sorted(found)
        return self._files

    def _walk(self, folder: str, found: list[str]) -> None:
        dirs, files = self._scan(folder)
        found.extend(f"{folder}{name}" for name in files)
        for name in dirs:
            self._walk(f"{folder}{name}/", found)

    def _scan(self, folder: str) -> tuple[list[str], list[str]]:
        """List ``folder`` ("" or ending in "/"), recording its signature in the trail."""
        full = self._prefix + folder
        try:
            stat = os.stat(full)
            with os.scandir(full) as listing:
                entries = list(listing)
        except OSError:
            self._trail.setdefault(folder or "./", ABSENT)
            return [], []
        self._trail.setdefault(folder or "./", dir_signature(stat))  # the earliest one counts
        dirs: list[str] = []
        files: list[str] = []
        for entry in entries:  # one pass: listing folders is most of a big tree's walk
            if entry.is_dir(follow_symlinks=False):
                dirs.append(entry.name)
            elif entry.is_file():
                files.append(entry.name)
        dirs.sort()
        files.sort()
        return dirs, files

    def list_dir(self, path: str) -> tuple[list[str], list[str]]:
        folder = f"{path.strip('/')}/" if path.strip("/") else ""
        if self._files is not None:
            return _listing(self._files, folder)
        return self._scan(folder)

    def exists(self, path: str) -> bool:
        if self._files is not None:
            return path in self._files
        found = signature(self._prefix + path)
        if found == ABSENT:
            # A file that is not there is vouched for by its folder's signature, which
            # changes when a file is created in it: one entry for all the probes of a
            # folder (a round probes two per TEST01 folder). The folder's signature must
            # predate the answer, hence a second look when it is taken only now.
            head, _slash, _name = path.rpartition("/")
            folder = f"{head}/" if head else "./"
            if folder not in self._trail:
                self._trail[folder] = signature(self._prefix + folder)
                found = signature(self._prefix + path)
            if found == ABSENT:
                return False
        self._trail.setdefault(path, found)
        return found.startswith("f")

    def read_order(self, paths: Iterable[str]) -> list[str]:
        return list(paths)

    def trail(self) -> tuple[tuple[str, str], ...]:
        return tuple(sorted(self._trail.items()))

    def trail_matches(self, trail: Iterable[tuple[str, str]]) -> bool:
        if not isinstance(trail, Trail):
            try:
                trail = Trail.of(trail)
            except ValueError:  # a name no file can have here
                return False
        now = "\n".join(signatures(self._prefix, trail.paths))
        return now.encode() == trail.signature_text

    def _path(self, path: str) -> Path:
        return self.root / path

    def _read_small(self, path: str) -> bytes | None:
        """The whole file when it is small enough to hold (``None`` for a big one).

        One ``open``/``fstat``/``read``/``close`` and no buffering layer or
        copy: reading many small files is what ingesting a tree of results
        spends its time on (and each system call is dear in a virtual machine).
        """
        try:
            fd = os.open(self._prefix + path, os.O_RDONLY)
        except OSError as error:
            raise ParseError(self.shown_path(path), f"cannot read ({error.strerror})") from None
        try:
            stat = os.fstat(fd)
            self._trail[path] = file_signature(stat)
            size = stat.st_size
            if size > _WHOLE_FILE_LIMIT:
                return None
            data = os.read(fd, size + 1)
            if len(data) != size:  # it grew or shrank since fstat: read to the end
                chunks = [data]
                while chunks[-1]:
                    chunks.append(os.read(fd, _CHUNK))
                data = b"".join(chunks)
        except OSError as error:
            raise ParseError(self.shown_path(path), f"cannot read ({error.strerror})") from None
        finally:
            os.close(fd)
        return data

    def _open(self, path: str) -> IO[bytes]:
        try:
            stream = self._path(path).open("rb")
            self._trail[path] = file_signature(os.fstat(stream.fileno()))
        except OSError as error:
            raise ParseError(self.shown_path(path), f"cannot read ({error.strerror})") from None
        return stream

    def read_bytes(self, path: str) -> bytes:
        data = self._read_small(path)
        if data is None:
            with self._open(path) as stream:
                data = stream.read()
        self._read[path] = ArtifactRecord(path, hashlib.sha256(data).hexdigest(), len(data))
        return data

    @contextmanager
    def open_lines(self, path: str) -> Iterator[Iterator[bytes]]:
        data = self._read_small(path)
        if data is not None:  # small: read at once, hashed once, split into lines here
            yield BufferedLines(data)
            self._read[path] = ArtifactRecord(path, hashlib.sha256(data).hexdigest(), len(data))
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

            yield lines()
            while chunk := stream.read(_CHUNK):  # the rest, so the hash covers the whole file
                digest.update(chunk)
                size += len(chunk)
        self._read[path] = ArtifactRecord(path, digest.hexdigest(), size)

    def artifact(self, path: str) -> ArtifactRecord | None:
        return self._read.get(path)

    def artifacts(self) -> tuple[ArtifactRecord, ...]:
        return tuple(self._read[p] for p in sorted(self._read))

    def shown_path(self, path: str) -> str:
        if path.startswith("/"):  # as os.path.join: an absolute path stands alone
            return path
        return self._shown_prefix + path  # called for every file parsed, to name it in errors


def _listing(files: Iterable[str], folder: str) -> tuple[list[str], list[str]]:
    """The sub-folders and files directly inside ``folder`` of a flat file list."""
    dirs: set[str] = set()
    names: list[str] = []
    for path in files:
        if not path.startswith(folder):
            continue
        head, sep, _tail = path[len(folder) :].partition("/")
        if sep:
            dirs.add(head)
        else:
            names.append(head)
    return sorted(dirs), sorted(names)


class FileTree(FolderTree):
    """A single result file as a source tree (a vLLM result, an InferenceX row file...)."""

    def __init__(self, path: Path, *, location: str | None = None) -> None:
        super().__init__(path.parent, location=location if location is not None else str(path))
        self._files = [path.name]

    def shown_path(self, path: str) -> str:
        return str(Path(self.location).parent / path)


def content_sha256(artifacts: tuple[ArtifactRecord, ...]) -> str:
    """One hash over the paths and hashes of a source's files."""
    digest = hashlib.sha256()
    for artifact in sorted(artifacts, key=lambda a: a.path):
        digest.update(f"{artifact.path}\0{artifact.sha256}\n".encode())
    return digest.hexdigest()
