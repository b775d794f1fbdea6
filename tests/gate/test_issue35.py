"""Issue #35, case by case, through the real command line: the gate release engineers live
in (one project at a time, scaling drops gated, one line per issue, CI formats).

The databases: the demo (``tracker demo``), the shared v6.0 and v6.1 results tables
(``TRACKER_SHARED_DATA``), and two microbenchmark projects built from
``tests/data/generic/`` (Google Benchmark ``mylib`` and pytest-benchmark ``mylib-py``,
each 1.0.0 and a slower 1.1.0).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from lxml import etree

from tracker.cli import cli
from tracker.cli.gate import gate as gate_command
from tracker.cli.gate import use_colour

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "generic"
JUNIT_XSD = REPO / "tests" / "data" / "junit" / "junit.xsd"
TABLES = ("tables/v6.0/summary_results.json", "v6.1/summary.json")
WORKFLOW_COMMAND = re.compile(
    r"^::(error|warning|notice)( [a-zA-Z]+=[^,:\n]*(,[a-zA-Z]+=[^,:\n]*)*)?::[^\n]*$"
)
"""GitHub's workflow-command syntax: ``::level key=value,key=value::message``, properties
and message escaped (no raw ``:`` or ``,`` in a property, no newline anywhere)."""


def run(url: str, *args: str, env: dict[str, str | None] | None = None) -> Result:
    """``tracker --database-url URL ARGS`` in this process, no terminal."""
    return CliRunner().invoke(cli, ["--database-url", url, *args], env=env or {})


# --- the databases -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo35")
    done = CliRunner().invoke(cli, ["demo", "--out", str(out)])
    assert done.exit_code == 0, done.output
    return out


@pytest.fixture
def demo_url(demo: Path, tmp_path: Path) -> str:
    """A copy of the demo's database (the tests change it)."""
    return f"sqlite:///{shutil.copy(demo / 'demo.db', tmp_path / 'demo.db')}"


