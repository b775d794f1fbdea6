"""The oracle's comparison (``make check-oracle``) finds a difference in any field it compares.

mlperf-logging is not installed in the test environment, so the package's side is
stood in for by a document (``--official-json``) that mirrors what the tracker
stored for the hand-made Dell v5.1 folder; it must agree, and each change to one
field must be named and give exit status 1.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.oracle import check
from tests.oracle.check import main, tracker_rows

DATA = Path(__file__).resolve().parents[1] / "data" / "mlperf-training"
ROUND = DATA / "v5.1"
FOLDER = "Dell/results/1xXE9680Lx8B200/llama2_70b_lora"


def mirror(ingested: list[dict[str, Any]]) -> dict[str, Any]:
    """An official document with the tracker's own figures for the folder."""
    rows = [r for r in ingested if r["location"] == FOLDER]
    (score,) = [r for r in rows if r["metric"] == "time_to_train_minutes"]
    runs = {Path(r["artifact_path"]).name: r for r in rows if r["metric"] != score["metric"]}
    warned = {
        name: sorted(set(re.findall(r"'([^']+)' logged", r["extra"]["compliance_warnings"])))
        for name, r in runs.items()
    }
    extra = score["extra"]
    folder = {
        "round": "v5.1",
        "round_path": str(ROUND),
        "folder": FOLDER,
        "benchmark": "llama2_70b_lora",
        "result_files": extra["result_files"],
        "max_dropped": 1,
        "score_minutes": score["value"],
        "scaling_factor": extra["scaling_factor"],
        "converged": {name: r["value"] for name, r in runs.items() if r["valid"]},
        "energy_j": None,
        "samples_to_converge": extra["samples_to_converge"],
        "global_batch_size": extra["global_batch_size"],
        "warned_keys": warned,
    }
    return {"package": "mlperf-logging", "version": "(mirror)", "folders": [folder]}


def run(document: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "official.json"
    path.write_text(json.dumps(document))
    status = main(["--official-json", str(path), str(ROUND)])
    output = capsys.readouterr().out
    assert status == (0 if "1 of 1 folders agree" in output else 1), output
    return output


def changed(document: dict[str, Any], edit: Any) -> dict[str, Any]:
    document = copy.deepcopy(document)
    edit(document["folders"][0])
    return document


def test_the_oracle_names_every_field_that_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mirror").mkdir()
    ingested = tracker_rows(ROUND, tmp_path / "mirror")
    official = mirror(ingested)
    # this comparison ingests the folder through the command line; the others reuse the rows
    assert f"  agree  v5.1/{FOLDER}" in run(official, tmp_path, capsys)
    monkeypatch.setattr(check, "tracker_rows", lambda _round, _work: ingested)
    edits = {
        "score_minutes: tracker": lambda f: f.update(score_minutes=f["score_minutes"] * 1.000001),
        "samples_to_converge: tracker": lambda f: f.update(samples_to_converge=3456.0),
        "converged runs: only the tracker ['result_5.txt']": lambda f: f["converged"].pop(
            "result_5.txt"
        ),
        "result_files: tracker 10, mlperf-logging 11": lambda f: f.update(result_files=11),
        "compliance warnings of result_0.txt: tracker": lambda f: f["warned_keys"].update(
            {"result_0.txt": ["submission_org"]}
        ),
        "has a score: tracker True, mlperf-logging False": lambda f: f.update(score_minutes=None),
    }
    for named, edit in edits.items():
        output = run(changed(official, edit), tmp_path, capsys)
        assert f"  DISAGREE  v5.1/{FOLDER}" in output and named in output, (named, output)
        assert "0 of 1 folders agree with mlperf-logging (mirror)" in output
    missing = {**official, "folders": []}
    assert "not scored by mlperf-logging" in run(missing, tmp_path, capsys)
