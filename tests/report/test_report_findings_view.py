"""What the demo's pages say about its findings, and the filters of the findings pages.

Findings name their workload and point and are listed regressions first, in the
same order on the pages and in ``findings.csv``, those that share a cause as one
row (the demo's −8% on one workload is one regression, its 11 findings under
it); scaling findings read as efficiencies against the floor; the comparison of
the version pair whose gate fails on scaling counts those findings; benchmark
charts name each line once
(what the lines share is in the title) and draw the repeats' min–max. The
filters of the findings page (kind, status, software, system) run in Chromium
from ``file://``.
"""

from __future__ import annotations

import asyncio
import csv
import html
import io
import json
import re
from pathlib import Path
from typing import Any

from tests.report.test_report_browser import CHROMIUM, CHROMIUM_ARGS, _require_chromium

ARROW = "\N{RIGHTWARDS ARROW}"


def _text(path: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))


def _words(text: str) -> str:
    return " ".join(text.split())


def test_findings_are_listed_regressions_first_one_row_per_issue(demo_site: Path) -> None:
    rows = list(csv.DictReader(io.StringIO((demo_site / "findings.csv").read_text("utf-8"))))
    kinds = [r["kind"] for r in rows]
    assert kinds[0] == "regression" and kinds[-1] == "improvement"
    assert kinds.index("scaling_efficiency") > kinds.index("regression")
    page = (demo_site / "findings.html").read_text(encoding="utf-8")
    heads = [int(i) for i in re.findall(r'<span class="meta">#(\d+)</span>', page)]
    members = [int(i) for i in re.findall(r"<tr><td>(\d+)<td>", page)]
    assert len(heads) == 8, heads  # as `tracker findings`: 18 findings, 8 issues
    assert sorted(members) == list(range(3, 14))  # the regression's 11 findings
    assert heads[0] in members
    csv_ids = [int(r["id"]) for r in rows]
    assert set(heads) | set(members) == set(csv_ids)
    first_seen = sorted(heads, key=lambda i: min(csv_ids.index(m) for m in _issue(i, members)))
    assert heads == first_seen


def _issue(head: int, members: list[int]) -> list[int]:
    return members if head in members else [head]


def test_a_finding_names_its_workload_and_points(demo_site: Path) -> None:
    text = _words(_text(demo_site / "findings.html"))
    assert "isl1024-osl1024 at c2\N{EN DASH}c32 and at 50 tokens/s/user" in text
    assert "output_tokens_per_s and per accelerator · 11 findings" in text
    assert "The 11 findings of this issue" in text
    assert "concurrency 16 output_tokens_per_s_per_accelerator" in text
    assert f"8 {ARROW} 32 accelerators" in text


def test_scaling_findings_read_as_efficiencies_on_every_page(demo_site: Path) -> None:
    compare = next((demo_site / "compare").glob("mlperf-inference-v5-1-v6-0-*.html"))
    for path in (demo_site / "scaling.html", demo_site / "index.html", compare):
        text = _words(_text(path))
        assert f"E 0.97 {ARROW} 0.84 (floor 0.90)" in text, path
        assert "x8->x32" not in text and "16.0% worse" not in text, path


def test_the_pair_that_fails_on_scaling_counts_it(demo_site: Path) -> None:
    compare = next((demo_site / "compare").glob("mlperf-inference-v5-1-v6-0-*.html"))
    text = _words(_text(compare))
    # Under the floor and fallen since v5.1: two findings, one warning (as the gate's one item).
    assert "1 scaling warning" in text
    assert "no p-values in this pair" in text and "family of 0" not in text
    assert 'class="verdict verdict-scaling_efficiency"' in compare.read_text(encoding="utf-8")
    headline = _words(_text(demo_site / "index.html"))
    assert "v6.0 against v5.1: 1 scaling warning, 3 improvements" in headline
    report = json.loads((demo_site / "report.json").read_text(encoding="utf-8"))
    pair = next(p for p in report["comparisons"] if p["software"] == "mlperf-inference")
    assert pair["scaling"] == 1


