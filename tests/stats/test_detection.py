"""``--kind auto``: every data folder and file is recognised as its kind; others are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.serving_cli import ingest
from tracker.errors import ConfigError
from tracker.formats import KINDS, detect_kind
from tracker.ingest.run import open_tree

CASES = [
    ("aiperf", "aiperf"),
    ("aiperf/concurrency_1", "aiperf"),
    ("aiperf/concurrency_4", "aiperf"),
    ("aiperf/concurrency_16", "aiperf"),
    ("aiperf/extras/single_run_c2", "aiperf"),
    ("aiperf/extras/multiturn_prefix_cache_c4_raw", "aiperf"),
    ("aiperf/aggregate", "aiperf"),
    ("aiperf/sweep_aggregate", "aiperf"),
    ("vllm_bench_serving", "vllm-bench"),
    ("vllm_bench_serving/inferencex_fork_fake_server", "vllm-bench"),
    *(
        (
            f"vllm_bench_serving/inferencex_fork_fake_server/fake-llm_isl256_osl64_conc{n}.json",
            "vllm-bench",
        )
        for n in (1, 4, 16)
    ),
    ("inferencex", "inferencex"),
    ("inferencex/agg_from_fake_server", "inferencex"),
    *(
        (f"inferencex/agg_from_fake_server/agg_fake-llm_isl256_osl64_conc{n}.json", "inferencex")
        for n in (1, 4, 16)
    ),
    ("inferencex/public_examples", "inferencex"),
    ("inferencex/public_examples/agentx_agg_h100-retry_attempt1.json", "inferencex"),
    ("inferencex/public_examples/api_v1_benchmarks_excerpt.json", "inferencex"),
    ("inferencex/public_examples/supplemental-bmk_excerpt.json", "inferencex"),
    ("inferencex/public_examples/glm47_conc16.vllm_bench_result.json", "vllm-bench"),
    ("mlperf_endpoints", "mlperf-endpoints"),
    ("mlperf_endpoints/public_examples", "mlperf-endpoints"),
    ("mlperf_endpoints/public_examples/sub_g_r256", "mlperf-endpoints"),
    ("mlperf_endpoints/mlperf_viz_bundle_sub_g_r256.json", "mlperf-endpoints"),
    ("loadgen-local", "loadgen"),
    *((f"loadgen-local/{run}", "loadgen") for run in ("Offline", "Server_tokens", "SingleStream")),
]
GENAI_PERF = Path(__file__).resolve().parents[1] / "data" / "genai-perf"


@pytest.mark.parametrize(("name", "kind"), CASES, ids=[name for name, _ in CASES])
def test_each_data_folder_and_file_is_recognised(shared_data: Path, name: str, kind: str) -> None:
    assert detect_kind(open_tree(str(shared_data / name))) == kind


@pytest.mark.parametrize("name", ["", "sweep", "legacy"])
def test_genai_perf_artifacts_are_recognised(name: str) -> None:
    assert detect_kind(open_tree(str(GENAI_PERF / name))) == "genai-perf"


def test_every_kind_is_offered() -> None:
    assert set(KINDS) >= {
        "aiperf",
        "genai-perf",
        "inferencex",
        "loadgen",
        "mlperf-endpoints",
        "vllm-bench",
    }


@pytest.mark.parametrize(
    "files",
    [
        {"notes.txt": "nothing here"},
        {"config.json": '{"model": "x", "layers": 32}'},
        {"broken.json": '{"output_thr'},
    ],
)
def test_an_unrelated_folder_is_refused_with_what_was_looked_for(
    database_url: str, tmp_path: Path, files: dict[str, str]
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError) as raised:
        detect_kind(open_tree(str(tmp_path)))
    message = str(raised.value)
    assert "cannot tell what kind of results" in message
    for looked_for in ("profile_export_aiperf.json", "agg_*.json", "result_summary.json"):
        assert looked_for in message
    assert f"Supported kinds: {', '.join(KINDS)}; pass --kind" in message
    result = ingest(database_url, tmp_path, "--system", "node-a")
    assert result.exit_code == 2 and result.stderr.startswith(f"Error: {tmp_path}: cannot tell")


def test_an_unrelated_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text('["a", "b"]')
    with pytest.raises(ConfigError, match="cannot tell what kind"):
        detect_kind(open_tree(str(path)))
    other = tmp_path / "notes.txt"
    other.write_text("x")
    with pytest.raises(ConfigError):
        detect_kind(open_tree(str(other)))
