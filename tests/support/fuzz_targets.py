"""What the fuzz tests (``tests/test_fuzz_*.py``) feed and how they judge the answer.

A :class:`Target` is one parsing entry point that takes the bytes of one file
(a parser of :mod:`tracker.formats`, or a reader's per-file step), with the
real files it is fuzzed from (``seeds``: found under the ``shared_data``
folder, or in ``tests/data``, never copied). :func:`run_target` runs it under
a hard time limit and accepts only two outcomes: a :class:`ParseError` naming
one of the target's files, or an answer whose numbers are finite, whose
stored values are not negative, whose counts fit the database and whose size
is bounded by the size of the input.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import re
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

from tracker.errors import ParseError
from tracker.formats.loadgen.parse import (
    Entry,
    detail_extras,
    entry_number,
    parse_detail_log,
    parse_loadgen_run,
)
from tracker.formats.mlperf_endpoints.parse import (
    looks_like_viz_bundle,
    parse_endpoints_point,
    parse_system_desc,
    parse_viz_bundle,
)
from tracker.formats.mlperf_endpoints.read import decode_yaml
from tracker.formats.mlperf_inference.parse import folder_scenario, mlperf_model, primary_metric
from tracker.formats.mlperf_inference.parse_logs import (
    compliance_outcome,
    keep_detail_key,
    parse_accuracy,
    parse_power_samples,
    parse_verify,
    power_metric,
    summary_as_detail,
)
from tracker.formats.mlperf_inference.parse_table import (
    looks_like_results_table,
    parse_results_table,
    parse_system_json,
)
from tracker.formats.mlperf_inference.read import _result as table_result
from tracker.formats.mlperf_inference.read_tree import _parse_mapping
from tracker.formats.parse_json import decode_json
from tracker.formats.serving.parse_aiperf import parse_aiperf_summary, parse_genai_perf_summary
from tracker.formats.serving.parse_vllm import (
    looks_like_inferencex_row,
    looks_like_vllm_result,
    parse_inferencex_rows,
    parse_vllm_result,
)
from tracker.records.results import ParsedResult, SystemRecord
from tracker.sources.tree import BufferedLines

REPO = Path(__file__).resolve().parents[2]
HARD_LIMIT_S = 10.0
"""A parser still running after this long on one input is taken to hang."""
SIZE_FACTOR = 32
SIZE_SLACK = 64 * 1024
"""An answer may be at most ``SIZE_FACTOR`` × the input plus ``SIZE_SLACK`` in size."""
MAX_COUNT = 2**31 - 1
"""Counts are stored in INTEGER columns (32-bit on PostgreSQL)."""

Parse = Callable[[bytes, str, Path], object]


@dataclasses.dataclass(frozen=True)
class Target:
    """A parsing entry point, the files it may name in errors, and the real files it reads."""

    name: str
    parse: Parse
    paths: frozenset[str]
    seeds: Callable[[Path], list[tuple[str, bytes]]]
    json: bool = False
    """Whether its input is a JSON document (the structure-aware mutations apply)."""


# --- seeds ----------------------------------------------------------------------


def _files(
    root: Path, pattern: str, *, per: Callable[[str], str] | None = None, limit: int = 8
) -> list[tuple[str, bytes]]:
    """Up to ``limit`` files matching ``pattern``, one per ``per(path)`` group, by path order."""
    chosen: dict[str, tuple[str, bytes]] = {}
    for path in sorted(root.glob(pattern)):
        if not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        group = per(relative) if per else relative
        if group not in chosen:
            chosen[group] = (relative, path.read_bytes())
        if len(chosen) >= limit:
            break
    return list(chosen.values())


def _scenario_dir(relative: str) -> str:
    return PurePosixPath(relative).parts[-4].lower()


def _head(data: bytes, size: int) -> bytes:
    """The lines of ``data`` within its first ``size`` bytes (a big file's seed)."""
    if len(data) <= size:
        return data
    return data[: data.rfind(b"\n", 0, size) + 1]


@cache
def seeds_of(target: str, root: Path) -> tuple[tuple[str, bytes], ...]:
    """The seeds of a target, read once per run."""
    return tuple(TARGETS[target].seeds(root))


def _loadgen_logs(name: str) -> Callable[[Path], list[tuple[str, bytes]]]:
    def seeds(root: Path) -> list[tuple[str, bytes]]:
        local = _files(root, f"loadgen-local/*/{name}")
        published = _files(root, f"mlperf-inference/**/{name}", per=_scenario_dir, limit=6)
        return local + published

    return seeds


def _mlperf_logs(name: str) -> Callable[[Path], list[tuple[str, bytes]]]:
    def seeds(root: Path) -> list[tuple[str, bytes]]:
        found = _files(root, f"mlperf-inference/**/results/**/{name}", per=_scenario_dir, limit=8)
        llm = _files(root, f"mlperf-inference/**/llama2-70b-99/Server/**/{name}", limit=1)
        edge = _files(root, f"mlperf-inference/**/*edge*/**/{name}", limit=1)
        power = _files(root, f"mlperf-inference/v5.1/closed/Lenovo/**/Offline/**/{name}", limit=1)
        return list(dict(found + llm + edge + power).items())

    return seeds


def _glob_seeds(*patterns: str, limit: int = 8) -> Callable[[Path], list[tuple[str, bytes]]]:
    def seeds(root: Path) -> list[tuple[str, bytes]]:
        found: list[tuple[str, bytes]] = []
        for pattern in patterns:
            base = REPO if pattern.startswith("tests/") else root
            found += _files(base, pattern, limit=limit)
        return found

    return seeds


def _table_seeds(root: Path) -> list[tuple[str, bytes]]:
    """The published tables, cut to 40 rows each, and a v6.1 ``summary.json`` made of rows."""
    seeds = []
    columns = {
        "Submitter": "Organization",
        "Category": "Division",
        "Suite": "SystemType",
        "System": "SystemName",
        "UsedModel": "Model",
        "Model": "MlperfModel",
        "Performance_Result": "Result",
        "Performance_Units": "Units",
        "Nodes": "number_of_nodes",
        "a#": "accelerators_per_node",
        "Total Accelerators": "total_accelerators",
    }
    for relative, data in _files(root, "mlperf-inference/*/summary_results.json"):
        rows = json.loads(data)[:40]
        seeds.append((relative, json.dumps(rows, indent=1).encode()))
        csv_rows = [{columns.get(k, k): v for k, v in row.items()} for row in rows[:12]]
        power = {**csv_rows[0], "Result": "4200.5", "Units": "Watts"}
        v61 = {str(n): row for n, row in enumerate([*csv_rows, power])}
        seeds.append((f"{relative} as v6.1 summary.json", json.dumps(v61, indent=1).encode()))
    return seeds


def _accuracy_seeds(root: Path) -> list[tuple[str, bytes]]:
    """One ``accuracy.txt`` per benchmark (each model's checker patterns)."""
    results = _files(root, "mlperf-inference/**/results/**/accuracy.txt", per=_benchmark, limit=30)
    return results + _files(root, "mlperf-inference/**/compliance/**/accuracy.txt", limit=2)


def _power_seeds(root: Path) -> list[tuple[str, bytes]]:
    return [(relative, _head(data, 6000)) for relative, data in _files(root, "**/spl.txt")]


# --- entry points -------------------------------------------------------------

P = "fuzz/input"
"""The path every target gives the fuzzed file."""


def _loadgen_summary(data: bytes, origin: str, root: Path) -> object:
    """As a plain run, and as an LLM run (which reads other lines); each may be refused."""
    out: list[object] = []
    for benchmark in (None, "llama2-70b-99"):
        try:
            out += parse_loadgen_run(
                summary=data,
                summary_path=P,
                detail_lines=None,
                detail_path="d",
                benchmark=benchmark,
            )
        except ParseError as error:
            out.append(error)
    return out


def _loadgen_detail(data: bytes, origin: str, root: Path) -> object:
    """In place (a small file read whole) and streamed line by line (a big file)."""
    whole = parse_loadgen_run(
        summary=None, summary_path="s", detail_lines=BufferedLines(data), detail_path=P
    )
    streamed = parse_loadgen_run(
        summary=None, summary_path="s", detail_lines=io.BytesIO(data), detail_path=P
    )
    assert whole == streamed
    return whole


_SAMPLES = [(b"20250728081000000000", 900.0), (b"20250728081100000000", 950.0)]


def _result_folder(origin: str) -> tuple[str, str, str]:
    """(model, folder scenario, round) of a published log's folder; defaults for others."""
    parts = PurePosixPath(origin).parts
    if "results" in parts and len(parts) > parts.index("results") + 3:
        at = parts.index("results")
        scenario = folder_scenario(parts[at + 3]) or "Offline"
        return mlperf_model(parts[at + 2]), scenario, parts[1]
    return "llama2-70b-99", "Server", "v5.1"


def _mlperf_result(log: dict[str, Entry], origin: str) -> object:
    """What the MLPerf reader makes of one folder's log: primary metric, extras, power."""
    model, scenario, round_label = _result_folder(origin)
    out: list[object] = []
    for system_type in ("datacenter", "edge"):
        primary = primary_metric(
            log,
            model=model,
            scenario=scenario,
            round_label=round_label,
            system_type=system_type,
            path=P,
        )
        out += [primary, detail_extras(log, primary_key=primary.key, path=P)]
    begin, end = log.get("power_begin"), log.get("power_end")
    if begin is not None and end is not None:  # as the MLPerf reader's power step does
        count = log.get("result_query_count")
        out.append(
            power_metric(
                _SAMPLES,
                begin=str(begin.value),
                end=str(end.value),
                scenario=scenario,
                loadgen_scenario="SingleStream",
                query_count=None if count is None else entry_number(count, key="x", path=P),
                path=P,
            )
        )
    return out


def _mlperf_detail(data: bytes, origin: str, root: Path) -> object:
    log = parse_detail_log(BufferedLines(data), path=P, keep=keep_detail_key)
    return _mlperf_result(log, origin)


def _mlperf_summary(data: bytes, origin: str, root: Path) -> object:
    return _mlperf_result(summary_as_detail(data, path=P), origin)


def _system_json(data: bytes, origin: str, root: Path) -> object:
    return parse_system_json(data, path=P, platform="box", submitter="Acme", division="closed")


def _table(data: bytes, origin: str, root: Path) -> object:
    looks_like_results_table(data)
    table = parse_results_table(data, path=P)
    results: list[object] = [table]
    for row in table.rows:
        try:
            results.append(table_result(row, "t.json", "0" * 64, P))
        except ParseError as error:
            results.append(error)
    return results


def _mapping(data: bytes, origin: str, root: Path) -> object:
    return _parse_mapping(data, path=P)


def _power(data: bytes, origin: str, root: Path) -> object:
    samples = parse_power_samples(data, path=P)
    out: list[object] = [samples]
    if samples:
        first = samples[0][0].decode()
        begin = f"{first[4:6]}-{first[6:8]}-{first[0:4]} {first[8:10]}:{first[10:12]}:00.000"
        for scenario in ("Offline", "SingleStream"):
            out.append(
                power_metric(
                    samples,
                    begin=begin,
                    end="12-31-9999 23:59:59.999",
                    scenario=scenario,
                    loadgen_scenario=scenario,
                    query_count=1000.0,
                    path=P,
                )
            )
    return out


def _benchmark(relative: str) -> str:
    """The benchmark folder of a file under ``results/`` or ``compliance/`` ("" elsewhere)."""
    parts = PurePosixPath(relative).parts
    for at, part in enumerate(parts[:-3]):
        if part in ("results", "compliance"):
            return parts[at + 2]
    return ""


def _accuracy(data: bytes, origin: str, root: Path) -> object:
    model = mlperf_model(_benchmark(origin))
    found: list[object] = [parse_accuracy(data, path=P, model=name) for name in (model, "unknown")]
    found.append(compliance_outcome([False], model=model, baseline=data, compliance=data, path=P))
    return found


def _verify(data: bytes, origin: str, root: Path) -> object:
    return parse_verify(data, path=P)


def _aiperf(data: bytes, origin: str, root: Path) -> object:
    return parse_aiperf_summary(data, path=P)


def _genai_perf(data: bytes, origin: str, root: Path) -> object:
    return parse_genai_perf_summary(data, path=P)


def _vllm(data: bytes, origin: str, root: Path) -> object:
    _sniff(data, looks_like_vllm_result)
    return parse_vllm_result(data, path=P)


def _inferencex(data: bytes, origin: str, root: Path) -> object:
    _sniff(data, looks_like_inferencex_row)
    return parse_inferencex_rows(data, path=P)


def _sniff(data: bytes, looks_like: Callable[[object], bool]) -> None:
    """What the readers' detection does with a JSON candidate: decode, then test its shape."""
    try:
        looks_like(decode_json(data, path=P))
    except ParseError:
        pass


ENDPOINTS = "mlperf_endpoints/public_examples/sub_g_r256"
SUMMARY_PATH, POINT_PATH, SYSTEM_PATH = "e/result_summary.json", "e/point.yaml", "e/system.json"


@cache
def _endpoints_files(root: Path) -> tuple[bytes, Mapping[str, Any], dict[str, Any]]:
    folder = root / ENDPOINTS
    point = decode_yaml((folder / "point.yaml").read_bytes(), path=POINT_PATH)
    system = parse_system_desc((folder / "system_desc.json").read_bytes(), path=SYSTEM_PATH)
    return (folder / "result_summary.json").read_bytes(), point, system


def _endpoints_summary(data: bytes, origin: str, root: Path) -> object:
    _summary, point, system = _endpoints_files(root)
    results = parse_endpoints_point(
        data, summary_path=P, point=point, point_path=POINT_PATH, system=system
    )
    return results + parse_endpoints_point(data, summary_path=P, point=None, point_path="p")


def _endpoints_point(data: bytes, origin: str, root: Path) -> object:
    summary, _point, system = _endpoints_files(root)
    point = decode_yaml(data, path=P)
    return parse_endpoints_point(
        summary, summary_path=SUMMARY_PATH, point=point, point_path=P, system=system
    )


def _endpoints_system(data: bytes, origin: str, root: Path) -> object:
    summary, point, _system = _endpoints_files(root)
    system = parse_system_desc(data, path=P)
    results = parse_endpoints_point(
        summary, summary_path=SUMMARY_PATH, point=point, point_path=POINT_PATH, system=system
    )
    return [system, results]


def _viz_bundle(data: bytes, origin: str, root: Path) -> object:
    _sniff(data, looks_like_viz_bundle)
    return parse_viz_bundle(data, path=P)


def _target(
    name: str, parse: Parse, seeds: Callable[[Path], list[tuple[str, bytes]]], *, json: bool = False
) -> Target:
    """A target whose errors must all name the fuzzed file (the others it reads are real)."""
    return Target(name, parse, frozenset({P}), seeds, json)


_SUMMARY_LOG, _DETAIL_LOG = "mlperf_log_summary.txt", "mlperf_log_detail.txt"
TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        _target("loadgen-summary", _loadgen_summary, _loadgen_logs(_SUMMARY_LOG)),
        _target("loadgen-detail", _loadgen_detail, _loadgen_logs(_DETAIL_LOG)),
        _target("mlperf-detail", _mlperf_detail, _mlperf_logs(_DETAIL_LOG)),
        _target("mlperf-summary", _mlperf_summary, _mlperf_logs(_SUMMARY_LOG)),
        _target(
            "mlperf-system",
            _system_json,
            _glob_seeds("mlperf-inference/**/systems/*.json"),
            json=True,
        ),
        _target("mlperf-table", _table, _table_seeds, json=True),
        _target(
            "model-mapping",
            _mapping,
            _glob_seeds("mlperf-inference/**/model_mapping.json"),
            json=True,
        ),
        _target("power-samples", _power, _power_seeds),
        _target("accuracy", _accuracy, _accuracy_seeds),
        _target("verify", _verify, _glob_seeds("mlperf-inference/**/verify_*.txt", limit=6)),
        _target(
            "aiperf",
            _aiperf,
            _glob_seeds(
                "aiperf/*/profile_export_aiperf.json", "aiperf/*/*/profile_export_aiperf.json"
            ),
            json=True,
        ),
        _target(
            "genai-perf",
            _genai_perf,
            _glob_seeds("tests/data/genai-perf/**/*_genai_perf.json"),
            json=True,
        ),
        _target(
            "vllm-bench",
            _vllm,
            _glob_seeds("vllm_bench_serving/**/*.json", "inferencex/**/*vllm_bench_result.json"),
            json=True,
        ),
        _target("inferencex", _inferencex, _glob_seeds("inferencex/**/*.json"), json=True),
        _target(
            "endpoints-summary",
            _endpoints_summary,
            _glob_seeds(f"{ENDPOINTS}/result_summary.json"),
            json=True,
        ),
        _target(
            "endpoints-point",
            _endpoints_point,
            _glob_seeds(f"{ENDPOINTS}/point.yaml"),
        ),
        _target(
            "endpoints-system",
            _endpoints_system,
            _glob_seeds(f"{ENDPOINTS}/system_desc.json"),
            json=True,
        ),
        _target(
            "viz-bundle",
            _viz_bundle,
            _glob_seeds("mlperf_endpoints/mlperf_viz_bundle_*.json"),
            json=True,
        ),
    )
}
JSON_TARGETS = [name for name, target in TARGETS.items() if target.json]


