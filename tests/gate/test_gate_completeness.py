"""Completeness: baseline series without a candidate result (issue 16, item 2).

A baseline of two serving workloads (7 series each: three sweep points in
tokens/s and per accelerator, and the series at 50 tokens/s/user) and a
candidate that ran one of them: the gate lists the 7 missing series as one
issue in every format and counts them in the summary line; ``fail_on =
["missing"]`` fails on them. A candidate ingested without ``--accelerators``
lacks only the per-accelerator series, and the gate says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gate.test_gate import CHAT, Gate, gate, ingest, sweep  # noqa: F401  (gate: fixture)
from tests.support.analysis_trees import tracker_ok
from tracker.demo import SERVING_WORKLOADS
from tracker.gate.items import NO_ACCELERATOR_COUNT

SEES = "; every series could see a 5% change)"
"""The end of a summary line when every compared series could see a 5% change."""

NOISE = (1.0, 1.004, 0.996)
OTHER = "stack|/node-4x|example-llm-70b|concurrency|isl65536-osl400"


@pytest.fixture
def partial(database_url: str, tmp_path: Path) -> str:
    for version in ("1.0", "2.0"):
        for t, noise in enumerate(NOISE):
            sweep(tmp_path / version / "chat" / f"trial_{t}", 2600.0 * noise)
            if version == "1.0":  # the candidate's second workload "crashed"
                other = tmp_path / version / "other" / f"trial_{t}"
                sweep(other, 1500.0 * noise, SERVING_WORKLOADS[0])
        ingest(database_url, tmp_path / version, version)
    return database_url


def test_a_partial_candidate_lists_and_counts_the_missing_series(partial: str, gate: Gate) -> None:  # noqa: F811
    text = gate(partial, "--candidate", "2.0")
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0] == "gate: 0 (no regression; 7 of 14 baseline series missing, 1.0 → 2.0" + SEES
    assert lines[1].split()[:4] == ["not", "gated", "missing", "example-llm-70b:"]
    assert "7 series without a candidate result on 1 system" in lines[1]
    assert lines[2] == "(--show-missing lists every missing series, one line each)"
    flat = " ".join(text.stdout.split())
    assert "Compared 7 series of stack 1.0 → 2.0; family size 7 (BH); 7 baseline series" in flat
    every = gate(partial, "--candidate", "2.0", "--show-missing", "--verbose").stdout
    assert " at c2–c8 and at 50 tokens/s/user — " in every.splitlines()[1]
    assert "    no candidate result (the baseline has 3 values)" in every.splitlines()

    md = gate(partial, "--candidate", "2.0", "--format", "markdown").stdout
    assert md.startswith(
        "## ✅ gate: 0 (no regression; 7 of 14 baseline series missing, 1.0 → 2.0" + SEES
    )
    assert "| not gated | missing | example-llm-70b · concurrency · isl65536-osl400 at c2–c8" in md

    doc = json.loads(gate(partial, "--candidate", "2.0", "--format", "json").stdout)
    assert (doc["baseline_series"], len(doc["missing"])) == (14, 7)
    assert all(key.startswith(OTHER) for key in doc["missing"])
    [issue] = doc["issues"]
    assert (issue["check"], sorted(issue["members"])) == ("missing", sorted(doc["missing"]))
    assert "missing" not in doc["settings"]["fail_on"]


def test_the_policy_can_fail_on_missing_series(partial: str, gate: Gate, tmp_path: Path) -> None:  # noqa: F811
    policy = tmp_path / "gate.toml"
    kinds = '["regression", "target", "scaling", "invalid", "missing"]'
    policy.write_text(f"[gate]\nfail_on = {kinds}\n", "utf-8")
    done = gate(partial, "--candidate", "2.0", "--policy", str(policy))
    assert done.exit_code == 1, done.output
    assert (
        done.stdout.splitlines()[0] == "gate: 1 (7 of 14 baseline series missing, 1.0 → 2.0" + SEES
    )
    assert done.stdout.splitlines()[1].split()[:2] == ["failing", "missing"]


def test_a_candidate_without_accelerator_count_is_named(
    database_url: str,
    tmp_path: Path,
    gate: Gate,  # noqa: F811
) -> None:
    for version, accelerators in (("1.0", ["--accelerators", "4"]), ("2.0", [])):
        for t, noise in enumerate(NOISE):
            sweep(tmp_path / version / f"trial_{t}", 2600.0 * noise, CHAT)
        tracker_ok(
            database_url,
            "ingest",
            str(tmp_path / version),
            "--kind",
            "aiperf",
            "--software",
            "stack",
            "--software-version",
            version,
            "--system",
            "node-4x",
            *accelerators,
        )
    done = gate(database_url, "--candidate", "2.0")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[0] == (
        "gate: 0 (no regression; 3 of 7 baseline series missing, 1.0 → 2.0" + SEES
    )
    assert NO_ACCELERATOR_COUNT in done.stdout.splitlines()[1]
    every = gate(database_url, "--candidate", "2.0", "--show-missing").stdout
    assert "isl1024-osl1024: " in every.splitlines()[1] and " at c2–c8 — " in every.splitlines()[1]
    doc = json.loads(gate(database_url, "--candidate", "2.0", "--format", "json").stdout)
    assert all(key.endswith("|output_tokens_per_s_per_accelerator") for key in doc["missing"])
    assert {i["detail"] for i in doc["items"] if i["kind"] == "missing"} == {NO_ACCELERATOR_COUNT}
    md = gate(database_url, "--candidate", "2.0", "--format", "markdown").stdout
    assert "ingested without --accelerators?" in md
