"""An MLPerf Inference round as a tree: where its files are, one pass over them, and what
was read turned into stored results.

Where the files of a published MLPerf Inference round are.

A round repository holds ``<division>/<submitter>/`` folders (divisions
``closed``, ``open``, ``network``), each with ``systems/<system>.json`` and
``results/<system>/<benchmark>/<scenario>/``; the round's table
(``summary_results.json``, v6.1 ``summary.json``) sits at the top. Compliance
runs sit in ``compliance/<system>/<benchmark>/<scenario>/TEST0x/`` up to v5.1
and inside the scenario folder from v6.0 on (a result with ``TEST0x`` folders
under ``compliance/`` is read the v5.1 way, even if its scenario folder held
some too). Only ``performance/run_1`` is read, as the checker does; scenario
folders match case-insensitively.

The walk lists only the folders it needs (never ``code/``, ``src/``,
``measurements/`` or the LoadGen logs of compliance runs; a v5.1 scenario
folder is not listed, its files are looked for by name): listing folders is
what a tree of 20 000 results spends its time on, and checking them again
what an unchanged re-ingest does.

One pass over the files of an MLPerf round, in the order the tree reads best.

An archive is read front to back once (a ``.tar.gz`` cannot seek back
cheaply), so every file is handled on its own as it comes and the results
are put together afterwards (:mod:`tracker.formats.mlperf_inference.read`). What is kept is
small: the detail-log keys the checker's rules and the extras use, summary
hashes (to recognise accuracy-variant twins: ``-99``/``-99.9``, ``-95``/``-99``),
verdicts of compliance files.

Turning what was read of an MLPerf round into stored results (shared by both MLPerf readers).

Every MLPerf result belongs to software ``mlperf-inference`` at version =
the round (``v5.1``); the system JSON's framework and software stack strings
are its ``software_stack``. A result is one sample per round and location
(``sample_id``), so the same published result read from its logs, its table,
a folder, an archive or a download is stored once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TypeVar

from tracker.errors import ConfigError, ParseError
from tracker.formats.loadgen.parse import DETAIL_LOG_NAME, SUMMARY_LOG_NAME, Entry, parse_detail_log
from tracker.formats.mlperf_inference.parse import canonical_benchmark, folder_scenario
from tracker.formats.mlperf_inference.parse_logs import (
    keep_detail_key,
    parse_power_samples,
    parse_verify,
    summary_as_detail,
)
from tracker.formats.mlperf_inference.parse_table import (
    ParsedSystem,
    TableRow,
    TableRows,
    parse_results_table,
    parse_system_json,
)
from tracker.formats.reader import ProgressCallback, read_in_order
from tracker.records.results import (
    INFERENCE_SOFTWARE,
    ArtifactRecord,
    ExtraValue,
    MetricRecord,
    ResultRecord,
    SoftwareRecord,
    SourceSpec,
)
from tracker.sources.tree import SourceTree

__all__ = [
    "ComplianceTest",
    "DIVISIONS",
    "ResultFolder",
    "RoundFiles",
    "RoundTree",
    "SOFTWARE",
    "SubmitterTree",
    "TABLE_NAMES",
    "cross_check_notes",
    "folder_result",
    "is_round_tree",
    "mark_twins",
    "normalize_round",
    "read_folders",
    "read_round",
    "read_round_head",
    "resolve_round",
    "round_from_name",
    "sample_id",
    "software",
    "twin_location",
    "walk_round",
    "walk_round_head",
    "walk_system",
]


_T = TypeVar("_T")

DIVISIONS = ("closed", "open", "network")
TABLE_NAMES = ("summary_results.json", "summary.json")
_VERIFY_NAMES = ("verify_accuracy.txt", "verify_performance.txt", "verify_output_len.txt")


@dataclass(frozen=True, slots=True)
class ComplianceTest:
    """One audit test (``TEST01``...) of a result: its verify files, and for a
    TEST01 the accuracy files that may overrule a failed accuracy check."""

    name: str
    verify: tuple[str, ...]
    baseline_accuracy: str | None = None
    compliance_accuracy: str | None = None

    def paths(self) -> list[str]:
        extra = (self.baseline_accuracy, self.compliance_accuracy)
        return [*self.verify, *(p for p in extra if p)]


@dataclass(frozen=True, slots=True)
class ResultFolder:
    """One ``results/<system>/<benchmark>/<scenario>`` folder and its files."""

    path: str
    division: str
    submitter: str
    system: str
    benchmark: str
    scenario_dir: str
    scenario: str
    summary: str | None
    detail: str | None
    accuracy: str | None
    spl: str | None
    compliance: tuple[ComplianceTest, ...]
    endpoints: bool = False
    """An MLPerf Endpoints result (``performance/result_summary.json``, no LoadGen logs)."""
    endpoints_files: tuple[str | None, str | None] = (None, None)
    """An Endpoints result's ``config.yaml`` and ``accuracy/accuracy_results.json``."""
    unsupported: str | None = None
    """What a ``performance/run_1`` without LoadGen logs holds (a format not read)."""

    @property
    def endpoints_summary(self) -> str:
        """The Endpoints result's ``performance/result_summary.json``."""
        return f"{self.path}/performance/result_summary.json"

    def paths(self) -> list[str]:
        """Every file of the result to read."""
        own = (self.summary, self.detail, self.accuracy, self.spl)
        return [p for p in own if p] + [p for test in self.compliance for p in test.paths()]


