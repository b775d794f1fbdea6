"""Trails (the signatures of what a tree listed, probed and read) and snapshots of ingested
sources, so that an unchanged source is not read again.

Trails: the signatures of what a folder tree listed, probed and read.

A signature is a folder's or a file's ``stat`` data that changes whenever what
a reader saw there may have changed (see :mod:`tracker.sources.tree` and
below). A :class:`Trail` is an earlier trail, checked again
on an unchanged re-ingest: some 200,000 entries for a round of 20,000 results,
hence plain text and a single pass of ``stat`` calls (:func:`signatures`).

What an ingested source looked like, so that an unchanged one is not read again.

After a source is stored without errors, its *trail* (the signature of every
folder listed and file read: size, mtime, ctime and inode; for an archive,
its sha256 and its file's identity) is saved in the cache folder with the
source's identity. The next ingest of the same location, kind and labels
checks the trail first: when nothing changed and the database holds that
identity, the source is reported unchanged without a single file being read
(an archive without being opened: :mod:`tracker.sources.archive`).
Any difference, or a database that lacks the source, means a full read (so a
stale snapshot can only cost time, never data). This is the rule git and
rsync rely on; a tool that edits a file and restores its mtime and ctime
cannot, as ctime cannot be set.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISDIR, S_ISREG

__all__ = [
    "ABSENT",
    "Snapshot",
    "SnapshotCache",
    "Trail",
    "dir_signature",
    "file_signature",
    "other_signature",
    "signature",
    "signatures",
    "snapshot_key",
]


ABSENT = "-"
"""The signature of a path where nothing is."""


class Trail:
    """An earlier trail, kept as bytes: its paths, and its signatures as one text, a line each.

    Iterating gives its ``(path, signature)`` entries. A folder tree of 20,000
    results has some 200,000, which
    :meth:`tracker.sources.tree.FolderTree.trail_matches` checks with one
    ``stat`` each and a single comparison of texts (paths stay in the
    file-system encoding, as ``stat`` takes them and a snapshot file holds them).
    """

    __slots__ = ("paths", "signature_text")

    def __init__(self, paths: Sequence[bytes], signature_text: bytes) -> None:
        if (signature_text.count(b"\n") + 1 if paths else len(signature_text)) != len(paths):
            raise ValueError("a trail has one signature per path")
        self.paths = paths
        self.signature_text = signature_text

    @classmethod
    def of(cls, entries: Iterable[tuple[str, str]]) -> Trail:
        """The trail of ``(path, signature)`` entries."""
        pairs = tuple(entries)
        text = "\n".join(found for _path, found in pairs)
        return cls([os.fsencode(path) for path, _found in pairs], text.encode())

    def __iter__(self) -> Iterator[tuple[str, str]]:
        found = self.signature_text.decode().split("\n") if self.paths else []
        return zip(map(os.fsdecode, self.paths), found, strict=True)

    def __len__(self) -> int:
        return len(self.paths)


def file_signature(stat: os.stat_result) -> str:
    """A file's size, mtime, ctime and inode: it changes whenever its content may have."""
    return f"f{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}"


def dir_signature(stat: os.stat_result) -> str:
    """A folder's mtime, ctime and inode: it changes when an entry is added, removed or renamed."""
    return f"d{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}"


def other_signature(stat: os.stat_result) -> str:
    """Neither a folder nor a regular file (a FIFO, a device, a socket): never read."""
    return f"o{stat.st_mode:o}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}"


def signature(full_path: str) -> str:
    """The signature of whatever is at ``full_path`` now (:data:`ABSENT` for nothing)."""
    try:
        stat = os.stat(full_path)
    except OSError:
        return ABSENT
    if S_ISDIR(stat.st_mode):
        return dir_signature(stat)
    return file_signature(stat) if S_ISREG(stat.st_mode) else other_signature(stat)


