"""Ingest: find the runs in a source, read their files, parse, label and store.

This layer opens files (parsers never do), applies the labels the files do not
carry (software version, system, benchmark), hashes what it read, and hands one
source at a time to the store, which writes it in one transaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from tracker.errors import ConfigError, ParseError
from tracker.jobs import Job, parse_job
from tracker.parsers.loadgen import DETAIL_LOG_NAME, SUMMARY_LOG_NAME, parse_loadgen_run
from tracker.records import (
    ArtifactRecord,
    ParsedResult,
    ResultRecord,
    SoftwareRecord,
    SourceRecord,
    SourceSpec,
    SystemRecord,
)
from tracker.store import SaveOutcome, Store

__all__ = [
    "KINDS",
    "SourceOutcome",
    "detect_kind",
    "ingest_source",
    "read_job",
]

KINDS = ("loadgen",)
"""The source kinds this version reads (``auto`` picks one of them)."""

DEFAULT_SOFTWARE = "local"
ProgressCallback = Callable[[int, int, str], None]


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    """What ingesting one source did; ``errors`` are files that were refused."""

    location: str
    kind: str
    runs_found: int
    saved: SaveOutcome | None
    errors: tuple[ParseError, ...] = ()
    notes: tuple[str, ...] = ()


def detect_kind(path: Path) -> str:
    """The kind of source at ``path``, recognised from its files."""
    if path.is_dir() and _has_loadgen_logs(path):
        return "loadgen"
    raise ConfigError(
        f"{path}: cannot tell what kind of results this is; looked for LoadGen logs "
        f"({SUMMARY_LOG_NAME}, {DETAIL_LOG_NAME}). Supported kinds: {', '.join(KINDS)}; "
        "pass --kind to choose one"
    )


def _has_loadgen_logs(path: Path) -> bool:
    return any(path.rglob(SUMMARY_LOG_NAME)) or any(path.rglob(DETAIL_LOG_NAME))


def ingest_source(
    store: Store,
    spec: SourceSpec,
    *,
    strict: bool = False,
    progress: ProgressCallback | None = None,
) -> SourceOutcome:
    """Ingest one source. With ``strict``, any refused file aborts the whole source."""
    path = Path(spec.location)
    if not path.exists():
        raise ConfigError(f"{spec.location}: no such file or folder")
    if not path.is_dir():
        raise ConfigError(
            f"{spec.location}: expected a folder of LoadGen runs; "
            "archives and URLs are not supported by this version"
        )
    kind = detect_kind(path) if spec.kind == "auto" else spec.kind
    if kind not in KINDS:
        raise ConfigError(f"unknown kind {kind!r}; supported kinds: auto, {', '.join(KINDS)}")
    return _ingest_loadgen_folder(store, path, spec, strict=strict, progress=progress)


def _ingest_loadgen_folder(
    store: Store,
    root: Path,
    spec: SourceSpec,
    *,
    strict: bool,
    progress: ProgressCallback | None,
) -> SourceOutcome:
    labels = spec.labels
    if not labels.software_version:
        raise ConfigError(
            f"{spec.location}: LoadGen logs do not name a software version; "
            "pass --software-version (or software_version in the ingest job)"
        )
    if not labels.system:
        raise ConfigError(
            f"{spec.location}: LoadGen logs do not name the system; "
            "pass --system (or system in the ingest job)"
        )
    run_dirs = _find_run_dirs(root)
    if not run_dirs:
        raise ConfigError(f"{spec.location}: no {SUMMARY_LOG_NAME} or {DETAIL_LOG_NAME} inside")
    reader = _RunReader(root, spec)
    errors: list[ParseError] = []
    for done, run_dir in enumerate(run_dirs, start=1):
        try:
            reader.read_run(run_dir)
        except ParseError as error:
            if strict:
                raise
            errors.append(error)
        if progress is not None:
            progress(done, len(run_dirs), str(run_dir))
    saved = None
    if reader.results:
        saved = store.save_source(reader.source_record("loadgen"), reader.results)
    return SourceOutcome(
        location=spec.location,
        kind="loadgen",
        runs_found=len(run_dirs),
        saved=saved,
        errors=tuple(errors),
        notes=tuple(sorted(reader.notes)),
    )


def _find_run_dirs(root: Path) -> list[Path]:
    found = {p.parent for name in (SUMMARY_LOG_NAME, DETAIL_LOG_NAME) for p in root.rglob(name)}
    return sorted(found)


class _RunReader:
    """Reads LoadGen run folders of one source, keeping what was read for the store."""

    def __init__(self, root: Path, spec: SourceSpec) -> None:
        self.root = root
        self.spec = spec
        self.artifacts: list[ArtifactRecord] = []
        self.results: list[ResultRecord] = []
        self.notes: set[str] = set()

    def read_run(self, run_dir: Path) -> None:
        summary_path = run_dir / SUMMARY_LOG_NAME
        detail_path = run_dir / DETAIL_LOG_NAME
        summary = summary_path.read_bytes() if summary_path.is_file() else None
        artifacts: list[ArtifactRecord] = []
        if summary is not None:
            artifacts.append(self._artifact(summary_path, hashlib.sha256(summary), len(summary)))
        try:
            parsed = self._parse(run_dir, summary, detail_path, artifacts)
        except ParseError as error:
            raise ParseError(
                str(self._shown(Path(error.path))), error.message, line=error.line
            ) from None
        self.artifacts.extend(artifacts)
        digests = {a.path: a.sha256 for a in artifacts}
        for result in parsed:
            self.results.append(self._label(result, run_dir, digests[result.artifact_path]))

    def _parse(
        self,
        run_dir: Path,
        summary: bytes | None,
        detail_path: Path,
        artifacts: list[ArtifactRecord],
    ) -> list[ParsedResult]:
        if not detail_path.is_file():
            return self._run_parser(run_dir, summary, None)
        digest = hashlib.sha256()
        with detail_path.open("rb") as stream:
            parsed = self._run_parser(run_dir, summary, _hashed_lines(stream, digest))
            for _ in _hashed_lines(stream, digest):
                pass
        artifacts.append(self._artifact(detail_path, digest, detail_path.stat().st_size))
        return parsed

    def _run_parser(
        self, run_dir: Path, summary: bytes | None, detail_lines: Iterator[bytes] | None
    ) -> list[ParsedResult]:
        return parse_loadgen_run(
            summary=summary,
            summary_path=self._relative(run_dir / SUMMARY_LOG_NAME),
            detail_lines=detail_lines,
            detail_path=self._relative(run_dir / DETAIL_LOG_NAME),
            benchmark=self.spec.labels.benchmark,
        )

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _shown(self, relative: Path) -> Path:
        return Path(self.spec.location) / relative

    def _artifact(self, path: Path, digest: hashlib._Hash, size: int) -> ArtifactRecord:
        return ArtifactRecord(path=self._relative(path), sha256=digest.hexdigest(), size_bytes=size)

    def _label(self, parsed: ParsedResult, run_dir: Path, artifact_sha256: str) -> ResultRecord:
        labels = self.spec.labels
        benchmark = labels.benchmark or parsed.benchmark or _sut_name(parsed)
        if not labels.benchmark and not parsed.benchmark:
            self.notes.add(
                f"no benchmark named: stored under the SUT name {benchmark!r} (pass --benchmark)"
            )
        assert labels.software_version is not None and labels.system is not None
        return ResultRecord(
            system=SystemRecord(name=labels.system, accelerators_total=labels.accelerators),
            software=SoftwareRecord(
                software=labels.software or DEFAULT_SOFTWARE,
                version=labels.software_version,
                release_date=labels.release_date,
            ),
            benchmark=benchmark,
            scenario=parsed.scenario,
            metric=parsed.metric,
            value=parsed.value,
            is_valid=parsed.is_valid,
            artifact_path=parsed.artifact_path,
            artifact_sha256=artifact_sha256,
            line=parsed.line,
            workload=parsed.workload,
            concurrency=parsed.concurrency,
            run_label=self._relative(run_dir) if run_dir != self.root else "",
            extra=parsed.extra,
        )

    def source_record(self, kind: str) -> SourceRecord:
        artifacts = tuple(sorted(self.artifacts, key=lambda a: a.path))
        content = hashlib.sha256()
        for artifact in artifacts:
            content.update(f"{artifact.path}\0{artifact.sha256}\n".encode())
        identity = hashlib.sha256(
            f"{kind}\n{content.hexdigest()}\n{self.spec.labels.as_json()}".encode()
        )
        return SourceRecord(
            kind=kind,
            location=self.spec.location,
            content_sha256=content.hexdigest(),
            identity_sha256=identity.hexdigest(),
            is_example=self.spec.labels.is_example,
            artifacts=artifacts,
        )


def _sut_name(parsed: ParsedResult) -> str:
    name = parsed.extra.get("sut_name")
    return name if isinstance(name, str) and name else "loadgen"


def _hashed_lines(stream: BinaryIO, digest: hashlib._Hash) -> Iterator[bytes]:
    for line in stream:
        digest.update(line)
        yield line


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
