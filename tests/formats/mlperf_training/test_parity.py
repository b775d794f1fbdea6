"""The Training cases the tracker once scored unlike mlperf-logging, through ``tracker ingest``.

The folders are the hand-made ones of ``tests/data/mlperf-training`` (see its
README): Dell ``1xXE9680Lx8B200`` llama2_70b_lora (v5.0 and v5.1: five keys
logged once per GPU rank) and HPE XD670 n1 stable_diffusion (v5.0: evaluations
written out of order). Variants are made in ``tmp_path`` by editing copies.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_rows import Row, export, tracker

DATA = Path(__file__).resolve().parents[2] / "data" / "mlperf-training"
DELL = "Dell/results/1xXE9680Lx8B200/llama2_70b_lora"
HPE = "HPE/results/HPE-Cray-XD670-H200-SXM5-141GB_n1_24.09/stable_diffusion"
SCORE = "time_to_train_minutes"
RUN = "run_time_to_train_minutes"


def ingest(tmp_path: Path, *rounds: Path) -> tuple[str, list[Row]]:
    url = f"sqlite:///{tmp_path / 't.db'}"
    result = tracker(url, tmp_path / "cache", "ingest", *map(str, rounds))
    assert result.exit_code == 0, result.output
    return result.output, export(url, tmp_path / "cache")


def scores(rows: list[Row]) -> dict[tuple[str, str], Row]:
    return {(r["round"], r["location"]): r for r in rows if r["metric"] == SCORE}


def runs(rows: list[Row], round_label: str) -> dict[str, Row]:
    return {r["run_label"]: r for r in rows if r["metric"] == RUN and r["round"] == round_label}


def copy_round(round_label: str, root: Path, submitter: str = "Dell") -> Path:
    target = root / round_label
    shutil.copytree(DATA / round_label / submitter, target / submitter)
    return target


def rewrite(path: Path, edit: Any) -> None:
    path.write_text("".join(edit(path.read_text().splitlines(keepends=True))))


def mllog(line: str) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(line.split(":::MLLOG ", 1)[1])
    return payload


def test_keys_logged_once_per_rank_with_one_value_score_with_a_warning(tmp_path: Path) -> None:
    output, rows = ingest(tmp_path, DATA / "v5.0", DATA / "v5.1")
    found = scores(rows)
    dell_v50, dell_v51 = found[("v5.0", DELL)], found[("v5.1", DELL)]
    assert round(dell_v50["value"], 6) == 11.325494  # the published score, no longer "no score"
    assert round(dell_v51["value"], 6) == 8.886429
    assert (dell_v50["extra"]["runs_used"], dell_v50["extra"]["converged_runs"]) == (8, 10)
    assert all(r["valid"] for r in runs(rows, "v5.1").values())
    # 5.1.0 warns about the four keys it requires once; 5.0.0 does not ask for org/platform
    warned = dell_v51["extra"]["compliance_warnings"]
    assert warned.startswith("'submission_org' logged 8 times with the same value 'Dell' (10 of")
    assert "'submission_platform' logged 8 times" in warned
    assert "submission_org" not in dell_v50["extra"]["compliance_warnings"]
    assert "'submission_division' logged 8 times" in dell_v50["extra"]["compliance_warnings"]
    assert f"  note: {DELL}: compliance warnings, runs kept as mlperf-logging keeps them: " in (
        output
    )


def test_two_values_of_submission_org_reject_the_run_naming_key_and_values(
    tmp_path: Path,
) -> None:
    root = copy_round("v5.1", tmp_path / "round")
    # rank 3 of result_0 names another organisation
    rewrite(
        root / DELL / "result_0.txt",
        lambda lines: [
            x.replace('"value": "Dell"', '"value": "NVIDIA"') if x.startswith("3: ") else x
            for x in lines
        ],
    )
    _output, rows = ingest(tmp_path, root)
    rejected = runs(rows, "v5.1")["result_0"]
    assert not rejected["valid"] and rejected["extra"]["role"] == "dropped (not converged)"
    assert rejected["extra"]["invalid_reason"] == (
        "'submission_org' logged 8 times with different values 'Dell' and 'NVIDIA'; "
        "exactly once required"
    )
    score = scores(rows)[("v5.1", DELL)]
    assert (score["extra"]["converged_runs"], score["extra"]["dropped_slowest"]) == (9, 0)


def test_a_v5_0_log_without_submission_platform_scores_and_a_v5_1_one_does_not(
    tmp_path: Path,
) -> None:
    def drop_platform(lines: list[str]) -> list[str]:
        return [x for x in lines if '"key": "submission_platform"' not in x]

    for round_label in ("v5.0", "v5.1"):
        root = copy_round(round_label, tmp_path / round_label)
        for log in (root / DELL).glob("result_*.txt"):
            rewrite(log, drop_platform)
    _output, rows = ingest(tmp_path, tmp_path / "v5.0" / "v5.0", tmp_path / "v5.1" / "v5.1")
    assert round(scores(rows)[("v5.0", DELL)]["value"], 6) == 11.325494
    assert ("v5.1", DELL) not in scores(rows)  # every run fails: no score
    reasons = {r["extra"]["invalid_reason"] for r in runs(rows, "v5.1").values()}
    assert reasons == {"'submission_platform' logged 0 times; exactly once required"}


def test_out_of_order_stable_diffusion_evaluations_give_the_rcp_samples_to_converge(
    tmp_path: Path,
) -> None:
    _output, rows = ingest(tmp_path, DATA / "v5.0")
    score = scores(rows)[("v5.0", HPE)]
    assert score["extra"]["samples_to_converge"] == 2_176_000  # not 1,792,000
    assert (score["extra"]["runs_used"], score["extra"]["global_batch_size"]) == (8, 512)


def test_a_second_run_start_times_the_run_from_it(tmp_path: Path) -> None:
    root = copy_round("v5.0", tmp_path / "round")
    log = root / DELL / "result_3.txt"
    lines = log.read_text().splitlines(keepends=True)
    at = next(i for i, x in enumerate(lines) if '"key": "run_start"' in x)
    again = mllog(lines[at])
    again["time_ms"] += 1525  # a second run_start, 1.525 s after the first
    lines.insert(at + 1, f"0: :::MLLOG {json.dumps(again)}\n")
    log.write_text("".join(lines))
    stop = next(mllog(x) for x in lines if '"key": "run_stop"' in x)
    _output, rows = ingest(tmp_path, root)
    run = runs(rows, "v5.0")["result_3"]
    assert run["valid"]
    assert run["value"] == pytest.approx((stop["time_ms"] - again["time_ms"]) / 60000, rel=1e-12)
    warned = run["extra"]["compliance_warnings"].split("; ")
    assert "'run_start' logged 2 times with the same value None" in warned