def _figures(path: Path) -> list[dict[str, Any]]:
    found = re.findall(r"data-figure='([^']*)'", path.read_text(encoding="utf-8"))
    return [json.loads(html.unescape(f)) for f in found]


def test_benchmark_charts_name_each_line_once_and_draw_the_spread(demo_site: Path) -> None:
    page = next((demo_site / "benchmark").glob("example-llm-70b-concurrency-*.html"))
    figures = _figures(page)
    assert figures
    for figure in figures:
        lines = [t for t in figure["data"] if t.get("mode") == "lines+markers"]
        names = [t["name"] for t in lines]
        assert names and not any("example-node-4x" in n for n in names), names
        assert len(set(names)) == len(names)
        assert all("error_y" in t for t in lines)
        assert all("min\N{EN DASH}max" in t["text"][0] for t in lines)
        marks = [t for t in figure["data"] if t.get("mode") == "markers"]
        assert marks and all(t["text"] for t in marks)
    assert (
        "example-node-4x (example data)"
        in page.read_text(encoding="utf-8").split("<figcaption>")[1]
    )


FILTER = """async (choice) => {
  for (const [name, value] of Object.entries(choice)) {
    const select = document.querySelector(`select[data-filter="${name}"]`);
    select.value = value;
    select.dispatchEvent(new Event('change'));
  }
  const rows = Array.from(document.querySelectorAll('#findings-table > tbody > tr'));
  const issues = rows.filter(r => !r.classList.contains('members'));
  return {
    shown: issues.filter(r => !r.hidden).map(r => r.getAttribute('data-kind')),
    members: rows.filter(r => r.classList.contains('members') && !r.hidden).length,
    count: document.querySelector('[data-filter-count]').textContent,
    visible: !document.querySelector('form.filters').hidden,
  };
}"""


async def _filter(page_path: Path, choices: list[dict[str, str]]) -> list[dict[str, Any]]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = await browser.new_page()
            await page.goto(page_path.as_uri(), wait_until="load")
            return [await page.evaluate(FILTER, choice) for choice in choices]
        finally:
            await browser.close()


def test_the_findings_page_filters_by_kind_status_software_and_system(demo_site: Path) -> None:
    _require_chromium()
    kinds, software, none, reset = asyncio.run(
        _filter(
            demo_site / "findings.html",
            [
                {"kind": "regression"},
                {"kind": "", "software": "mlperf-inference", "status": "open"},
                {"system": "example-node-8x (example data)"},
                {"kind": "", "software": "", "status": "", "system": ""},
            ],
        )
    )
    assert kinds["visible"] and kinds["shown"] == ["regression"]
    assert kinds["count"] == "1 of 8 shown" and kinds["members"] == 1
    assert sorted(set(software["shown"])) == ["improvement", "scaling_efficiency"]
    assert software["members"] == 0  # the regression's members hide with it
    assert none["shown"] == []
    assert len(reset["shown"]) == 8 and reset["members"] == 1


SORT = """async () => {
  const header = document.querySelectorAll('#findings-table thead th')[3];
  const order = [];
  for (const _ of [1, 2]) {
    header.click();
    const rows = Array.from(document.querySelectorAll('#findings-table > tbody > tr'));
    const at = rows.findIndex(r => r.classList.contains('members'));
    order.push({
      kind: rows[at - 1].getAttribute('data-kind'),
      first: rows[0].getAttribute('data-kind'),
    });
  }
  return order;
}"""


def test_sorting_keeps_an_issues_members_under_it(demo_site: Path) -> None:
    _require_chromium()

    async def sort() -> list[dict[str, str]]:
        from playwright.async_api import async_playwright

        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = await browser.new_page()
                await page.goto((demo_site / "findings.html").as_uri(), wait_until="load")
                found: list[dict[str, str]] = await page.evaluate(SORT)
                return found
            finally:
                await browser.close()

    ascending, descending = asyncio.run(sort())
    assert ascending["kind"] == descending["kind"] == "regression"
    assert ascending["first"] != descending["first"]
