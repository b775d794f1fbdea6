"""The files of one source, a record of every file read from it, and a folder tree read in
parts by other processes.

The files of one source, and a record of every file read from it.

A reader sees a source only through a :class:`SourceTree`: relative POSIX
paths, bytes and line streams. The tree hashes what is read, so the source's
artifacts (path, sha256, size) come for free and the content hash of a source
covers exactly the files its results came from. ``FolderTree`` reads a local
folder; archives and downloads provide the same interface (:mod:`tracker.sources.archive`).

A tree also keeps a *trail*: a signature of every folder it listed and every
file it probed or read (size, mtime, ctime, inode for a folder tree; the
archive's sha256 for an archive). When a later ingest finds the same trail
(:meth:`SourceTree.trail_matches`), nothing the readers saw can have changed,
so the source need not be read again (see :mod:`tracker.sources.trail`).

A folder tree reads regular files only, each up to :data:`MAX_FILE_BYTES`
(1 GiB, far above any real log): a FIFO, a device or a socket (or a link to
one, such as ``/dev/zero``) is left out of the listing and never opened, and a
bigger file is refused with an error naming it. Folders are walked without
recursion, whatever their depth, and symbolic links to folders are not
followed. Nothing is read through a link out of the folder: a file whose real
path (links resolved, once it is open) is not inside the source's root, such as
``systems/node.json -> /etc/shadow``, is refused with an error naming it; links
within the folder are read as the files they lead to. What cannot be taken is
reported, never skipped in silence (:meth:`FolderTree.problems`): a folder that
cannot be listed (no permission), a link that loops, a name that is not valid
UTF-8 (the entries beside it are still read); the files left out are named by
:meth:`FolderTree.not_regular`.

Helpers of :class:`~tracker.sources.tree.FolderTree`: lines of a file read whole, listings.

A folder tree read in parts by other processes, and what each part brings back.

Reading a large folder source on all cores (:mod:`tracker.ingest.parallel`)
gives each worker process its own :class:`PartedFolderTree` of the same folder
under the same location, so that it names files exactly as the whole tree
would. What a worker's tree read, listed and could not take comes back as a
:class:`TreePart` (plain, picklable data) and is absorbed by the tree of the
source (:meth:`PartedFolderTree.absorb`): its artifacts, trail, problems and
left-out entries are then those of one tree that read every part itself.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import IO, Protocol

from tracker.errors import ParseError
from tracker.paths import READ_FLAGS
from tracker.records.results import ArtifactRecord
from tracker.sources.trail import (
    ABSENT,
    Trail,
    dir_signature,
    file_signature,
    signature,
    signatures,
)

__all__ = [
    "BufferedLines",
    "HashedLines",
    "FileTree",
    "FolderTree",
    "MAX_FILE_BYTES",
    "PartedFolderTree",
    "SourceTree",
    "TreePart",
    "content_sha256",
    "holds_no_file",
    "is_utf8",
    "listing",
    "shown_name",
]


class HashedLines:
    """The lines of a large file streamed through its hash, each at most ``_LINE_LIMIT``
    bytes (no bomb held whole); ``cap`` is told the bytes read so far and raises past the
    limit. :meth:`finish` reads what the reader left, so the hash covers the whole file."""

    def __init__(self, stream: IO[bytes], cap: Callable[[int], None]) -> None:
        self._stream, self._cap = stream, cap
        self._digest = hashlib.sha256()
        self._size = 0

    def _take(self, data: bytes) -> None:
        self._digest.update(data)
        self._size += len(data)
        self._cap(self._size)

    def lines(self) -> Iterator[bytes]:
        """The file's lines, ends kept."""
        while line := self._stream.readline(_LINE_LIMIT):
            self._take(line)
            yield line

    def finish(self, path: str) -> ArtifactRecord:
        """The rest of the file read through the hash, and the file's record."""
        while chunk := self._stream.read(_CHUNK):
            self._take(chunk)
        return ArtifactRecord(path, self._digest.hexdigest(), self._size)


