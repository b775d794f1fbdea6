"""The demo's site as a person sees it, at 1400 × 900 and at 390 × 844 (Chromium).

On every page: nothing wider than the page makes it scroll sideways (tables
scroll inside their own box); every chart shows each legend entry once (one per
version and series: trials share one entry); no axis title is cut off by its
chart's edge. At 1400 px the key columns of the comparison tables (verdict,
series, Δ, CI) are visible without scrolling. The overview starts with one
sentence per software, and the first names the demo's regression. Plus the
pieces behind it: the sentence, the workload of a finding, wrapped axis titles.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.report.test_report_browser import CHROMIUM, CHROMIUM_ARGS, _require_chromium
from tracker.report.charts import wrap_title
from tracker.report.filters import format_pair_family, format_point, format_scaling, format_workload
from tracker.report.pages.overview import headline_text

VIEWPORTS = ((1400, 900), (390, 844))

MEASURE = """() => {
  const width = document.documentElement.clientWidth;
  const rect = el => el.getBoundingClientRect();
  const within = (r, box) => r.left >= box.left - 1 && r.right <= box.right + 1
    && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
  const meets = (a, b) => a.left < b.right - 1 && b.left < a.right - 1
    && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const shown = el => el.getClientRects().length > 0;
  const charts = Array.from(document.querySelectorAll('.chart'), el => {
    const box = rect(el);
    const ticks = {x: [], y: []};
    for (const axis of ['x', 'y']) {
      el.querySelectorAll('.' + axis + 'tick text').forEach(t => {
        if (shown(t) && t.textContent.trim()) ticks[axis].push(rect(t));
      });
    }
    const titles = Array.from(el.querySelectorAll('.g-xtitle text, .g-ytitle text'), t => {
      const r = rect(t);
      const axis = t.closest('.g-xtitle') ? 'x' : 'y';
      return {text: t.textContent, inside: within(r, box),
              overlaps: ticks[axis].some(tick => meets(r, tick))};
    });
    const entries = Array.from(el.querySelectorAll('.legend .traces .legendtext'), t => ({
      text: t.textContent, inside: within(rect(t), box)}));
    const legend = entries.map(e => e.text);
    const lines = Array.from(el.querySelectorAll('.shapelayer text'), t => ({
      text: t.textContent, inside: within(rect(t), box)}));
    const layout = el._fullLayout || {};
    const logAxes = ['x', 'y'].filter(a => layout[a + 'axis'] && layout[a + 'axis'].type === 'log'
      && layout[a + 'axis'].tickmode !== 'array');
    const minorLabels = logAxes.map(a => Array.from(el.querySelectorAll('.' + a + 'tick text'))
      .filter(t => /^[2-9]$/.test(t.textContent.trim())).length).reduce((x, y) => x + y, 0);
    return {id: el.id, titles, legend, entries, lines, minorLabels, log: logAxes.length > 0};
  });
  const tables = Array.from(document.querySelectorAll('main table'), (t, index) => {
    if (!shown(t)) return null;
    const scroller = t.closest('.table-scroll');
    const container = scroller || t.parentElement;
    const wide = t.scrollWidth > container.clientWidth + 1 || rect(t).right > width + 1;
    const cue = scroller ? scroller.firstElementChild : null;
    const cued = !!(scroller && scroller.classList.contains('scrolls') && cue
      && cue.classList.contains('scroll-cue') && shown(cue));
    const cut = Array.from(t.querySelectorAll('td, th'))
      .filter(c => shown(c) && c.scrollWidth > c.clientWidth + 1)
      .map(c => c.textContent.trim().slice(0, 40));
    return {index, className: t.className, wide, cued, cut,
            width: Math.round(t.scrollWidth), container: container.clientWidth};
  }).filter(t => t !== null);
  const keys = Array.from(document.querySelectorAll('table.compare thead th'))
    .slice(0, 4).map(th => ({text: th.textContent, right: th.getBoundingClientRect().right}));
  const headline = document.querySelector('p.headline');
  const counts = {};
  document.querySelectorAll('.analysis-counts [data-count]').forEach(el => {
    counts[el.getAttribute('data-count')] = parseInt(el.textContent.replace(/,/g, ''), 10);
  });
  return {
    width, scrollWidth: document.scrollingElement.scrollWidth, charts, keys, tables, counts,
    headline: headline ? headline.textContent.trim() : null,
  };
}"""


async def _measure_all(site: Path) -> dict[tuple[int, str], dict[str, Any]]:
    from playwright.async_api import async_playwright

    found: dict[tuple[int, str], dict[str, Any]] = {}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            for width, height in VIEWPORTS:
                context = await browser.new_context(viewport={"width": width, "height": height})
                page = await context.new_page()
                for path in sorted(site.rglob("*.html")):
                    await page.goto(path.as_uri(), wait_until="load")
                    if await page.locator(".chart").count():
                        await page.wait_for_selector("html[data-charts=drawn]", timeout=20_000)
                    name = str(path.relative_to(site))
                    found[(width, name)] = await page.evaluate(MEASURE)
                await context.close()
        finally:
            await browser.close()
    return found


@pytest.fixture(scope="module")
def measured(demo_site: Path) -> dict[tuple[int, str], dict[str, Any]]:
    _require_chromium()
    return asyncio.run(_measure_all(demo_site))


def test_no_page_scrolls_sideways(measured: dict[tuple[int, str], dict[str, Any]]) -> None:
    assert len(measured) > 20
    wide = {key: m["scrollWidth"] for key, m in measured.items() if m["scrollWidth"] > m["width"]}
    assert not wide


def test_every_legend_entry_is_shown_once(
    measured: dict[tuple[int, str], dict[str, Any]],
) -> None:
    repeated = {
        (key, c["id"]): c["legend"]
        for key, m in measured.items()
        for c in m["charts"]
        if len(set(c["legend"])) != len(c["legend"])
    }
    assert not repeated
    serving = [
        c for (w, name), m in measured.items() if name == "serving.html" for c in m["charts"]
    ]
    assert serving
    # Three versions, three trials each: one entry per version.
    assert all(len(c["legend"]) in (0, 3) for c in serving), [c["legend"] for c in serving]


def test_no_axis_title_is_cut_off(measured: dict[tuple[int, str], dict[str, Any]]) -> None:
    titles = [
        (key, c["id"], t) for key, m in measured.items() for c in m["charts"] for t in c["titles"]
    ]
    assert len(titles) > 20
    clipped = [(key, chart, t["text"]) for key, chart, t in titles if not t["inside"]]
    assert not clipped


def test_target_and_floor_lines_are_labelled_inside_their_charts(
    measured: dict[tuple[int, str], dict[str, Any]],
) -> None:
    for (width, name), m in measured.items():
        if name not in ("serving.html", "scaling.html"):
            continue
        expected = "target 50 tokens/s/user" if name == "serving.html" else "floor 90.0%"
        labelled = [c for c in m["charts"] if c["lines"]]
        assert labelled, (width, name)
        for chart in labelled:
            assert {t["text"] for t in chart["lines"]} == {expected}, (width, name, chart["id"])
            assert all(t["inside"] for t in chart["lines"]), (width, name, chart["id"])


def test_key_columns_of_comparisons_are_visible_at_1400(
    measured: dict[tuple[int, str], dict[str, Any]],
) -> None:
    pages = [m for (w, name), m in measured.items() if w == 1400 and name.startswith("compare/")]
    assert pages
    for m in pages:
        if not m["keys"]:
            continue
        assert [k["text"] for k in m["keys"]] == ["Verdict", "Series", "Δ", "CI of Δ"]
        assert all(k["right"] <= m["width"] for k in m["keys"])


def test_the_overview_starts_with_the_regression(
    measured: dict[tuple[int, str], dict[str, Any]],
) -> None:
    for width, _height in VIEWPORTS:
        headline = measured[(width, "index.html")]["headline"]
        assert headline is not None
        # One regression, as the gate counts it: 11 series share its cause.
        assert headline == (
            "example-serving-stack: 1.2.0 against 1.1.0: 1 regression"
            " (example-llm-70b isl1024-osl1024, \N{MINUS SIGN}8.0%), 2 improvements; 2 unchanged"
        )


def test_the_headline_names_the_regressions_worst_first() -> None:
    counts = {"regression": 1, "improvement": 2, "no_change": 24}
    text = headline_text(counts, "1.1.0", "1.2.0", [("chat", -8.0)])
    assert (
        text == "1.2.0 against 1.1.0: 1 regression (chat, \N{MINUS SIGN}8.0%), 2 improvements;"
        " 24 unchanged"
    )
    counts = {"regression": 5, "improvement": 0, "no_change": 3, "inconclusive": 1, "suspect": 1}
    worst = [("a", -9.0), ("b", -7.0), ("c", -6.0), ("d", -5.5)]
    text = headline_text(counts, "1", "2", worst)
    assert text.startswith("2 against 1: 5 regressions (a, \N{MINUS SIGN}9.0%, b, ")
    assert "and 1 more), 1 suspect change, 0 improvements; 3 unchanged, 1 inconclusive" in text
    assert (
        headline_text({"no_change": 4}, "1", "2", []) == "2 against 1: 0 improvements; 4 unchanged"
    )


def test_a_finding_names_its_workload_and_point() -> None:
    key = "sw|/node|llm|concurrency|isl1024-osl1024/c4|tps"
    assert format_workload(key) == "isl1024-osl1024"
    assert format_point(key) == "concurrency 4"
    assert format_workload("sw|/node|resnet50|Offline||samples_per_s") == ""
    assert format_point("sw|/node|resnet50|Offline||samples_per_s") == ""
    assert format_workload("sw|/n|llm|Server|llama2/99|m") == "llama2/99"
    scaling = "mlperf|ExampleCorp|Accel Y|llm|Offline||qps|closed stack|x8->x32"
    assert format_workload(scaling) == ""
    assert format_point(scaling) == "8 \N{RIGHTWARDS ARROW} 32 accelerators"
    target = "tps at 50 tokens/s/user"
    assert format_point(f"sw|/n|llm|concurrency|isl|{target}", target) == "at 50 tokens/s/user"


def test_scaling_findings_read_as_efficiencies_and_floor() -> None:
    assert format_scaling(0.9699982, 0.84, 0.9) == "E 0.97 \N{RIGHTWARDS ARROW} 0.84 (floor 0.90)"
    assert format_scaling(None, 0.84, 0.9) == "E 0.84 (floor 0.90)"
    assert format_pair_family(0, 0.05) == "no p-values in this pair"
    assert format_pair_family(25, 0.05).endswith(
        "over 25 one-sided p-values in each direction, confirmed when q < 0.05"
    )


def test_axis_titles_wrap_and_stay_escaped() -> None:
    assert wrap_title("tokens/s/user (mean of per-request 1/TPOT); → more interactive") == (
        "tokens/s/user (mean of<br>per-request 1/TPOT); → more<br>interactive"
    )
    wrapped = wrap_title("<b>x</b> & a very long name that goes on and on")
    assert "<b>" not in wrapped and "&lt;b&gt;x&lt;/b&gt; &amp;" in wrapped
    assert wrap_title("short") == "short"


def test_the_demo_has_no_layout_problem(measured: dict[tuple[int, str], dict[str, Any]]) -> None:
    # Tables fit at 1400 px (at 390 px one scrolls inside its box under a visible cue),
    # no text cut in a cell, legends of 12 entries at most and none cut, axis titles clear
    # of their tick labels, log axes without minor-tick labels.
    from tests.support.browser_layout import layout_problems

    problems = layout_problems(measured)
    assert {kind: found for kind, found in problems.items() if found} == {}


def test_the_demo_overview_counts_as_tracker_analyze(
    demo_site: Path, measured: dict[tuple[int, str], dict[str, Any]]
) -> None:
    from tests.report.test_report_rounds import analyze_counts
    from tests.support.rounds_site import tracker

    url = f"sqlite:///{demo_site.parent / 'demo.db'}"
    expected = analyze_counts(tracker(url, "analyze"))
    assert expected["compared"] > 20
    for width, _height in VIEWPORTS:
        assert measured[(width, "index.html")]["counts"] == expected


def test_pages_of_absent_kinds_of_data_are_not_linked(demo_site: Path) -> None:
    # The demo has no MLPerf Training results: no page links the Training page; it has
    # serving sweeps, scaling groups and MLPerf rounds, which the navigation links.
    pages = sorted(demo_site.rglob("*.html"))
    assert pages and not any('href="training.html"' in p.read_text("utf-8") for p in pages)
    assert not any('href="../training.html"' in p.read_text("utf-8") for p in pages)
    index = (demo_site / "index.html").read_text(encoding="utf-8")
    nav = index[index.index('<nav class="site-nav">') : index.index("</nav>")]
    for linked in ("serving.html", "scaling.html", "round/v6-0-"):
        assert f'href="{linked}' in nav, linked
