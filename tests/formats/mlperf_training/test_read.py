"""Published MLPerf Training rounds: the official scores, reproduced through ingest and export.

The two rounds of ``../shared/data/mlperf-training`` are ingested once per
module (``tracker ingest`` on their folders) and every entry of its
``expected_scores.json`` (the MLCommons ``mlperf-logging`` result summarizer's
output) is compared with ``tracker export --format json``. Malformed logs,
``--strict``, a folder with too many non-converged runs, archives and
``tracker pull``-style downloads are built in ``tmp_path`` from those files.
"""

from __future__ import annotations

import json
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.test_pull import Served, serve
from tests.support.cli_rows import export, stored_nothing, tracker
from tests.support.training_folders import too_many_not_converged
from tracker.analyze.run import run_analysis
from tracker.ingest.run import pull_round, read_job, round_repository
from tracker.paths import jobs_dir
from tracker.store.facade import Store

Row = dict[str, Any]
SCORE = "time_to_train_minutes"
RUN = "run_time_to_train_minutes"
TOLERANCE = 1e-9
V51_REF = "441d65f4445cd59687466533fd9f55399136e7a4"


@pytest.fixture(scope="module")
def training(shared_data: Path) -> Path:
    return shared_data / "mlperf-training"


@pytest.fixture(scope="module")
def expected(training: Path) -> list[Row]:
    entries: list[Row] = json.loads((training / "expected_scores.json").read_text())["entries"]
    return entries


@pytest.fixture(scope="module")
def rounds(
    training: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, list[Row]]]:
    work = tmp_path_factory.mktemp("training")
    url = f"sqlite:///{work / 'tracker.db'}"
    result = tracker(url, work / "cache", "ingest", str(training / "v5.0"), str(training / "v5.1"))
    assert result.exit_code == 0, result.output
    yield url, export(url, work / "cache")


def close(mine: float, official: float) -> bool:
    return abs(mine - official) <= TOLERANCE * abs(official)


def folder_of(entry: Row) -> str:
    return str(entry["folder"]).split("/", 1)[1]


def test_every_official_score_is_reproduced(
    rounds: tuple[str, list[Row]], expected: list[Row]
) -> None:
    scores = {(r["round"], r["location"]): r for r in rounds[1] if r["metric"] == SCORE}
    assert len(scores) == len(expected) == 15
    for entry in expected:
        row = scores[(entry["round"], folder_of(entry))]
        extra = row["extra"]
        assert close(row["value"], entry["score_minutes"]), entry["folder"]
        assert (row["unit"], row["higher_is_better"], row["valid"]) == ("minutes", False, True)
        assert (row["software"], row["software_version"]) == ("mlperf-training", entry["round"])
        assert (row["submitter"], row["system"]) == (entry["submitter"], entry["system"])
        assert row["accelerators_total"] == entry["accelerators"]
        for name in ("runs_used", "runs_dropped", "dropped_fastest", "dropped_slowest"):
            assert extra[name] == entry[name], (entry["folder"], name)
        assert extra["dropped_non_converged"] == entry["dropped_non_converged"]
        assert extra["converged_runs"] == entry["converged_runs"]
        assert extra["result_files"] == entry["result_files"] == entry["expected_result_files"]
        assert close(extra["scaling_factor"], entry["scaling_factor"])
        assert extra["scaling_json"] == entry["scaling_json_present"]
        assert extra["seed_check"] == "passed"  # every run logs a seed of its own
        assert close(extra["olympic_mean_unscaled_minutes"], entry["olympic_mean_unscaled_minutes"])
        assert extra["global_batch_size"] == entry["global_batch_size"]
        assert close(extra["samples_to_converge"], entry["samples_to_converge"])
        if entry["energy"] is None:
            assert "energy_j" not in extra
        else:
            assert close(extra["energy_j"], entry["energy"])


