"""A large MLPerf round folder read on all cores, to the very results the serial reader
gives: one system's result folders per worker.

A large MLPerf round folder read on all cores, to the very results the serial reader gives.

The source's process walks the round's head (:func:`walk_round_head`), reads
the table and the submitters' files, and settles the round; each system's
result folders are then one :class:`UnitTask` for a pool of worker processes
(``pool``: an ordered map, see :mod:`tracker.ingest.parallel`). The outcomes
come back in walk order and are put together as the serial reader
(:class:`MLPerfInferenceReader`) puts its own: the same results in the same
order, the same notes, errors listed by path; with ``strict``, the same first
error raised (a bad file before a table problem before a refused result). A
round too small to pay for the pool, a tree that cannot be read in parts, or
one whose round cannot be told is read by the serial reader itself.

One system's result folders of an MLPerf round, read in a worker process.

A large round folder is read on all cores (this module):
the source's own process reads the round's table and the submitters' files,
and each :class:`UnitTask` (one ``<division>/<submitter>/results/<system>``)
is walked, read and turned into results by :func:`read_unit`, in a process of
its own, exactly as the serial reader would (the same walk, the same reading
functions, the same :class:`~tracker.formats.mlperf_inference.read.Assembler`; ``-99``/``-99.9``
twins sit in the same system). A task and its :class:`UnitOutcome` are plain
data: errors travel as :data:`ErrorFields` and are raised or listed by the
source's process, in the order the serial reader would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tracker.errors import ConfigError, ParseError
from tracker.formats.mlperf_inference.parse_table import ParsedSystem, TableRow
from tracker.formats.mlperf_inference.read import (
    Assembler,
    MLPerfInferenceReader,
    assemble_results,
    cross_check_notes,
    ignored_labels,
    layout_notes,
)
from tracker.formats.mlperf_inference.read_tree import (
    RoundFiles,
    RoundTree,
    SubmitterTree,
    mark_twins,
    read_folders,
    read_round_head,
    resolve_round,
    walk_round_head,
    walk_system,
)
from tracker.formats.reader import ProgressCallback, Reading
from tracker.records.results import ResultRecord, SourceSpec
from tracker.sources.tree import PartedFolderTree, SourceTree, TreePart

__all__ = [
    "ErrorFields",
    "MIN_PARALLEL_FOLDERS",
    "UnitMap",
    "UnitOutcome",
    "UnitTask",
    "error_from",
    "fields_of",
    "read_round_parallel",
    "read_unit",
]


ErrorFields = tuple[str, str, int | None]
"""A :class:`ParseError` as plain data: the path as shown, the message, the line."""


def fields_of(error: ParseError) -> ErrorFields:
    """``error`` as plain data (a ``ParseError`` itself cannot be unpickled)."""
    return (error.path, error.message, error.line)


def error_from(fields: ErrorFields) -> ParseError:
    """The :class:`ParseError` that :func:`fields_of` made plain."""
    path, message, line = fields
    return ParseError(path, message, line=line)


@dataclass(frozen=True, slots=True)
class UnitTask:
    """One system's result folders to read, with what the round's head gave for them.

    ``description`` is ``None`` when the system has no JSON or it was refused
    (its error is the head's); ``rows`` are the results table's rows of this system.
    """

    root: str
    location: str
    submitter: SubmitterTree
    system: str
    description: ParsedSystem | None
    mapping: dict[str, str] | None
    round_label: str
    rows: dict[str, TableRow]
    strict: bool


@dataclass(frozen=True, slots=True)
class UnitOutcome:
    """What reading one system's folders gave: results (twins marked) and the rest.

    ``file_errors`` are in the order the files were read, ``result_errors`` in
    folder order (with ``strict``, only the first); ``unsupported`` is each
    folder's format not read (``None`` for one read), as the layout notes count them.
    """

    results: list[ResultRecord]
    runs_found: int
    unsupported: tuple[str | None, ...]
    remarks: tuple[str, ...]
    file_errors: tuple[tuple[str, ErrorFields], ...]
    result_errors: tuple[ErrorFields, ...]
    disagreements: tuple[str, ...]
    within_files: tuple[str, ...]
    part: TreePart


def read_unit(task: UnitTask) -> UnitOutcome:
    """Walk, read and assemble one system's result folders (in a worker process)."""
    tree = PartedFolderTree(Path(task.root), location=task.location)
    remarks: list[str] = []
    folders = walk_system(tree, task.submitter, task.system, remarks)
    files = read_folders(tree, folders)
    system_path = task.submitter.systems.get(task.system)
    if system_path is not None and task.description is not None:
        files.systems[system_path] = task.description
    if task.mapping is not None:
        files.mappings[task.submitter.path] = task.mapping
    supported = [(task.submitter, f) for f in folders if not f.unsupported]
    assembler = Assembler(tree, files, task.round_label, task.rows, strict=task.strict)
    reading = Reading()
    try:
        results = assemble_results(assembler, supported, reading, strict=task.strict)
    except ParseError as error:  # strict: the first one ends the source (raised by its process)
        results, reading.errors = [], [error]
    return UnitOutcome(
        results=mark_twins(results, files.run_digest),
        runs_found=len(supported),
        unsupported=tuple(f.unsupported for f in folders),
        remarks=tuple(remarks),
        file_errors=tuple((path, fields_of(e)) for path, e in files.errors.items()),
        result_errors=tuple(fields_of(e) for e in reading.errors),
        disagreements=tuple(assembler.disagreements),
        within_files=tuple(assembler.within_files),
        part=tree.part(),
    )


UnitMap = Callable[[Callable[[UnitTask], UnitOutcome], Sequence[UnitTask]], Iterator[UnitOutcome]]
"""Applies a function to each task (in worker processes), yielding the outcomes in task order."""

MIN_PARALLEL_FOLDERS = 300
"""Rounds with fewer result folders (about) are read in one process: the pool would not pay."""
_FOLDERS_PER_BENCHMARK = 2
"""A benchmark folder holds about two scenario folders (the shared rounds: 2.2)."""


def read_round_parallel(
    tree: SourceTree,
    spec: SourceSpec,
    *,
    strict: bool,
    progress: ProgressCallback | None,
    pool: UnitMap,
    min_folders: int = MIN_PARALLEL_FOLDERS,
) -> Reading:
    """Read the MLPerf round ``tree`` with ``pool``: see the module docstring."""
    serial = MLPerfInferenceReader()
    if not isinstance(tree, PartedFolderTree):
        return serial.read(tree, spec, strict=strict, progress=progress)
    layout, systems = walk_round_head(tree)
    if not systems or _folders_up_to(min_folders, tree, systems) < min_folders:
        return serial.read(tree, spec, strict=strict, progress=progress)
    files = read_round_head(tree, layout)
    rows = {row.location: row for row in files.table.rows} if files.table else {}
    notes: set[str] = set()
    try:
        round_label = resolve_round((r.round for r in rows.values()), spec, tree, notes)
    except ConfigError:  # the serial reader says so, after any error it raises first
        return serial.read(tree, spec, strict=strict, progress=progress)
    tasks = _tasks(tree, systems, files, rows, round_label, strict=strict)
    outcomes = []
    for done, outcome in enumerate(pool(read_unit, tasks), start=1):
        tree.absorb(outcome.part)
        outcomes.append(outcome)
        if progress is not None:
            task = tasks[done - 1]
            progress(done, len(tasks), f"{task.submitter.path}/results/{task.system}")
    reading = _reading(spec, layout, files, list(zip(tasks, outcomes, strict=True)), rows, strict)
    reading.notes |= notes
    return reading


def _folders_up_to(enough: int, tree: SourceTree, systems: list[tuple[SubmitterTree, str]]) -> int:
    """About how many result folders the systems hold, counted up to ``enough``."""
    folders = 0
    for sub, system in systems:
        if folders >= enough:
            break
        folders += _FOLDERS_PER_BENCHMARK * len(tree.list_dir(f"{sub.path}/results/{system}")[0])
    return folders


def _tasks(
    tree: PartedFolderTree,
    systems: list[tuple[SubmitterTree, str]],
    files: RoundFiles,
    rows: dict[str, TableRow],
    round_label: str,
    *,
    strict: bool,
) -> list[UnitTask]:
    by_system: dict[str, dict[str, TableRow]] = {}
    for location, row in rows.items():
        by_system.setdefault(location.rsplit("/", 2)[0], {})[location] = row
    tasks = []
    for sub, system in systems:
        path = sub.systems.get(system)
        own = replace(sub, systems={system: path} if path else {}, folders=[])
        tasks.append(
            UnitTask(
                root=str(tree.root),
                location=tree.location,
                submitter=own,
                system=system,
                description=files.systems.get(path or ""),
                mapping=files.mappings.get(sub.path),
                round_label=round_label,
                rows=by_system.get(f"{sub.path}/results/{system}", {}),
                strict=strict,
            )
        )
    return tasks


def _reading(
    spec: SourceSpec,
    layout: RoundTree,
    files: RoundFiles,
    units: list[tuple[UnitTask, UnitOutcome]],
    rows: dict[str, TableRow],
    strict: bool,
) -> Reading:
    """The outcomes put together as :meth:`MLPerfInferenceReader.read` puts its own."""
    outcomes = [outcome for _task, outcome in units]
    if not any(outcome.unsupported for outcome in outcomes):  # one entry per folder
        raise ConfigError(
            f"{spec.location}: no <division>/<submitter>/results/<system>/<benchmark>/"
            "<scenario> folders: not an MLPerf Inference round"
        )
    file_errors = _file_errors(layout, files, units)
    if strict and file_errors:
        raise file_errors[0][1]
    remarks = [remark for outcome in outcomes for remark in outcome.remarks]
    unsupported = [kind for outcome in outcomes for kind in outcome.unsupported]
    runs_found = sum(outcome.runs_found for outcome in outcomes)
    reading = Reading(runs_found=runs_found, notes=layout_notes(remarks, unsupported))
    reading.errors.extend(error for _path, error in sorted(file_errors, key=lambda e: e[0]))
    if files.table and files.table.problems:
        if strict:
            raise files.table.problems[0]
        reading.errors.extend(files.table.problems)
    result_errors = [error_from(e) for outcome in outcomes for e in outcome.result_errors]
    if strict and result_errors:
        raise result_errors[0]
    reading.errors.extend(result_errors)
    ignored_labels(spec, reading.notes)
    reading.results = [result for outcome in outcomes for result in outcome.results]
    reading.runs_failed = runs_found - len(reading.results)
    disagreements = [d for outcome in outcomes for d in outcome.disagreements]
    within_files = [d for outcome in outcomes for d in outcome.within_files]
    reading.notes.update(
        cross_check_notes(disagreements, rows, reading.results, bool(rows), within_files)
    )
    return reading


def _file_errors(
    layout: RoundTree, files: RoundFiles, units: list[tuple[UnitTask, UnitOutcome]]
) -> list[tuple[str, ParseError]]:
    """The files refused, in the order the serial reader reads them: the table, then each
    submitter's own files and its systems' result files."""
    by_submitter: dict[str, list[tuple[str, ParseError]]] = {}
    for path, error in files.errors.items():  # in the order they were read
        if path != layout.table:  # <division>/<submitter>/systems/... or model_mapping.json
            division, submitter, _rest = path.split("/", 2)
            by_submitter.setdefault(f"{division}/{submitter}", []).append((path, error))
    for task, outcome in units:
        found = by_submitter.setdefault(task.submitter.path, [])
        found += [(path, error_from(fields)) for path, fields in outcome.file_errors]
    ordered = [(layout.table, files.errors[layout.table])] if layout.table in files.errors else []
    for sub in layout.submitters:
        ordered += by_submitter.get(sub.path, [])
    return ordered