class BufferedLines:
    """The lines of a file read whole, ends kept; ``buffer`` is the file itself.

    Iterating gives the same lines as iterating the open file would (split
    after each ``\\n``); a parser may scan ``buffer`` in place instead, which
    spares copying lines it skips (see :func:`tracker.formats.loadgen.parse.parse_detail_log`).
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


def listing(files: Iterable[str], folder: str) -> tuple[list[str], list[str]]:
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


def is_utf8(name: str) -> bool:
    """Whether a listed name is valid UTF-8 (undecodable bytes come as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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


MAX_FILE_BYTES = 1 << 30
"""The largest file a folder tree reads (1 GiB); a bigger one is refused with an error."""
_CHUNK = 1 << 20
_ABSENT_ERRORS = frozenset({errno.ENOENT, errno.ENOTDIR})
"""Listing errors that mean "no such folder" (a probe), not a folder that cannot be read."""
_WHOLE_FILE_LIMIT = 8 << 20
"""Files up to this size are read at once; bigger ones are streamed line by line."""
_LINE_LIMIT = 64 << 20
"""The longest line handed to a reader at once (a longer one comes in pieces)."""


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
        self._problems: dict[str, ParseError] = {}
        self._not_regular: set[str] = set()
        self._real_prefix: str | None = None

    @property
    def root_name(self) -> str:
        return shown_name(self.root.resolve().name)

    def _check_inside(self, path: str, fd: int) -> None:
        """Refuse the open file ``fd`` of ``path`` unless its real path is inside the root."""
        if self._real_prefix is None:
            self._real_prefix = os.path.join(os.path.realpath(self._root_text), "")
        if not _real_path(fd, self._prefix + path).startswith(self._real_prefix):
            raise ParseError(
                self.shown_path(path),
                f"a symbolic link that leads out of {self.location}: not read (the tracker "
                "reads only the files of the source itself)",
            )

    def files(self) -> list[str]:
        if self._files is None:
            found: list[str] = []
            pending = [""]
            while pending:  # no recursion: a folder nested thousands deep is walked too
                folder = pending.pop()
                dirs, files = self._scan(folder)
                found.extend(f"{folder}{name}" for name in files)
                pending.extend(f"{folder}{name}/" for name in dirs)
            self._files = sorted(found)
        return self._files

    def problems(self) -> tuple[ParseError, ...]:
        """What could not be listed or taken so far (see the module docstring), by path."""
        return tuple(self._problems[path] for path in sorted(self._problems))

    def not_regular(self) -> tuple[str, ...]:
        """The entries left out so far as neither a folder nor a regular file, shown."""
        return tuple(sorted(self._not_regular))

    def _problem(self, path: str, message: str) -> None:
        self._problems.setdefault(path, ParseError(self.shown_path(path), message))

    def _scan(self, folder: str) -> tuple[list[str], list[str]]:
        """List ``folder`` ("" or ending in "/"), recording its signature in the trail."""
        full = self._prefix + folder
        try:
            stat = os.stat(full)
            with os.scandir(full) as scan:
                entries = list(scan)
        except OSError as error:
            self._trail.setdefault(folder or "./", ABSENT)
            if error.errno not in _ABSENT_ERRORS:
                self._problem(folder, f"cannot list this folder ({error.strerror})")
            return [], []
        self._trail.setdefault(folder or "./", dir_signature(stat))  # the earliest one counts
        dirs: list[str] = []
        files: list[str] = []
        for entry in entries:  # one pass: listing folders is most of a big tree's walk
            name = entry.name
            if not (name.isascii() or is_utf8(name)):
                shown = os.fsencode(name).decode("utf-8", "backslashreplace")
                self._problem(folder + shown, "the name is not valid UTF-8: not read (rename it)")
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    dirs.append(name)
                elif entry.is_file():
                    files.append(name)
                else:
                    self._other(folder + name, entry)
            except OSError as error:  # a link that loops
                self._problem(folder + name, f"cannot tell what this is ({error.strerror})")
        dirs.sort()
        files.sort()
        return dirs, files

    def _other(self, path: str, entry: os.DirEntry[str]) -> None:
        """An entry that is not a regular file (nor a folder): noted unless a link to a
        folder or a broken link (left out as before); a link that loops is a problem."""
        try:
            mode = entry.stat().st_mode
        except FileNotFoundError:
            return
        if not S_ISDIR(mode):
            self._not_regular.add(self.shown_path(path))

    def list_dir(self, path: str) -> tuple[list[str], list[str]]:
        folder = f"{path.strip('/')}/" if path.strip("/") else ""
        if self._files is not None:
            return listing(self._files, folder)
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
            fd = os.open(self._prefix + path, READ_FLAGS)
        except OSError as error:
            raise ParseError(self.shown_path(path), f"cannot read ({error.strerror})") from None
        try:
            self._check_inside(path, fd)
            stat = self._checked(path, os.fstat(fd))
            size = stat.st_size
            if size > _WHOLE_FILE_LIMIT:
                return None
            data = os.read(fd, size + 1)
            if len(data) != size:  # it grew or shrank since fstat: read to the end
                chunks, total = [data], len(data)
                while chunks[-1]:
                    chunks.append(os.read(fd, _CHUNK))
                    total += len(chunks[-1])
                    self._cap(path, total)
                data = b"".join(chunks)
        except OSError as error:
            raise ParseError(self.shown_path(path), f"cannot read ({error.strerror})") from None
        finally:
            os.close(fd)
        return data

    def _checked(self, path: str, stat: os.stat_result) -> os.stat_result:
        """``stat`` of ``path`` once open: a regular file within the cap (else refused)."""
        if not S_ISREG(stat.st_mode):
            message = "not a regular file (a FIFO, a device or a socket): not read"
            raise ParseError(self.shown_path(path), message)
        self._trail[path] = file_signature(stat)
        self._cap(path, stat.st_size)
        return stat

    def _cap(self, path: str, size: int) -> None:
        if size > MAX_FILE_BYTES:
            raise ParseError(
                self.shown_path(path),
                f"{size} bytes or more: over the {MAX_FILE_BYTES >> 30} GiB limit of one file",
            )

    def _open(self, path: str) -> IO[bytes]:
        try:
            stream = self._path(path).open("rb")
        except OSError as error:
            raise ParseError(self.shown_path(path), f"cannot read ({error.strerror})") from None
        try:
            self._check_inside(path, stream.fileno())
            self._checked(path, os.fstat(stream.fileno()))
        except BaseException:
            stream.close()
            raise
        return stream

    def read_bytes(self, path: str) -> bytes:
        data = self._read_small(path)
        if data is None:
            with self._open(path) as stream:
                data = stream.read(MAX_FILE_BYTES + 1)
                self._cap(path, len(data))
        self._read[path] = ArtifactRecord(path, hashlib.sha256(data).hexdigest(), len(data))
        return data

    @contextmanager
    def open_lines(self, path: str) -> Iterator[Iterator[bytes]]:
        data = self._read_small(path)
        if data is not None:  # small: read at once, hashed once, split into lines here
            yield BufferedLines(data)
            self._read[path] = ArtifactRecord(path, hashlib.sha256(data).hexdigest(), len(data))
            return
        with self._open(path) as stream:
            hashed = HashedLines(stream, lambda size: self._cap(path, size))
            yield hashed.lines()
            self._read[path] = hashed.finish(path)

    def artifact(self, path: str) -> ArtifactRecord | None:
        return self._read.get(path)

    def artifacts(self) -> tuple[ArtifactRecord, ...]:
        return tuple(self._read[p] for p in sorted(self._read))

    def shown_path(self, path: str) -> str:
        if path.startswith("/"):  # as os.path.join: an absolute path stands alone
            return path
        return self._shown_prefix + path  # called for every file parsed, to name it in errors


class FileTree(FolderTree):
    """A single result file as a source tree (a vLLM result, an InferenceX row file...).

    The file the user named is read wherever a link of that name leads: the source is
    that one file."""

    def __init__(self, path: Path, *, location: str | None = None) -> None:
        super().__init__(path.parent, location=location if location is not None else str(path))
        self._files = [path.name]
        self._real_file = os.path.realpath(path)

    def _check_inside(self, path: str, fd: int) -> None:
        if _real_path(fd, self._prefix + path) != self._real_file:
            super()._check_inside(path, fd)

    def shown_path(self, path: str) -> str:
        return str(Path(self.location).parent / path)


def _real_path(fd: int, path: str) -> str:
    """The real path of the open file ``fd`` (opened as ``path``): what the kernel says it
    is (one call, no race with a link changed meanwhile), else ``path`` with links resolved."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def shown_name(name: str) -> str:
    r"""A file name as text that can be stored and printed: bytes that are not UTF-8 (which
    Python keeps as lone surrogates) shown as ``\xff`` escapes.

    >>> shown_name("runs"), shown_name(os.fsdecode(b"bad\xff"))
    ('runs', 'bad\\xff')
    """
    if name.isascii() or is_utf8(name):
        return name
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def content_sha256(artifacts: tuple[ArtifactRecord, ...]) -> str:
    """One hash over the paths and hashes of a source's files."""
    digest = hashlib.sha256()
    for artifact in sorted(artifacts, key=lambda a: a.path):
        digest.update(f"{artifact.path}\0{artifact.sha256}\n".encode())
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class TreePart:
    """What one tree read (``read``: path, sha256, size of each file), listed or probed
    (trail), could not take (``problems``: relative path, path as shown, message) and left
    out (``not_regular``); plain tuples, which cost far less to send than records."""

    read: tuple[tuple[str, str, int], ...]
    trail: tuple[tuple[str, str], ...]
    problems: tuple[tuple[str, str, str], ...]
    not_regular: tuple[str, ...]


class PartedFolderTree(FolderTree):
    """A local folder whose parts may be read by other trees of it, then merged back."""

    def part(self) -> TreePart:
        """Everything this tree read, listed, could not take or left out so far."""
        problems = tuple((path, e.path, e.message) for path, e in self._problems.items())
        return TreePart(
            read=tuple((a.path, a.sha256, a.size_bytes) for a in self._read.values()),
            trail=tuple(self._trail.items()),
            problems=problems,
            not_regular=tuple(self._not_regular),
        )

    def absorb(self, part: TreePart) -> None:
        """Take in what another tree of this folder read (the earliest record of a path counts)."""
        for path, sha256, size_bytes in part.read:
            if path not in self._read:
                self._read[path] = ArtifactRecord(path, sha256, size_bytes)
        trail = dict(part.trail)
        for path in trail.keys() & self._trail.keys():
            del trail[path]
        self._trail.update(trail)
        for path, shown, message in part.problems:
            self._problems.setdefault(path, ParseError(shown, message))
        self._not_regular.update(part.not_regular)


def holds_no_file(tree: SourceTree) -> bool:
    """Whether ``tree`` holds no file at all; a folder is listed only down to its first file.

    Listing a whole folder tree (:meth:`FolderTree.files`) would cost a large
    round a full walk, and make every later listing of it scan that list.
    """
    if not isinstance(tree, FolderTree):
        return not tree.files()
    pending = [""]
    while pending:
        folder = pending.pop()
        dirs, files = tree.list_dir(folder)
        if files:
            return False
        pending += [f"{folder}/{name}" if folder else name for name in reversed(dirs)]
    return True
