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
