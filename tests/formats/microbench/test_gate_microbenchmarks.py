"""Gating a team's own microbenchmarks beside its serving runs (issue 16), through the CLI.

A Google Benchmark file with 5 repetitions per benchmark is ingested for two versions;
one benchmark 10% slower in the candidate fails the gate naming it, a real re-run of the
unchanged code passes. Every microbenchmark kind is recognised without ``--kind``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.conftest import RunTracker

DATA = Path(__file__).resolve().parents[2] / "data" / "generic"
REPEATED = DATA / "google_benchmark_repetitions.json"
SLOWED = "copy_list/64"  # its wall time is steady; copy_list/512 has a noisy one
AGGREGATES_NOTE = (
    "  note: 4 benchmark(s) reported by their aggregates alone, one sample each (the median): "
    "leave out --benchmark_report_aggregates_only to store every repetition as a sample"
)


def _ingest(run: RunTracker, url: str, source: Path, version: str, *more: str) -> Result:
    labels = ["--software", "mylib", "--software-version", version, "--system", "ci-x86"]
    return run(["--database-url", url, "ingest", str(source), *labels, *more])


def _slower(source: Path, target: Path, benchmark: str, factor: float) -> Path:
    """``source`` with every repetition of ``benchmark`` taking ``factor`` times as long."""
    doc = json.loads(source.read_text("utf-8"))
    for entry in doc["benchmarks"]:
        if entry["run_name"] == benchmark:
            entry["real_time"] *= factor
            entry["cpu_time"] *= factor
    target.write_text(json.dumps(doc, indent=2), "utf-8")
    return target


def test_a_benchmark_a_quarter_slower_fails_the_gate_naming_it_once(
    database_url: str, tmp_path: Path, run_tracker: RunTracker
) -> None:
    first = _ingest(run_tracker, database_url, REPEATED, "1.2.0", "--kind", "google-benchmark")
    assert first.exit_code == 0, first.output
    assert first.stdout.splitlines()[0] == (
        f"{REPEATED}: 1 run (google-benchmark), 25 results stored"
    )
    slowed = _slower(REPEATED, tmp_path / "bench.json", SLOWED, 1.25)
    assert _ingest(run_tracker, database_url, slowed, "1.3.0").exit_code == 0

    gate = run_tracker(
        ["--database-url", database_url, "gate", "--baseline", "1.2.0", "--candidate", "1.3.0"]
    )
    assert gate.exit_code == 1, gate.output
    lines = gate.stdout.splitlines()
    assert lines[0] == (
        "gate: 1 (1 regression, 1.2.0 → 1.3.0; 100% of 4 series could not see a 5% change)"
    )
    failing = [line for line in lines if line.startswith("failing")]
    assert len(failing) == 1 and "+25.0% (worse" in failing[0]
    assert f"{SLOWED} · real_time_ns" in failing[0]  # one primary time: one regression
    assert "Compared 4 series of " in gate.stdout and " 1.2.0 → 1.3.0" in gate.stdout

    as_json = run_tracker(
        ["--database-url", database_url, "gate", "--candidate", "1.3.0", "--format", "json"]
    )
    items = [i for i in json.loads(as_json.stdout)["items"] if i["state"] == "failing"]
    assert {(i["benchmark"], i["metric"]) for i in items} == {(SLOWED, "real_time_ns")}


def test_a_rerun_of_unchanged_code_passes_the_gate(tmp_path: Path, run_tracker: RunTracker) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    assert _ingest(run_tracker, url, REPEATED, "1.2.0").exit_code == 0
    rerun = DATA / "google_benchmark_repetitions_rerun.json"
    assert _ingest(run_tracker, url, rerun, "1.3.0").exit_code == 0
    gate = run_tracker(["--database-url", url, "gate", "--candidate", "1.3.0"])
    assert gate.exit_code == 0, gate.output
    assert gate.stdout.splitlines()[0] == (
        "gate: 0 (no regression, 1.2.0 → 1.3.0; 100% of 4 series could not see a 5% change)"
    )
    analyze = run_tracker(["--database-url", url, "analyze"])
    assert analyze.exit_code == 0, analyze.output
    assert "in 4 series" in analyze.stdout


@pytest.mark.parametrize(
    ("name", "kind", "stored", "note"),
    [
        ("google_benchmark_single.json", "google-benchmark", 5, "1 result stored as invalid"),
        ("google_benchmark_aggregates_only.json", "google-benchmark", 7, AGGREGATES_NOTE),
        ("pytest_benchmark.json", "pytest-benchmark", 3, ""),
        ("generic.json", "bench-json", 8, ""),
        ("bmf.json", "bench-json", 6, ""),
    ],
)
def test_each_kind_is_recognised_from_its_file(
    name: str, kind: str, stored: int, note: str, tmp_path: Path, run_tracker: RunTracker
) -> None:
    done = _ingest(run_tracker, f"sqlite:///{tmp_path / 't.db'}", DATA / name, "1.0")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0] == f"{DATA / name}: 1 run ({kind}), {stored} results stored"
    assert (note in done.stdout) if note else len(lines) == 1


def _export(run: RunTracker, url: str) -> list[dict[str, Any]]:
    done = run(["--database-url", url, "export", "--format", "json"])
    assert done.exit_code == 0, done.output
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def test_generic_results_keep_labels_units_and_directions(
    tmp_path: Path, run_tracker: RunTracker
) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    assert _ingest(run_tracker, url, DATA / "generic.json", "1.0").exit_code == 0
    rows = _export(run_tracker, url)
    large = [r for r in rows if r["workload"] == "dataset=large,runner=ci-x86,threads=4"]
    assert sorted(r["value"] for r in large) == [12.4, 12.5, 12.6, 12.7, 12.9]
    assert {(r["benchmark"], r["metric"], r["unit"], r["higher_is_better"]) for r in large} == {
        ("parse_config", "latency_ms", "ms", False)
    }
    [encode] = [r for r in rows if r["benchmark"] == "encode_batch"]
    assert (encode["metric"], encode["unit"], encode["higher_is_better"]) == (
        "items_per_s",
        "items/s",
        True,
    )
    assert {r["source_kind"] for r in rows} == {"bench-json"}


def test_pytest_benchmark_runs_in_one_folder_are_repeats(
    tmp_path: Path, run_tracker: RunTracker
) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    doc = json.loads((DATA / "pytest_benchmark.json").read_text("utf-8"))
    for run in range(3):
        for entry in doc["benchmarks"]:
            entry["stats"]["median"] *= 1.0 + run / 100
        (folder / f"run_{run}.json").write_text(json.dumps(doc), "utf-8")
    url = f"sqlite:///{tmp_path / 't.db'}"
    done = _ingest(run_tracker, url, folder, "1.0")
    assert done.stdout.splitlines() == [f"{folder}: 3 runs (pytest-benchmark), 9 results stored"]
    fib = [r for r in _export(run_tracker, url) if r["benchmark"] == "test_pb.py::test_fib[10]"]
    assert len(fib) == 3 and len({r["value"] for r in fib}) == 3


def test_the_files_name_no_system_so_it_must_be_given(
    tmp_path: Path, run_tracker: RunTracker
) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    args = ["--database-url", url, "ingest", str(REPEATED), "--software-version", "1.0"]
    done = run_tracker(args)
    assert done.exit_code == 2
    assert done.stderr.strip() == (
        f"Error: {REPEATED}: Google Benchmark files do not name the system; "
        "pass --system (or system in the ingest job)"
    )
    done = run_tracker([*args, "--system", "ci-x86", "--benchmark", "x"])
    assert done.exit_code == 2
    assert "--benchmark does not apply to them" in done.stderr


def test_a_bad_generic_file_is_named_with_its_field(
    tmp_path: Path, run_tracker: RunTracker
) -> None:
    bad = tmp_path / "bench.json"
    bad.write_text(json.dumps({"results": [{"name": "b", "unit": "parsecs", "value": 1}]}))
    done = _ingest(
        run_tracker, f"sqlite:///{tmp_path / 't.db'}", bad, "1.0", "--kind", "bench-json"
    )
    assert done.exit_code == 2
    assert "bench.json: field 'results[0].unit' is 'parsecs', an unknown unit" in done.output