@pytest.fixture(scope="module")
def tables_url(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The shared v6.0 and v6.1 results tables, analysed."""
    url = f"sqlite:///{tmp_path_factory.mktemp('tables35') / 'tracker.db'}"
    tables = [str(shared_data / "mlperf-inference" / t) for t in TABLES]
    assert run(url, "ingest", *tables).exit_code == 0
    assert run(url, "analyze").exit_code == 0
    return url


def _slower(source: Path, target: Path, factor: float, *, key: str) -> Path:
    doc = json.loads(source.read_text("utf-8"))
    for entry in doc["benchmarks"]:
        if key == "stats":
            stats = entry["stats"]
            for k in ("min", "max", "mean", "median", "q1", "q3", "ld15iqr", "hd15iqr", "total"):
                stats[k] *= factor
            stats["data"] = [v * factor for v in stats["data"]]
        elif entry.get("run_name") in ("copy_list/64", "sort_shuffled"):
            entry["real_time"] *= factor
            entry["cpu_time"] *= factor
    target.write_text(json.dumps(doc), "utf-8")
    return target


@pytest.fixture(scope="module")
def projects_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``mylib`` (Google Benchmark) and ``mylib-py`` (pytest-benchmark), 1.0.0 and 1.1.0,
    each 1.1.0 a third slower."""
    tmp = tmp_path_factory.mktemp("projects35")
    url = f"sqlite:///{tmp / 'tracker.db'}"
    google = DATA / "google_benchmark_repetitions.json"
    pytest_file = DATA / "pytest_benchmark.json"
    sources = {
        "mylib": (google, _slower(google, tmp / "g.json", 1.33, key="times")),
        "mylib-py": (pytest_file, _slower(pytest_file, tmp / "p.json", 1.33, key="stats")),
    }
    for software, (before, after) in sources.items():
        for version, source in (("1.0.0", before), ("1.1.0", after)):
            done = run(
                url, "ingest", str(source), "--software", software,
                "--software-version", version, "--system", "ci-x86",
            )  # fmt: skip
            assert done.exit_code == 0, done.output
    assert run(url, "analyze").exit_code == 0
    return url


# --- 1. one project at a time -------------------------------------------------------------


def test_1_a_gate_over_two_projects_names_both_and_software_picks_one(projects_url: str) -> None:
    both = run(projects_url, "gate", "--candidate", "1.1.0", "--format", "json")
    doc = json.loads(both.stdout)
    assert both.exit_code == 1
    assert " of mylib, mylib-py" in doc["summary"]
    assert {i["software"] for i in doc["items"] if i["state"] == "failing"} == {"mylib", "mylib-py"}

    one = run(projects_url, "gate", "--software", "mylib", "--candidate", "1.1.0")
    assert one.exit_code == 1, one.output
    assert "mylib-py" not in one.stdout and "of mylib 1.0.0 → 1.1.0" in one.stdout
    py = run(projects_url, "gate", "--software", "mylib-p*", "--candidate", "1.1.0")
    assert "mylib-py" in py.stdout and "· mylib ·" not in py.stdout

    picked = run(projects_url, "gate", "--software", "mylib", "--benchmark", "copy_list/6*",
                 "--candidate", "1.1.0", "--format", "json")  # fmt: skip
    keys = {i["benchmark"] for i in json.loads(picked.stdout)["items"]}
    assert keys == {"copy_list/64"}
    nothing = run(projects_url, "gate", "--software", "nope", "--candidate", "1.1.0")
    assert nothing.exit_code == 2 and "no software matches --software nope" in nothing.output


def test_1_findings_report_and_compare_take_the_same_options(
    projects_url: str, tables_url: str, tmp_path: Path
) -> None:
    found = run(projects_url, "findings", "--software", "mylib-py", "--format", "json")
    docs = json.loads(found.stdout)
    assert docs and {d["series_key"].split("|")[0] for d in docs} == {"mylib-py"}
    site = tmp_path / "site"
    done = run(projects_url, "report", "--out", str(site), "--software", "mylib")
    assert done.exit_code == 0, done.output
    report = (site / "report.json").read_text("utf-8")
    assert "mylib-py" not in report and "mylib" in report
    compared = run(tables_url, "compare", "--round", "v6.1", "--benchmark", "deepseek-*",
                   "--system", "*GB300*", "--software", "mlperf-inference")  # fmt: skip
    assert compared.exit_code == 0, compared.output
    assert "deepseek-r1" in compared.stdout and "llama" not in compared.stdout


# --- 2. scaling drops gated; and the figures of the issue's acceptance test -----------------


def test_2_the_v6_tables_fail_on_the_two_scaling_warnings_in_60_greppable_lines(
    tables_url: str,
) -> None:
    text = run(tables_url, "gate", "--candidate", "v6.1", env={"COLUMNS": "100"})
    assert text.exit_code == 1, text.output
    lines = text.stdout.splitlines()
    assert len(lines) <= 60, len(lines)
    doc = json.loads(run(tables_url, "gate", "--candidate", "v6.1", "--format", "json").stdout)
    failing = [i for i in doc["issues"] if i["state"] == "failing"]
    assert [i["check"] for i in failing] == ["scaling", "scaling"]
    assert text.stdout.startswith("gate: 1 (2 scaling-efficiency issues;")
    for issue in (i for i in doc["issues"] if i["check"] != "missing"):
        grep = [line for line in lines if issue["series"] in line and issue["title"] in line]
        assert len(grep) >= 1, issue["line"]
    for line in lines[1:3]:
        assert line.startswith("failing") and re.search(
            r"E \d\.\d\d \(floor 0\.90\), \d+ → \d+ accelerators — mlperf-inference · ", line
        )


def test_2_the_demo_gates_its_scaling_drop_in_efficiencies_and_counts(
    demo_url: str, tmp_path: Path
) -> None:
    done = run(demo_url, "gate", "--candidate", "v6.0")
    assert done.exit_code == 1
    assert "E 0.97 → 0.84 (floor 0.90), 8 → 32 accelerators" in done.stdout
    policy = tmp_path / "gate.toml"
    policy.write_text('[[threshold]]\nmatch = "example-llm"\nefficiency_floor = 0.80\n', "utf-8")
    lower = run(demo_url, "gate", "--candidate", "v6.0", "--policy", str(policy))
    assert "E 0.97 → 0.84 (floor 0.90)" not in lower.stdout  # the pattern's floor: 0.80
    assert "E 0.97 → 0.84, 8 → 32 accelerators" in lower.stdout  # the drop still fails
    off = tmp_path / "off.toml"
    off.write_text('[gate]\nfail_on = ["regression"]\n', "utf-8")
    assert run(demo_url, "gate", "--candidate", "v6.0", "--policy", str(off)).exit_code == 0


# --- 3. what fails first, one line per issue, no trailing spaces, colour on a terminal ------


def test_3_one_physical_line_per_issue_what_fails_first(tables_url: str) -> None:
    lines = run(tables_url, "gate", "--candidate", "v6.1").stdout.splitlines()
    states = [line.split("  ")[0] for line in lines[1:] if line[:1].islower()]
    assert states[:2] == ["failing", "failing"]
    assert states.index("improvement") < states.index("not gated")  # missing come last
    assert all(line == line.rstrip() for line in lines)
    assert "\x1b[" not in "\n".join(lines)
    assert sum(line.startswith("not gated") for line in lines) <= 10  # per benchmark
    every = run(tables_url, "gate", "--candidate", "v6.1", "--show-missing").stdout
    assert sum(line.startswith("not gated") for line in every.splitlines()) > 300
    verbose = run(tables_url, "gate", "--candidate", "v6.1", "--verbose").stdout.splitlines()
    at = next(n for n, line in enumerate(verbose) if line.startswith("improvement"))
    assert verbose[at + 1].startswith("    ") and not verbose[at + 1][4:5].isspace()


def test_3_colour_only_on_a_terminal_and_never_with_no_color(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal:
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_colour() is False  # pytest's stdout is no terminal
    monkeypatch.setattr("tracker.cli.gate.sys.stdout", Terminal())
    assert use_colour() is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_colour() is False


# --- 4. one primary metric per microbenchmark ---------------------------------------------


def test_4_four_slower_google_benchmarks_are_not_eight_regressions(projects_url: str) -> None:
    doc = json.loads(
        run(projects_url, "gate", "--software", "mylib", "--candidate", "1.1.0", "--format",
            "json").stdout
    )  # fmt: skip
    failing = [i for i in doc["items"] if i["state"] == "failing"]
    assert {i["metric"] for i in failing} == {"real_time_ns"}
    assert len(failing) == len({i["benchmark"] for i in failing})


# --- 5. findings under settings that no longer apply are superseded ------------------------


def test_5_another_target_supersedes_the_findings_read_at_the_old_one(demo_url: str) -> None:
    analysed = run(demo_url, "analyze", "--target-tokens-per-s-per-user", "30")
    assert analysed.exit_code == 0 and "superseded (made under other settings)" in analysed.output
    open_now = run(demo_url, "findings", "--format", "json")
    lines = [d["series_key"] for d in json.loads(open_now.stdout)]
    assert not any("at 50 tokens/s/user" in key for key in lines)
    superseded = json.loads(run(demo_url, "findings", "--status", "superseded",
                                "--format", "json").stdout)  # fmt: skip
    assert superseded and all("at 50 tokens/s/user" in d["series_key"] for d in superseded)
    assert all("made at 50 tokens/s/user, now read at 30" in d["status_note"] for d in superseded)
    gate = run(demo_url, "gate", "--candidate", "1.2.0", "--policy", _target_policy(demo_url))
    assert "at 50 tokens/s/user" not in gate.stdout


def _target_policy(url: str) -> str:
    path = Path(url.removeprefix("sqlite:///")).with_name("target30.toml")
    path.write_text("[gate]\ntarget_tokens_per_s_per_user = 30\n", "utf-8")
    return str(path)


# --- 6. one finding id everywhere ----------------------------------------------------------


def test_6_the_demo_regression_has_one_id_in_findings_gate_report_and_json(
    demo: Path, demo_url: str
) -> None:
    found = json.loads(run(demo_url, "findings", "--format", "json").stdout)
    [issue_id] = {d["issue"]["id"] for d in found if d["kind"] == "regression"}
    listed = run(demo_url, "findings").stdout
    assert re.search(rf"^{issue_id}\s+open\s+regression", listed, re.MULTILINE)
    gate = run(demo_url, "gate", "--candidate", "1.2.0")
    assert f"#{issue_id} example-llm-70b" in gate.stdout.splitlines()[1]
    doc = json.loads(run(demo_url, "gate", "--candidate", "1.2.0", "--format", "json").stdout)
    assert [i["finding_id"] for i in doc["issues"] if i["state"] == "failing"] == [issue_id]
    page = (demo / "site" / "findings.html").read_text("utf-8")
    row = next(r for r in page.split("<tr") if "regression" in r and "example-llm-70b" in r)
    assert f"#{issue_id}</span>" in row


# --- 7. scaling findings read in efficiencies ---------------------------------------------


def test_7_findings_show_scaling_as_efficiencies_and_accelerator_counts(demo_url: str) -> None:
    listed = run(demo_url, "findings").stdout
    assert "E 0.84 (floor 0.90), 8 → 32 accelerators" in listed
    assert "E 0.97 → 0.84, 8 → 32 accelerators" in listed
    assert not re.search(r"scaling_efficiency\s+-16", listed)
    docs = json.loads(run(demo_url, "findings", "--format", "json").stdout)
    assert {d["change"] for d in docs if d["kind"] == "scaling_efficiency"} == {
        "E 0.84 (floor 0.90), 8 → 32 accelerators",
        "E 0.97 → 0.84, 8 → 32 accelerators",
    }


# --- 8. CI formats and examples -------------------------------------------------------------


def test_8_junit_validates_against_the_schema_and_counts_agree_with_the_json(
    tables_url: str, demo_url: str
) -> None:
    schema = etree.XMLSchema(etree.parse(str(JUNIT_XSD)))
    for url, candidate in ((tables_url, "v6.1"), (demo_url, "1.2.0"), (demo_url, "v6.0")):
        junit = run(url, "gate", "--candidate", candidate, "--format", "junit")
        doc = json.loads(run(url, "gate", "--candidate", candidate, "--format", "json").stdout)
        assert junit.exit_code == doc["exit_code"]
        root = etree.fromstring(junit.stdout.encode("utf-8"))
        assert schema.validate(root), schema.error_log
        suite = root.find("testsuite")
        assert suite is not None
        outcomes = [s["outcome"] for s in doc["series"]]
        assert int(suite.get("tests")) == len(doc["series"]) == len(suite.findall("testcase"))
        assert int(suite.get("failures")) == outcomes.count("failure")
        assert int(suite.get("skipped")) == outcomes.count("skipped")
        failing = {i["key"] for i in doc["items"] if i["state"] == "failing"}
        assert int(suite.get("failures")) == len(failing)
        messages = [f.get("message") for f in suite.iter("failure")]
        issue_lines = {i["line"] for i in doc["issues"] if i["state"] == "failing"}
        assert all(any(line in m for line in issue_lines) for m in messages)


def test_8_github_lines_are_workflow_commands(tables_url: str, demo_url: str) -> None:
    for url, candidate in ((tables_url, "v6.1"), (demo_url, "1.2.0")):
        done = run(url, "gate", "--candidate", candidate, "--format", "github")
        assert done.exit_code == 1
        lines = done.stdout.splitlines()
        assert lines and all(WORKFLOW_COMMAND.match(line) for line in lines), lines
        assert sum(line.startswith("::error ") for line in lines) == (2 if url == tables_url else 1)


def test_8_the_comment_body_starts_with_its_marker_and_fits_a_comment(
    tables_url: str, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    done = run(tables_url, "gate", "--candidate", "v6.1", "--format", "markdown", "--comment",
               env={"GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    assert done.stdout.startswith("<!-- tracker-gate -->\n## ❌ gate: 1 (")
    assert len(done.stdout) < 65_536 and done.stdout.count("\n| failing | scaling |") == 2
    assert not summary.exists()  # a comment's body is not the step summary
    wrong = run(tables_url, "gate", "--candidate", "v6.1", "--comment")
    assert wrong.exit_code == 2 and "--comment goes with --format markdown" in wrong.output


def _gate_options() -> set[str]:
    return {opt for p in gate_command.params for opt in p.opts if opt.startswith("--")}


def test_8_the_github_actions_example_is_safe_and_uses_real_options() -> None:
    text = (REPO / "docs" / "github-actions-gate.yml").read_text("utf-8")
    workflow = yaml.safe_load(text)
    steps = workflow["jobs"]["gate"]["steps"]
    scripts = [str(step["run"]) for step in steps if "run" in step]
    assert scripts and not any("${{" in script for script in scripts)  # inputs via env: only
    env = workflow["jobs"]["gate"]["env"]
    assert env["CANDIDATE"].startswith("${{ inputs.candidate")
    gate = next(s for s in scripts if "tracker gate" in s)
    assert '--report-url "$REPORT_URL"' in gate and "--report site" not in text
    for fmt in ("github", "junit", "markdown --comment"):
        assert f"--format {fmt}" in gate
    used = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", gate))
    assert used <= _gate_options(), used - _gate_options()
    comment = next(s for s in scripts if "gh api" in s)
    assert "<!-- tracker-gate -->" in comment


def test_8_the_gitlab_example_reports_the_junit_file_and_uses_real_options() -> None:
    doc = yaml.safe_load((REPO / "docs" / "gitlab-ci-gate.yml").read_text("utf-8"))
    job = doc["benchmark-gate"]
    assert job["artifacts"]["reports"]["junit"] == "gate-junit.xml"
    script = "\n".join(job["script"])
    assert "--format junit > gate-junit.xml" in script
    gate_lines = "\n".join(
        line for line in job["script"] if "args=" in line or "tracker gate" in line
    )
    used = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", gate_lines))
    assert used <= _gate_options(), used - _gate_options()


# --- 9. the smaller ones ---------------------------------------------------------------------


def test_9_a_microbenchmark_gate_says_nothing_of_targets_floors_or_empty_families(
    projects_url: str,
) -> None:
    out = run(projects_url, "gate", "--software", "mylib", "--candidate", "1.1.0").stdout
    assert "tokens/s/user" not in out and "efficiency floor" not in out
    assert "family size 0" not in out and "/ci-x86" not in out and "· ci-x86" in out


def test_9_plurals_and_widths(projects_url: str, tables_url: str, tmp_path: Path) -> None:
    one = run(f"sqlite:///{tmp_path / 'one.db'}", "ingest",
              str(DATA / "google_benchmark_single.json"), "--software", "x",
              "--software-version", "1", "--system", "ci")  # fmt: skip
    assert ": 1 run (google-benchmark)" in one.stdout and "1 result stored as invalid" in one.stdout
    narrow = run(tables_url, "findings", env={"COLUMNS": "80"}).stdout.splitlines()
    assert narrow[0].endswith(" issues") and max(len(line) for line in narrow) <= 80
    piped = run(tables_url, "findings").stdout.splitlines()
    assert max(len(line) for line in piped) > 80  # whole lines for grep without a terminal
    single = run(projects_url, "findings", "--benchmark", "copy_list/64", "--software", "mylib")
    assert single.stdout.startswith("1 finding (open), 1 issue\n")


def test_9_a_failed_ingest_leaves_no_database_behind(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    bad = tmp_path / "bad.json"
    bad.write_text("{}", "utf-8")
    assert run(url, "ingest", str(tmp_path / "missing")).exit_code == 2
    assert run(url, "ingest", str(bad)).exit_code == 2
    assert not (tmp_path / "tracker.db").exists()


def test_9_compare_prints_plain_numbers_and_one_submitter(tables_url: str) -> None:
    done = run(tables_url, "compare", "--round", "v6.1", "--against-round", "v6.0")
    assert done.exit_code == 0, done.output
    assert not re.search(r"\d\.\d+e[+-]\d", done.stdout)
    assert "NVIDIA NVIDIA" not in done.stdout and "NVIDIA GB300 deepseek-r1" in done.stdout
    assert re.search(r"\(\d{1,3}(,\d{3})+ total\)", done.stdout)


def test_9_the_json_keeps_every_series_unchanged_ones_included(demo_url: str) -> None:
    doc: dict[str, Any] = json.loads(
        run(demo_url, "gate", "--candidate", "1.2.0", "--format", "json").stdout
    )
    states = {s["state"] for s in doc["series"]}
    assert "no change" in states and "failing" in states
    assert {s["key"] for s in doc["series"]} >= {i["key"] for i in doc["items"]}
    assert len(doc["series"]) >= doc["compared"]
