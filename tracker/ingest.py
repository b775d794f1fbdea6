"""Ingest: find the runs in a source, read their files, parse, label and store.

This layer opens files (parsers never do), applies the labels the files do not
carry (software version, system, benchmark), hashes what it read, and hands one
source at a time to the store, which writes it in one transaction.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from tracker.errors import ConfigError, ParseError
from tracker.jobs import Job, parse_job
from tracker.readers import KINDS, detect_kind, reader_for
from tracker.readers.base import ProgressCallback
from tracker.records import SourceRecord, SourceSpec
from tracker.store import SaveOutcome, Store
from tracker.tree import FolderTree, SourceTree, content_sha256

__all__ = [
    "KINDS",
    "SourceOutcome",
    "detect_kind",
    "ingest_source",
    "open_tree",
    "read_job",
]


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    """What ingesting one source did; ``errors`` are files that were refused."""

    location: str
    kind: str
    runs_found: int
    saved: SaveOutcome | None
    errors: tuple[ParseError, ...] = ()
    notes: tuple[str, ...] = ()


def open_tree(location: str) -> SourceTree:
    """The files of the source at ``location``."""
    path = Path(location)
    if not path.exists():
        raise ConfigError(f"{location}: no such file or folder")
    if not path.is_dir():
        raise ConfigError(
            f"{location}: expected a folder of results; "
            "archives and URLs are not supported by this version"
        )
    return FolderTree(path, location=location)


def ingest_source(
    store: Store,
    spec: SourceSpec,
    *,
    strict: bool = False,
    progress: ProgressCallback | None = None,
) -> SourceOutcome:
    """Ingest one source, all or nothing.

    With ``strict``, any refused file aborts the whole source; without it, the
    good runs are stored and the refused files are listed in the outcome.
    """
    tree = open_tree(spec.location)
    kind = detect_kind(tree) if spec.kind == "auto" else spec.kind
    reading = reader_for(kind).read(tree, spec, strict=strict, progress=progress)
    saved = None
    if reading.results:
        saved = store.save_source(_source_record(tree, kind, spec), reading.results)
    return SourceOutcome(
        location=spec.location,
        kind=kind,
        runs_found=reading.runs_found,
        saved=saved,
        errors=tuple(reading.errors),
        notes=tuple(sorted(reading.notes)),
    )


def _source_record(tree: SourceTree, kind: str, spec: SourceSpec) -> SourceRecord:
    artifacts = tree.artifacts()
    content = content_sha256(artifacts)
    identity = hashlib.sha256(f"{kind}\n{content}\n{spec.labels.as_json()}".encode())
    return SourceRecord(
        kind=kind,
        location=spec.location,
        content_sha256=content,
        identity_sha256=identity.hexdigest(),
        is_example=spec.labels.is_example,
        artifacts=artifacts,
    )


def read_job(path: Path, *, root: Path | None = None) -> tuple[Job, list[SourceSpec]]:
    """Read an ingest job and resolve its source locations.

    Locations are relative to ``root`` when given, else to the job's own
    ``root`` key (itself relative to the job file), else to the job file's folder.
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the ingest job ({error.strerror})") from None
    job = parse_job(data, path=str(path))
    base = root if root is not None else path.parent / (job.root or ".")
    specs = [
        SourceSpec(location=str(base / spec.location), kind=spec.kind, labels=spec.labels)
        for spec in job.sources
    ]
    return job, specs
