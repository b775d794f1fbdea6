"""The files of one source, and a record of every file read from it.

A reader sees a source only through a :class:`SourceTree`: relative POSIX
paths, bytes and line streams. The tree hashes what is read, so the source's
artifacts (path, sha256, size) come for free and the content hash of a source
covers exactly the files its results came from. ``FolderTree`` reads a local
folder; archives and downloads provide the same interface.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

from tracker.errors import ParseError
from tracker.records import ArtifactRecord

__all__ = ["FolderTree", "SourceTree", "content_sha256"]


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


class FolderTree:
    """A local folder as a source tree."""

    def __init__(self, root: Path, *, location: str | None = None) -> None:
        self.root = root
        self.location = location if location is not None else str(root)
        self._read: dict[str, ArtifactRecord] = {}
        self._files: list[str] | None = None

    def files(self) -> list[str]:
        if self._files is None:
            self._files = sorted(
                p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file()
            )
        return self._files

    def _path(self, path: str) -> Path:
        return self.root / path

    def read_bytes(self, path: str) -> bytes:
        try:
            data = self._path(path).read_bytes()
        except OSError as error:
            raise ParseError(self.shown_path(path), f"cannot read ({error.strerror})") from None
        self._read[path] = ArtifactRecord(path, hashlib.sha256(data).hexdigest(), len(data))
        return data

    @contextmanager
    def open_lines(self, path: str) -> Iterator[Iterator[bytes]]:
        digest = hashlib.sha256()
        size = 0
        try:
            stream = self._path(path).open("rb")
        except OSError as error:
            raise ParseError(self.shown_path(path), f"cannot read ({error.strerror})") from None
        with stream:

            def lines() -> Iterator[bytes]:
                nonlocal size
                for line in stream:
                    digest.update(line)
                    size += len(line)
                    yield line

            yield lines()
            for line in stream:  # the rest, so that the hash covers the whole file
                digest.update(line)
                size += len(line)
        self._read[path] = ArtifactRecord(path, digest.hexdigest(), size)

    def artifact(self, path: str) -> ArtifactRecord | None:
        return self._read.get(path)

    def artifacts(self) -> tuple[ArtifactRecord, ...]:
        return tuple(self._read[p] for p in sorted(self._read))

    def shown_path(self, path: str) -> str:
        return str(Path(self.location) / path)


def content_sha256(artifacts: tuple[ArtifactRecord, ...]) -> str:
    """One hash over the paths and hashes of a source's files."""
    digest = hashlib.sha256()
    for artifact in sorted(artifacts, key=lambda a: a.path):
        digest.update(f"{artifact.path}\0{artifact.sha256}\n".encode())
    return digest.hexdigest()
