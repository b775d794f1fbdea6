"""Where the files of a published MLPerf Inference round are (format notes §1).

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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tracker.parsers.loadgen import DETAIL_LOG_NAME, SUMMARY_LOG_NAME
from tracker.parsers.mlperf_rules import folder_scenario
from tracker.sources.tree import SourceTree

__all__ = [
    "DIVISIONS",
    "TABLE_NAMES",
    "ComplianceTest",
    "ResultFolder",
    "RoundTree",
    "SubmitterTree",
    "is_round_tree",
    "walk_round",
    "walk_round_head",
    "walk_system",
]

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