def test_every_run_is_a_sample_with_its_role(
    rounds: tuple[str, list[Row]], expected: list[Row]
) -> None:
    samples = {
        (r["round"], r["location"], r["artifact_path"].rsplit("/", 1)[-1]): r
        for r in rounds[1]
        if r["metric"] == RUN
    }
    timed = 0
    for entry in expected:
        for run in entry["runs"]:
            key = (entry["round"], folder_of(entry), run["file"])
            if run["minutes"] is None:
                assert key not in samples  # no run_stop: no time to store
                continue
            timed += 1
            row = samples[key]
            assert close(row["value"], run["minutes"])
            assert row["valid"] == run["compliant"]
            assert row["extra"]["role"].split(" (")[0] == run["role"].split(" (")[0]
            assert row["extra"]["run_stop_status"] == run["run_stop_status"]
    assert len(samples) == timed == 132


def test_non_converged_runs_are_named_with_their_reason(rounds: tuple[str, list[Row]]) -> None:
    scores = {r["location"]: r["extra"] for r in rounds[1] if r["metric"] == SCORE}
    retinanet = scores["tinycorp/results/tinybox_green/retinanet"]["non_converged"]
    assert retinanet.startswith("result_4.txt: no run_stop: the run did not finish")
    assert "0.339716" in retinanet
    bert = scores["tinycorp/results/tinybox_green/bert"]["non_converged"]
    assert bert == (
        "result_2.txt: line 8: init_stop 32.3 minutes after the first init_start (limit 30 minutes)"
    )
    dlrm = scores["Cisco/results/hpf_n8/dlrm_dcnv2"]["non_converged"]
    assert dlrm.startswith("result_1.txt: quality target not reached") and "0.80275" in dlrm
    aborted = [
        r
        for r in rounds[1]
        if r["metric"] == RUN and r["artifact_path"].endswith("dlrm_dcnv2/result_1.txt")
    ]
    assert aborted[0]["extra"]["run_stop_status"] == "aborted" and not aborted[0]["valid"]
    assert aborted[0]["extra"]["role"] == "dropped (not converged)"


def test_cross_round_gain_and_scaling_efficiency(rounds: tuple[str, list[Row]]) -> None:
    with Store.open(rounds[0]) as store:
        outcome = run_analysis(store, save=False)
    gains = {
        (g.system, g.benchmark, g.key.rsplit("|", 1)[-1]): g
        for g in outcome.gains
        if (g.baseline, g.candidate) == ("v5.0", "v5.1")
    }
    gain = gains[("MangoBoost/MI300X-LLMBoost-GPUBoost-1node", "llama2_70b_lora", SCORE)]
    assert (round(gain.baseline_level, 4), round(gain.candidate_level, 4)) == (29.5956, 28.3740)
    assert round(gain.gain, 3) == 1.043 and not gain.higher_is_better
    found = {
        (g.key.submitter, g.key.benchmark, g.key.metric): [
            (p.accelerators, p.efficiency) for p in g.points
        ]
        for g in outcome.groups()
    }
    uf = found[("University-of-Florida", "llama31_8b", SCORE)]
    assert uf[0] == (64, 1.0)
    # the runs behind a score are shown, never compared, grouped or counted in gains
    assert all(metric != RUN for _s, _b, metric in found)
    assert all(not g.key.endswith(f"|{RUN}") for g in outcome.gains)
    assert all(RUN not in c.key for c in outcome.comparisons.comparisons)
    assert uf[1][0] == 256 and uf[1][1] == pytest.approx((18.0995169 / 10.0242834) / 4, rel=1e-6)


def copy_folder(training: Path, root: Path, folder: str, system: str) -> Path:
    """A one-folder round tree under ``root``: the folder and its system JSON."""
    submitter = folder.split("/")[0]
    shutil.copytree(training / "v5.0" / folder, root / folder)
    (root / submitter / "systems").mkdir(parents=True, exist_ok=True)
    shutil.copy(
        training / "v5.0" / submitter / "systems" / f"{system}.json", root / submitter / "systems"
    )
    return root / folder


def without(path: Path, key: str) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(x for x in lines if f'"key": "{key}"'.encode() not in x))


