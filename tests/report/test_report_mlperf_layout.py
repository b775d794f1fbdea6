"""The report of the shared MLPerf rounds as a person sees it (issues #17 and #13).

One site, built once for the module through the command line: the v5.1, v6.0
and v6.1 rounds with v6.1's whole results table (492 rows, about a hundred
systems), analysed and rendered. In Chromium at 1400 × 900 and at 390 × 844,
on every page but the system and benchmark pages, and on the :data:`SAMPLED`
system and benchmark pages of the longest names and the most results (the others
are alike, made by the same template, and each costs charts): nothing wider than
the page makes it scroll sideways (tables scroll inside their own box), the key
columns of comparison and platform tables are visible at 1400 px, every chart
shows each legend entry once and no axis title is cut off. Then what the new
pages say: each round's platforms ranked per accelerator with the figures
``tracker compare`` prints (Vera Rubin NVL72 2.57× NVIDIA's GB300 NVL72 x72 on
deepseek-r1 Interactive), linked from the overview and the navigation, and the
benchmark pages' per-accelerator charts.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.report.test_report_browser import _require_chromium
from tests.report.test_report_layout import VIEWPORTS
from tests.support.browser_layout import Measured, measure_site
from tracker.cli import cli

ROUNDS = ("v5.1", "v6.0", "v6.1", "v6.1/summary.json")
VR = "VR-NVL72_VR-288GB_aarch64x72_TRT"
GB300 = "GB300-NVL72_GB300-288GB_aarch64x72_TRT (NVIDIA)"


def _tracker(url: str, *args: str) -> None:
    result = CliRunner().invoke(cli, ["--database-url", url, *args])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def site(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("mlperf-site")
    url = f"sqlite:///{work / 'tracker.db'}"
    rounds = shared_data / "mlperf-inference"
    _tracker(url, "ingest", *(str(rounds / r) for r in ROUNDS))
    _tracker(url, "analyze")
    _tracker(url, "report", "--out", str(work / "site"))
    return work / "site"


SAMPLED = {"system": 8, "benchmark": 12}
"""Pages of these folders checked: half with the longest headings, half the largest files."""


def _heading(page: Path) -> str:
    found = re.search(r"<h1>(.*?)</h1>", page.read_text(encoding="utf-8"))
    return found[1] if found else ""


def checked_pages(site: Path) -> list[Path]:
    """Every page but the system and benchmark pages, and of those the ones with the
    longest names and with the most content (largest files)."""
    pages = sorted(site.rglob("*.html"))
    chosen: set[Path] = set()
    for folder, count in SAMPLED.items():
        alike = [p for p in pages if p.parent.name == folder]
        longest = sorted(alike, key=lambda p: (-len(_heading(p)), p))
        largest = sorted(alike, key=lambda p: (-p.stat().st_size, p))
        chosen |= set(longest[: count // 2]) | set(largest[: count // 2])
    return [p for p in pages if p.parent.name not in SAMPLED or p in chosen]


@pytest.fixture(scope="module")
def measured(site: Path) -> Measured:
    _require_chromium()
    return asyncio.run(measure_site(site, VIEWPORTS, pages=checked_pages(site)))


def _text(path: Path) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", path.read_text("utf-8"))).split())


def _platform_page(site: Path, round_label: str) -> Path:
    report = json.loads((site / "report.json").read_text(encoding="utf-8"))
    pages = report["pages"]["platforms"]
    (href,) = [h for h, shown in pages.items() if shown == round_label]
    return site / href


def test_no_page_of_the_rounds_scrolls_sideways(site: Path, measured: Measured) -> None:
    pages = checked_pages(site)
    assert len(pages) >= 30 and len(measured) == 2 * len(pages)
    wide = {key: m["scrollWidth"] for key, m in measured.items() if m["scrollWidth"] > m["width"]}
    assert not wide


def test_every_legend_entry_of_the_rounds_is_shown_once(measured: Measured) -> None:
    charts = [(key, c) for key, m in measured.items() for c in m["charts"]]
    assert len(charts) > 80, len(charts)
    repeated = {
        (key, c["id"]): c["legend"]
        for key, c in charts
        if len(set(c["legend"])) != len(c["legend"])
    }
    assert not repeated


def test_no_axis_title_of_the_rounds_is_cut_off(measured: Measured) -> None:
    titles = [
        (key, c["id"], t) for key, m in measured.items() for c in m["charts"] for t in c["titles"]
    ]
    assert len(titles) > 150, len(titles)
    clipped = [(key, chart, t["text"]) for key, chart, t in titles if not t["inside"]]
    assert not clipped


PLATFORM_KEYS = """() => Array.from(document.querySelectorAll('table.platforms'), table =>
  Array.from(table.querySelectorAll('thead th')).slice(0, 4).map(th => ({
    text: th.textContent, right: th.getBoundingClientRect().right})))"""


def test_key_columns_of_the_rounds_are_visible_at_1400(site: Path, measured: Measured) -> None:
    compared = [m for (w, name), m in measured.items() if w == 1400 and m["keys"]]
    assert compared
    for m in compared:
        assert [k["text"] for k in m["keys"]] == ["Verdict", "Series", "Δ", "CI of Δ"]
        assert all(k["right"] <= m["width"] for k in m["keys"])

    async def keys() -> Any:
        from playwright.async_api import async_playwright

        from tests.report.test_report_browser import CHROMIUM, CHROMIUM_ARGS

        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 900})
                await page.goto(_platform_page(site, "v6.1").as_uri(), wait_until="load")
                return await page.evaluate(PLATFORM_KEYS)
            finally:
                await browser.close()

    tables = asyncio.run(keys())
    assert len(tables) > 10
    for columns in tables:
        texts = [c["text"] for c in columns]
        assert texts == ["Rank", "System", "Per accelerator", "Ratio to the best"]
        assert all(c["right"] <= 1400 for c in columns)


def test_each_round_ranks_its_platforms_per_accelerator(site: Path) -> None:
    text = _text(_platform_page(site, "v6.1"))
    case = text[text.index("deepseek-r1 · Interactive tokens_per_s, tokens/s per accelerator") :]
    case = case[: case.index(" · ", 80)]
    assert f"reference {VR}" in case
    # Vera Rubin NVL72 is a preview system, and the page says so beside its name
    assert (
        f"1 {VR} preview 72 × NVIDIA Vera Rubin 9,066 tokens/s 1× reference 652,750 tokens/s"
        in case
    )
    # tracker compare: Vera Rubin is 2.57× GB300 NVL72 x72 per accelerator (table rows 324/306).
    row = re.search(
        rf"{re.escape(GB300)} 72 × NVIDIA GB300 [\d,]+ tokens/s ([\d.]+)× ([\d,]+) ", case
    )
    assert row is not None, case
    assert row[1] == "0.388" and f"{652_750 / float(row[2].replace(',', '')):.3g}" == "2.57"
    index = (site / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="(platforms/[^"]+)">([^<]+)</a>', index)
    assert [shown for _href, shown in links] == ["v5.1", "v6.0", "v6.1"]
    assert all((site / href).is_file() for href, _shown in links)
    assert 'href="../index.html#platforms">Platforms</a>' in _platform_page(site, "v6.0").read_text(
        "utf-8"
    )


def _figures(path: Path) -> list[dict[str, Any]]:
    found = re.findall(r"data-figure='([^']*)'", path.read_text(encoding="utf-8"))
    return [json.loads(html.unescape(f)) for f in found]


def test_benchmark_pages_chart_each_system_per_accelerator(site: Path) -> None:
    page = next(p for p in (site / "benchmark").glob("deepseek-r1-interactive-*.html"))
    charts = [
        f
        for f in _figures(page)
        if "per accelerator" in f["layout"]["yaxis"]["title"]["text"]
        or "per accelerator" in f["layout"]["xaxis"]["title"]["text"]
    ]
    (chart,) = charts
    # A line joins one system's results across rounds: only systems in two rounds or more
    # are lines (Vera Rubin, new in v6.1, is not: it is ranked in the table above).
    lines = {t["name"]: t for t in chart["data"] if t["type"] == "scatter"}
    assert lines and f"{VR} · 72 accelerators" not in lines
    assert all(sum(y is not None for y in t["y"]) >= 2 for t in lines.values())
    text = _text(page)
    ranked = text[text.index("Ranked: mlperf-inference v6.1") :]
    # 652,750 tokens/s ÷ 72 per accelerator, first of the round.
    assert re.search(rf"1 {VR} preview NVIDIA · 72 × NVIDIA Vera Rubin 652,750 9,066 ", ranked)
    assert "Per accelerator" in _text(page)


def _gains_section(site: Path) -> str:
    text = _text(site / "index.html")
    return text[text.index("Software gains and losses") : text.index("Scaling-efficiency warnings")]


def test_the_overview_states_the_gains_from_v5_1_to_v6_0(site: Path) -> None:
    # The v5.1, v6.0 and v6.1 folders: nothing of v6.0 → v6.1 but three series is compared,
    # while four series improved from v5.1 to v6.0 (their newest versions): the overview
    # lists those gains, as `tracker analyze` finds them, and never says nothing was compared.
    url = f"sqlite:///{site.parent / 'tracker.db'}"
    result = CliRunner().invoke(cli, ["--database-url", url, "findings", "--format", "json"])
    found = json.loads(result.stdout)
    improved = [
        f["evidence"]
        for f in found
        if f["kind"] == "improvement"
        and (f["baseline_version"], f["candidate_version"]) == ("v5.1", "v6.0")
    ]
    assert len(improved) == 4
    gains = _gains_section(site)
    assert "No series has" not in gains
    # Each improvement, and the gains under the 5% floor (a verdict of no change) beside them.
    assert gains.count("(mlperf-inference v5.1 → v6.0)") >= len(improved)
    for e in improved:
        gain = e["candidate_level"] / e["baseline_level"]
        assert f"{e['benchmark']} {e['scenario']} · tokens_per_s" in gains
        assert f"{gain:.2f}× (+{100 * (gain - 1):.1f}% better)" in gains
    # Losses are losses as shown: never "no change".
    losses = gains[gains.index("Largest losses") :]
    assert "no change" not in losses
