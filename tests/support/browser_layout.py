"""Every page of a site measured in Chromium at several viewports, in parallel tabs.

The measurements are the layout tests' (:data:`tests.report.test_report_layout.MEASURE`):
the page's width against its scroll width, each chart's legend entries and
whether its axis titles lie inside it, the comparison tables' key columns, the
overview's first sentence. Pages are shared out among :data:`TABS` tabs per
viewport, each in a browser context of its own (a renderer process of its own,
plotly.js kept compiled from page to page), as the browser tests do.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.report.test_report_browser import CHROMIUM, CHROMIUM_ARGS, TABS
from tests.report.test_report_layout import MEASURE

Measured = dict[tuple[int, str], dict[str, Any]]
"""(viewport width, page path relative to the site) → what :data:`MEASURE` found."""


async def measure_site(
    site: Path,
    viewports: Sequence[tuple[int, int]],
    *,
    pages: Sequence[Path] | None = None,
    tabs: int = TABS,
) -> Measured:
    """Each of ``pages`` (default: every ``*.html`` page of ``site``) at each of ``viewports``."""
    from playwright.async_api import async_playwright

    pages = sorted(site.rglob("*.html")) if pages is None else list(pages)
    queue = deque((viewport, path) for viewport in viewports for path in pages)
    found: Measured = {}

    async def tab(browser: Any, viewport: tuple[int, int]) -> None:
        width, height = viewport
        context = await browser.new_context(viewport={"width": width, "height": height})
        try:
            page = await context.new_page()
            while queue and queue[0][0] == viewport:
                _viewport, path = queue.popleft()
                await page.goto(path.as_uri(), wait_until="load")
                if await page.locator(".chart").count():
                    await page.wait_for_selector("html[data-charts=drawn]", timeout=20_000)
                found[(width, str(path.relative_to(site)))] = await page.evaluate(MEASURE)
        finally:
            await context.close()

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            for viewport in viewports:
                await asyncio.gather(*(tab(browser, viewport) for _ in range(tabs)))
        finally:
            await browser.close()
    return found


MAX_LEGEND = 12
"""Legend entries of one chart at most: more cannot be told apart."""


def wide_tables(measured: Measured, width: int) -> list[tuple[str, str, int, int]]:
    """(page, table class, table width, container width) of each table wider than its
    container at ``width``."""
    return [
        (page, t["className"], t["width"], t["container"])
        for (w, page), m in sorted(measured.items())
        if w == width
        for t in m["tables"]
        if t["wide"]
    ]


def layout_problems(measured: Measured, *, strict_width: int = 1400) -> dict[str, list[Any]]:
    """What a person would see wrong, by kind (empty lists: nothing):

    * a table wider than its container at ``strict_width`` (tables fit a wide screen), or
      at any width without a visible scroll cue above it;
    * text cut in a cell (its content wider than the cell);
    * a chart with more than :data:`MAX_LEGEND` legend entries, or an entry cut by the
      chart's edge;
    * an axis title over the axis' tick labels, or cut by the chart's edge;
    * minor-tick labels (2 … 9) on a log axis.
    """
    problems: dict[str, list[Any]] = {
        "wide table": wide_tables(measured, strict_width),
        "scrolls without a cue": [],
        "cut cell": [],
        "too many legend entries": [],
        "legend entry cut": [],
        "axis title over ticks": [],
        "axis title cut": [],
        "minor tick labels": [],
    }
    for (width, page), m in sorted(measured.items()):
        where = (width, page)
        for t in m["tables"]:
            if t["wide"] and not t["cued"]:
                problems["scrolls without a cue"].append((*where, t["className"]))
            problems["cut cell"] += [(*where, text) for text in t["cut"]]
        for c in m["charts"]:
            if len(c["legend"]) > MAX_LEGEND:
                problems["too many legend entries"].append((*where, c["id"], len(c["legend"])))
            problems["legend entry cut"] += [
                (*where, c["id"], e["text"]) for e in c["entries"] if not e["inside"]
            ]
            for title in c["titles"]:
                if title["overlaps"]:
                    problems["axis title over ticks"].append((*where, c["id"], title["text"]))
                if not title["inside"]:
                    problems["axis title cut"].append((*where, c["id"], title["text"]))
            if c["log"] and c["minorLabels"]:
                problems["minor tick labels"].append((*where, c["id"], c["minorLabels"]))
    return problems
