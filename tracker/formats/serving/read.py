"""The LLM-serving readers: AIPerf, GenAI-Perf, vLLM and InferenceX, and what they share
(finding points, labelling them, tying sweeps together).

What the LLM-serving readers share: finding points, labelling them, tying sweeps together.

A serving reader lists the *units* of a source (a run folder or a result
file, each yielding one or more points), parses each with a pure parser, and
hands the parsed points to :func:`label_points`, which

* applies the labels: the command line (or ingest job) names the software,
  version, system and benchmark; where it is silent, the files' own names are
  used (an InferenceX row's framework, image tag and hardware; an Endpoints
  system description; the model a tool records), else the user is asked;
* sets the accelerator count: from the file where it says, else ``--accelerators``
  (which then adds the per-accelerator series, see :mod:`tracker.formats.serving.parse`);
* ties the points of one sweep together with a ``sweep_key``: the points of one
  sweep folder (the parent of ``concurrency_N/``, ``r<N>/``, or a result file's
  folder) with the same labels, curve workload and precision. The key hashes
  those and the content of the point files, so re-ingesting changes nothing and
  a second software version makes a second curve.

NVIDIA AIPerf artifact folders: single runs, multi-turn runs and native sweeps.

Every folder holding ``profile_export_aiperf.json`` is one run (one point),
except the per-phase copies under ``phases/`` (the warm-up phase is never
read). A native sweep is a folder of ``concurrency_N/`` runs (or
``concurrency_N__requests_M/``); its points share a sweep key. Trials
(``profile_runs/run_NNNN/``) are repeats of their point within the sweep.
AIPerf's ``aggregate/`` and ``sweep_aggregate/`` files are derived from the runs
and are not read; a folder holding only those is refused with a hint.

GenAI-Perf artifact folders: every ``*_genai_perf.json`` is one run (one point).

GenAI-Perf writes one artifact folder per run
(``artifacts/<model>-<service>-<endpoint>-concurrency<N>/``); the runs of one
``artifacts/`` folder are tied together as one sweep.

``vllm bench serve --save-result`` files (and the InferenceX fork's): one or more points each.

vLLM lets the user name the result file, so files are recognised by content:
every JSON file of the source whose object has vLLM's result keys is read (a
malformed one is reported, not skipped); other JSON files are skipped with a
note. The points of one folder with the same labels and workload form one sweep.

SemiAnalysis InferenceX rows: ``agg_*.json`` files, API/DB row arrays, AgentX aggregates.

``agg_*.json`` files are read by name; other JSON files are read when their
content is InferenceX rows (``conc`` and ``hw``/``hardware``). A raw
vLLM-style result found beside them is the same run as its ``agg_`` row, so it
is skipped with a note (ingest it with ``--kind vllm-bench`` to store it);
``power_validation_*.json`` sidecars hold no result and are skipped. Rows name
their hardware, framework and container image, which label the results where
the command line does not (image tag → software version, hardware and
topology → system).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from posixpath import basename, dirname

from tracker.errors import ConfigError, ParseError
from tracker.formats.parse_json import decode_json, decode_json_lines
from tracker.formats.reader import DEFAULT_SOFTWARE, ProgressCallback, Reading, label_result
from tracker.formats.serving.parse import with_accelerators
from tracker.formats.serving.parse_aiperf import (
    AGGREGATE_NAME,
    SUMMARY_NAME,
    SUMMARY_SUFFIX,
    SWEEP_NAME,
    parse_aiperf_summary,
    parse_genai_perf_summary,
)
from tracker.formats.serving.parse_vllm import (
    looks_like_inferencex_row,
    parse_inferencex_rows,
    parse_vllm_result,
)
from tracker.records.results import ExtraValue, ParsedResult, ResultRecord, SourceSpec, SystemRecord
from tracker.sources.tree import SourceTree

__all__ = [
    "AIPerfReader",
    "GenAIPerfReader",
    "InferenceXReader",
    "Parsed",
    "SNIFF_LIMIT",
    "SniffedReader",
    "Unit",
    "VLLMBenchReader",
    "has_loadgen_logs",
    "is_vllm_like",
    "json_candidates",
    "label_points",
    "read_units",
    "sniff_json",
]


SNIFF_LIMIT = 20
"""At most this many JSON files are opened to recognise a kind by content."""
_LOADGEN_LOGS = ("mlperf_log_detail.txt", "mlperf_log_summary.txt")


@dataclass(frozen=True, slots=True)
class Unit:
    """A run folder or result file: what one parser call reads."""

    run_label: str
    group: str
    paths: tuple[str, ...]


Parse = Callable[[SourceTree, Unit], list[ParsedResult]]
Parsed = list[tuple[Unit, list[ParsedResult]]]
"""Each unit read with the points parsed from it."""
Extra = Mapping[str, ExtraValue]


def read_units(
    tree: SourceTree,
    units: Sequence[Unit],
    parse: Parse,
    *,
    strict: bool,
    progress: ProgressCallback | None,
) -> tuple[Reading, Parsed]:
    """Parse every unit; a bad file is an error of the reading (raised with ``strict``)."""
    reading = Reading(runs_found=len(units))
    parsed: Parsed = []
    for done, unit in enumerate(units, start=1):
        try:
            parsed.append((unit, parse(tree, unit)))
        except ParseError as error:
            shown = error  # the tree's own error (a file it cannot read) names it as shown
            if error.path not in {tree.shown_path(path) for path in unit.paths if path}:
                shown = ParseError(tree.shown_path(error.path), error.message, line=error.line)
            if strict:
                raise shown from None
            reading.errors.append(shown)
        if progress is not None:
            progress(done, len(units), unit.run_label)
    return reading, parsed


def label_points(
    tree: SourceTree,
    spec: SourceSpec,
    kind: str,
    parsed: Iterable[tuple[Unit, list[ParsedResult]]],
    reading: Reading,
) -> None:
    """Label every parsed point and add it to ``reading.results``, sweeps tied together."""
    labelled: list[tuple[tuple[str, ...], ResultRecord]] = []
    for unit, results in parsed:
        for result in _with_label_accelerators(results, spec, reading):
            record = _label(tree, spec, kind, unit, result, reading)
            labelled.append((_sweep_identity(kind, unit, record), record))
    members: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for identity, record in labelled:
        members[identity].add(record.artifact_sha256)
    for identity, record in labelled:
        payload = json.dumps([*identity, sorted(members[identity])])
        sweep_key = hashlib.sha256(payload.encode()).hexdigest()
        reading.results.append(replace(record, sweep_key=sweep_key))


def _with_label_accelerators(
    results: list[ParsedResult], spec: SourceSpec, reading: Reading
) -> list[ParsedResult]:
    given = spec.labels.accelerators
    if given is None:
        return results
    for result in results:
        said = result.extra.get("accelerators_total")
        if said is not None and said != given:
            reading.notes.add(
                f"{result.artifact_path} says {said} accelerators: "
                f"--accelerators {given} is not used for it"
            )
    return with_accelerators(results, given)


def _label(
    tree: SourceTree,
    spec: SourceSpec,
    kind: str,
    unit: Unit,
    result: ParsedResult,
    reading: Reading,
) -> ResultRecord:
    labels, extra = spec.labels, result.extra
    version, system, benchmark = _names(spec, kind, result)
    if not labels.benchmark and not extra.get("curve_workload"):
        reading.notes.add(
            "the files name no workload (ISL/OSL or dataset): points are keyed on their "
            "load alone; name the workload with --benchmark"
        )
    artifact = tree.artifact(result.artifact_path)
    assert artifact is not None, result.artifact_path
    record = label_result(
        result,
        replace(spec, labels=replace(labels, software_version=version, system=system)),
        artifact_sha256=artifact.sha256,
        benchmark=benchmark,
        run_label=unit.run_label,
    )
    software = labels.software or _text(extra, "serving_framework") or DEFAULT_SOFTWARE
    stack = _text(extra, "software_stack") or _text(extra, "container_image")
    return replace(
        record,
        system=_system(system, extra, labels.accelerators),
        software=replace(record.software, software=software),
        software_stack=stack,
    )


def _names(spec: SourceSpec, kind: str, result: ParsedResult) -> tuple[str, str, str]:
    """Version, system and benchmark: the labels, else what the files say, else an error."""
    labels, extra = spec.labels, result.extra
    version = labels.software_version or _image_version(extra.get("container_image"))
    system = labels.system or _text(extra, "system_name") or _inferencex_system(extra)
    benchmark = labels.benchmark or result.benchmark
    for value, option, what in (
        (version, "--software-version", "a software version"),
        (system, "--system", "the system"),
        (benchmark, "--benchmark", "the model or benchmark"),
    ):
        if not value:
            raise ConfigError(
                f"{spec.location}: {kind} files ({result.artifact_path}) do not name {what}; "
                f"pass {option} (or {option[2:].replace('-', '_')} in the ingest job)"
            )
    assert version and system and benchmark
    return version, system, benchmark


def _system(name: str, extra: Extra, given: int | None) -> SystemRecord:
    total = extra.get("accelerators_total")
    return SystemRecord(
        name=name,
        submitter=_text(extra, "submitter"),
        accelerator=_text(extra, "accelerator"),
        accelerators_per_node=_int(extra.get("accelerators_per_node")),
        nodes=_int(extra.get("nodes")),
        accelerators_total=_int(total) if total is not None else given,
        host_cpu=_text(extra, "host_cpu"),
        division=_text(extra, "division"),
        availability=_text(extra, "availability"),
    )


def _sweep_identity(kind: str, unit: Unit, record: ResultRecord) -> tuple[str, ...]:
    curve = record.extra.get("curve_workload", "")
    precision = record.extra.get("precision", "")
    return (
        kind,
        record.software.software,
        record.software.version,
        record.system.key,
        record.benchmark,
        record.scenario,
        str(curve),
        str(precision),
        unit.group,
    )


def _image_version(image: object) -> str | None:
    """The tag of a container image: ``repo/name:0.8.1@sha256:…`` → ``0.8.1``."""
    if not isinstance(image, str) or not image:
        return None
    name = image.split("@", 1)[0]
    tail = name.rsplit("/", 1)[-1]
    return tail.split(":", 1)[1] if ":" in tail else None


def _inferencex_system(extra: Extra) -> str | None:
    accelerator, topology = _text(extra, "accelerator"), _text(extra, "topology")
    if accelerator is None or "topology" not in extra:
        return None
    return f"{accelerator} {topology}" if topology else accelerator


def _text(extra: Extra, key: str) -> str | None:
    value = extra.get(key)
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def has_loadgen_logs(tree: SourceTree) -> bool:
    """Whether the tree holds LoadGen logs (LoadGen and MLPerf readers' territory)."""
    return any(basename(path) in _LOADGEN_LOGS for path in tree.files())


def json_candidates(tree: SourceTree, *, exclude: Callable[[str], bool]) -> list[str]:
    """JSON files that may be results of a content-recognised kind."""
    return [
        path
        for path in tree.files()
        if path.endswith((".json", ".jsonl"))
        and not basename(path).startswith(("mlperf_log_", "."))
        and not exclude(path)
    ]


def sniff_json(tree: SourceTree, path: str) -> object:
    """The decoded document of ``path`` (its first line for JSON-lines), or None if not JSON."""
    data = tree.read_bytes(path)
    try:
        return decode_json(data, path=path)
    except ParseError as error:
        if "Extra data" not in error.message:
            return None
    try:
        return next((doc for _line, doc in decode_json_lines(data, path=path)), None)
    except ParseError:
        return None


_TRIAL = re.compile(r"(?:^|/)profile_runs/run_\d+$")


def find_aiperf_runs(tree: SourceTree) -> list[Unit]:
    """One unit per AIPerf run folder ("" for the source root itself)."""
    units = []
    for path in tree.files():
        if basename(path) != SUMMARY_NAME or "phases" in path.split("/")[:-1]:
            continue
        run_dir = dirname(path)
        trial_of = _TRIAL.sub("", run_dir) if _TRIAL.search(run_dir) else run_dir
        units.append(Unit(run_label=run_dir, group=dirname(trial_of), paths=(path,)))
    return units


class AIPerfReader:
    """Reader of AIPerf runs and sweeps (``--kind aiperf``)."""

    kind = "aiperf"
    looks_for = f"{SUMMARY_NAME} (AIPerf run folders, concurrency_N/ sweeps)"

    def detect(self, tree: SourceTree) -> bool:
        names = {AGGREGATE_NAME, SWEEP_NAME}
        return bool(find_aiperf_runs(tree)) or any(basename(p) in names for p in tree.files())

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        units = find_aiperf_runs(tree)
        derived = {AGGREGATE_NAME, SWEEP_NAME}
        if not units and any(basename(p) in derived for p in tree.files()):
            raise ConfigError(
                f"{spec.location}: only AIPerf aggregate files ({AGGREGATE_NAME}, {SWEEP_NAME}) "
                f"here; they are derived from the runs: ingest the folder holding the run "
                f"folders with {SUMMARY_NAME} (e.g. concurrency_N/)"
            )
        reading, parsed = read_units(tree, units, _parse_aiperf, strict=strict, progress=progress)
        label_points(tree, spec, self.kind, parsed, reading)
        return reading


def _parse_aiperf(tree: SourceTree, unit: Unit) -> list[ParsedResult]:
    (path,) = unit.paths
    return parse_aiperf_summary(tree.read_bytes(path), path=path)


def find_genai_perf_runs(tree: SourceTree) -> list[Unit]:
    """One unit per GenAI-Perf summary file."""
    return [
        Unit(run_label=dirname(path), group=dirname(dirname(path)), paths=(path,))
        for path in tree.files()
        if path.endswith(SUMMARY_SUFFIX)
    ]


class GenAIPerfReader:
    """Reader of GenAI-Perf runs (``--kind genai-perf``)."""

    kind = "genai-perf"
    looks_for = f"*{SUMMARY_SUFFIX} (GenAI-Perf artifact folders)"

    def detect(self, tree: SourceTree) -> bool:
        return bool(find_genai_perf_runs(tree))

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        units = find_genai_perf_runs(tree)
        reading, parsed = read_units(
            tree, units, _parse_genai_perf, strict=strict, progress=progress
        )
        label_points(tree, spec, self.kind, parsed, reading)
        return reading


def _parse_genai_perf(tree: SourceTree, unit: Unit) -> list[ParsedResult]:
    (path,) = unit.paths
    return parse_genai_perf_summary(tree.read_bytes(path), path=path)


_SIGNS = ("output_throughput", "request_throughput", "total_token_throughput", "mean_ttft_ms")
_OTHER_TOOLS = ("profile_export", "result_summary.json", "system_desc.json", "inputs.json")


def is_vllm_like(doc: object) -> bool:
    """Whether a decoded document carries vLLM result keys (enough to be read as one)."""
    return isinstance(doc, Mapping) and any(key in doc for key in _SIGNS)


class SniffedReader:
    """What the readers of JSON result files recognised by their content share (vLLM,
    InferenceX, the microbenchmark formats): at most :data:`SNIFF_LIMIT` files are
    opened to detect the kind; each file read is one unit; the files that look like
    another tool's results are skipped with a note."""

    kind: str
    looks_for: str
    missing: str
    """What the error says when no file is read: ``no <missing>``."""

    def _excluded(self, path: str) -> bool:
        """Whether ``path`` is passed over unopened."""
        raise NotImplementedError

    def _looks_like(self, doc: object) -> bool:
        """Whether a decoded document is one of this kind's (what detection opens files for)."""
        raise NotImplementedError

    def _reads(self, tree: SourceTree, path: str) -> bool | None:
        """True: ``path`` is read; False: it is skipped with a note; None: passed over."""
        raise NotImplementedError

    def _skipped_note(self, skipped: Sequence[str]) -> str:
        """The note on the files skipped."""
        raise NotImplementedError

    def _parse(self, data: bytes, path: str) -> list[ParsedResult]:
        """The points of one file."""
        raise NotImplementedError

    def _check(self, spec: SourceSpec) -> None:
        """Refuse labels that do not fit the kind (before anything is read)."""

    def _label(self, tree: SourceTree, spec: SourceSpec, parsed: Parsed, reading: Reading) -> None:
        """Label every parsed point into ``reading.results``."""
        label_points(tree, spec, self.kind, parsed, reading)

    def _parse_unit(self, tree: SourceTree, unit: Unit) -> list[ParsedResult]:
        (path,) = unit.paths
        return self._parse(tree.read_bytes(path), path)

    def detect(self, tree: SourceTree) -> bool:
        if has_loadgen_logs(tree):
            return False
        candidates = json_candidates(tree, exclude=self._excluded)[:SNIFF_LIMIT]
        return any(self._looks_like(sniff_json(tree, path)) for path in candidates)

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        self._check(spec)
        units, skipped = [], []
        for path in json_candidates(tree, exclude=self._excluded):
            reads = self._reads(tree, path)
            if reads:
                units.append(Unit(run_label=path, group=dirname(path), paths=(path,)))
            elif reads is not None:
                skipped.append(path)
        if not units:
            raise ConfigError(f"{spec.location}: no {self.missing}")
        reading, parsed = read_units(
            tree, units, self._parse_unit, strict=strict, progress=progress
        )
        if skipped:
            reading.notes.add(self._skipped_note(skipped))
        self._label(tree, spec, parsed, reading)
        return reading


class VLLMBenchReader(SniffedReader):
    """Reader of vLLM benchmark result files (``--kind vllm-bench``)."""

    kind = "vllm-bench"
    looks_for = "JSON with output_throughput/request_throughput (vllm bench serve --save-result)"
    missing = "vLLM benchmark results (JSON with output_throughput) found"

    def _excluded(self, path: str) -> bool:
        return basename(path).startswith(_OTHER_TOOLS)

    def _looks_like(self, doc: object) -> bool:
        return is_vllm_like(doc)

    def _reads(self, tree: SourceTree, path: str) -> bool:
        doc = sniff_json(tree, path)
        return doc is None or is_vllm_like(doc)

    def _skipped_note(self, skipped: Sequence[str]) -> str:
        return f"skipped {len(skipped)} JSON file(s) that are not vLLM results, e.g. {skipped[0]}"

    def _parse(self, data: bytes, path: str) -> list[ParsedResult]:
        return parse_vllm_result(data, path=path)


_AGG_PREFIX = "agg_"
_SIDECAR_PREFIX = "power_validation_"


def _is_agg(path: str) -> bool:
    return basename(path).startswith(_AGG_PREFIX) and path.endswith(".json")


def _is_row_like(doc: object) -> bool:
    rows = doc if isinstance(doc, list) else [doc]
    return bool(rows) and isinstance(rows[0], Mapping) and looks_like_inferencex_row(rows[0])


class InferenceXReader(SniffedReader):
    """Reader of InferenceX result rows (``--kind inferencex``)."""

    kind = "inferencex"
    looks_for = "agg_*.json or JSON rows with conc and hw (InferenceX)"
    missing = "InferenceX rows (agg_*.json) found"

    def detect(self, tree: SourceTree) -> bool:
        return any(_is_agg(path) for path in tree.files()) or super().detect(tree)

    def _excluded(self, path: str) -> bool:
        return basename(path).startswith(_SIDECAR_PREFIX)

    def _looks_like(self, doc: object) -> bool:
        return _is_row_like(doc)

    def _reads(self, tree: SourceTree, path: str) -> bool | None:
        if _is_agg(path):
            return True
        doc = sniff_json(tree, path)
        if doc is None or _is_row_like(doc):
            return True
        return False if is_vllm_like(doc) else None

    def _skipped_note(self, skipped: Sequence[str]) -> str:
        return (
            f"skipped {len(skipped)} vLLM-style raw result(s) beside the rows, e.g. {skipped[0]} "
            "(the rows hold the same runs; ingest them with --kind vllm-bench to store them)"
        )

    def _parse(self, data: bytes, path: str) -> list[ParsedResult]:
        return parse_inferencex_rows(data, path=path)
