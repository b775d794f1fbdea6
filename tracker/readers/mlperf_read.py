"""One pass over the files of an MLPerf round, in the order the tree reads best.

An archive is read front to back once (a ``.tar.gz`` cannot seek back
cheaply), so every file is handled on its own as it comes and the results
are put together afterwards (:mod:`tracker.readers.mlperf`). What is kept is
small: the detail-log keys the checker's rules and the extras use, summary
hashes (to recognise ``-99``/``-99.9`` twins), verdicts of compliance files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from tracker.errors import ParseError
from tracker.parsers.loadgen import Entry, parse_detail_log
from tracker.parsers.mlperf_extras import parse_power_samples, parse_verify
from tracker.parsers.mlperf_logs import keep_detail_key, summary_as_detail
from tracker.parsers.mlperf_system import SystemDescription, parse_system_json
from tracker.parsers.mlperf_table import TableRows, parse_results_table
from tracker.readers.base import ProgressCallback
from tracker.readers.mlperf_layout import ResultFolder, RoundTree, SubmitterTree
from tracker.readers.mlperf_results import twin_location
from tracker.sources.tree import SourceTree

__all__ = ["RoundFiles", "read_folders", "read_round", "read_round_head"]


@dataclass(slots=True)
class RoundFiles:
    """What one pass over a round's files found, by file or folder path."""

    table: TableRows | None = None
    mappings: dict[str, dict[str, str]] = field(default_factory=dict)
    systems: dict[str, SystemDescription] = field(default_factory=dict)
    logs: dict[str, dict[str, Entry]] = field(default_factory=dict)
    from_summary: set[str] = field(default_factory=set)
    run_digest: dict[str, str] = field(default_factory=dict)
    """Per folder, the hash of the run's log that tells ``-99``/``-99.9`` twins apart."""
    raw: dict[str, bytes] = field(default_factory=dict)
    verdicts: dict[str, bool | None] = field(default_factory=dict)
    power: dict[str, list[tuple[bytes, float]]] = field(default_factory=dict)
    errors: dict[str, ParseError] = field(default_factory=dict)


def read_round(
    tree: SourceTree, layout: RoundTree, *, strict: bool, progress: ProgressCallback | None
) -> RoundFiles:
    """Read every file the layout names, once each; bad files are kept as errors.

    With ``strict`` the first bad file raises its :class:`ParseError`.
    """
    found = RoundFiles()
    _read_all(tree, _Handlers(tree, found).for_layout(layout), found, strict, progress)
    return found


def read_round_head(tree: SourceTree, layout: RoundTree) -> RoundFiles:
    """Read the round's table and the submitters' own files (systems, model mappings), not
    their result folders; bad files are kept as errors, in the order they were read."""
    found = RoundFiles()
    _read_all(tree, _Handlers(tree, found).for_head(layout), found, False, None)
    return found


def read_folders(tree: SourceTree, folders: list[ResultFolder]) -> RoundFiles:
    """Read the files of ``folders`` (one system's, say: ``-99``/``-99.9`` twins sit side by
    side); bad files are kept as errors, in the order they were read."""
    found = RoundFiles()
    handlers = _Handlers(tree, found)
    handlers.by_summary = _twins_told_by_summary(folders)
    _read_all(tree, handlers.for_folders(folders), found, False, None)
    return found


def _read_all(
    tree: SourceTree,
    handlers: dict[str, Callable[[], None]],
    found: RoundFiles,
    strict: bool,
    progress: ProgressCallback | None,
) -> None:
    order = tree.read_order(handlers)
    for done, path in enumerate(order, start=1):
        try:
            handlers[path]()
        except ParseError as error:
            if strict:
                raise
            found.errors[path] = error
        if progress is not None:
            progress(done, len(order), path)


