"""Folder sources that once hung the ingest, crashed it or lost runs silently (issue 21).

Each case sits beside a good LoadGen run, which must still be stored (without
``--strict``). What cannot be read is an ``Error:`` naming it (exit 2), never a
traceback and never a silent skip; files that are not regular files are never
opened, and a file over the size cap is refused before it is read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tracker.sources import tree

Run = Callable[..., Result]
TRACKER = Path(sys.executable).parent / "tracker"
LABELS = ("--kind", "loadgen", "--software-version", "1.0", "--system", "box")


@pytest.fixture
def source(tmp_path: Path, loadgen_local: Path) -> Path:
    """A folder source holding one good run (``good/``)."""
    root = tmp_path / "src"
    shutil.copytree(loadgen_local / "Offline", root / "good")
    return root


def _ingest(run: Run, url: str, source: Path, *extra: str) -> Result:
    return run(["--database-url", url, "ingest", str(source), *LABELS, *extra])


def _stored(run: Run, url: str) -> list[str]:
    done = run(["--database-url", url, "export", "--format", "json"])
    assert done.exit_code == 0, done.output
    return sorted(str(row["artifact_path"]) for row in json.loads(done.stdout))


def _url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tracker.db'}"


def test_fifos_devices_and_links_to_them_are_never_opened(source: Path, tmp_path: Path) -> None:
    (source / "fifo_run").mkdir()
    os.mkfifo(source / "fifo_run" / "mlperf_log_summary.txt")
    (source / "zero_run").mkdir()
    os.symlink("/dev/zero", source / "zero_run" / "mlperf_log_detail.txt")
    os.mkfifo(tmp_path / "result.json")
    url = _url(tmp_path)
    done = subprocess.run(
        [str(TRACKER), "--database-url", url, "ingest", str(source), *LABELS],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "not regular files, not read:" in done.stdout
    assert "fifo_run/mlperf_log_summary.txt" in done.stdout
    assert "zero_run/mlperf_log_detail.txt" in done.stdout
    one_file = subprocess.run(
        [str(TRACKER), "--database-url", url, "ingest", str(tmp_path / "result.json")]
        + ["--kind", "vllm-bench", "--software-version", "1.0", "--system", "box"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert one_file.returncode == 2, one_file.stderr
    assert "result.json: not a regular file (a FIFO" in one_file.stderr
    assert "Traceback" not in done.stderr + one_file.stderr


def test_a_file_over_the_size_cap_is_refused_before_it_is_read(
    source: Path, tmp_path: Path, run_tracker: Run
) -> None:
    big = source / "big_run" / "mlperf_log_detail.txt"
    big.parent.mkdir()
    with big.open("wb") as stream:  # sparse: nothing is written, nothing will be read
        stream.truncate(tree.MAX_FILE_BYTES + 1)
    url = _url(tmp_path)
    done = _ingest(run_tracker, url, source)
    assert done.exit_code == 2, done.output
    assert f"big_run/mlperf_log_detail.txt: {tree.MAX_FILE_BYTES + 1} bytes or more" in done.stderr
    assert "over the 1 GiB limit of one file" in done.stderr
    assert _stored(run_tracker, url) == ["good/mlperf_log_detail.txt"]


def test_an_unreadable_subfolder_is_an_error_naming_it(
    source: Path,
    tmp_path: Path,
    loadgen_local: Path,
    run_tracker: Run,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    locked = source / "locked"
    shutil.copytree(loadgen_local / "Server", locked / "Server")
    if os.geteuid() == 0:  # root reads any folder: refuse this one as the kernel would
        scandir = os.scandir

        def refusing(path: str) -> object:
            if os.path.normpath(path) == str(locked):
                raise PermissionError(13, "Permission denied", path)
            return scandir(path)

        monkeypatch.setattr(os, "scandir", refusing)
    else:
        locked.chmod(0)
    try:
        url = _url(tmp_path)
        done = _ingest(run_tracker, url, source)
        strict = _ingest(run_tracker, f"sqlite:///{tmp_path / 'strict.db'}", source, "--strict")
    finally:
        locked.chmod(0o755)
    assert done.exit_code == 2, done.output
    assert f"Error: {source}/locked/: cannot list this folder (Permission denied)" in done.stderr
    assert _stored(run_tracker, url) == ["good/mlperf_log_detail.txt"]
    assert strict.exit_code == 2 and "locked/: cannot list this folder" in strict.stderr


def test_a_symbolic_link_loop_is_an_error_naming_it(
    source: Path, tmp_path: Path, run_tracker: Run
) -> None:
    os.symlink("loop", source / "loop")
    os.symlink(".", source / "here")  # a link to a folder: not followed, not an error
    url = _url(tmp_path)
    done = _ingest(run_tracker, url, source)
    assert done.exit_code == 2, done.output
    assert f"Error: {source}/loop: cannot tell what this is (Too many levels" in done.stderr
    assert "here" not in done.stderr
    assert _stored(run_tracker, url) == ["good/mlperf_log_detail.txt"]


def test_a_folder_nested_1100_deep_is_walked(
    source: Path, tmp_path: Path, run_tracker: Run
) -> None:
    deep = str(source)
    for _ in range(1100):  # os.makedirs (and shutil.rmtree) recurse once per level
        deep += "/d"
        os.mkdir(deep)
    try:
        url = _url(tmp_path)
        done = _ingest(run_tracker, url, source)
        assert done.exit_code == 0, done.output
        assert _stored(run_tracker, url) == ["good/mlperf_log_detail.txt"]
    finally:  # deepest first, so that pytest can remove tmp_path later
        while deep != str(source):
            os.rmdir(deep)
            deep = os.path.dirname(deep)


def test_a_name_that_is_not_utf8_is_reported_and_the_runs_beside_it_are_stored(
    source: Path, tmp_path: Path, loadgen_local: Path, run_tracker: Run
) -> None:
    bad = os.fsencode(source) + b"/run_\xff\xfe"
    shutil.copytree(os.fsencode(loadgen_local / "Server"), bad)
    url = _url(tmp_path)
    done = _ingest(run_tracker, url, source)
    assert done.exit_code == 2, done.output
    assert f"Error: {source}/run_\\xff\\xfe: the name is not valid UTF-8" in done.stderr
    assert _stored(run_tracker, url) == ["good/mlperf_log_detail.txt"]


@pytest.mark.parametrize("log", ["mlperf_log_detail.txt", "mlperf_log_summary.txt"])
def test_a_byte_order_mark_is_accepted_on_either_log(
    log: str, tmp_path: Path, loadgen_local: Path, run_tracker: Run
) -> None:
    run = tmp_path / "bom"
    shutil.copytree(loadgen_local / "Offline", run)
    other = {"mlperf_log_detail.txt": "mlperf_log_summary.txt"}.get(log, "mlperf_log_detail.txt")
    (run / other).unlink()
    (run / log).write_bytes(b"\xef\xbb\xbf" + (run / log).read_bytes())
    url = _url(tmp_path)
    done = _ingest(run_tracker, url, run)
    assert done.exit_code == 0, done.output
    assert _stored(run_tracker, url) == [log]
