"""Ingest: one source end to end (find the runs, read, parse, label, store), and ``tracker
pull`` for published rounds.

Ingest: find the runs in a source, read their files, parse, label and store.

This layer opens files (parsers never do), applies the labels the files do not
carry (software version, system, benchmark), hashes what it read, and hands one
source at a time to the store, which writes it in one transaction.

``tracker pull mlperf-inference|mlperf-training``: where published rounds live; pulling one.

Each MLPerf Inference round is the GitHub repository
``mlcommons/inference_results_vX.Y``, each Training round
``mlcommons/training_results_vX.Y``; a pull downloads the ``.tar.gz`` archive
of one commit (``--ref``) or of the default branch, through the download cache
(:mod:`tracker.sources.fetch`: a second pull of an unchanged round transfers nothing),
and ingests it as a source of that kind whose location is the archive URL, so
every result can be traced to the commit it came from.

The notes an ingest gives about a source: results stored as invalid, and stored
results the source disagrees with (an upstream correction of an MLPerf round).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tracker.errors import ConfigError, ParseError, TrackerError
from tracker.formats import KINDS, detect_kind, reader_for
from tracker.formats.mlperf_inference.read_tree import normalize_round
from tracker.formats.reader import (
    ProgressCallback,
    Reading,
    raise_tree_problem,
    refuse_bad_labels,
    require_positive,
    take_tree_problems,
)
from tracker.ingest.jobs import GITHUB, Job, is_url, parse_job, resolve_url, shown_location
from tracker.ingest.parallel import fewer_collections, read_source
from tracker.records.results import Labels, ResultRecord, SourceRecord, SourceSpec
from tracker.sources.archive import unchanged_archive
from tracker.sources.fetch import DEFAULT_CACHE_DIR, Download, FetchOptions, fetch
from tracker.sources.trail import Snapshot, SnapshotCache, snapshot_key
from tracker.sources.tree import (
    FileTree,
    FolderTree,
    PartedFolderTree,
    SourceTree,
    content_sha256,
    holds_no_file,
)
from tracker.store.facade import SaveOutcome, Store

if TYPE_CHECKING:
    from tracker.store.write import Correction

__all__ = [
    "CORRECTIONS_LISTED",
    "INVALID_LISTED",
    "KINDS",
    "PULLABLE",
    "ROUND_REPOSITORIES",
    "SourceOutcome",
    "correction_note",
    "detect_kind",
    "ingest_source",
    "invalid_entry",
    "invalid_note",
    "open_tree",
    "pull_round",
    "read_job",
    "round_repository",
]


INVALID_LISTED = 3
"""How many invalid results the ingest summary names (the rest are counted)."""

CORRECTIONS_LISTED = 3
"""How many stored results that differ from a source the ingest names (the rest are counted)."""


def invalid_note(invalid: tuple[str, ...]) -> str:
    """One line for the results stored as invalid: their count and the first few."""
    count = len(invalid)
    listed = "; ".join(invalid[:INVALID_LISTED])
    more = f"; and {count - INVALID_LISTED} more" if count > INVALID_LISTED else ""
    return f"{count} result{'' if count == 1 else 's'} stored as invalid: {listed}{more}"


def correction_note(corrections: tuple[Correction, ...], *, replaced: bool) -> str:
    """One line for the stored results that differ from a source: their count and the first few."""
    count = len(corrections)
    listed = ", ".join(_correction(c) for c in corrections[:CORRECTIONS_LISTED])
    more = f", and {count - CORRECTIONS_LISTED} more" if count > CORRECTIONS_LISTED else ""
    results = f"{count} stored result{'' if count == 1 else 's'}"
    if replaced:
        return f"{results} replaced by this source's values: {listed}{more}"
    return (
        f"{results} differ{'s' if count == 1 else ''} from this source (an upstream correction?): "
        f"{listed}{more}; run again with --replace to take the new values"
    )


def _correction(c: Correction) -> str:
    old, new = f"{c.stored_value:,}", f"{c.value:,}"
    if c.stored_valid != c.valid:
        old += " (valid)" if c.stored_valid else " (invalid)"
        new += " (valid)" if c.valid else " (invalid)"
    return f"{c.location}: {old} → {new}"


def invalid_entry(result: ResultRecord) -> str:
    """How a result stored as invalid is named: where it is, and why (when the reader said)."""
    reason = result.extra.get("invalid_reason")
    where = result.location or result.artifact_path
    return f"{where}: {reason}" if isinstance(reason, str) and reason else where


RESULT_FILE_SUFFIXES = frozenset({".json", ".jsonl"})
"""A single file with one of these suffixes is a source of its own (one result file)."""


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    """What ingesting one source did; ``errors`` are files that were refused.

    ``runs_failed`` counts the runs (result folders) that gave no result because
    of an error; ``download`` says what fetching a URL source cost. ``invalid``
    names each result stored as invalid (``"<location>: <reason>"``); the notes
    carry one line that counts them and names the first few.
    """

    location: str
    kind: str
    runs_found: int
    saved: SaveOutcome | None
    errors: tuple[ParseError, ...] = ()
    notes: tuple[str, ...] = ()
    runs_failed: int = 0
    download: Download | None = None
    invalid: tuple[str, ...] = ()


def open_tree(
    location: str,
    *,
    commit: str | None = None,
    sha256: str | None = None,
    fetch_options: FetchOptions | None = None,
) -> SourceTree:
    """The files of the source at ``location``: a folder, an archive, a result file or a URL.

    A URL is downloaded into the cache first (see :mod:`tracker.sources.fetch`);
    ``commit`` pins a repository URL, ``sha256`` the bytes of an archive or download.
    """
    return _open(location, commit, sha256, fetch_options or FetchOptions())[0]


class _Unchanged(Exception):
    """An archive or download found unchanged before it was opened (nothing decompressed)."""

    def __init__(self, trail: tuple[tuple[str, str], ...], download: Download | None) -> None:
        super().__init__("unchanged")
        self.trail, self.download = trail, download


def _skip_unchanged(
    path: Path, sha256: str | None, download: Download | None, known: tuple[Snapshot, Store] | None
) -> None:
    """Raise :class:`_Unchanged` when the archive at ``path`` is the one ``known`` stored."""
    if known is not None:
        trail = unchanged_archive(path, known[0].trail, sha256=sha256)
        if trail is not None and known[1].has_source(known[0].identity_sha256):
            raise _Unchanged(trail, download)


def _open(
    location: str,
    commit: str | None,
    sha256: str | None,
    options: FetchOptions,
    known: tuple[Snapshot, Store] | None = None,
) -> tuple[SourceTree, Download | None]:
    shown = shown_location(location)
    if is_url(location):
        download = fetch(resolve_url(location, commit), options, expected_sha256=sha256)
        _skip_unchanged(download.path, download.sha256, download, known)
        return _open_file(download.path, shown, download.sha256), download
    if commit:
        raise ConfigError(f"{shown}: a commit pin applies to a repository URL, not a path")
    path = Path(location)
    if not path.exists():
        raise ConfigError(f"{shown}: no such file or folder")
    if path.is_dir():
        if sha256:
            raise ConfigError(f"{shown}: a sha256 pin applies to an archive or a download")
        return PartedFolderTree(path, location=shown), None
    if not path.is_file():  # a FIFO, a device: never opened (it may block or never end)
        raise ConfigError(f"{shown}: not a regular file (a FIFO, a device or a socket)")
    _skip_unchanged(path, None, None, known)
    tree = _open_file(path, shown, None)
    from tracker.sources.archive import ArchiveTree

    if sha256 and isinstance(tree, ArchiveTree) and tree.sha256 != sha256.lower():
        tree.close()
        raise ConfigError(f"{shown}: sha256 is {tree.sha256}, the pin says {sha256}")
    return tree, None


def _open_file(path: Path, location: str, sha256: str | None) -> SourceTree:
    from tracker.sources.archive import is_archive, open_archive

    if is_archive(path):
        return open_archive(path, location=location, sha256=sha256)
    if path.suffix in RESULT_FILE_SUFFIXES:
        return FileTree(path, location=location)
    raise ConfigError(
        f"{location}: expected a folder of results, an archive (.tar.gz, .tgz, .zip) "
        f"or a result file ({', '.join(sorted(RESULT_FILE_SUFFIXES))})"
    )


def ingest_source(
    store: Store,
    spec: SourceSpec,
    *,
    strict: bool = False,
    progress: ProgressCallback | None = None,
    cache_dir: Path | None = None,
    download_progress: Callable[[int, int | None], None] | None = None,
    replace_differing: bool = False,
    jobs: int = 1,
    download_retry: Callable[[str], None] | None = None,
) -> SourceOutcome:
    """Ingest one source, all or nothing.

    With ``strict``, any refused file aborts the whole source; without it, the
    good runs are stored and the refused files are listed in the outcome.
    ``cache_dir`` holds downloads and the snapshots that let an unchanged source
    be recognised without reading it (:mod:`tracker.sources.trail`); without one,
    URLs are cached in ``~/.cache/tracker`` and every source is read in full.
    A stored result whose value or validity the source disagrees with (an
    upstream correction of an MLPerf round) is kept and named in a note, or,
    with ``replace_differing``, takes the source's value (its old one kept in its history).
    A large folder source is read by ``jobs`` processes (:mod:`tracker.ingest.parallel`).
    ``download_retry`` hears of each failed download attempt that another one follows.
    """
    cache = cache_dir or DEFAULT_CACHE_DIR
    options = FetchOptions(cache, progress=download_progress, on_retry=download_retry)
    snapshots = SnapshotCache(cache_dir) if cache_dir is not None else None
    key = _snapshot_key(spec)
    known = snapshots.load(key) if snapshots is not None else None
    try:
        tree, download = _open(
            spec.location, spec.commit, spec.sha256, options, (known, store) if known else None
        )
    except _Unchanged as unchanged:  # an archive or a download, recognised before it is opened
        assert snapshots is not None and known is not None
        return _recognised(spec.location, key, known, snapshots, unchanged)
    spec = replace(spec, location=tree.location)  # as shown: no credentials, printable
    try:
        if known is not None and _unchanged(store, tree, known):
            saved = SaveOutcome(True, 0, known.results)
            return SourceOutcome(
                spec.location, known.kind, known.runs_found, saved, download=download
            )
        with fewer_collections():
            stored = _read_and_store(
                store,
                spec,
                tree,
                strict=strict,
                progress=progress,
                replace_differing=replace_differing,
                jobs=jobs,
            )
        if snapshots is not None and stored.snapshot is not None:
            snapshots.save(key, stored.snapshot)
    finally:
        _close(tree)
    return _outcome(spec.location, stored, download)


def _outcome(location: str, stored: _Stored, download: Download | None) -> SourceOutcome:
    """What reading and storing a source came to: what it held, what was refused, and
    notes on its invalid results and on the stored results it disagrees with."""
    reading = stored.reading
    invalid = tuple(invalid_entry(result) for result in reading.results if not result.is_valid)
    notes = reading.notes | ({invalid_note(invalid)} if invalid else set())
    if stored.saved is not None and stored.saved.differing:
        notes.add(correction_note(stored.saved.differing, replaced=False))
    if stored.saved is not None and stored.saved.replaced:
        notes.add(correction_note(stored.saved.replaced, replaced=True))
    return SourceOutcome(
        location=location,
        kind=stored.kind,
        runs_found=reading.runs_found,
        saved=stored.saved,
        errors=tuple(reading.errors),
        notes=tuple(sorted(notes)),
        runs_failed=len(reading.errors) if reading.runs_failed is None else reading.runs_failed,
        download=download,
        invalid=invalid,
    )


def _recognised(
    location: str, key: str, known: Snapshot, snapshots: SnapshotCache, unchanged: _Unchanged
) -> SourceOutcome:
    """The outcome of an archive or a download recognised unchanged before it was opened."""
    if unchanged.trail != tuple(known.trail):  # touched, same bytes: remember it as it is now
        snapshots.save(key, replace(known, trail=unchanged.trail))
    saved = SaveOutcome(True, 0, known.results)
    return SourceOutcome(
        shown_location(location), known.kind, known.runs_found, saved, download=unchanged.download
    )


@dataclass(frozen=True, slots=True)
class _Stored:
    kind: str
    reading: Reading
    saved: SaveOutcome | None
    snapshot: Snapshot | None
    """What to remember of a source stored without errors."""


def _read_and_store(
    store: Store,
    spec: SourceSpec,
    tree: SourceTree,
    *,
    strict: bool,
    progress: ProgressCallback | None,
    replace_differing: bool,
    jobs: int = 1,
) -> _Stored:
    if holds_no_file(tree):
        raise_tree_problem(tree)  # an unreadable folder says why it looks empty
        raise ConfigError(
            f"{spec.location}: nothing to ingest, no files in it; give the folder "
            "that holds the result files (or the runs' folders)"
        )
    try:
        kind = detect_kind(tree) if spec.kind == "auto" else spec.kind
    except ConfigError:
        raise_tree_problem(tree)  # an unreadable folder says why nothing was recognised
        raise
    try:
        reader = reader_for(kind)
        reading = read_source(
            reader,
            kind,
            tree,
            spec,
            strict=strict,
            progress=progress,
            jobs=jobs,
            while_workers_read=store.open_now,  # a new database is created meanwhile
        )
    except ConfigError as error:
        hint = _kind_hint(tree, kind)
        if not hint:
            raise
        raise ConfigError(f"{error}{hint}") from None
    if reading.runs_found == 0 and not reading.errors:
        raise ConfigError(
            f"{spec.location}: nothing to ingest, no {kind} results here (looked for "
            f"{reader_for(kind).looks_for}){_kind_hint(tree, kind) or _NO_OTHER_KIND}"
        )
    take_tree_problems(tree, reading, strict=strict)
    refuse_bad_labels(reading, strict=strict)
    reading.results[:] = require_positive(reading.results)
    if not reading.results:
        return _Stored(kind, reading, None, None)
    record = _source_record(tree, kind, spec)
    saved = store.save_source(record, reading.results, replace_differing=replace_differing)
    snapshot = None
    if not reading.errors and not saved.differing:  # a disagreement is reported again
        snapshot = Snapshot(
            identity_sha256=record.identity_sha256,
            kind=kind,
            runs_found=reading.runs_found,
            results=len(reading.results),
            trail=tree.trail(),
        )
    return _Stored(kind, reading, saved, snapshot)


_NO_OTHER_KIND = "; give the folder that holds the runs, or another --kind"


def _kind_hint(tree: SourceTree, kind: str) -> str:
    """When the reader of ``kind`` does not recognise ``tree`` but another does, which
    ``--kind`` fits (after a ``--kind`` that found nothing of its own); else nothing."""
    try:
        if reader_for(kind).detect(tree):
            return ""
        found = detect_kind(tree)
    except TrackerError:  # nothing recognised, or a file that cannot be read
        return ""
    return (
        f"; the files look like {found} results ({reader_for(found).looks_for}): "
        f'pass --kind {found} (kind = "{found}" in an ingest job), or leave it out'
    )


def _snapshot_key(spec: SourceSpec) -> str:
    location = spec.location if is_url(spec.location) else str(Path(spec.location).resolve())
    return snapshot_key(location, spec.kind, spec.labels.as_json(), spec.commit, spec.sha256)


def _unchanged(store: Store, tree: SourceTree, known: Snapshot) -> bool:
    return tree.trail_matches(known.trail) and store.has_source(known.identity_sha256)


def _close(tree: SourceTree) -> None:
    """Close an archive's tree (a folder's or a file's holds nothing open)."""
    if isinstance(tree, FolderTree):
        return
    from tracker.sources.archive import ArchiveTree

    if isinstance(tree, ArchiveTree):
        tree.close()


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
    return job, [_resolved(spec, base) for spec in job.sources]