@dataclass(slots=True)
class SubmitterTree:
    """A ``<division>/<submitter>`` folder."""

    division: str
    submitter: str
    path: str
    systems: dict[str, str] = field(default_factory=dict)
    model_mapping: str | None = None
    folders: list[ResultFolder] = field(default_factory=list)
    has_compliance: bool = False
    """Whether it holds a ``compliance/`` folder (the v4.1-v5.1 layout)."""


@dataclass(slots=True)
class RoundTree:
    """The parts of a round repository the reader reads."""

    table: str | None
    submitters: list[SubmitterTree]
    notes: list[str]


def is_round_tree(tree: SourceTree) -> bool:
    """Whether the tree's top holds ``<division>/<submitter>/results/``."""
    dirs, _files = tree.list_dir("")
    for division in (d for d in dirs if d in DIVISIONS):
        for submitter in tree.list_dir(division)[0]:
            if "results" in tree.list_dir(f"{division}/{submitter}")[0]:
                return True
    return False


def walk_round(tree: SourceTree) -> RoundTree:
    """Find every result folder of a round, listing as few folders as possible."""
    found, systems = walk_round_head(tree)
    for sub, system in systems:
        sub.folders += walk_system(tree, sub, system, found.notes)
    return found


def walk_round_head(tree: SourceTree) -> tuple[RoundTree, list[tuple[SubmitterTree, str]]]:
    """The round's table and submitters (no result folders yet), and each submitter's
    systems with results, in walk order (each to walk with :func:`walk_system`)."""
    dirs, files = tree.list_dir("")
    table = next((name for name in TABLE_NAMES if name in files), None)
    found = RoundTree(table=table, submitters=[], notes=[])
    systems: list[tuple[SubmitterTree, str]] = []
    for division in (d for d in dirs if d in DIVISIONS):
        for submitter in tree.list_dir(division)[0]:
            sub, names = _walk_submitter(tree, division, submitter)
            found.submitters.append(sub)
            systems += [(sub, name) for name in names]
    return found, systems


def _walk_submitter(
    tree: SourceTree, division: str, submitter: str
) -> tuple[SubmitterTree, list[str]]:
    """A submitter's own files (systems, model mapping) and the systems it has results of;
    its result folders are left to :func:`walk_system` (one system at a time)."""
    path = f"{division}/{submitter}"
    dirs, files = tree.list_dir(path)
    found = SubmitterTree(
        division=division, submitter=submitter, path=path, has_compliance="compliance" in dirs
    )
    if "model_mapping.json" in files:
        found.model_mapping = f"{path}/model_mapping.json"
    if "systems" in dirs:
        for name in tree.list_dir(f"{path}/systems")[1]:
            if name.endswith(".json"):
                found.systems[name.removesuffix(".json")] = f"{path}/systems/{name}"
    systems = tree.list_dir(f"{path}/results")[0] if "results" in dirs else []
    return found, systems


def walk_system(
    tree: SourceTree, sub: SubmitterTree, system: str, notes: list[str]
) -> list[ResultFolder]:
    """The result folders of one system of a submitter, in walk order."""
    folders: list[ResultFolder] = []
    for benchmark in tree.list_dir(f"{sub.path}/results/{system}")[0]:
        folders += _benchmark(tree, sub, system, benchmark, notes)
    return folders


