"""Findings: stored with evidence, triaged, kept across re-analysis, closed when they stop holding.

Two systems, ``a`` and ``b``, lose 20% from vllm 1.0 to 1.1 (one AIPerf run
each, so the plain-threshold rule decides: a drop past twice the 5% floor is a
regression). Later runs of 1.1 move the median back, and forth.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.analysis_trees import tracker, tracker_ok, write_aiperf_sweep
from tracker.analyze.findings import fingerprint
from tracker.records.findings import FindingRecord
from tracker.store.facade import Store


def run(database_url: str, tmp_path: Path, system: str, version: str, tokens: float) -> None:
    root = write_aiperf_sweep(
        tmp_path / f"{system}-{version}-{tokens:g}", [(1, tokens, 60.0)], isl=256, osl=64
    )
    tracker_ok(
        database_url,
        "ingest",
        str(root),
        "--kind",
        "aiperf",
        "--software",
        "vllm",
        "--software-version",
        version,
        "--system",
        system,
    )


def listed(database_url: str, status: str = "all") -> dict[str, dict]:
    result = tracker_ok(database_url, "findings", "--status", status, "--format", "json")
    rows = json.loads(result.stdout)
    assert isinstance(rows, list)
    return {row["series_key"].split("|")[1]: row for row in rows}


def test_reanalysis_keeps_triage_closes_what_no_longer_holds_and_reopens(
    database_url: str, tmp_path: Path
) -> None:
    for system in ("a", "b"):
        run(database_url, tmp_path, system, "1.0", 1000.0)
        run(database_url, tmp_path, system, "1.1", 800.0)
    first = tracker_ok(database_url, "analyze").stdout
    assert "Findings: regression 2" in first and "Stored: 2 new" in first
    found = listed(database_url)
    assert {k: (f["kind"], f["status"], f["is_current"]) for k, f in found.items()} == {
        "/a": ("regression", "open", True),
        "/b": ("regression", "open", True),
    }
    a = found["/a"]
    assert (a["baseline_version"], a["candidate_version"]) == ("1.0", "1.1")
    assert a["change_pct"] == pytest.approx(-20.0)
    assert a["evidence"]["method"] == "threshold" and a["evidence"]["family_size"] == 0

    note = "known: new scheduler, fixed in 1.2"
    tracker_ok(database_url, "findings", "set-status", str(a["id"]), "acknowledged", "--note", note)
    again = tracker_ok(database_url, "analyze").stdout
    assert "Stored: 0 new, 2 updated, 0 reopened, 0 closed" in again
    found = listed(database_url)
    assert (found["/a"]["status"], found["/a"]["status_note"]) == ("acknowledged", note)
    assert found["/a"]["fingerprint"] == a["fingerprint"] and found["/b"]["status"] == "open"

    for system in ("a", "b"):  # a second run of 1.1 at 1,200: the median is back at 1,000
        run(database_url, tmp_path, system, "1.1", 1200.0)
    closed = tracker_ok(database_url, "analyze").stdout
    assert "1 closed as fixed, 1 triaged ones no longer found" in closed
    found = listed(database_url)
    assert (found["/a"]["status"], found["/a"]["is_current"]) == ("acknowledged", False)
    assert found["/a"]["status_note"] == note
    assert (found["/b"]["status"], found["/b"]["is_current"]) == ("fixed", False)
    assert found["/b"]["status_note"].startswith("closed by the analysis of ")
    assert listed(database_url, "open") == {}
    assert set(listed(database_url, "fixed")) == {"/b"}

    for tokens in (600.0, 610.0):  # b falls again: median of 800, 1200, 600, 610 is 705
        run(database_url, tmp_path, "b", "1.1", tokens)
    reopened = tracker_ok(database_url, "analyze").stdout
    assert "Stored: 0 new, 0 updated, 1 reopened, 0 closed as fixed" in reopened
    found = listed(database_url)
    assert (found["/b"]["status"], found["/b"]["is_current"]) == ("open", True)
    assert found["/b"]["status_note"].startswith("reopened by the analysis of ")
    assert found["/b"]["change_pct"] == pytest.approx(100.0 * (705.0 / 1000.0 - 1.0))
    assert (found["/a"]["status"], found["/a"]["is_current"]) == ("acknowledged", False)


def test_findings_text_lists_the_triage_state_and_evidence(
    database_url: str, tmp_path: Path
) -> None:
    run(database_url, tmp_path, "a", "1.0", 1000.0)
    run(database_url, tmp_path, "a", "1.1", 800.0)
    tracker_ok(database_url, "analyze")
    text = tracker_ok(database_url, "findings").stdout
    assert "1 finding (open)" in text
    assert "regression" in text and "1.0 -> 1.1" in text and "-20.0%" in text
    assert "vllm|/a|llama-3.3-70b|concurrency|isl256-osl64/c1|output_tokens_per_s" in text
    tracker_ok(database_url, "findings", "set-status", "1", "expected")
    assert "0 findings (open)" in tracker_ok(database_url, "findings").stdout
    listed_all = tracker_ok(database_url, "findings", "--status", "all").stdout
    assert "expected" in listed_all


def test_triage_errors_are_clear(database_url: str, tmp_path: Path) -> None:
    tracker_ok(database_url, "db", "upgrade")  # triage needs a database; it creates none
    missing = tracker(database_url, "findings", "set-status", "99", "acknowledged")
    assert missing.exit_code == 2
    assert missing.stderr.startswith("Error: no finding has id 99")
    wrong = tracker(database_url, "findings", "set-status", "1", "closed")
    assert wrong.exit_code == 2 and "'closed' is not one of" in wrong.stderr
    assert json.loads(tracker_ok(database_url, "findings", "--format", "json").stdout) == []


def record(fp: str, change: float) -> FindingRecord:
    return FindingRecord(
        fingerprint=fp,
        kind="regression",
        series_key=f"s|{fp}",
        method="threshold",
        software="vllm",
        baseline_version="1.0",
        candidate_version="1.1",
        change_pct=change,
        evidence={"baseline": "1.0", "candidate": "1.1", "delta_pct": change},
    )


def test_save_findings_rule_at_the_store(database_url: str) -> None:
    t0 = datetime(2026, 12, 1, tzinfo=UTC)
    with Store.open(database_url) as store:
        saved = store.save_findings([record("x", -20.0), record("y", -30.0)], analysed_at=t0)
        assert (saved.new, saved.updated, saved.closed) == (2, 0, 0)
        x = next(f for f in store.list_findings() if f.fingerprint == "x")
        store.set_finding_status(x.id, status="fixed", note="fixed in 1.2")
        # x still holds: a status set by a person stays, even "fixed"; numbers are replaced
        saved = store.save_findings(
            [record("x", -21.0)], analysed_at=t0, evaluated=lambda f: f.fingerprint == "x"
        )
        assert (saved.updated, saved.closed, saved.reopened) == (1, 0, 0)
        by_fp = {f.fingerprint: f for f in store.list_findings()}
        assert (by_fp["x"].status, by_fp["x"].change_pct) == ("fixed", -21.0)
        assert (by_fp["y"].status, by_fp["y"].is_current) == ("open", True)  # not evaluated
        saved = store.save_findings([], analysed_at=t0)
        assert (saved.closed, saved.no_longer_found) == (1, 1)
        by_fp = {f.fingerprint: f for f in store.list_findings()}
        assert (by_fp["y"].status, by_fp["y"].is_current) == ("fixed", False)
        assert by_fp["x"].status_note == "fixed in 1.2" and not by_fp["x"].is_current
        assert [f.fingerprint for f in store.list_findings(status="fixed")] == ["x", "y"]


def test_a_fingerprint_names_the_subject_not_the_numbers() -> None:
    a = fingerprint("comparison", "worse", "s|key", "1.0", "1.1")
    assert a == fingerprint("comparison", "worse", "s|key", "1.0", "1.1")
    assert a != fingerprint("comparison", "better", "s|key", "1.0", "1.1")
    assert a != fingerprint("comparison", "worse", "s|key", "1.1", "1.2")
    assert len(a) == 64
