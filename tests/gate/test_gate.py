"""`tracker gate` through the CLI (in-process): exit codes 0, 1, 2 and 3 (SPEC §6).

Seeded data: AIPerf concurrency sweeps of one serving workload (three trial sweeps
per version: Welch's t with a 2% floor), written by the demo's generator. The gate runs
through ``tracker.cli:cli`` in this process (the ``run_tracker`` fixture); the
exit code of the real console script is checked by ``tests/test_readme.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest
from click.testing import Result

from tests.support.analysis_trees import tracker_ok
from tracker.demo import SERVING_WORKLOADS, Workload, write_aiperf_sweep
from tracker.gate.policy import parse_acknowledgements, parse_policy

CHAT = SERVING_WORKLOADS[1]
SLOPE = 0.008


def sweep(root: Path, at_target: float, workload: Workload = CHAT) -> Path:
    """A front proportional to ``at_target``: every point changes by the same ratio."""
    points = [
        (c, at_target * (1.0 + SLOPE * (50.0 - x)), x) for c, x in ((2, 75.0), (4, 60.0), (8, 40.0))
    ]
    return write_aiperf_sweep(root, points, workload)


def ingest(url: str, root: Path, version: str, *, software: str = "stack") -> None:
    tracker_ok(
        url,
        "ingest",
        str(root),
        "--kind",
        "aiperf",
        "--software",
        software,
        "--software-version",
        version,
        "--system",
        "node-4x",
        "--accelerators",
        "4",
    )


def seed(url: str, tmp: Path, levels: Sequence[tuple[str, float]], *, trials: int = 3) -> None:
    """One version per ``(label, tokens/s at 50 tokens/s/user)``, ``trials`` sweeps each."""
    noise = (1.0, 1.004, 0.996)
    for version, level in levels:
        for t in range(trials):
            sweep(tmp / version / f"trial_{t}", level * noise[t])
        ingest(url, tmp / version, version)


Gate = Callable[..., Result]


@pytest.fixture
def gate(run_tracker: Callable[..., Result]) -> Gate:
    """``gate(url, *args, env=...)``: ``tracker --database-url URL gate ARGS``, in-process."""

    def run(url: str, *args: str, env: Mapping[str, str] | None = None) -> Result:
        return run_tracker(["--database-url", url, "gate", *args], env=env)

    return run


@pytest.fixture
def regressed(database_url: str, tmp_path: Path) -> str:
    seed(database_url, tmp_path / "data", [("2.0.12", 2600.0), ("2.0.13", 2392.0)])
    return database_url


def test_a_planted_regression_fails_the_gate_with_exit_1(regressed: str, gate: Gate) -> None:
    done = gate(regressed, "--baseline", "2.0.12", "--candidate", "2.0.13")
    assert done.exit_code == 1, done.stderr
    assert "gate: 1 (" in done.stdout and "2.0.12 → 2.0.13" in done.stdout
    assert "-8.0% (worse; CI [" in done.stdout
    assert "family size" in done.stdout and "Settings: q 0.05" in done.stdout


def test_the_baseline_defaults_to_the_version_before_the_candidate(
    regressed: str, gate: Gate
) -> None:
    done = gate(regressed, "--candidate", "2.0.13", "--format", "json")
    assert done.exit_code == 1, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["baseline"], doc["candidate"], doc["exit_code"]) == ("2.0.12", "2.0.13", 1)
    failing = [i for i in doc["items"] if i["state"] == "failing"]
    assert failing and all(i["worse"] and i["delta_pct"] < -7.0 for i in failing)
    assert {"target", "regression"} == {i["kind"] for i in failing}
    assert doc["family_size"] >= len(failing) and doc["settings"]["q"] == 0.05


def test_markdown_names_the_series_and_goes_to_the_step_summary(
    regressed: str, tmp_path: Path, gate: Gate
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", "utf-8")
    done = gate(
        regressed,
        "--candidate",
        "2.0.13",
        "--format",
        "markdown",
        "--report",
        "site",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.exit_code == 1, done.stderr
    md = done.stdout
    assert md.startswith("## ❌ gate: 1 (")
    # one issue: the sweep's points, both forms and the series at the target
    assert (
        "| failing | measured, at target | [example-llm-70b · concurrency · isl1024-osl1024 " in md
    )
    assert "at c2–c8 and at 50 tokens/s/user](site/compare/stack-2-0-12-2-0-13-" in md
    assert (
        "output_tokens_per_s and per accelerator · besides the software: nothing but the "
        "software · 7 series |" in md
    )
    assert "| -8.0% (worse) |" in md
    assert "family size" in md
    assert summary.read_text("utf-8") == "earlier step\n" + md + "\n"


def test_an_acknowledged_regression_passes_and_is_listed(
    regressed: str, tmp_path: Path, gate: Gate
) -> None:
    (tmp_path / "acks.toml").write_text(
        '[[acknowledgement]]\nseries = "stack|*isl1024-osl1024*"\nversions = "2.0.13"\n'
        'reason = "FP8 KV cache trade-off"\nauthor = "perf-team"\n',
        "utf-8",
    )
    (tmp_path / "gate.toml").write_text('[gate]\nacknowledgements = "acks.toml"\n', "utf-8")
    done = gate(regressed, "--candidate", "2.0.13", "--policy", str(tmp_path / "gate.toml"))
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "acknowledged" in done.stdout and "gate: 0 (no regression;" in done.stdout
    md = gate(
        regressed,
        "--candidate",
        "2.0.13",
        "--policy",
        str(tmp_path / "gate.toml"),
        "--format",
        "markdown",
    ).stdout
    assert "acknowledged (FP8 KV cache trade-off)" in md


def test_an_expired_acknowledgement_no_longer_mutes(
    regressed: str, tmp_path: Path, gate: Gate
) -> None:
    (tmp_path / "acks.toml").write_text(
        '[[acknowledgement]]\nseries = "*"\nversions = "2.0.0..2.1"\n'
        'reason = "old"\nexpires = 2020-01-01\n',
        "utf-8",
    )
    (tmp_path / "gate.toml").write_text('[gate]\nacknowledgements = "acks.toml"\n', "utf-8")
    done = gate(regressed, "--candidate", "2.0.13", "--policy", str(tmp_path / "gate.toml"))
    assert done.exit_code == 1


def test_policy_floors_and_kinds_decide_what_fails(
    regressed: str, tmp_path: Path, gate: Gate
) -> None:
    wide = tmp_path / "wide.toml"
    wide.write_text('[[threshold]]\nmatch = "example-llm-70b"\nfloor = 0.10\n', "utf-8")
    assert gate(regressed, "--candidate", "2.0.13", "--policy", str(wide)).exit_code == 0
    off = tmp_path / "off.toml"
    off.write_text('[gate]\nfail_on = ["scaling"]\n', "utf-8")
    done = gate(regressed, "--candidate", "2.0.13", "--policy", str(off))
    assert done.exit_code == 0 and "not gated" in done.stdout


def test_an_improvement_passes(database_url: str, tmp_path: Path, gate: Gate) -> None:
    seed(database_url, tmp_path / "data", [("2.0.12", 2392.0), ("2.0.13", 2600.0)])
    done = gate(database_url, "--baseline", "2.0.12", "--candidate", "2.0.13", "--strict")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "improvement" in done.stdout and "+8.7% (better; CI [" in done.stdout


def test_an_unknown_version_exits_2_naming_the_known_ones(regressed: str, gate: Gate) -> None:
    done = gate(regressed, "--baseline", "2.0.12", "--candidate", "9.9")
    assert done.exit_code == 2
    assert done.stderr.strip() == (
        "Error: unknown candidate version '9.9'; versions known: 2.0.12, 2.0.13"
    )


def test_no_series_in_common_exits_2(database_url: str, tmp_path: Path, gate: Gate) -> None:
    ingest(database_url, sweep(tmp_path / "a", 2000.0), "1.0", software="one")
    ingest(database_url, sweep(tmp_path / "b", 2000.0, SERVING_WORKLOADS[0]), "2.0")
    done = gate(database_url, "--baseline", "1.0", "--candidate", "2.0")
    assert done.exit_code == 2
    assert "no series has results for both 1.0 and 2.0" in done.stderr


def test_a_bad_policy_exits_2_naming_the_file_and_key(
    regressed: str, tmp_path: Path, gate: Gate
) -> None:
    bad = tmp_path / "gate.toml"
    bad.write_text("[gate]\nflor = 0.1\n", "utf-8")
    done = gate(regressed, "--candidate", "2.0.13", "--policy", str(bad))
    assert done.exit_code == 2 and f"Error: {bad}: [gate]: unknown key 'flor'" in done.stderr


def test_suspect_only_passes_without_strict_and_exits_3_with_it(
    database_url: str, tmp_path: Path, gate: Gate
) -> None:
    # one sweep per version and no history: a 7% drop is past the 5% floor, not 2x it
    seed(database_url, tmp_path / "data", [("2.0.12", 2600.0), ("2.0.13", 2418.0)], trials=1)
    done = gate(database_url, "--candidate", "2.0.13")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "suspect" in done.stdout and "gate: 0 (no regression;" in done.stdout
    strict = gate(database_url, "--candidate", "2.0.13", "--strict")
    assert strict.exit_code == 3, strict.stdout + strict.stderr
    assert "gate: 3 (" in strict.stdout


def test_acknowledgement_version_ranges() -> None:
    [ack] = parse_acknowledgements(
        b'[[acknowledgement]]\nseries = "a|*"\nversions = "2.0.9..2.0.13"\nreason = "r"\n',
        source="acks.toml",
    )
    from datetime import date

    today = date(2026, 1, 1)
    assert ack.covers("a|x", "2.0.10", today=today) and ack.covers("a|x", "2.0.13", today=today)
    assert not ack.covers("a|x", "2.0.14", today=today) and not ack.covers(
        "b|x", "2.0.10", today=today
    )


def test_policy_errors_name_the_file_and_entry(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"gate.toml: threshold 1: 'match' must be"):
        parse_policy(b"[[threshold]]\nfloor = 0.1\n", source="gate.toml", base_dir=tmp_path)
    with pytest.raises(Exception, match=r"gate.toml: gate.fail_on: unknown kind 'speed'"):
        parse_policy(b'[gate]\nfail_on = ["speed"]\n', source="gate.toml", base_dir=tmp_path)
    with pytest.raises(Exception, match=r"acks.toml: cannot read the acknowledgements file"):
        parse_policy(b'[gate]\nacknowledgements = "acks.toml"\n', source="g", base_dir=tmp_path)