def _benchmark(
    tree: SourceTree, sub: SubmitterTree, system: str, benchmark: str, notes: list[str]
) -> list[ResultFolder]:
    folders = []
    base = f"{sub.path}/results/{system}/{benchmark}"
    for scenario_dir in tree.list_dir(base)[0]:
        scenario = folder_scenario(scenario_dir)
        if scenario is None:
            notes.append(f"{base}/{scenario_dir}: not a scenario folder, skipped")
            continue
        folders.append(_folder(tree, sub, system, benchmark, scenario_dir, scenario))
    return folders


def _folder(
    tree: SourceTree,
    sub: SubmitterTree,
    system: str,
    benchmark: str,
    scenario_dir: str,
    scenario: str,
) -> ResultFolder:
    path = f"{sub.path}/results/{system}/{benchmark}/{scenario_dir}"
    legacy = f"{sub.path}/compliance/{system}/{benchmark}/{scenario_dir}"
    legacy_tests = tree.list_dir(legacy)[0] if sub.has_compliance else []
    accuracy = f"{path}/accuracy/accuracy.txt"
    if any(d.startswith("TEST") for d in legacy_tests):
        # The v4.1-v5.1 layout: the scenario folder is not listed (a folder fewer of
        # four per result to list, and to check again on an unchanged re-ingest);
        # its files are looked for by name, which comes to the same.
        run = tree.list_dir(f"{path}/performance/run_1")[1]
        has_accuracy = has_performance = True
        tests = [_test(tree, f"{legacy}/{d}", d) for d in legacy_tests]
    else:
        dirs, _files = tree.list_dir(path)
        has_accuracy, has_performance = "accuracy" in dirs, "performance" in dirs
        run = tree.list_dir(f"{path}/performance/run_1")[1] if has_performance else []
        tests = [_test(tree, f"{path}/{d}", d) for d in dirs if d.startswith("TEST")]
        if not tests:
            tests = [_test(tree, f"{legacy}/{d}", d) for d in legacy_tests]
    endpoints = has_performance and not run
    endpoints = endpoints and tree.exists(f"{path}/performance/result_summary.json")
    logs = {SUMMARY_LOG_NAME, DETAIL_LOG_NAME}.intersection(run)
    unsupported = None if logs or not run else "performance/run_1/" + "+".join(sorted(run)[:3])
    endpoints_files: tuple[str | None, str | None] = (None, None)
    if endpoints:
        names = tree.list_dir(path)[1]
        config = next((f"{path}/{n}" for n in ("config.yaml", "config.yml") if n in names), None)
        found = f"{path}/accuracy/accuracy_results.json"
        endpoints_files = (config, found if tree.exists(found) else None)
    return ResultFolder(
        path=path,
        division=sub.division,
        submitter=sub.submitter,
        system=system,
        benchmark=benchmark,
        scenario_dir=scenario_dir,
        scenario=scenario,
        summary=_in_run(path, run, SUMMARY_LOG_NAME),
        detail=_in_run(path, run, DETAIL_LOG_NAME),
        accuracy=accuracy if has_accuracy and tree.exists(accuracy) else None,
        spl=_in_run(path, run, "spl.txt"),
        compliance=tuple(t for t in tests if t.verify),
        endpoints=endpoints,
        endpoints_files=endpoints_files,
        unsupported=unsupported,
    )


def _in_run(path: str, run_files: list[str], name: str) -> str | None:
    return f"{path}/performance/run_1/{name}" if name in run_files else None


def _test(tree: SourceTree, path: str, name: str) -> ComplianceTest:
    dirs, files = tree.list_dir(path)
    verify = tuple(f"{path}/{n}" for n in _VERIFY_NAMES if n in files)
    if name != "TEST01" or "accuracy" not in dirs or f"{path}/verify_accuracy.txt" not in verify:
        return ComplianceTest(name, verify)
    baseline, compliance = (f"{path}/accuracy/{n}_accuracy.txt" for n in ("baseline", "compliance"))
    return ComplianceTest(
        name,
        verify,
        baseline if tree.exists(baseline) else None,
        compliance if tree.exists(compliance) else None,
    )


SOFTWARE = INFERENCE_SOFTWARE
_ROUND = re.compile(r"(?:^|[^0-9A-Za-z])v(\d+\.\d+)(?=$|[^0-9])")


