"""The scenarios of issue 16, items 1-5, as a new user meets them: the real ``tracker``
console script in a subprocess, on the demo's database (``tracker demo``), with the
lines a user sees asserted. Items 6 and 7 are in ``test_cli_errors.py``.

1. The demo's planted -8% is one issue: one line in the gate, in ``findings``, and
   every member in the JSON.
2. A candidate that ran one workload, ingested without ``--accelerators``: the
   gate counts and lists the missing series, names the missing accelerator count,
   and fails with ``fail_on = ["missing"]``.
3. The text fits 100 columns without a terminal (``COLUMNS``: ``tests/gate/
   test_gate_output.py``), ``--report-url`` makes the links absolute, and ingest,
   analyze, report and a pull of a dead host write plain progress lines on stderr.
4. ``findings set-status ... --acknowledgements FILE`` passes the gate and writes the file.
5. ``tracker report`` uses the stored analysis' target and price book.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from tracker.errors import EXIT_GATE_FAILED, EXIT_OK
from tracker.gate.items import NO_ACCELERATOR_COUNT

SEES = "; every series could see a 5% change)"
"""The end of a summary line when every compared series could see a 5% change."""

TRACKER = str(Path(sys.executable).with_name("tracker"))
REPO_ROOT = Path(__file__).resolve().parents[2]
AS_A_USER_RUNS_IT = ("TRACKER_DATABASE_URL", "COLUMNS", "TRACKER_PROGRESS")
"""Variables the tests set (``tests/conftest.py``) that a user's shell does not."""
CHAT_LINE = (
    "example-llm-70b · concurrency · isl1024-osl1024: -8.0% (worse; CI [-9.3%, -5.4%]) "
    "at c2–c32 and at 50 tokens/s/user"
)


