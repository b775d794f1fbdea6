"""The optional cross-check of Training scores against MLCommons' ``mlperf-logging``.

With the package installed (``pip install '.[training-check]'``) every folder
of both real rounds is scored again by its result summarizer during
``tracker ingest`` and the notes say they agree; without it no cross-check is
made and nothing is said. What counts as a disagreement is checked on plain
values either way.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.support.cli_rows import tracker
from tests.support.training_folders import too_many_not_converged
from tracker.formats.mlperf_training.read_tree import ScoreToCheck, TrainingFolder, disagreements_of

HAS_PACKAGE = importlib.util.find_spec("mlperf_logging") is not None
NEEDS_PACKAGE = "mlperf-logging is not installed (pip install '.[training-check]')"


def ingest(shared_data: Path, tmp_path: Path) -> str:
    rounds = shared_data / "mlperf-training"
    url = f"sqlite:///{tmp_path / 't.db'}"
    result = tracker(url, tmp_path / "cache", "ingest", str(rounds / "v5.0"), str(rounds / "v5.1"))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.skipif(not HAS_PACKAGE, reason=NEEDS_PACKAGE)
def test_every_score_agrees_with_mlperf_logging(shared_data: Path, tmp_path: Path) -> None:
    from importlib.metadata import version

    output = ingest(shared_data, tmp_path)
    found = version("mlperf-logging")
    assert f"cross-checked 5 folders against mlperf-logging {found}: every score agrees" in output
    assert f"cross-checked 10 folders against mlperf-logging {found}: every score agrees" in output
    assert "disagrees" not in output and "WARNING" not in output
    # the package gives no score to the folder with two runs cut short either
    folder = too_many_not_converged(shared_data, tmp_path / "round")
    url = f"sqlite:///{tmp_path / 'f.db'}"
    result = tracker(url, tmp_path / "cache", "ingest", str(folder))
    assert f"cross-checked 1 folder against mlperf-logging {found}: every score agrees" in (
        result.output
    )


@pytest.mark.skipif(HAS_PACKAGE, reason="mlperf-logging is installed: the cross-check runs")
def test_without_mlperf_logging_no_cross_check_is_made(shared_data: Path, tmp_path: Path) -> None:
    assert "mlperf-logging" not in ingest(shared_data, tmp_path)


FOLDER = TrainingFolder(
    "Corp/results/box/bert", "Corp", "Corp", "box", "bert", ("r/result_0.txt",), None, {}
)


def test_a_different_score_or_converged_run_is_a_disagreement() -> None:
    mine = ScoreToCheck(FOLDER, 10.0, {"result_0.txt": 10.0, "result_1.txt": 11.0})
    assert (
        disagreements_of(mine, 10.0 * (1 + 5e-10), {"result_0.txt": 9.0, "result_1.txt": 1.0}) == []
    )
    assert disagreements_of(mine, 10.001, {"result_0.txt": 10.0, "result_2.txt": 12.0}) == [
        "Corp/results/box/bert: the tracker gives 10.000000 minutes, "
        "mlperf-logging 10.001000 minutes",
        "Corp/results/box/bert/result_1.txt: only the tracker counts this run as converged",
        "Corp/results/box/bert/result_2.txt: only mlperf-logging counts this run as converged",
    ]
    none = ScoreToCheck(FOLDER, None, {})
    assert disagreements_of(none, 3.0, {}) == [
        "Corp/results/box/bert: the tracker gives no score, mlperf-logging 3.000000 minutes"
    ]
