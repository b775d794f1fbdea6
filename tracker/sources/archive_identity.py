"""An unchanged archive or download recognised before it is opened (nothing decompressed).

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
from pathlib import Path

from tracker.sources.trail import Trail

__all__ = ["ARCHIVE_KEY", "IDENTITY_KEY", "archive_trail", "file_identity", "unchanged_archive"]

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