def _resolved(spec: SourceSpec, base: Path) -> SourceSpec:
    """A job's source with its location made absolute (a pinned repository: its archive URL)."""
    if is_url(spec.location):
        return replace(spec, location=resolve_url(spec.location, spec.commit), commit=None)
    return replace(spec, location=str(base / spec.location))


ROUND_REPOSITORIES = {
    "mlperf-inference": "inference_results",
    "mlperf-training": "training_results",
}
"""Per kind, the name of its rounds' repositories (``mlcommons/<name>_vX.Y``)."""
PULLABLE = tuple(ROUND_REPOSITORIES)
"""What ``tracker pull`` knows how to find."""


def round_repository(
    round_label: str, *, base_url: str = GITHUB, kind: str = "mlperf-inference"
) -> str:
    """The repository of a round: ``v5.1`` → ``<base>/mlcommons/inference_results_v5.1``."""
    label = normalize_round(round_label)
    if not re.fullmatch(r"v\d+\.\d+", label):
        raise ConfigError(f"--round {round_label!r} is not a round; write it as vX.Y, e.g. v5.1")
    if kind not in ROUND_REPOSITORIES:
        raise ConfigError(f"cannot pull {kind!r}; pullable: {', '.join(PULLABLE)}")
    return f"{base_url.rstrip('/')}/mlcommons/{ROUND_REPOSITORIES[kind]}_{label}"


def pull_round(
    store: Store,
    round_label: str,
    *,
    ref: str | None = None,
    base_url: str = GITHUB,
    strict: bool = False,
    cache_dir: Path | None = None,
    progress: ProgressCallback | None = None,
    download_progress: Callable[[int, int | None], None] | None = None,
    kind: str = "mlperf-inference",
    replace_differing: bool = False,
    download_retry: Callable[[str], None] | None = None,
) -> SourceOutcome:
    """Download a round's archive (pinned to ``ref`` when given) and ingest it as ``kind``.

    ``replace_differing``: stored results the round now disagrees with (an upstream
    correction) take its values; see :func:`tracker.ingest.run.ingest_source`.
    """
    url = resolve_url(round_repository(round_label, base_url=base_url, kind=kind), ref)
    spec = SourceSpec(
        location=url,
        kind=kind,
        labels=Labels(software_version=normalize_round(round_label)),
    )
    return ingest_source(
        store,
        spec,
        strict=strict,
        progress=progress,
        cache_dir=cache_dir,
        download_progress=download_progress,
        replace_differing=replace_differing,
        download_retry=download_retry,
    )
