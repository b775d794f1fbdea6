"""One system's result folders of an MLPerf round, read in a worker process.

A large round folder is read on all cores (:mod:`tracker.readers.mlperf_parallel`):
the source's own process reads the round's table and the submitters' files,
and each :class:`UnitTask` (one ``<division>/<submitter>/results/<system>``)
is walked, read and turned into results by :func:`read_unit`, in a process of
its own, exactly as the serial reader would (the same walk, the same reading
functions, the same :class:`~tracker.readers.mlperf.Assembler`; ``-99``/``-99.9``
twins sit in the same system). A task and its :class:`UnitOutcome` are plain
data: errors travel as :data:`ErrorFields` and are raised or listed by the
source's process, in the order the serial reader would.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tracker.errors import ParseError
from tracker.parsers.mlperf_system import SystemDescription
from tracker.parsers.mlperf_table import TableRow
from tracker.readers.base import Reading
from tracker.readers.mlperf import Assembler, assemble_results
from tracker.readers.mlperf_layout import SubmitterTree, walk_system
from tracker.readers.mlperf_read import read_folders
from tracker.readers.mlperf_results import mark_twins
from tracker.records import ResultRecord
from tracker.sources.tree_parts import PartedFolderTree, TreePart

__all__ = ["ErrorFields", "UnitOutcome", "UnitTask", "error_from", "fields_of", "read_unit"]

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
    description: SystemDescription | None
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
