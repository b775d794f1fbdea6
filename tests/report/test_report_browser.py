"""The report in a real browser: Playwright for Python driving Debian's headless Chromium.

The site is built once per module (real MLPerf rounds, an AIPerf sweep under two
versions, the demo's seeded history and a system with a hostile name; analysed,
findings stored) and every page is opened from ``file://``: no console error, no
failed request, no dialog, every chart container holds a drawn plotly chart, and
every relative link resolves to a file of the site.

Each page costs its renderer a fresh evaluation of the 1.2 MB plotly.js basic
bundle (browsers keep no code cache for ``file://``): the pages are shared
out among a few tabs, each in a browser context of its own (a renderer process
of its own), so every core of the machine draws pages at once (under pytest-xdist, the
cores a worker has to itself: see :data:`TABS`).

Chromium comes from the ``chromium`` Debian package (``.ci/run`` installs it);
Playwright never downloads a browser here. Without ``/usr/bin/chromium`` the
tests skip, except in CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from tests.support.report_site import HOSTILE, build_report_site

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    message = f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def site(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_report_site(shared_data, tmp_path_factory.mktemp("browser"))


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is not None and (tag, name) in {
                ("a", "href"),
                ("link", "href"),
                ("script", "src"),
            }:
                self.targets.append(value)


# Tabs visiting pages at once: one per core this process has to itself, at most four. Alone,
# at least two (one waits on Playwright while the other draws). Under pytest-xdist the
# workers share the cores: each tab is a renderer of its own that compiles plotly.js and
# draws again, about a fifth more CPU for the same pages, which the other workers lack (two
# workers on two cores: one tab each, the suite's wall time shorter).
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
TABS = max(2, min(4, _CORES or 1)) if _WORKERS == 1 else max(1, min(4, (_CORES or 1) // _WORKERS))


class _Tab:
    """One browser tab reused for page after page (V8 keeps plotly.js compiled), with its events."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.failed: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("requestfailed", lambda r: self.failed.append(r.url))
        page.on("response", lambda r: self.failed.append(r.url) if r.status >= 400 else None)
        page.on("dialog", self._on_dialog)

    async def _on_dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        await dialog.dismiss()

    def reset(self) -> None:
        self.errors, self.failed, self.dialogs = [], [], []


async def _visit(tab: _Tab, page_path: Path) -> dict[str, Any]:
    tab.reset()
    await tab.page.goto(page_path.as_uri(), wait_until="load")
    shown = await tab.page.evaluate(
        """() => ({
            charts: Array.from(document.querySelectorAll('.chart'), el => ({
                id: el.id,
                drawn: !!el.querySelector('svg.main-svg') && !!el._fullLayout,
                traces: (el.data || []).length,
            })),
            text: document.body.innerText,
        })"""
    )
    return {
        "errors": tab.errors,
        "failed": tab.failed,
        "dialogs": tab.dialogs,
        "charts": shown["charts"],
        "text": shown["text"],
    }


async def _visit_all(site: Path) -> dict[str, dict[str, Any]]:
    """Every page of ``site``, visited by :data:`TABS` tabs taking pages from one queue."""
    from playwright.async_api import async_playwright

    queue = deque(_pages(site))
    visits: dict[str, dict[str, Any]] = {}

    async def tab_worker(browser: Any) -> None:
        context = await browser.new_context(viewport={"width": 1300, "height": 900})
        try:
            tab = _Tab(await context.new_page())
            while queue:
                path = queue.popleft()
                visits[str(path.relative_to(site))] = await _visit(tab, path)
        finally:
            await context.close()

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            await asyncio.gather(*(tab_worker(browser) for _ in range(TABS)))
        finally:
            await browser.close()
    return dict(sorted(visits.items()))


@pytest.fixture(scope="module")
def visits(site: Path) -> dict[str, dict[str, Any]]:
    _require_chromium()
    return asyncio.run(_visit_all(site))


def test_the_site_has_every_kind_of_page(site: Path) -> None:
    names = {str(p.relative_to(site)) for p in _pages(site)}
    for name in ("index.html", "findings.html", "scaling.html", "serving.html"):
        assert name in names
    for folder in ("benchmark", "system", "compare"):
        assert any(n.startswith(folder + "/") for n in names), folder
    for name in ("report.json", "results.csv", "findings.csv", "static/plotly-basic.min.js"):
        assert (site / name).is_file(), name


def test_every_page_loads_without_console_errors_or_failed_requests(
    visits: dict[str, dict[str, Any]],
) -> None:
    problems = {
        name: (v["errors"], v["failed"]) for name, v in visits.items() if v["errors"] or v["failed"]
    }
    assert not problems
    assert len(visits) > 20


def test_every_chart_container_holds_a_drawn_chart(visits: dict[str, dict[str, Any]]) -> None:
    charts = [(name, c) for name, v in visits.items() for c in v["charts"]]
    assert len(charts) > 30
    undrawn = [(name, c["id"]) for name, c in charts if not c["drawn"] or not c["traces"]]
    assert not undrawn
    for name in ("index.html", "scaling.html", "serving.html"):
        assert visits[name]["charts"], name


def test_every_relative_link_resolves(site: Path) -> None:
    broken = []
    checked = 0
    for page in _pages(site):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for target in parser.targets:
            parts = urlsplit(target)
            assert not parts.scheme and not parts.netloc, f"{page}: absolute link {target}"
            if not parts.path:
                continue
            checked += 1
            if not (page.parent / unquote(parts.path)).resolve().is_file():
                broken.append((str(page.relative_to(site)), target))
    assert not broken
    assert checked > 500


def test_a_hostile_system_name_shows_as_text_and_opens_no_dialog(
    site: Path, visits: dict[str, dict[str, Any]]
) -> None:
    assert not [name for name, v in visits.items() if v["dialogs"]]
    shown = [name for name, v in visits.items() if HOSTILE in v["text"]]
    assert "index.html" in shown
    assert any(name.startswith("system/") for name in shown)
    assert any(name.startswith("benchmark/") for name in shown)