class _Handlers:
    """A reading function for each file of the round."""

    def __init__(self, tree: SourceTree, found: RoundFiles) -> None:
        self.tree = tree
        self.found = found
        self.by_summary: set[str] = set()

    def for_layout(self, layout: RoundTree) -> dict[str, Callable[[], None]]:
        self.by_summary = _twins_told_by_summary(f for s in layout.submitters for f in s.folders)
        handlers = self._for_table(layout)
        for sub in layout.submitters:
            handlers.update(self._submitter(sub))
            handlers.update(self.for_folders(sub.folders))
        return handlers

    def for_head(self, layout: RoundTree) -> dict[str, Callable[[], None]]:
        handlers = self._for_table(layout)
        for sub in layout.submitters:
            handlers.update(self._submitter(sub))
        return handlers

    def for_folders(self, folders: list[ResultFolder]) -> dict[str, Callable[[], None]]:
        handlers: dict[str, Callable[[], None]] = {}
        for folder in folders:
            if folder.endpoints:
                paths = (folder.endpoints_summary, *folder.endpoints_files)
                handlers.update({p: self._raw(p) for p in paths if p})
            elif not folder.unsupported:
                handlers.update(self._folder(folder))
        return handlers

    def _for_table(self, layout: RoundTree) -> dict[str, Callable[[], None]]:
        return {layout.table: self._table(layout.table)} if layout.table else {}

    def _submitter(self, sub: SubmitterTree) -> dict[str, Callable[[], None]]:
        handlers: dict[str, Callable[[], None]] = {
            path: self._system(path, sub, name) for name, path in sub.systems.items()
        }
        if sub.model_mapping:
            handlers[sub.model_mapping] = self._mapping(sub.model_mapping, sub.path)
        return handlers

    def _folder(self, folder: ResultFolder) -> dict[str, Callable[[], None]]:
        handlers: dict[str, Callable[[], None]] = {}
        if folder.summary and (folder.detail is None or folder.path in self.by_summary):
            handlers[folder.summary] = self._summary(folder)
        if folder.detail:
            handlers[folder.detail] = self._detail(folder.detail, folder.path)
        if folder.spl:
            handlers[folder.spl] = self._power(folder.spl)
        if folder.accuracy:
            handlers[folder.accuracy] = self._raw(folder.accuracy)
        for test in folder.compliance:
            handlers.update({path: self._verify(path) for path in test.verify})
            for path in (test.baseline_accuracy, test.compliance_accuracy):
                if path:
                    handlers[path] = self._raw(path)
        return handlers

    def _table(self, path: str) -> Callable[[], None]:
        def read() -> None:
            data = self.tree.read_bytes(path)
            self.found.table = parse_results_table(data, path=self.tree.shown_path(path))

        return read

    def _system(self, path: str, sub: SubmitterTree, name: str) -> Callable[[], None]:
        def read() -> None:
            self.found.systems[path] = parse_system_json(
                self.tree.read_bytes(path),
                path=self.tree.shown_path(path),
                platform=name,
                submitter=sub.submitter,
                division=sub.division,
            )

        return read

    def _mapping(self, path: str, submitter_path: str) -> Callable[[], None]:
        def read() -> None:
            self.found.mappings[submitter_path] = _parse_mapping(
                self.tree.read_bytes(path), path=self.tree.shown_path(path)
            )

        return read

    def _summary(self, folder: ResultFolder) -> Callable[[], None]:
        def read() -> None:
            path = folder.summary or ""
            data = self.tree.read_bytes(path)
            artifact = self.tree.artifact(path)
            if artifact is not None and folder.path in self.by_summary:
                self.found.run_digest[folder.path] = artifact.sha256
            if folder.detail is None:
                log = summary_as_detail(data, path=self.tree.shown_path(path))
                self.found.logs[folder.path] = log
                self.found.from_summary.add(folder.path)

        return read

    def _detail(self, path: str, folder_path: str) -> Callable[[], None]:
        def read() -> None:
            with self.tree.open_lines(path) as lines:
                log = parse_detail_log(lines, path=self.tree.shown_path(path), keep=keep_detail_key)
            self.found.logs[folder_path] = log
            artifact = self.tree.artifact(path)
            if artifact is not None and folder_path not in self.by_summary:
                self.found.run_digest[folder_path] = artifact.sha256

        return read

    def _power(self, path: str) -> Callable[[], None]:
        def read() -> None:
            data = self.tree.read_bytes(path)
            self.found.power[path] = parse_power_samples(data, path=self.tree.shown_path(path))

        return read

    def _raw(self, path: str) -> Callable[[], None]:
        def read() -> None:
            self.found.raw[path] = self.tree.read_bytes(path)

        return read

    def _verify(self, path: str) -> Callable[[], None]:
        def read() -> None:
            data = self.tree.read_bytes(path)
            self.found.verdicts[path] = parse_verify(data, path=self.tree.shown_path(path))

        return read


def _twins_told_by_summary(all_folders: Iterable[ResultFolder]) -> set[str]:
    """Twin folders that must be compared by summary log: one of the two lacks a detail log.

    Other folders with a detail log need no summary at all (the checker reads
    only the detail log), which spares reading a file per result.
    """
    folders = {f.path: f for f in all_folders}
    told: set[str] = set()
    for path, folder in folders.items():
        twin = folders.get(twin_location(path) or "")
        if twin is not None and (folder.detail is None or twin.detail is None):
            told.update((path, twin.path))
    return told


def _parse_mapping(data: bytes, *, path: str) -> dict[str, str]:
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ParseError(path, f"not a valid model_mapping.json ({error})") from None
    if not isinstance(document, dict):
        raise ParseError(path, "model_mapping.json must map benchmark folders to models")
    return {str(k).strip(): str(v).strip() for k, v in document.items() if isinstance(v, str)}