def sample_id(location: str) -> str:
    """The identity of a published result across the ways it can be read."""
    return f"{SOFTWARE}:{location}"


def folder_result(
    folder: ResultFolder,
    system: ParsedSystem,
    artifact: ArtifactRecord,
    metric: MetricRecord,
    value: float,
    *,
    round_label: str,
    reasons: Sequence[str],
    extra: Mapping[str, ExtraValue],
    line: int | None = None,
) -> ResultRecord:
    """The result a round publishes for one result folder (read from ``artifact``, a LoadGen
    log or an Endpoints summary): labelled by the tree, valid unless ``reasons`` say why
    not, one sample per round and location."""
    why = {"invalid_reason": "; ".join(reasons)} if reasons else {}
    return ResultRecord(
        system=system.record,
        software=software(round_label),
        benchmark=canonical_benchmark(folder.benchmark),
        scenario=folder.scenario,
        metric=metric,
        value=value,
        is_valid=not reasons,
        artifact_path=artifact.path,
        artifact_sha256=artifact.sha256,
        line=line,
        location=folder.path,
        round=round_label,
        software_stack=system.software_stack,
        extra=dict(sorted({**extra, **why}.items())),
        sample_id=sample_id(folder.path),
    )


def normalize_round(label: str) -> str:
    """``"5.1"`` → ``"v5.1"``; other labels are kept as given."""
    label = label.strip()
    return f"v{label}" if re.fullmatch(r"\d+\.\d+", label) else label


def round_from_name(name: str) -> str | None:
    """The round in a folder or archive name: ``v5.1``, ``inference_results_v5.1-<ref>``."""
    match = _ROUND.search(name)
    return f"v{match.group(1)}" if match else None


def resolve_round(
    table_rounds: Iterable[str], spec: SourceSpec, tree: SourceTree, notes: set[str]
) -> str:
    """The round of a source: its results table, else ``--software-version``, else its name."""
    versions = sorted({normalize_round(v) for v in table_rounds})
    given = normalize_round(spec.labels.software_version or "") or None
    if len(versions) == 1:
        if given and given != versions[0]:
            notes.add(f"the results table says {versions[0]}; --software-version {given} ignored")
        return versions[0]
    if len(versions) > 1:
        notes.add(f"the results table names several rounds ({', '.join(versions)})")
    if given:
        return given
    for name in (tree.root_name, spec.location.rstrip("/").rsplit("/", 1)[-1]):
        found = round_from_name(name)
        if found:
            return found
    raise ConfigError(
        f"{spec.location}: cannot tell which MLPerf round this is (no results table, and no "
        "vX.Y in its name); pass --software-version vX.Y"
    )


def mark_twins(results: list[ResultRecord], digests: Mapping[str, str]) -> list[ResultRecord]:
    """Mark each accuracy variant whose run is the very one of the next lower variant's
    (``-99.9`` of ``-99``, ``-99`` of ``-95``: byte-identical logs).

    ``digests`` maps a result's location to the hash of its run's log; the
    twin is marked ``twin_of`` (the lower variant's benchmark), so it counts once.
    """
    marked = []
    for result in results:
        location = result.location or ""
        twin = twin_location(location)
        if twin and digests.get(twin) and digests.get(twin) == digests.get(location):
            extra: dict[str, ExtraValue] = {**result.extra, "twin_of": twin.split("/")[4]}
            result = _with_extra(result, extra)
        marked.append(result)
    return marked


_LOWER_VARIANT = {"-99.9": "-99", "-99": "-95"}
"""The next lower accuracy variant of a benchmark folder (``yolo-99`` → ``yolo-95``)."""


def twin_location(location: str) -> str | None:
    """The next lower variant's folder (``-99`` of ``-99.9``, ``-95`` of ``-99``) a result
    folder may be a twin of."""
    parts = location.split("/")
    if len(parts) != 6:
        return None
    for suffix, lower in _LOWER_VARIANT.items():
        if parts[4].endswith(suffix):
            parts[4] = parts[4].removesuffix(suffix) + lower
            return "/".join(parts)
    return None


def _with_extra(result: ResultRecord, extra: Mapping[str, ExtraValue]) -> ResultRecord:
    return replace(result, extra=dict(sorted(extra.items())))