def test_a_folder_with_two_non_converged_runs_gets_no_score_and_says_why(
    shared_data: Path, tmp_path: Path
) -> None:
    # tinycorp's retinanet folder with result_0 cut before its run_stop
    folder = too_many_not_converged(shared_data, tmp_path / "round")
    url = f"sqlite:///{tmp_path / 't.db'}"
    result = tracker(url, tmp_path / "cache", "ingest", str(folder))
    assert result.exit_code == 0, result.output
    assert (
        "  note: tinycorp/results/tinybox_green/retinanet: no score: 2 runs did not converge, "
        "at most 1 may (too many non-converged); "
        "result_0.txt: no run_stop: the run did not finish | "
        "result_4.txt: no run_stop: the run did not finish; quality target not reached: "
        "no eval_accuracy with eval_accuracy >= 0.34 (best eval_accuracy 0.339716)"
    ) in result.output.splitlines()
    # what needs the submitters' code (never read) is skipped, and said so
    assert (
        "  note: compliance checked from the logs alone; skipped: checks that need the "
        "submitters' code (<submitter>/benchmarks/, not read: the seed check's look for seeds "
        "in it), hyper-parameter values (closed_<benchmark>.yaml; presence only) and the RCP "
        "check (reference convergence points)"
    ) in result.output.splitlines()
    rows = export(url, tmp_path / "cache")
    assert {r["metric"] for r in rows} == {RUN}  # no score stored
    assert sorted(r["run_label"] for r in rows) == ["result_1", "result_2", "result_3"]
    assert {r["extra"]["role"] for r in rows} == {"not scored"}
    assert all(r["valid"] for r in rows)  # the three timed runs converged


def test_a_seed_logged_twice_on_one_line_fails_the_seed_check_not_the_score(
    shared_data: Path, tmp_path: Path
) -> None:
    root = too_many_not_converged(shared_data, tmp_path)
    folder = root / "tinycorp/results/tinybox_green/retinanet"
    # result_0 becomes result_1 with result_2's seed: it converges, and a seed is repeated
    logged = (folder / "result_1.txt").read_bytes()
    (folder / "result_0.txt").write_bytes(logged.replace(b'"value": 3218', b'"value": 7068'))
    url = f"sqlite:///{tmp_path / 't.db'}"
    result = tracker(url, tmp_path / "cache", "ingest", str(root))
    assert result.exit_code == 0, result.output
    assert (
        "  note: tinycorp/results/tinybox_green/retinanet: seed check failed: result_2.txt logs "
        "seed 7068 at tinygrad/examples/mlperf/model_train.py:393 as result_0.txt does "
        "(the score does not depend on it)"
    ) in result.output.splitlines()
    (score,) = [r for r in export(url, tmp_path / "cache") if r["metric"] == SCORE]
    assert score["extra"]["seed_check"].startswith("failed: result_2.txt logs seed 7068")


def test_malformed_logs_are_errors_with_file_and_line_and_strict_stores_nothing(
    training: Path, tmp_path: Path
) -> None:
    root = tmp_path / "v5.0"
    folder = copy_folder(training, root, "tinycorp/results/tinybox_green/bert", "tinybox_green")
    lines = (folder / "result_0.txt").read_bytes().splitlines(keepends=True)
    (folder / "result_0.txt").write_bytes(
        b"".join(lines[:5]) + lines[5][:60] + b"\n" + b"".join(lines[6:])
    )
    without(folder / "result_1.txt", "run_start")
    lines = (folder / "result_3.txt").read_bytes().splitlines(keepends=True)
    lines[2] = b":::MLLOG this is not json\n"
    (folder / "result_3.txt").write_bytes(b"".join(lines))
    url = f"sqlite:///{tmp_path / 't.db'}"
    strict = tracker(url, tmp_path / "cache", "ingest", "--strict", str(root))
    assert strict.exit_code == 2
    assert "result_0.txt: line 6: the :::MLLOG payload is not JSON" in strict.output
    assert stored_nothing(url, tmp_path / "cache")
    loose = tracker(url, tmp_path / "cache", "ingest", str(root))
    assert loose.exit_code == 2
    assert "result_0.txt: line 6: the :::MLLOG payload is not JSON" in loose.output
    assert "result_3.txt: line 3: the :::MLLOG payload is not JSON" in loose.output
    assert "result_1.txt: line" in loose.output and "no run_start in the log" in loose.output
    # with result_2 (init too long) that is four non-converged runs: no score, runs kept
    assert "no score: 4 runs did not converge" in loose.output
    assert {r["metric"] for r in export(url, tmp_path / "cache")} == {RUN}


