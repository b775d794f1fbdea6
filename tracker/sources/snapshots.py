"""What an ingested source looked like, so that an unchanged one is not read again.

After a source is stored without errors, its *trail* (the signature of every
folder listed and file read: size, mtime, ctime and inode; for an archive,
its sha256 and its file's identity) is saved in the cache folder with the
source's identity. The next ingest of the same location, kind and labels
checks the trail first: when nothing changed and the database holds that
identity, the source is reported unchanged without a single file being read
(an archive without being opened: :mod:`tracker.sources.archive_identity`).
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
from dataclasses import dataclass
from pathlib import Path

from tracker.sources.trail import Trail

__all__ = ["Snapshot", "SnapshotCache", "snapshot_key"]

_FORMAT = 2
"""Line 1: the head (JSON); then one line per signature, then one line per path, in order."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A stored source: its identity, what the ingest found, and its trail."""

    identity_sha256: str
    kind: str
    runs_found: int
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
