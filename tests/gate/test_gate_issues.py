"""One issue, one line; triage reaches the gate (issue 16, items 1 and 4).

The planted −8% of one serving workload shows in 7 series: three sweep points
(c2, c4, c8) in tokens/s and per accelerator, and the series at 50 tokens/s/user.
The gate, the demo and ``tracker findings`` print it as one issue; the JSON keeps
every member. A stored finding triaged as acknowledged (or expected) counts as
acknowledged in the gate, and ``set-status --acknowledgements FILE`` writes the
entries the policy's acknowledgements file takes.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.gate.test_gate import Gate, gate, regressed  # noqa: F401  (fixtures)
from tests.support.analysis_trees import tracker_ok
from tracker.gate.policy import parse_acknowledgements

SEES = "; every series could see a 5% change)"
"""The end of a summary line when every compared series could see a 5% change."""

CURVE = "stack|/node-4x|example-llm-70b|concurrency|isl1024-osl1024"
LINE = "example-llm-70b · concurrency · isl1024-osl1024: -8.0% (worse; CI ["
WHERE = "at c2–c8 and at 50 tokens/s/user"


def test_one_regression_is_one_issue_with_every_member_in_json(regressed: str, gate: Gate) -> None:  # noqa: F811
    text = gate(regressed, "--candidate", "2.0.13")
    assert text.exit_code == 1
    assert text.stdout.splitlines()[0] == "gate: 1 (1 regression, 2.0.12 → 2.0.13" + SEES
    assert sum(line.startswith("failing") for line in text.stdout.splitlines()) == 1
    assert "7 series" in text.stdout and "state=" not in text.stdout

    doc = json.loads(gate(regressed, "--candidate", "2.0.13", "--format", "json").stdout)
    [issue] = doc["issues"]
    assert (issue["state"], issue["check"], issue["where"]) == (
        "failing",
        "measured, at target",
        WHERE,
    )
    assert issue["line"].startswith(LINE) and issue["line"].endswith(f"]) {WHERE}")
    assert len(issue["members"]) == len(doc["items"]) == 7
    assert {i["key"] for i in doc["items"]} == set(issue["members"])
    assert f"{CURVE}/c4|output_tokens_per_s_per_accelerator" in issue["members"]


def test_findings_print_one_line_per_issue_and_name_it_in_json(regressed: str) -> None:  # noqa: F811
    tracker_ok(regressed, "analyze")
    lines = tracker_ok(regressed, "findings").stdout.splitlines()
    assert lines[0] == "7 findings (open), 1 issue"
    assert lines[1].split() == [
        "id",
        "status",
        "kind",
        "change",
        "versions",
        "q",
        "method",
        "series",
    ]
    [row] = lines[2:]
    assert row.startswith("1   open    regression  -8.0%   2.0.12 -> 2.0.13")
    assert row.endswith(
        f"{CURVE}|output_tokens_per_s and per accelerator {WHERE} (7 findings: 1–7)"
        " — nothing but the software"
    )
    found = json.loads(tracker_ok(regressed, "findings", "--format", "json").stdout)
    assert len(found) == 7
    assert all(
        f["issue"]["id"] == 1 and f["issue"]["members"] == [1, 2, 3, 4, 5, 6, 7] for f in found
    )


def test_an_acknowledged_finding_reaches_the_gate_and_the_acknowledgements_file(
    regressed: str,  # noqa: F811
    gate: Gate,  # noqa: F811
    tmp_path: Path,
) -> None:
    tracker_ok(regressed, "analyze")
    acks = tmp_path / "acks.toml"
    done = tracker_ok(
        regressed,
        "findings",
        "set-status",
        "1",
        "acknowledged",
        "--note",
        "perf-team: new scheduler, fixed in 2.0.14",
        "--acknowledgements",
        str(acks),
    )
    assert done.stdout.startswith("Finding 1 and 6 more of its issue (regression, ")
    assert f"Appended to {acks} (3 entries now): commit it" in done.stdout
    statuses = json.loads(
        tracker_ok(regressed, "findings", "--status", "all", "--format", "json").stdout
    )
    assert {f["status"] for f in statuses} == {"acknowledged"}

    passed = gate(regressed, "--candidate", "2.0.13")
    assert passed.exit_code == 0, passed.output
    assert (
        passed.stdout.splitlines()[0]
        == "gate: 0 (no regression; 1 acknowledged, 2.0.12 → 2.0.13" + SEES
    )
    flat = " ".join(passed.stdout.split())  # the issue column wraps at 100 columns
    assert (
        "acknowledged: perf-team: new scheduler, fixed in 2.0.14 (finding 1, acknowledged)" in flat
    )

    # the entries written are the file's format, and cover every member on their own
    entries = parse_acknowledgements(acks.read_bytes(), source=str(acks))
    assert {e.versions for e in entries} == {"2.0.13"}
    assert {e.series for e in entries} == {
        f"{CURVE}/*|output_tokens_per_s",
        f"{CURVE}/*|output_tokens_per_s_per_accelerator",
        f"{CURVE}|output_tokens_per_s_per_accelerator at 50 tokens/s/user "
        "(mean of per-request 1/TPOT)",
    }
    tracker_ok(regressed, "findings", "set-status", "1", "open")
    assert gate(regressed, "--candidate", "2.0.13").exit_code == 1
    policy = tmp_path / "gate.toml"
    policy.write_text('[gate]\nacknowledgements = "acks.toml"\n', "utf-8")
    by_file = gate(regressed, "--candidate", "2.0.13", "--policy", str(policy))
    assert by_file.exit_code == 0, by_file.output
    assert "(acks.toml)" in by_file.stdout


def test_the_acknowledgements_file_wins_over_a_stored_triage(
    regressed: str,  # noqa: F811
    gate: Gate,  # noqa: F811
    tmp_path: Path,
) -> None:
    tracker_ok(regressed, "analyze")
    tracker_ok(regressed, "findings", "set-status", "1", "expected", "--note", "stored reason")
    (tmp_path / "acks.toml").write_text(
        '[[acknowledgement]]\nseries = "stack|*"\nversions = "2.0.13"\n'
        'reason = "reviewed reason"\nauthor = "perf-team"\n',
        "utf-8",
    )
    policy = tmp_path / "gate.toml"
    policy.write_text('[gate]\nacknowledgements = "acks.toml"\n', "utf-8")
    md = gate(regressed, "--candidate", "2.0.13", "--policy", str(policy), "--format", "markdown")
    assert md.exit_code == 0
    assert "| acknowledged (reviewed reason) |" in md.stdout and "stored reason" not in md.stdout
    doc = json.loads(gate(regressed, "--candidate", "2.0.13", "--format", "json").stdout)
    acks = {json.dumps(i["acknowledgement"]["reason"]) for i in doc["items"]}
    assert acks == {'"stored reason"'} and doc["settings"]["stored_triage"] == 7


def test_set_status_acknowledgements_needs_a_note(regressed: str, tmp_path: Path) -> None:  # noqa: F811
    from tests.support.analysis_trees import tracker

    tracker_ok(regressed, "analyze")
    done = tracker(
        regressed,
        "findings",
        "set-status",
        "1",
        "acknowledged",
        "--acknowledgements",
        str(tmp_path / "a.toml"),
    )
    assert done.exit_code == 2
    assert done.stderr.startswith(
        "Error: --acknowledgements needs a status of acknowledged or expected"
    )
    assert not (tmp_path / "a.toml").exists()