def run(
    *args: str, database: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``tracker [--database-url sqlite:///DATABASE] ARGS``: no terminal, no ``COLUMNS``,
    the default progress (plain lines on stderr)."""
    environment = {k: v for k, v in os.environ.items() if k not in AS_A_USER_RUNS_IT}
    environment.update(env or {})
    url = [] if database is None else ["--database-url", f"sqlite:///{database}"]
    return subprocess.run(
        [TRACKER, *url, *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of one ``tracker demo --out DIR`` (data/, demo.db, site/)."""
    out = tmp_path_factory.mktemp("demo")
    done = run("demo", "--out", str(out))
    assert done.returncode == EXIT_OK, done.stderr
    (out / "stdout.txt").write_text(done.stdout, "utf-8")
    return out


@pytest.fixture
def database(demo: Path, tmp_path: Path) -> Path:
    """A copy of the demo's database, for a test that changes it."""
    return Path(shutil.copy(demo / "demo.db", tmp_path / "demo.db"))


def test_item1_the_demos_regression_is_one_issue_in_gate_findings_and_json(demo: Path) -> None:
    lines = (demo / "stdout.txt").read_text("utf-8").splitlines()
    assert "Findings: improvement 5, regression 11, scaling_efficiency 2 (in 8 issues)" in lines
    at = lines.index("gate: 1 (1 regression, 1.1.0 → 1.2.0" + SEES)
    assert lines[at + 1] == f"  {CHAT_LINE}"
    assert lines[at + 2].startswith("Report: ")

    findings = run("findings", database=demo / "demo.db")
    assert findings.stdout.splitlines()[0] == "18 findings (open), 8 issues"
    [row] = [line for line in findings.stdout.splitlines() if "-8.0%" in line]
    assert row.endswith(
        "at c2–c32 and at 50 tokens/s/user (11 findings: 3–13) — nothing but the software"
    )

    gate = run("gate", "--candidate", "1.2.0", "--format", "json", database=demo / "demo.db")
    assert gate.returncode == EXIT_GATE_FAILED
    doc = json.loads(gate.stdout)
    [failing] = [issue for issue in doc["issues"] if issue["state"] == "failing"]
    assert failing["line"] == CHAT_LINE and len(failing["members"]) == 11


def test_item2_a_partial_candidate_without_accelerators_is_counted_named_and_can_fail(
    demo: Path, database: Path, tmp_path: Path
) -> None:
    ingest = run(
        "ingest",
        str(demo / "data" / "serving" / "1.2.0" / "chat"),
        *("--kind", "aiperf", "--software", "example-serving-stack"),
        *("--software-version", "1.3.0", "--benchmark", "example-llm-70b"),
        *("--system", "example-node-4x (example data)"),
        database=database,
    )
    assert ingest.returncode == EXIT_OK, ingest.stderr
    gate = run(
        "gate", "--baseline", "1.2.0", "--candidate", "1.3.0", "--show-missing", "--verbose",
        database=database,
    )  # fmt: skip
    assert gate.returncode == EXIT_OK, gate.stderr
    lines = gate.stdout.splitlines()
    assert (
        lines[0] == "gate: 0 (no regression; 19 of 25 baseline series missing, 1.2.0 → 1.3.0" + SEES
    )
    [line] = [n for n, line in enumerate(lines) if "isl1024-osl1024: " in line and "c2–c32" in line]
    assert lines[line].endswith(
        "example-serving-stack · example-node-4x (example data) · "
        "output_tokens_per_s_per_accelerator"
    )
    assert lines[line + 1] == f"    {NO_ACCELERATOR_COUNT}"
    flat = " ".join(gate.stdout.split())
    assert (
        "Compared 6 series of example-serving-stack 1.2.0 → 1.3.0; family size 6 (BH); 19 " in flat
    )

    policy = tmp_path / "gate.toml"
    policy.write_text('[gate]\nfail_on = ["regression", "missing"]\n', "utf-8")
    failed = run(
        "gate", "--baseline", "1.2.0", "--candidate", "1.3.0", "--policy", str(policy),
        database=database,
    )  # fmt: skip
    assert failed.returncode == EXIT_GATE_FAILED
    assert failed.stdout.splitlines()[0] == (
        "gate: 1 (19 of 25 baseline series missing, 1.2.0 → 1.3.0" + SEES
    )


def test_item3_the_gate_text_is_one_line_per_issue_without_a_terminal(demo: Path) -> None:
    gate = run("gate", "--candidate", "1.2.0", database=demo / "demo.db")
    lines = gate.stdout.splitlines()
    assert lines[1].split()[:3] == ["failing", "measured,", "at"]
    assert "-8.0% (worse; CI [" in lines[1] and "example-serving-stack" in lines[1]
    assert "example-s…" not in gate.stdout


def test_item3_report_url_makes_the_markdown_links_absolute(demo: Path) -> None:
    gate = run(
        "gate", "--candidate", "1.2.0", "--format", "markdown", "--report", "site",
        "--report-url", "https://ci.example/run/7/", database=demo / "demo.db",
    )  # fmt: skip
    links = re.findall(r"\]\(([^)]+)\)", gate.stdout)
    assert links and all(link.startswith("https://ci.example/run/7/compare/") for link in links)


def test_item3_ingest_analyze_and_report_write_plain_progress_lines(
    demo: Path, database: Path, tmp_path: Path
) -> None:
    ingest = run(
        "ingest", str(demo / "data" / "1.2.0" / "resnet50-Offline"),
        "--software", "example-serving-stack", "--software-version", "1.3.0",
        "--benchmark", "resnet50", "--system", "example-node-8x (example data)",
        database=database,
    )  # fmt: skip
    assert ingest.stderr.splitlines() == [
        "ingest: 1/3 run_1",
        "ingest: 3/3 run_3",
    ]
    analyze = run("analyze", database=database)
    first, last = analyze.stderr.splitlines()
    assert first == f"analyze: analysing the stored results in sqlite:///{database} ..."
    assert re.fullmatch(r"analyze: done in \d+\.\d s", last), last
    report = run("report", "--out", str(tmp_path / "site"), database=database)
    lines = report.stderr.splitlines()
    assert lines[0] == "report: analysing ..."
    assert re.fullmatch(r"report: 1 page written \(.+\.html\)", lines[1]), lines
    assert re.fullmatch(r"report: \d+ pages written in \d+\.\d s", lines[-1]), lines


def test_item3_a_pull_from_a_dead_host_says_at_once_that_it_retries(tmp_path: Path) -> None:
    with socket.socket() as bound:  # bound, never listening: every connection is refused
        bound.bind(("127.0.0.1", 0))
        base_url = f"http://127.0.0.1:{bound.getsockname()[1]}"
        environment = {k: v for k, v in os.environ.items() if k not in AS_A_USER_RUNS_IT}
        environment["TRACKER_CACHE_DIR"] = str(tmp_path / "cache")
        command = [TRACKER, "--database-url", f"sqlite:///{tmp_path / 't.db'}", "pull"]
        with subprocess.Popen(
            [*command, "mlperf-inference", "--round", "v5.1", "--base-url", base_url],
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        ) as pull:
            try:
                lines = _first_lines(pull, 2, within_s=20.0)
            finally:
                pull.kill()
    repository = f"{base_url}/mlcommons/inference_results_v5.1"
    assert lines[0] == f"pull: downloading the archive of {repository}"
    assert lines[1].startswith(f"download: {repository}/archive/refs/heads/main.tar.gz: ")
    assert lines[1].endswith("attempt 1 of 4 failed (ConnectError: [Errno 111] Connection "
                             "refused); trying again in 1 s")  # fmt: skip


def _first_lines(process: subprocess.Popen[str], count: int, *, within_s: float) -> list[str]:
    """The first ``count`` lines ``process`` writes on stderr, waiting at most ``within_s``."""
    assert process.stderr is not None
    deadline_s, lines = time.monotonic() + within_s, []
    while len(lines) < count:
        left_s = deadline_s - time.monotonic()
        ready, _, _ = select.select([process.stderr], [], [], max(left_s, 0.0))
        assert ready, f"silent for {within_s} s after {lines}"
        lines.append(process.stderr.readline().rstrip("\n"))
    return lines


def test_item4_set_status_passes_the_gate_and_writes_the_acknowledgements_file(
    database: Path, tmp_path: Path
) -> None:
    findings = json.loads(run("findings", "--format", "json", database=database).stdout)
    first = min(f["id"] for f in findings if f["kind"] == "regression")
    acks = tmp_path / "acks.toml"
    done = run(
        "findings", "set-status", str(first), "acknowledged", "--note",
        "perf-team: new scheduler", "--acknowledgements", str(acks), database=database,
    )  # fmt: skip
    assert done.returncode == EXIT_OK, done.stderr
    assert f"Appended to {acks} (3 entries now): commit it" in done.stdout
    gate = run("gate", "--candidate", "1.2.0", database=database)
    assert gate.returncode == EXIT_OK
    assert gate.stdout.splitlines()[0] == (
        "gate: 0 (no regression; 1 acknowledged, 1.1.0 → 1.2.0" + SEES
    )
    assert "acknowledged: perf-team: new scheduler" in " ".join(gate.stdout.split())
    assert 'reason = "perf-team: new scheduler"' in acks.read_text("utf-8")


def test_item5_the_report_uses_the_stored_target_and_price_book(
    database: Path, tmp_path: Path
) -> None:
    prices = REPO_ROOT / "docs" / "prices.example.toml"
    analyze = run(
        "analyze", "--target-tokens-per-s-per-user", "30", "--price-book", str(prices),
        database=database,
    )  # fmt: skip
    assert "Cost per 1M output tokens: 18 of 18 sweeps priced" in analyze.stdout
    report = run("report", "--out", str(tmp_path / "site"), database=database)
    assert report.stdout.splitlines()[0].endswith(
        f"target 30 tokens/s/user, efficiency floor 0.9, price book {prices}"
    )
    serving = (tmp_path / "site" / "serving.html").read_text("utf-8")
    assert "at the target of 30 tokens/s/user" in serving and "target of 50" not in serving
    assert "Cost per 1M tokens at the target" in serving
