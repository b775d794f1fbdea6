"""Trails and snapshots: what an unchanged re-ingest checks, and what it must notice."""

from __future__ import annotations

import os
from pathlib import Path

from tracker.formats.mlperf_inference.read_tree import walk_round
from tracker.sources.trail import Snapshot, SnapshotCache, Trail
from tracker.sources.tree import FolderTree


def _snapshot(trail: tuple[tuple[str, str], ...] | Trail) -> Snapshot:
    return Snapshot(
        identity_sha256="id", kind="mlperf-inference", runs_found=1, results=2, trail=trail
    )


def _write(path: Path, data: bytes = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_a_snapshot_comes_back_as_it_was_saved(tmp_path: Path) -> None:
    cache = SnapshotCache(tmp_path)
    odd = "a b\t\r\x0b\u2028é/\udcff"  # every name a file system may hold but a newline
    for trail in ((), (("./", "d1:2:3"),), (("./", "d1:2:3"), (odd, "f1:2:3:4"), ("c", "-"))):
        cache.save("key", _snapshot(trail))
        loaded = cache.load("key")
        assert loaded is not None and list(loaded.trail) == list(trail)
        assert (loaded.identity_sha256, loaded.runs_found, loaded.results) == ("id", 1, 2)


def test_a_name_the_file_cannot_hold_means_no_snapshot(tmp_path: Path) -> None:
    cache = SnapshotCache(tmp_path)
    for trail in ((("a\nb", "f1"),), (("a", "f1\n2"),), (("\ud800", "f1"),)):
        cache.save("key", _snapshot(trail))
        assert cache.load("key") is None


def test_a_damaged_snapshot_is_no_snapshot(tmp_path: Path) -> None:
    cache = SnapshotCache(tmp_path)
    cache.save("key", _snapshot((("a", "f1"), ("b", "f2"))))
    saved = tmp_path / "snapshots" / "key"
    whole = saved.read_bytes()
    for damaged in (whole[:-1], whole[:-5], whole.replace(b"f2", b"f22"), b"{}\n", b"\xff\n"):
        saved.write_bytes(damaged)
        assert cache.load("key") is None


def test_a_trail_notices_a_changed_an_added_and_a_removed_file(tmp_path: Path) -> None:
    read = _write(tmp_path / "run_1" / "log.txt", b"one")
    _write(tmp_path / "TEST01" / "verify_accuracy.txt")
    (tmp_path / "TEST01" / "accuracy").mkdir()
    os.utime(tmp_path / "TEST01" / "accuracy", (1e9, 1e9))  # not within the clock's last tick
    tree = FolderTree(tmp_path)
    assert tree.list_dir("run_1") == ([], ["log.txt"])
    assert tree.read_bytes("run_1/log.txt") == b"one"
    assert not tree.exists("TEST01/accuracy/baseline_accuracy.txt")
    assert not tree.exists("TEST01/accuracy/compliance_accuracy.txt")
    # the two probes are vouched for by their folder: one entry, not two
    assert [path for path, _signature in tree.trail()] == [
        "TEST01/accuracy/",
        "run_1/",
        "run_1/log.txt",
    ]

    def unchanged() -> bool:
        trail = Trail.of(tree.trail())
        return FolderTree(tmp_path).trail_matches(trail) and FolderTree(tmp_path).trail_matches(
            tree.trail()
        )

    assert unchanged()
    created = _write(tmp_path / "TEST01" / "accuracy" / "baseline_accuracy.txt")
    assert not unchanged()
    created.unlink()
    read.write_bytes(b"three")
    assert not unchanged()
    read.unlink()
    assert not unchanged()


def test_a_v5_1_result_is_found_without_listing_its_scenario_folder(tmp_path: Path) -> None:
    scenario = "closed/Sub/results/sys/resnet50/Offline"
    compliance = "closed/Sub/compliance/sys/resnet50/Offline"
    _write(tmp_path / "closed/Sub/systems/sys.json", b"{}")
    _write(tmp_path / scenario / "performance/run_1/mlperf_log_detail.txt")
    _write(tmp_path / scenario / "accuracy/accuracy.txt")
    _write(tmp_path / scenario / "TEST04/verify_performance.txt")  # compliance/ wins over it
    _write(tmp_path / compliance / "TEST01/verify_accuracy.txt")
    tree = FolderTree(tmp_path)
    [submitter] = walk_round(tree).submitters
    [folder] = submitter.folders
    assert folder.detail == f"{scenario}/performance/run_1/mlperf_log_detail.txt"
    assert folder.accuracy == f"{scenario}/accuracy/accuracy.txt"
    assert [test.name for test in folder.compliance] == ["TEST01"]
    assert f"{scenario}/" not in dict(tree.trail())
