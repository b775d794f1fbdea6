"""`tracker gate`: a candidate run stored as invalid where the baseline was valid fails (issue 21).

The analysis compares valid results only; before, such a series dropped out of the
comparison and a strict gate exited 0 without naming it. Now it is an item of its
own kind, ``invalid``, failing by default, listed in every format with the reason
the run gave. Real LoadGen logs: ``Server`` (VALID) and ``Server_invalid`` (INVALID,
"Reduce target QPS to improve latency.").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

Run = Callable[..., Result]
REASON = "Reduce target QPS to improve latency."


def _ingest(run: Run, url: str, source: Path, version: str) -> None:
    args = ["--kind", "loadgen", "--benchmark", "resnet50", "--system", "box"]
    done = run(["--database-url", url, "ingest", str(source), *args, "--software-version", version])
    assert done.exit_code == 0, done.output


@pytest.fixture
def became_invalid(database_url: str, loadgen_local: Path, run_tracker: Run) -> str:
    _ingest(run_tracker, database_url, loadgen_local / "Server", "1.0")
    _ingest(run_tracker, database_url, loadgen_local / "Server_invalid", "2.0")
    return database_url


def _gate(run: Run, url: str, *args: str) -> Result:
    return run(["--database-url", url, "gate", "--candidate", "2.0", *args])


def test_a_candidate_run_that_became_invalid_fails_the_strict_gate_in_every_format(
    became_invalid: str, run_tracker: Run
) -> None:
    text = _gate(run_tracker, became_invalid, "--strict")
    assert text.exit_code == 1, text.output
    assert "gate: 1 (1 invalid, 1.0 → 2.0)" in text.stdout
    assert "invalid" in text.stdout and "resnet50 · Server · queries_per_s" in text.stdout
    assert REASON in text.stdout

    markdown = _gate(run_tracker, became_invalid, "--format", "markdown")
    assert markdown.exit_code == 1
    assert "| failing | invalid |" in markdown.stdout and REASON in markdown.stdout

    doc = json.loads(_gate(run_tracker, became_invalid, "--format", "json").stdout)
    [item] = doc["items"]
    assert (item["kind"], item["state"], item["verdict"]) == ("invalid", "failing", "invalid")
    assert item["key"] == "local|/box|resnet50|Server||queries_per_s"
    assert REASON in item["detail"] and (item["n_baseline"], item["n_candidate"]) == (1, 0)
    assert doc["exit_code"] == 1 and "invalid" in doc["settings"]["fail_on"]


def test_the_invalid_kind_is_a_policy_kind_and_can_be_acknowledged(
    loadgen_local: Path, tmp_path: Path, run_tracker: Run
) -> None:
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    _ingest(run_tracker, url, loadgen_local / "Server", "1.0")
    _ingest(run_tracker, url, loadgen_local / "Server_invalid", "2.0")
    off = tmp_path / "off.toml"
    off.write_text('[gate]\nfail_on = ["regression", "target", "scaling"]\n', "utf-8")
    done = _gate(run_tracker, url, "--policy", str(off))
    assert done.exit_code == 0, done.output
    assert "not gated" in done.stdout and "invalid" in done.stdout

    (tmp_path / "acks.toml").write_text(
        '[[acknowledgement]]\nseries = "local|/box|resnet50|Server*"\nversions = "2.0"\n'
        'reason = "known lab outage"\n',
        "utf-8",
    )
    acked = tmp_path / "acked.toml"
    acked.write_text('[gate]\nacknowledgements = "acks.toml"\n', "utf-8")
    done = _gate(run_tracker, url, "--policy", str(acked), "--strict")
    assert done.exit_code == 0, done.output
    assert "acknowledged" in done.stdout

    unknown = tmp_path / "unknown.toml"
    unknown.write_text('[gate]\nfail_on = ["invalid", "bogus"]\n', "utf-8")
    done = _gate(run_tracker, url, "--policy", str(unknown))
    assert done.exit_code == 2 and "invalid" in done.output
