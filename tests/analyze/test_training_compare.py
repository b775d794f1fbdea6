"""``tracker compare --against-round`` on MLPerf Training rounds (issue 33).

The shared v5.0 and v5.1 folders hold one system in both rounds: MangoBoost's
1-node MI300X on llama2_70b_lora, 29.5956 → 28.3740 minutes (official scores,
``expected_scores.json``), both RCP-scaled (1.051146 and 1.034722), olympic means
28.1555 → 27.4219. The hand-made Dell folders of ``tests/data/mlperf-training``
(11.325494 → 8.886429, not scaled) are edited in ``tmp_path`` for the cases
that are not compared: another accelerator count, another global batch size,
no score.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli_rows import tracker

DATA = Path(__file__).resolve().parents[1] / "data" / "mlperf-training"
DELL = "Dell/results/1xXE9680Lx8B200/llama2_70b_lora"
DELL_SYSTEM = "Dell/systems/1xXE9680Lx8B200.json"


def ingest(tmp_path: Path, *rounds: Path) -> str:
    url = f"sqlite:///{tmp_path / 't.db'}"
    result = tracker(url, tmp_path / "cache", "ingest", *map(str, rounds))
    assert result.exit_code == 0, result.output
    return url


def compare(url: str, tmp_path: Path, *args: str) -> list[str]:
    result = tracker(url, tmp_path / "cache", "compare", "--round", "v5.1", *args)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


@pytest.fixture(scope="module")
def shared_rounds(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    work = tmp_path_factory.mktemp("training-compare")
    training = shared_data / "mlperf-training"
    return ingest(work, training / "v5.0", training / "v5.1")


def test_compare_prints_the_time_to_train_of_a_system_across_rounds(
    shared_rounds: str, tmp_path: Path
) -> None:
    lines = compare(shared_rounds, tmp_path, "--against-round", "v5.0")
    at = lines.index(
        "  MangoBoost/MI300X-LLMBoost-GPUBoost-1node llama2_70b_lora "
        "29.5956 → 28.3740 minutes (1.043× faster)"
    )
    assert lines[at - 1] == (
        "v5.0 → v5.1, MLPerf Training time to train (same system and configuration; "
        "lower is better)"
    )
    assert lines[at + 1 : at + 4] == [
        "    x8 AMD Instinct MI300X 192GB HBM3, global batch size 8; runs 8 used, 2 dropped → "
        "8 used, 2 dropped; RCP-scaled ×1.0511 → RCP-scaled ×1.0347",
        "    unscaled (olympic mean of the runs used) 28.1555 → 27.4219 minutes (1.027× faster)",
        "    3.9461 → 3.7832 accelerator-hours to train (time to train × accelerators)",
    ]
    # no other system has a folder in both rounds (the 2-node system is v5.0 only)
    assert sum(line.startswith("  ") and not line.startswith("   ") for line in lines) == 1
    assert not any("2node" in line for line in lines)


def test_compare_selects_training_by_benchmark_and_system(
    shared_rounds: str, tmp_path: Path
) -> None:
    only = ("--system", "MI300X-LLMBoost-GPUBoost-1node", "--benchmark", "llama2_70b_lora")
    chosen = compare(shared_rounds, tmp_path, "--against-round", "v5.0", *only)
    assert any("29.5956 → 28.3740 minutes" in line for line in chosen)
    result = tracker(shared_rounds, tmp_path / "cache", "compare", "--round", "v5.1",
                     "--against-round", "v5.0", "--benchmark", "dlrm_dcnv2")  # fmt: skip
    assert result.exit_code == 2  # Cisco's dlrm_dcnv2 is in v5.1 only
    assert "no MLPerf Training folder of one system is in both rounds" in result.output


def test_dell_across_rounds_is_not_rcp_scaled_and_faster(tmp_path: Path) -> None:
    url = ingest(tmp_path, DATA / "v5.0", DATA / "v5.1")
    lines = compare(url, tmp_path, "--against-round", "v5.0")
    assert (
        "  Dell/1xXE9680Lx8B200 llama2_70b_lora 11.3255 → 8.8864 minutes (1.274× faster)" in lines
    )
    assert (
        "    x8 NVIDIA B200-SXM-180GB, global batch size 8; runs 8 used, 2 dropped → "
        "8 used, 2 dropped; not RCP-scaled → not RCP-scaled"
    ) in lines
    assert not any("unscaled" in line for line in lines)  # nothing scaled: said once
    assert "    1.5101 → 1.1849 accelerator-hours to train (time to train × accelerators)" in lines


def edited_v51(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name / "v5.1"
    shutil.copytree(DATA / "v5.1" / "Dell", root / "Dell")
    return root


def test_another_configuration_or_no_score_is_not_compared_and_says_why(tmp_path: Path) -> None:
    half = edited_v51(tmp_path, "half")
    system = json.loads((half / DELL_SYSTEM).read_text())
    (half / DELL_SYSTEM).write_text(json.dumps({**system, "accelerators_per_node": "4"}))
    bigger = edited_v51(tmp_path, "bigger")
    for log in (bigger / DELL).glob("result_*.txt"):
        log.write_text(log.read_text().replace('"global_batch_size", "value": 8,',
                                               '"global_batch_size", "value": 16,'))  # fmt: skip
    stopped = edited_v51(tmp_path, "stopped")
    for log in sorted((stopped / DELL).glob("result_*.txt"))[:2]:  # two runs never stop
        log.write_text("".join(x for x in log.read_text().splitlines(True) if "run_stop" not in x))
    expected = {
        half: "accelerators x8 → x4",
        bigger: "global batch size 8 → 16",
        stopped: "no score in v5.1 (too many runs did not converge)",
    }
    for root, why in expected.items():
        url = ingest(root.parent, DATA / "v5.0", root)
        lines = compare(url, root.parent, "--against-round", "v5.0")
        assert f"  not compared: Dell/1xXE9680Lx8B200 llama2_70b_lora: {why}" in lines
        assert not any(" minutes (" in line for line in lines)  # no time compared
