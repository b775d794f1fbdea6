"""The site of the shared rounds with the v6.0 and v6.1 tables as a person sees it (#36).

About a hundred systems per round: the round pages, the overview, the findings,
the platforms and comparison pages, and the benchmark and system pages sampled as
:func:`tests.report.test_report_mlperf_layout.checked_pages` samples them, in
Chromium at 1400 × 900 and 390 × 844. No table is wider than its container at
1400 px (at 390 px one may scroll inside its box, with a visible cue above it), no
text is cut in a cell, no chart has more than 12 legend entries or a legend entry
cut, no axis title lies over its tick labels, no log axis labels its minor ticks,
and the overview's counts are those of ``tracker analyze``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.report.test_report_browser import _require_chromium
from tests.report.test_report_layout import VIEWPORTS
from tests.report.test_report_mlperf_layout import checked_pages
from tests.report.test_report_rounds import analyze_counts
from tests.support.browser_layout import Measured, layout_problems, measure_site, wide_tables
from tests.support.rounds_site import RoundsSite, build_rounds_site


@pytest.fixture(scope="module")
def rounds(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> RoundsSite:
    return build_rounds_site(shared_data, tmp_path_factory.mktemp("round-layout"))


@pytest.fixture(scope="module")
def measured(rounds: RoundsSite) -> Measured:
    _require_chromium()
    return asyncio.run(measure_site(rounds.site, VIEWPORTS, pages=checked_pages(rounds.site)))


def test_the_rounds_site_has_no_layout_problem(rounds: RoundsSite, measured: Measured) -> None:
    pages = {page for _w, page in measured}
    assert any(p.startswith("round/") for p in pages) and len(pages) > 30
    problems = layout_problems(measured)
    assert {kind: found for kind, found in problems.items() if found} == {}


def test_the_rounds_overview_counts_as_tracker_analyze(
    rounds: RoundsSite, measured: Measured
) -> None:
    expected = analyze_counts(rounds.analyze_output)
    for width, _height in VIEWPORTS:
        assert measured[(width, "index.html")]["counts"] == expected


def test_tables_fit_a_wide_screen_and_few_scroll_on_a_phone(measured: Measured) -> None:
    tables = sum(len(m["tables"]) for (w, _p), m in measured.items() if w == 1400)
    assert tables > 100
    assert wide_tables(measured, 1400) == []
    # On a phone the matrices and the wide rankings scroll inside their boxes (with a cue).
    narrow = wide_tables(measured, 390)
    assert len(narrow) < tables
