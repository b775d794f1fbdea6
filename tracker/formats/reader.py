"""What every reader shares: the :class:`Reader` interface, :class:`Reading`, labelling.

Every metric the parsers produce is a throughput, a latency or a time, which
must be positive: :func:`require_positive` stores a result whose value is zero,
negative or not a number as invalid, with the reason in ``extra["invalid_reason"]``
(a throughput fallen to 0 is a broken run, never a measurement to compare).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from tracker.errors import ConfigError, ParseError
from tracker.records.results import (
    LabelError,
    ParsedResult,
    ResultRecord,
    SoftwareRecord,
    SourceSpec,
    SystemRecord,
    checked_label,
)
from tracker.sources.tree import FolderTree, SourceTree

__all__ = [
    "DEFAULT_SOFTWARE",
    "ProgressCallback",
    "read_in_order",
    "Reader",
    "Reading",
    "ignored_label_notes",
    "label_result",
    "raise_tree_problem",
    "require_labels",
    "require_positive",
    "take_tree_problems",
]


DEFAULT_SOFTWARE = "local"
ProgressCallback = Callable[[int, int, str], None]


@dataclass
class Reading:
    """What a reader found in one source.

    ``errors`` are the files refused (the source's other results are still
    good); ``notes`` are remarks for the user (labels guessed, files skipped).
    """

    results: list[ResultRecord] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)
    notes: set[str] = field(default_factory=set)
    runs_found: int = 0
    runs_failed: int | None = None
    """Runs that gave no result because of an error (``None``: one per error)."""


class Reader(Protocol):
    """Reads one kind of source."""

    kind: str
    """The name used by ``--kind`` and in ingest jobs."""
    looks_for: str
    """What :meth:`detect` looks for, for the error when nothing matches."""

    def detect(self, tree: SourceTree) -> bool:
        """Whether the files of ``tree`` are of this kind."""
        ...

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        """Parse every run of the source; with ``strict``, raise on the first bad file."""
        ...


def ignored_label_notes(spec: SourceSpec, notes: set[str], *, source: str) -> None:
    """A note for each label given for ``source`` (a kind of source) whose files name it:
    ``--accelerators`` for a flag, ``accelerators in the ingest job`` for a job's source
    entry; a job's ``[defaults]`` apply only where they fit, so they get no note."""
    origin = dict(spec.job_labels)
    for name in ("software", "system", "accelerators", "benchmark"):
        if getattr(spec.labels, name) is None or origin.get(name) == "defaults":
            continue
        shown = f"{name} in the ingest job" if name in origin else f"--{name}"
        notes.add(f"{shown} does not apply to {source} (its files name it); ignored")


def require_labels(spec: SourceSpec, *, what_files_lack: str) -> tuple[str, str]:
    """The software version and system labels, which local-run files do not carry."""
    labels = spec.labels
    if not labels.software_version:
        raise ConfigError(
            f"{spec.location}: {what_files_lack} do not name a software version; "
            "pass --software-version (or software_version in the ingest job)"
        )
    if not labels.system:
        raise ConfigError(
            f"{spec.location}: {what_files_lack} do not name the system; "
            "pass --system (or system in the ingest job)"
        )
    return labels.software_version, labels.system


def label_result(
    parsed: ParsedResult,
    spec: SourceSpec,
    *,
    artifact_sha256: str,
    benchmark: str,
    run_label: str = "",
    sweep_key: str | None = None,
) -> ResultRecord:
    """A parsed value with the labels of the source applied (command line or job)."""
    labels = spec.labels
    version, system = labels.software_version or "", labels.system or ""
    return ResultRecord(
        system=SystemRecord(name=system, accelerators_total=labels.accelerators),
        software=SoftwareRecord(
            software=labels.software or DEFAULT_SOFTWARE,
            version=version,
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
        run_label=run_label,
        sweep_key=sweep_key,
        extra=parsed.extra,
    )


def read_in_order(
    tree: SourceTree,
    handlers: Mapping[str, Callable[[], None]],
    errors: dict[str, ParseError],
    *,
    strict: bool,
    progress: ProgressCallback | None,
) -> None:
    """Call each path's handler in the tree's read order; a file that does not parse is
    kept in ``errors`` (``strict``: raised) and the others are read on."""
    order = tree.read_order(handlers)
    for done, path in enumerate(order, start=1):
        try:
            handlers[path]()
        except ParseError as error:
            if strict:
                raise
            errors[path] = error
        if progress is not None:
            progress(done, len(order), path)


def require_positive(results: Iterable[ResultRecord]) -> list[ResultRecord]:
    """``results``, each whose value is not positive made invalid with the reason (one
    invalid already, with a reason, is kept as it is: its value is 0 because of it)."""
    out = []
    for result in results:
        before = result.extra.get("invalid_reason")
        if result.value > 0.0 or (not result.is_valid and isinstance(before, str) and before):
            out.append(result)  # positive (not NaN), or invalid already with its reason
            continue
        reason = f"{result.metric.name} is {result.value:g}: it must be positive"
        extra = {**result.extra, "invalid_reason": reason}
        out.append(replace(result, is_valid=False, extra=extra))
    return out


def refuse_bad_labels(reading: Reading, *, strict: bool) -> None:
    """Drop the results of ``reading`` whose labels from their files break the label
    rules (:func:`tracker.records.results.checked_label`: the same on every database); each is
    an error naming its file (with ``strict``, the first is raised)."""
    kept = []
    seen: dict[tuple[str, str], str | None] = {}  # labels repeat: check each once
    for result in reading.results:
        problem = _label_problem(result, seen)
        if problem is None:
            kept.append(result)
            continue
        error = ParseError(result.artifact_path, problem, line=result.line)
        if strict:
            raise error
        reading.errors.append(error)
    reading.results[:] = kept


def _label_problem(result: ResultRecord, seen: dict[tuple[str, str], str | None]) -> str | None:
    labels = (
        ("system", result.system.name),
        ("submitter", result.system.submitter),
        ("benchmark", result.benchmark),
        ("scenario", result.scenario),
        ("workload", result.workload),
        ("software", result.software.software),
        ("software_version", result.software.version),
    )
    for name, value in labels:
        if not value:  # a label a kind of result does not have (a training scenario)
            continue
        if (name, value) not in seen:
            seen[(name, value)] = _problem_of(name, value)
        if seen[(name, value)] is not None:
            return seen[(name, value)]
    return None


def _problem_of(name: str, value: str) -> str | None:
    try:
        checked_label(name, value)
    except LabelError as error:
        return f"{name} label: {error}"
    return None


def take_tree_problems(tree: SourceTree, reading: Reading, *, strict: bool) -> None:
    """What a folder tree could not list or take becomes errors of ``reading`` (with
    ``strict``, the first is raised); the entries it left out, a note."""
    if not isinstance(tree, FolderTree):
        return
    problems = tree.problems()
    if strict and problems:
        raise problems[0]
    reading.errors.extend(problems)
    left_out = tree.not_regular()
    if left_out:
        more = f" and {len(left_out) - 3} more" if len(left_out) > 3 else ""
        reading.notes.add(f"not regular files, not read: {', '.join(left_out[:3])}{more}")


def raise_tree_problem(tree: SourceTree) -> None:
    """Raise the first thing a folder tree could not list or take, if any (it explains
    why nothing was recognised in it)."""
    if isinstance(tree, FolderTree) and tree.problems():
        raise tree.problems()[0]
