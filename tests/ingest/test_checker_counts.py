"""Accelerator counts by the checker's rule, whatever the order of ingestion (issue #31).

AMD's v6.0 ``94xMI355X_24xEPYC_9575F`` and ``87xMI355X_22xEPYC_9575F`` run on 12 and
11 nodes of 8 accelerators: the official table and the MLCommons checker count 96
and 88 (nodes × accelerators per node), and so do their per-accelerator figures,
while the systems JSON's accelerator string says "(x94)" and "(x87)". Before, the
count stored depended on which source came first (96 / 88 from the table, 94 / 87
from the logs). Here the round is ingested table first and logs first, on SQLite and
PostgreSQL: both orders store 96 / 88, with 94 / 87 kept beside them as the count the
description states.

The shared data holds the v6.0 table's AMD rows but not AMD's result folders; the logs
are stood in for by a small round in a temporary folder: each system's JSON with the
fields the table gives (12 or 11 nodes, 8 per node, the "(x94)" accelerator string), and
a result folder at the table's location with a real v6.0 log of the benchmark (NVIDIA's
GB300 NVL72 x72, copied: only the systems' counts are looked at here).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.analysis_trees import tracker_ok
from tracker.store.facade import Store

TABLE = "mlperf-inference/tables/v6.0"
LOG_FROM = "mlperf-inference/v6.0/closed/NVIDIA/results/GB300-NVL72_GB300-288GB_aarch64x72_TRT"
SYSTEMS = {
    # system: (nodes, accelerator text, benchmark of a table row, checker count, stated)
    "94xMI355X_24xEPYC_9575F": (
        12,
        "AMD Instinct MI355X 288GB HBM3e (x94)",
        "gpt-oss-120b",
        96,
        94,
    ),
    "87xMI355X_22xEPYC_9575F": (
        11,
        "AMD Instinct MI355X 288GB HBM3e (x87)",
        "llama2-70b-99",
        88,
        87,
    ),
}


def _system_json(nodes: int, accelerator: str) -> dict[str, object]:
    return {
        "accelerator_model_name": accelerator,
        "accelerators_per_node": 8,
        "number_of_nodes": nodes,
        "division": "closed",
        "submitter": "AMD",
        "status": "available",
        "system_name": "AMD Instinct MI355X cluster",
        "system_type": "datacenter",
        "host_processor_model_name": "AMD EPYC 9575F",
        "host_processors_per_node": 2,
        "host_processor_core_count": 64,
        "framework": "PyTorch 2.9.1+git8907517, ROCm 7.0.0",
        "other_software_stack": "",
        "operating_system": "Ubuntu 22.04",
        "hw_notes": "",
        "sw_notes": "",
    }


@pytest.fixture(scope="module")
def logs(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A v6.0 round of the two AMD systems: their JSON and one result folder each."""
    root = tmp_path_factory.mktemp("amd") / "v6.0"
    amd = root / "closed" / "AMD"
    (amd / "systems").mkdir(parents=True)
    for system, (nodes, accelerator, benchmark, _count, _stated) in SYSTEMS.items():
        (amd / "systems" / f"{system}.json").write_text(
            json.dumps(_system_json(nodes, accelerator), indent=2), encoding="utf-8"
        )
        run = amd / "results" / system / benchmark / "Offline" / "performance" / "run_1"
        run.mkdir(parents=True)
        source = shared_data / LOG_FROM / benchmark / "Offline" / "performance" / "run_1"
        for log in source.glob("mlperf_log_*.txt"):
            shutil.copyfile(log, run / log.name)
    return root


def _counts(url: str) -> dict[str, tuple[int | None, int | None]]:
    """Per AMD system of v6.0: the count its results carry and the count its description
    states (``None``: the same)."""
    found: dict[str, tuple[int | None, int | None]] = {}
    with Store.open(url) as store:
        for s in store.iter_analysis_samples():
            if s.version == "v6.0" and s.system in SYSTEMS:
                stated = s.configuration.accelerators_stated if s.configuration else None
                found.setdefault(s.system, (s.accelerators_total, stated))
    return found


@pytest.fixture(params=["table first", "logs first"])
def order(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


def test_amd_counts_are_the_checkers_96_and_88_in_either_order(
    database_url: str, shared_data: Path, logs: Path, order: str
) -> None:
    sources = [str(shared_data / TABLE), str(logs)]
    if order == "logs first":
        sources.reverse()
    for source in sources:
        tracker_ok(database_url, "ingest", source)
    expected = {system: (count, stated) for system, (*_, count, stated) in SYSTEMS.items()}
    assert _counts(database_url) == expected
    # the per-accelerator figure uses the checker's count: the stored result ÷ 96
    ranking = tracker_ok(
        database_url, "compare", "--round", "v6.0", "--benchmark", "gpt-oss-120b"
    ).stdout
    line = next(ln for ln in ranking.splitlines() if "94xMI355X" in ln)
    assert "96 × AMD Instinct MI355X 288GB HBM3e (x94) (the description says 94)" in line
    found = re.search(r"([0-9.,]+) per accelerator \(([0-9.,]+) total\)", line)
    assert found is not None, line
    per, total = (float(found[n].replace(",", "")) for n in (1, 2))
    assert per == pytest.approx(total / 96, rel=1e-5)
