"""Plain progress lines when stderr is not a terminal (issue 16, item 3): the first
step at once, then at most one line every PLAIN_EVERY_S seconds, and the last step;
a retried download is one line each time. The commands' lines through the real
console script are in ``test_issue16_scenarios.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import RunTracker
from tracker.cli import common as progress
from tracker.cli.common import PLAIN_EVERY_S, Throttle


@pytest.fixture(autouse=True)
def _default_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default, ``auto``: plain lines, stderr being captured (not a terminal)."""
    monkeypatch.delenv("TRACKER_PROGRESS")


class Clock:
    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


def test_a_line_at_first_then_every_interval_and_always_at_the_end() -> None:
    clock = Clock()
    throttle = Throttle(clock)
    assert throttle.due()
    clock.now_s += PLAIN_EVERY_S / 2
    assert not throttle.due()
    assert throttle.due(final=True)
    clock.now_s += PLAIN_EVERY_S - 0.01
    assert not throttle.due()
    clock.now_s += 0.01
    assert throttle.due()


def test_ingest_and_download_lines_skip_the_steps_in_between(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with progress.progress_bar("ingest") as step, progress.download_bar() as received:
        for done in range(1, 101):
            step(done, 100, f"run_{done}")
        received(1_000_000, 3_000_000)
        received(2_000_000, 3_000_000)
        received(3_000_000, 3_000_000)
    progress.echo_retry(
        "https://example.org/a.tar.gz: attempt 1 of 4 failed (x); trying again in 1 s"
    )
    assert capsys.readouterr().err.splitlines() == [
        "ingest: 1/100 run_1",
        "ingest: 100/100 run_100",
        "download: 1.0 MB of 3.0 MB",
        "download: 3.0 MB of 3.0 MB",
        "download: https://example.org/a.tar.gz: attempt 1 of 4 failed (x); trying again in 1 s",
    ]


def test_labels_in_progress_lines_cannot_drive_the_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with progress.progress_bar("ingest") as step:
        step(1, 1, "run_\x1b[2J")
    assert capsys.readouterr().err == "ingest: 1/1 run_\\x1b[2J\n"


def test_tracker_progress_none_shows_nothing_and_a_bad_value_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    run_tracker: RunTracker,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("TRACKER_PROGRESS", "none")
    with progress.progress_bar("ingest") as step, progress.analysis_lines("analysing"):
        step(1, 1, "run_1")
    progress.echo_retry("https://example.org/a.tar.gz: attempt 1 of 4 failed (x)")
    assert capsys.readouterr().err == ""
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    args = ["--database-url", url, "ingest", str(tmp_path), "--software-version", "1"]
    done = run_tracker(args, env={"TRACKER_PROGRESS": "bars"})
    assert done.exit_code == 2
    assert done.stderr == (
        "Error: TRACKER_PROGRESS='bars' is not a progress mode; use one of auto, lines, none "
        "(or unset it)\n"
    )
