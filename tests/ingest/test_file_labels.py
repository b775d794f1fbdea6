"""Labels read from result files obey the same rules as labels from flags (issue #21, 19).

A model name in an AIPerf export becomes the benchmark label: one with a control
character or longer than its column is refused with an error naming the file,
on SQLite and PostgreSQL alike, and nothing of it is stored.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

RUN = Path("aiperf") / "extras" / "single_run_c2"


def _run_with_model(shared_data: Path, tmp_path: Path, model: str) -> Path:
    target = tmp_path / "run"
    shutil.copytree(shared_data / RUN, target)
    for path in target.rglob("*.json"):
        path.chmod(0o644)
        text = path.read_text(encoding="utf-8")
        if "fake-llm" in text:
            path.write_text(text.replace('"fake-llm"', json.dumps(model)), encoding="utf-8")
    return target


@pytest.mark.parametrize(
    ("model", "problem"),
    [
        ("fake\x1b[31m-llm", "benchmark label: has a control character"),
        ("m" * 250, "benchmark label: too long: 250 characters"),
    ],
    ids=["escape", "too-long"],
)
def test_a_bad_label_in_a_file_is_an_error_naming_the_file(
    run_tracker: Any, database_url: str, shared_data: Path, tmp_path: Path, model: str, problem: str
) -> None:
    run = _run_with_model(shared_data, tmp_path, model)
    labels = ("--software-version", "1.0", "--system", "node-a", "--accelerators", "2")
    result = run_tracker(
        ["--database-url", database_url, "ingest", str(run), "--kind", "aiperf", *labels]
    )
    assert result.exit_code == 2, result.output
    assert "profile_export_aiperf.json" in result.stderr and problem in result.stderr
    exported = run_tracker(["--database-url", database_url, "export", "--format", "json"])
    assert exported.exit_code == 0 and json.loads(exported.stdout) == []


def test_a_good_label_in_a_file_is_stored(
    run_tracker: Any, database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    run = _run_with_model(shared_data, tmp_path, "fake-llm")
    labels = ("--software-version", "1.0", "--system", "node-a", "--accelerators", "2")
    result = run_tracker(
        ["--database-url", database_url, "ingest", str(run), "--kind", "aiperf", *labels]
    )
    assert result.exit_code == 0, result.output
