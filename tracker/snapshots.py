"""What an ingested source looked like, so that an unchanged one is not read again.

After a source is stored without errors, its *trail* (the signature of every
folder listed and file read: size, mtime, ctime and inode; for an archive,
its sha256) is saved in the cache folder with the source's identity. The next
ingest of the same location, kind and labels checks the trail first: when
nothing changed and the database holds that identity, the source is reported
unchanged without a single file being read. Any difference, or a database
that lacks the source, means a full read (so a stale snapshot can only cost
time, never data). This is the rule git and rsync rely on; a tool that edits
a file and restores its mtime and ctime cannot, as ctime cannot be set.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Snapshot", "SnapshotCache", "snapshot_key"]

_UNSAFE = frozenset("\t\n\r")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A stored source: its identity, what the ingest found, and its trail."""

    identity_sha256: str
    kind: str
    runs_found: int
    results: int
    trail: tuple[tuple[str, str], ...]


def snapshot_key(*parts: str | None) -> str:
    """The key of a source's snapshot: location, requested kind, labels, pins."""
    return hashlib.sha256(json.dumps(list(parts)).encode()).hexdigest()


class SnapshotCache:
    """Snapshots under ``<cache_dir>/snapshots/``, one small text file each."""

    def __init__(self, cache_dir: Path) -> None:
        self.folder = cache_dir / "snapshots"

    def load(self, key: str) -> Snapshot | None:
        """The snapshot saved under ``key``; ``None`` if there is none or it is damaged."""
        try:
            text = (self.folder / key).read_text(encoding="utf-8")
            head, _, body = text.partition("\n")
            meta = json.loads(head)
            trail = _decode_trail(body)
            return Snapshot(
                identity_sha256=str(meta["identity"]),
                kind=str(meta["kind"]),
                runs_found=int(meta["runs_found"]),
                results=int(meta["results"]),
                trail=trail,
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, key: str, snapshot: Snapshot) -> None:
        """Save ``snapshot`` atomically (a failure to write is ignored: it is only a cache)."""
        head = {
            "identity": snapshot.identity_sha256,
            "kind": snapshot.kind,
            "runs_found": snapshot.runs_found,
            "results": snapshot.results,
        }
        if any(_UNSAFE & set(path) for path, _signature in snapshot.trail):
            return  # a name the line format cannot hold: do without a snapshot
        lines = [json.dumps(head, sort_keys=True), *_encode_trail(snapshot.trail)]
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            temporary = self.folder / f".{key}.tmp"
            temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
            os.replace(temporary, self.folder / key)
        except OSError:
            return


def _encode_trail(trail: tuple[tuple[str, str], ...]) -> list[str]:
    """One ``signature<TAB>path`` line per entry."""
    return [f"{signature}\t{path}" for path, signature in trail]


def _decode_trail(body: str) -> tuple[tuple[str, str], ...]:
    parts = [line.partition("\t") for line in body.splitlines()]
    if not all(separator for _signature, separator, _path in parts):
        raise ValueError("not a trail")
    return tuple((path, signature) for signature, _separator, path in parts)
