"""Comparison pages and the overview's cards count issues, as the headline and the gate do.

The demo (``tracker demo``) plants one −8% regression that shows in 11 series
(a sweep's points, the per-accelerator form, the series at the interactivity
target): every count of the newest pair reads "1 regression", never "11". The
MLPerf pair whose gate fails on scaling counts its scaling warning beside the
measured issues, in words (both efficiencies and the floor), and says it has no
p-values rather than "a BH family of 0 p-values".
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tracker.report.filters import format_verdict_count

NEWEST_PAIR = (
    "1.2.0 against 1.1.0: 1 regression (example-llm-70b isl1024-osl1024, \N{MINUS SIGN}8.0%),"
    " 2 improvements; 2 unchanged"
)
ISSUE_CHIPS = [
    "1 regression",
    "0 suspect changes",
    "2 improvements",
    "0 inconclusive",
    "0 configuration changed",
    "2 unchanged",
]


def _text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def _chips(page: str) -> list[list[str]]:
    """The verdict chips of each count list on the page, in order."""
    lists = re.findall(r'<ul class="verdicts">(.*?)</ul>', page, flags=re.S)
    return [[_text(li) for li in re.findall(r"<li[^>]*>(.*?)</li>", ul, re.S)] for ul in lists]


def _page(site: Path, prefix: str) -> str:
    (path,) = sorted(site.glob(f"compare/{prefix}-*.html"))
    return path.read_text(encoding="utf-8")


def test_newest_pair_page_counts_the_planted_regression_once(demo_site: Path) -> None:
    page = _page(demo_site, "example-serving-stack-1-1-0-1-2-0")
    (headline,) = re.findall(r'<p class="headline">(.*?)</p>', page, flags=re.S)
    assert _text(headline) == NEWEST_PAIR
    assert _chips(page) == [ISSUE_CHIPS]
    text = _text(page)
    assert (
        "Issues among 25 series: one cause (a sweep's points, the per-accelerator form, the"
        " interactivity target) counts once, as in the gate; at the interactivity target:"
        " 1 regression, 1 unchanged." in text
    )
    assert "11 regression" not in text


def test_overview_cards_count_issues_like_the_headline(demo_site: Path) -> None:
    page = (demo_site / "index.html").read_text(encoding="utf-8")
    first_headline = re.search(r'<p class="headline">(.*?)</p>', page, flags=re.S)
    assert first_headline is not None
    assert _text(first_headline[1]) == f"example-serving-stack: {NEWEST_PAIR}"
    chips = _chips(page)
    # The newest pair first; then newest vs first and the older pair; then MLPerf's pair.
    assert chips[0] == ISSUE_CHIPS
    assert len(chips) == 4
    assert chips[3][-1] == "1 scaling warning"
    assert "11 regression" not in _text(page)


def test_scaling_pair_counts_its_warning_beside_the_measured_ones(demo_site: Path) -> None:
    page = _page(demo_site, "mlperf-inference-v5-1-v6-0")
    assert _chips(page) == [
        ["0 regressions", "0 suspect changes", "3 improvements", "0 inconclusive"]
        + ["0 configuration changed", "1 unchanged", "1 scaling warning"]
    ]
    text = _text(page)
    assert "v6.0 against v5.1: 1 scaling warning, 3 improvements; 1 unchanged" in text
    # Under the floor and fallen since v5.1: one warning with both efficiencies and the floor.
    assert "8 \N{RIGHTWARDS ARROW} 32 accelerators" in text
    assert "E 0.97 \N{RIGHTWARDS ARROW} 0.84 (floor 0.90)" in text
    assert text.count("Efficiency drop") == 1 and "Efficiency below floor" not in text
    assert "no p-values in this pair" in text
    assert "family of 0" not in text


def test_overview_lists_one_scaling_warning_per_group(demo_site: Path) -> None:
    text = _text((demo_site / "index.html").read_text(encoding="utf-8"))
    assert "1 scaling warning (one per group and size step); all on the scaling page." in text
    # The scaling list names it once; the open findings list both, as `tracker findings`.
    warnings = text.split("Scaling-efficiency warnings")[1]
    assert warnings.count("E 0.97 \N{RIGHTWARDS ARROW} 0.84 (floor 0.90)") == 1
    assert "E 0.84 (floor 0.90)" not in warnings


@pytest.mark.parametrize(
    ("count", "verdict", "words"),
    [
        (1, "regression", "1 regression"),
        (11, "regression", "11 regressions"),
        (2, "suspect", "2 suspect changes"),
        (0, "improvement", "0 improvements"),
        (3, "inconclusive", "3 inconclusive"),
        (1, "no_change", "1 unchanged"),
        (2, "scaling_efficiency", "2 scaling warnings"),
        (1, "scaling_efficiency", "1 scaling warning"),
    ],
)
def test_verdict_counts_read_as_words(count: int, verdict: str, words: str) -> None:
    assert format_verdict_count(count, verdict) == words
