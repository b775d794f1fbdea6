"""What the LLM-serving readers share: finding points, labelling them, tying sweeps together.

A serving reader lists the *units* of a source (a run folder or a result
file, each yielding one or more points), parses each with a pure parser, and
hands the parsed points to :func:`label_points`, which

* applies the labels: the command line (or ingest job) names the software,
  version, system and benchmark; where it is silent, the files' own names are
  used (an InferenceX row's framework, image tag and hardware; an Endpoints
  system description; the model a tool records), else the user is asked;
* sets the accelerator count: from the file where it says, else ``--accelerators``
  (which then adds the per-accelerator series, see :mod:`tracker.parsers.serving`);
* ties the points of one sweep together with a ``sweep_key``: the points of one
  sweep folder (the parent of ``concurrency_N/``, ``r<N>/``, or a result file's
  folder) with the same labels, curve workload and precision. The key hashes
  those and the content of the point files, so re-ingesting changes nothing and
  a second software version makes a second curve.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from posixpath import basename

from tracker.errors import ConfigError, ParseError
from tracker.parsers.json_fields import decode_json, decode_json_lines
from tracker.parsers.serving import with_accelerators
from tracker.readers.base import DEFAULT_SOFTWARE, ProgressCallback, Reading, label_result
from tracker.records import ExtraValue, ParsedResult, ResultRecord, SourceSpec, SystemRecord
from tracker.sources.tree import SourceTree

__all__ = [
    "SNIFF_LIMIT",
    "Unit",
    "has_loadgen_logs",
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
Extra = Mapping[str, ExtraValue]


def read_units(
    tree: SourceTree,
    units: Sequence[Unit],
    parse: Parse,
    *,
    strict: bool,
    progress: ProgressCallback | None,
) -> tuple[Reading, list[tuple[Unit, list[ParsedResult]]]]:
    """Parse every unit; a bad file is an error of the reading (raised with ``strict``)."""
    reading = Reading(runs_found=len(units))
    parsed: list[tuple[Unit, list[ParsedResult]]] = []
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