@cache
def software(round_label: str) -> SoftwareRecord:
    """The software version of a published result: the round (one record shared by all its
    results)."""
    return SoftwareRecord(software=SOFTWARE, version=round_label)


_MAX_LISTED = 20
"""Disagreements listed one by one; the rest are counted."""


def cross_check_notes(
    disagreements: list[str],
    rows: Mapping[str, TableRow],
    results: list[ResultRecord],
    has_table: bool,
    within_files: Sequence[str] = (),
) -> set[str]:
    """The notes of the cross-checks: against the results table (when there is one) and
    of each result file against itself (always)."""
    found = {f"result file disagrees with itself: {d}" for d in within_files[:_MAX_LISTED]}
    if len(within_files) > _MAX_LISTED:
        found.add(
            f"result files disagree with themselves on {len(within_files) - _MAX_LISTED} more"
        )
    if not has_table:
        return found
    notes = {f"results table disagrees: {d}" for d in disagreements[:_MAX_LISTED]}
    if len(disagreements) > _MAX_LISTED:
        notes.add(f"results table disagrees on {len(disagreements) - _MAX_LISTED} more results")
    read = {r.location for r in results}
    missing = sorted(set(rows) - read)
    if missing:
        rows_word = "row has" if len(missing) == 1 else "rows have"
        notes.add(
            f"{len(missing)} results table {rows_word} no logs here (or no result read "
            f"from them; first: {missing[0]})"
        )
    unlisted = len(read - set(rows))
    if unlisted:
        notes.add(f"{unlisted} results read from logs are not in the results table")
    return notes | found


@dataclass(slots=True)
class RoundFiles:
    """What one pass over a round's files found, by file or folder path."""

    table: TableRows | None = None
    mappings: dict[str, dict[str, str]] = field(default_factory=dict)
    systems: dict[str, ParsedSystem] = field(default_factory=dict)
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
    read_in_order(
        tree,
        _Handlers(tree, found).for_layout(layout),
        found.errors,
        strict=strict,
        progress=progress,
    )
    return found


def read_round_head(tree: SourceTree, layout: RoundTree) -> RoundFiles:
    """Read the round's table and the submitters' own files (systems, model mappings), not
    their result folders; bad files are kept as errors, in the order they were read."""
    found = RoundFiles()
    read_in_order(
        tree, _Handlers(tree, found).for_head(layout), found.errors, strict=False, progress=None
    )
    return found


def read_folders(tree: SourceTree, folders: list[ResultFolder]) -> RoundFiles:
    """Read the files of ``folders`` (one system's, say: ``-99``/``-99.9`` twins sit side by
    side); bad files are kept as errors, in the order they were read."""
    found = RoundFiles()
    handlers = _Handlers(tree, found)
    handlers.by_summary = _twins_told_by_summary(folders)
    read_in_order(tree, handlers.for_folders(folders), found.errors, strict=False, progress=None)
    return found


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
            handlers[sub.model_mapping] = self._parsed(
                sub.model_mapping, _parse_mapping, self.found.mappings, sub.path
            )
        return handlers

    def _folder(self, folder: ResultFolder) -> dict[str, Callable[[], None]]:
        handlers: dict[str, Callable[[], None]] = {}
        if folder.summary and (folder.detail is None or folder.path in self.by_summary):
            handlers[folder.summary] = self._summary(folder)
        if folder.detail:
            handlers[folder.detail] = self._detail(folder.detail, folder.path)
        if folder.spl:
            handlers[folder.spl] = self._parsed(folder.spl, parse_power_samples, self.found.power)
        if folder.accuracy:
            handlers[folder.accuracy] = self._raw(folder.accuracy)
        for test in folder.compliance:
            for verify in test.verify:
                handlers[verify] = self._parsed(verify, parse_verify, self.found.verdicts)
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

    def _parsed(
        self, path: str, parse: Callable[..., _T], into: dict[str, _T], key: str = ""
    ) -> Callable[[], None]:
        """Reads ``path`` with the pure parser ``parse`` into ``into[key or path]``."""

        def read() -> None:
            into[key or path] = parse(self.tree.read_bytes(path), path=self.tree.shown_path(path))

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

    def _raw(self, path: str) -> Callable[[], None]:
        def read() -> None:
            self.found.raw[path] = self.tree.read_bytes(path)

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