# --- judging an answer ------------------------------------------------------------


class ParserHung(Exception):
    """A parser ran past :data:`HARD_LIMIT_S` on one input."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`ParserHung` in the code below after ``seconds`` (main thread, POSIX)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        yield
        return

    def alarm(signum: int, frame: object) -> None:
        raise ParserHung(f"still parsing after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_target(target: Target, data: bytes, root: Path, origin: str = "") -> object:
    """Parse ``data``; a ParseError naming the file is fine, any other exception fails."""
    with time_limit(HARD_LIMIT_S):
        try:
            answer = target.parse(data, origin, root)
        except ParseError as error:
            check_error(error, target, data)
            return error
    check_answer(answer, target, data)
    return answer


def check_error(error: ParseError, target: Target, data: bytes) -> None:
    assert error.path in target.paths, f"the error names {error.path!r}: {error}"
    assert str(error).startswith(error.path), str(error)
    assert error.line is None or 1 <= error.line, error.line
    assert len(error.message) <= SIZE_FACTOR * len(data) + SIZE_SLACK


_SYSTEM_COUNTS = ("nodes", "accelerators_per_node", "accelerators_total")


def check_answer(answer: object, target: Target, data: bytes) -> None:
    """Finite numbers, no negative stored values, counts that fit, a bounded size."""
    limit = SIZE_FACTOR * len(data) + SIZE_SLACK
    size = 0
    walked: set[int] = set()  # the results of a point share one ``extra``
    stack: list[object] = [answer]
    while stack:
        item = stack.pop()
        if isinstance(item, str | bytes):
            size += len(item) + 8
        elif isinstance(item, bool) or item is None:
            size += 8
        elif isinstance(item, int):
            size += item.bit_length() // 8 + 8
        elif isinstance(item, float):
            size += 8
            assert math.isfinite(item), f"a non-finite number {item!r} in the answer"
        elif isinstance(item, ParseError):
            check_error(item, target, data)
            size += len(item.message)
        elif isinstance(item, ParsedResult):
            _check_result(item)
            size += 64 + len(item.workload) + len(item.benchmark or "")
            if id(item.extra) not in walked:
                walked.add(id(item.extra))
                size += sum(_scalar_size(k) + _scalar_size(v) for k, v in item.extra.items())
        elif isinstance(item, Mapping):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple | set | frozenset):
            stack += item
        else:
            assert dataclasses.is_dataclass(item) and not isinstance(item, type), item
            _check_record(item)
            stack += [getattr(item, f.name) for f in dataclasses.fields(item)]
        assert size <= limit, f"the answer is over {limit} for {len(data)} bytes of input"


def _scalar_size(value: object) -> int:
    return len(value) + 8 if isinstance(value, str) else 8


def _check_result(result: ParsedResult) -> None:
    assert math.isfinite(result.value) and result.value >= 0, f"stored value {result.value!r}"
    if result.concurrency is not None:
        assert math.isfinite(result.concurrency) and result.concurrency >= 0, result.concurrency
    for key, value in result.extra.items():
        assert isinstance(key, str), key
        assert isinstance(value, str | bool | int | float), f"extra {key!r} is {value!r}"
        if isinstance(value, float):
            assert math.isfinite(value), f"extra {key!r} is {value!r}"
    total = result.extra.get("accelerators_total")
    if total is not None:
        assert isinstance(total, int) and 0 < total <= MAX_COUNT, f"accelerators_total {total!r}"


def _check_record(record: object) -> None:
    """Stored counts and values of the MLPerf records (systems, table rows, primary metrics)."""
    for name in _SYSTEM_COUNTS:
        count = getattr(record, name, None)
        if count is not None:
            assert isinstance(count, int) and 0 <= count <= MAX_COUNT, f"{name} is {count!r}"
    for name in ("value", "power_value"):
        value = getattr(record, name, None)
        if isinstance(value, float) and not isinstance(record, SystemRecord):
            assert math.isfinite(value) and value >= 0, f"{type(record).__name__}.{name} {value!r}"


# --- mutations ------------------------------------------------------------------

INTERESTING_NUMBERS = (
    b"0",
    b"-0",
    b"-1",
    b"-0.5",
    b"1e308",
    b"1e999",
    b"-1e999",
    b"NaN",
    b"nan",
    b"inf",
    b"Infinity",
    b"-Infinity",
    b"1" * 400,
    b"9" * 5000,
    b"1e-320",
    b"4.9e-324",
    b"\xd9\xa3",  # an Arabic-Indic digit 3
    b"\xc2\xb2",  # a superscript 2: str.isdigit() but not int()
    b"",
    b'""',
    b"null",
    b"true",
    b"[]",
    b"{}",
)
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def numbers_in(data: bytes) -> list[tuple[int, int]]:
    """The (start, end) of every number-looking run of bytes (the spots worth poisoning)."""
    return [match.span() for match in NUMBER.finditer(data)]


def nested(depth: int, *, inner: str = "1") -> str:
    """A JSON value nested ``depth`` deep, alternating arrays and objects."""
    opening = "".join('{"a":' if level % 2 else "[" for level in range(depth))
    closing = "".join("}" if level % 2 else "]" for level in reversed(range(depth)))
    return opening + inner + closing


def json_paths(doc: object, *, limit: int = 400) -> list[tuple[object, ...]]:
    """Paths (keys and indices) to the values of a decoded document, root first, breadth first."""
    paths: list[tuple[object, ...]] = [()]
    at = 0
    while at < len(paths) and len(paths) < limit:
        value = get_path(doc, paths[at])
        at += 1
        keys: list[object] = []
        if isinstance(value, dict):
            keys = list(value)
        elif isinstance(value, list):
            keys = list(range(len(value)))
        paths += [(*paths[at - 1], key) for key in keys]
    return paths[:limit]


def pruned(doc: Any, items: int = 3) -> Any:
    """``doc`` with every array cut to its first ``items``: the same shape, cheaper to parse."""
    if isinstance(doc, dict):
        return {key: pruned(value, items) for key, value in doc.items()}
    if isinstance(doc, list):
        return [pruned(value, items) for value in doc[:items]]
    return doc


def get_path(doc: Any, path: tuple[object, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def replaced(doc: Any, path: tuple[object, ...], value: object, *, delete: bool = False) -> Any:
    """A copy of ``doc`` whose value at ``path`` is ``value`` (or is left out)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        copy: Any = dict(doc)
    else:
        copy = list(doc)
    if rest:
        copy[head] = replaced(doc[head], rest, value, delete=delete)
    elif delete:
        del copy[head]
    else:
        copy[head] = value
    return copy


_RAW_TEXTS: dict[str, int] = {}
_PLACEHOLDER = re.compile(r'"\\u0000raw(\d+)\\u0000"')


def raw(text: str) -> str:
    """A stand-in that :func:`encode` writes as the JSON text ``text`` itself.

    For what ``json.dumps`` cannot write: a number too big for a double, or
    nesting deeper than its own recursion allows.
    """
    index = _RAW_TEXTS.setdefault(text, len(_RAW_TEXTS))
    return f"\x00raw{index}\x00"


def encode(doc: object) -> bytes:
    """``doc`` as JSON (NaN and Infinity as Python writes them), :func:`raw` texts in place."""
    texts = list(_RAW_TEXTS)
    text = json.dumps(doc, allow_nan=True)
    return _PLACEHOLDER.sub(lambda match: texts[int(match.group(1))], text).encode()