def signatures(prefix: str, paths: Iterable[bytes]) -> list[str]:
    """The signature of each of ``paths`` (under ``prefix``) now, as :func:`signature` gives it.

    One ``stat`` per path and nothing else: this is the whole unchanged re-ingest.
    Paths are looked up from the root folder's descriptor where the platform
    allows (a shorter walk for the kernel, no string to build).
    """
    base, folder = os.fsencode(prefix), None
    if os.stat in os.supports_dir_fd:
        try:
            base, folder = b"", os.open(prefix, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            pass
    found: list[str] = []
    stat, append = os.stat, found.append
    try:
        for path in paths:
            try:
                st = stat(base + path, dir_fd=folder)
            except OSError:
                append(ABSENT)
                continue
            if S_ISDIR(st.st_mode):  # the three signatures above, without the calls
                append(f"d{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}")
            elif S_ISREG(st.st_mode):
                append(f"f{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}")
            else:
                append(f"o{st.st_mode:o}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}")
    finally:
        if folder is not None:
            os.close(folder)
    return found


_FORMAT = 2
"""Line 1: the head (JSON); then one line per signature, then one line per path, in order."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A stored source: its identity, what the ingest found, and its trail."""

    identity_sha256: str
    kind: str
    runs_found: int
    """The runs the ingest found in the source (a run: one result folder or file)."""
    results: int
    trail: tuple[tuple[str, str], ...] | Trail


def snapshot_key(*parts: str | None) -> str:
    """The key of a source's snapshot: location, requested kind, labels, pins."""
    return hashlib.sha256(json.dumps(list(parts)).encode()).hexdigest()


class SnapshotCache:
    """Snapshots under ``<cache_dir>/snapshots/``, one small text file each."""

    def __init__(self, cache_dir: Path) -> None:
        self.folder = cache_dir / "snapshots"

    def load(self, key: str) -> Snapshot | None:
        """The snapshot saved under ``key``; ``None`` if there is none or it is damaged.

        Read with bytes methods only, never line by line (a trail may have
        100,000s of entries and this is most of an unchanged re-ingest).
        """
        try:
            head, _newline, body = (self.folder / key).read_bytes().partition(b"\n")
            meta = json.loads(head)
            count, width = int(meta["entries"]), int(meta["signature_bytes"])
            if meta["format"] != _FORMAT or body[width : width + 1] != b"\n" or body[-1:] != b"\n":
                return None
            paths = body[width + 1 : -1].split(b"\n") if count else []
            if len(paths) != count:
                return None
            return Snapshot(
                identity_sha256=str(meta["identity"]),
                kind=str(meta["kind"]),
                runs_found=int(meta["runs_found"]),
                results=int(meta["results"]),
                trail=Trail(paths, body[:width]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, key: str, snapshot: Snapshot) -> None:
        """Save ``snapshot`` atomically (a failure to write is ignored: it is only a cache)."""
        try:
            trail = (
                snapshot.trail if isinstance(snapshot.trail, Trail) else Trail.of(snapshot.trail)
            )
        except ValueError:  # also a name that is not text in the file-system encoding
            return  # a signature the line format cannot hold: do without a snapshot
        paths = b"\n".join(trail.paths)
        if paths.count(b"\n") != max(len(trail) - 1, 0):
            return  # a name the line format cannot hold
        head = {
            "format": _FORMAT,
            "identity": snapshot.identity_sha256,
            "kind": snapshot.kind,
            "runs_found": snapshot.runs_found,
            "results": snapshot.results,
            "entries": len(trail),
            "signature_bytes": len(trail.signature_text),
        }
        data = b"\n".join([json.dumps(head, sort_keys=True).encode(), trail.signature_text, paths])
        # One temporary file per process: two ingests of the same source at once
        # each write their own and the last rename wins, whole.
        temporary = self.folder / f".{key}.{os.getpid()}.tmp"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(data + b"\n")
            os.replace(temporary, self.folder / key)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
            return