def served_round(training: Path, tmp_path: Path) -> tuple[Path, Served]:
    """The v5.1 fixtures as GitHub's archive of the pinned commit, ready to serve."""
    archive = tmp_path / "round.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(training / "v5.1", arcname=f"training_results_v5.1-{V51_REF}")
    served = Served(
        files={f"/mlcommons/training_results_v5.1/archive/{V51_REF}.tar.gz": archive.read_bytes()}
    )
    return archive, served


def test_archive_and_pull_give_the_export_of_the_folder(
    training: Path, rounds: tuple[str, list[Row]], tmp_path: Path
) -> None:
    archive, served = served_round(training, tmp_path)
    url = f"sqlite:///{tmp_path / 't.db'}"
    with serve(served) as base_url, Store.open(url) as store:
        assert round_repository("5.1", base_url=base_url, kind="mlperf-training").endswith(
            "/mlcommons/training_results_v5.1"
        )
        outcome = pull_round(
            store,
            "v5.1",
            ref=V51_REF,
            base_url=base_url,
            cache_dir=tmp_path / "c",
            kind="mlperf-training",
        )
        assert (
            outcome.saved is not None and outcome.saved.results_stored == 98 and not outcome.errors
        )
        again = pull_round(
            store,
            "v5.1",
            ref=V51_REF,
            base_url=base_url,
            cache_dir=tmp_path / "c",
            kind="mlperf-training",
        )
        assert again.saved is not None and again.saved.results_stored == 0
    assert served.requests[-1][1] is not None  # the second pull asked If-None-Match
    pulled = [
        {k: v for k, v in r.items() if k != "source_location"} for r in export(url, tmp_path / "c")
    ]
    folder = [
        {k: v for k, v in r.items() if k != "source_location"}
        for r in rounds[1]
        if r["round"] == "v5.1"
    ]
    key = lambda r: (r["location"], r["metric"], r["artifact_path"])  # noqa: E731
    assert sorted(pulled, key=key) == sorted(folder, key=key)
    archived = tracker(f"sqlite:///{tmp_path / 'a.db'}", tmp_path / "c", "ingest", str(archive))
    assert archived.exit_code == 0 and "(mlperf-training)" in archived.output


def test_the_ingest_job_pins_both_rounds() -> None:
    job, specs = read_job(jobs_dir() / "mlperf-training.toml")
    assert job.name == "mlperf-training"
    assert [(s.kind, s.labels.software_version) for s in specs] == [
        ("mlperf-training", "v5.0"),
        ("mlperf-training", "v5.1"),
    ]
    assert specs[0].location.endswith(
        "training_results_v5.0/archive/0fdc28f013256aea84fa36fdaf1e0fa46094b18c.tar.gz"
    )
    assert specs[1].location.endswith(f"training_results_v5.1/archive/{V51_REF}.tar.gz")


def test_tracker_pull_mlperf_training_ingests_the_training_round(
    training: Path, tmp_path: Path
) -> None:
    archive, served = served_round(training, tmp_path)
    url = f"sqlite:///{tmp_path / 't.db'}"
    with serve(served) as base_url:
        args = ("pull", "mlperf-training", "--round", "v5.1", "--ref", V51_REF)
        result = tracker(url, tmp_path / "c", *args, "--base-url", base_url)
    assert result.exit_code == 0, result.output
    assert "(mlperf-training), 98 results stored" in result.output
    assert {r["round"] for r in export(url, tmp_path / "c")} == {"v5.1"}
