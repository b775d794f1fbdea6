"""The report counts one regression once (issue #16's "one issue, one line").

Findings, compared series and gains that share a cause (the points of one
sweep, the per-accelerator form of a metric, the series at the interactivity
target) are one issue, grouped as the gate groups them; a gap in a sweep is
listed, not written as a run; a system with one accelerator count gets a
chart per accelerator, one with several does not.
"""

from __future__ import annotations

from typing import Any

from tracker.analyze.groupings import cause_of, twin_benchmark
from tracker.records.findings import FindingRecord
from tracker.report.common import finding_rows
from tracker.report.context import Cell, SeriesRow, SeriesTable
from tracker.report.inputs import SystemInfo
from tracker.report.issues import finding_issues, verdict_issues
from tracker.report.pages.series import per_accelerator_charts

NODE = "/node-4x"
AT_TARGET = "tps_per_accelerator at 50 tokens/s/user (median 1/TPOT)"


def _finding(n: int, workload: str, metric: str, change: float, kind: str = "regression") -> Any:
    evidence = {
        "software": "stack",
        "system": NODE,
        "benchmark": "llm-70b",
        "scenario": "concurrency",
        "workload": workload,
        "metric": metric,
        "higher_is_better": True,
    }
    key = "|".join(("stack", NODE, "llm-70b", "concurrency", workload, metric))
    return FindingRecord(f"f{n}", kind, key, "welch_t_log", "stack", "1.1", "1.2", change, evidence)


def _sweep(points: list[str], change: float = -8.0) -> list[Any]:
    found = []
    for i, point in enumerate(points):
        found.append(_finding(2 * i, f"chat/{point}", "tps", change - 0.1 * i))
        found.append(_finding(2 * i + 1, f"chat/{point}", "tps_per_accelerator", change))
    found.append(_finding(99, "chat", AT_TARGET, change + 0.5))
    return found


def test_a_sweep_regression_is_one_issue_named_with_its_points() -> None:
    rows = finding_rows([*_sweep(["c2", "c4", "c8"]), _finding(50, "", "qps", 5.0, "improvement")])
    (regression, improvement) = finding_issues(rows, first_page="findings.html")
    assert len(regression.members) == 7 and len(improvement.members) == 1
    assert regression.where == "at c2–c8 and at 50 tokens/s/user"
    assert regression.forms == "tps and per accelerator"
    assert regression.head.change_pct == -7.5  # the most cautious member, as the gate
    assert regression.change_range == (-8.2, -7.5)
    assert all(m.evidence_href == "findings.html" for m in regression.members)


def test_a_gap_in_a_sweep_is_listed_not_written_as_a_run() -> None:
    rows = finding_rows(_sweep(["c2", "c8"]))
    every = {
        cause_of("stack", NODE, "llm-70b", "concurrency", "chat/c2", "tps").key: ["c2", "c4", "c8"]
    }
    (issue,) = finding_issues(rows, every)
    assert issue.where == "at c2, c8 and at 50 tokens/s/user"


def test_issues_of_a_thousand_and_one_rows_link_their_members_to_the_second_page() -> None:
    records = [_finding(n, "", f"m{n}", -5.0) for n in range(1001)]
    issues = finding_issues(finding_rows(records), first_page="findings.html")
    assert len(issues) == 1001
    assert issues[-1].head.evidence_href == "findings-2.html"


def test_compared_series_count_once_per_cause_and_side() -> None:
    rows = [
        (NODE, "llm-70b", "concurrency", f"chat/c{n}", metric, "regression", -8.0 + n / 100)
        for n in (2, 4, 8)
        for metric in ("tps", "tps_per_accelerator")
    ]
    rows.append((NODE, "llm-70b", "concurrency", "chat/c16", "tps", "no_change", -1.0))
    rows.append((NODE, "llm-70b-99.9", "Server", "", "tps", "suspect", -3.0))
    rows.append((NODE, "llm-70b-99", "Server", "", "tps", "regression", -4.0))
    found = verdict_issues("stack", rows)
    assert [(i.verdict, i.name, i.members) for i in found] == [
        ("regression", "llm-70b chat", 6),
        ("no_change", "llm-70b chat", 1),
        ("regression", "llm-70b-99 Server", 2),  # a -99.9 twin is its -99's issue
    ]
    assert found[0].change_pct == -7.92
    assert twin_benchmark("llm-70b-99.9") == "llm-70b-99"


def _row(system: str, metric: str, medians: list[float | None]) -> SeriesRow:
    cells = tuple(
        None
        if m is None
        else Cell(median=m, n=2, valid_count=2, min=m - 1, max=m + 1, has_invalid=False)
        for m in medians
    )
    return SeriesRow(
        system, system, "", "llm", "Offline", "", metric, "tokens/s", True, False, cells
    )


def test_a_chart_per_accelerator_divides_by_the_systems_one_count() -> None:
    table = SeriesTable(
        "mlperf",
        ("v5.1", "v6.0"),
        (
            _row("big", "tps", [720.0, 1440.0]),
            _row("small", "tps", [None, 90.0]),
            _row("mixed", "tps", [10.0, 20.0]),
            _row("big", "p99_latency_ms", [5.0, 4.0]),
        ),
    )
    systems = {
        "big": SystemInfo("big", "big", accelerator_counts=(72,)),
        "small": SystemInfo("small", "small", accelerator_counts=(8,)),
        "mixed": SystemInfo("mixed", "mixed", accelerator_counts=(4, 8)),
    }
    (chart,) = per_accelerator_charts([table], systems)
    traces = {t["name"]: t for t in chart.spec["data"]}
    # A line needs two versions: "small" (v6.0 only) is in the tables, not on the chart.
    assert set(traces) == {"big · 72 accelerators"}
    assert traces["big · 72 accelerators"]["y"] == [10.0, 20.0]
    assert chart.spec["layout"]["yaxis"]["title"]["text"] == "tokens/s per accelerator"
    # No system with two versions: the newest version ranked per accelerator, as bars.
    newest = SeriesTable("mlperf", ("v5.1", "v6.0"), table.rows[1:2])
    (bars,) = per_accelerator_charts([newest, table][:1], systems)
    assert bars.spec["data"][0]["type"] == "bar"
    assert bars.spec["data"][0]["x"] == [11.25]
    assert bars.spec["data"][0]["y"] == ["small · 8 accelerators"]
    ones = {k: SystemInfo(k, k, accelerator_counts=(1,)) for k in systems}
    assert per_accelerator_charts([table], ones) == ()
