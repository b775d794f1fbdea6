"""`tracker report` uses the settings of the stored analysis, or its own options, and says so.

The demo's serving data (AIPerf sweeps of an example stack on 4 accelerators,
three versions × two workloads × three trials) is ingested through the CLI;
`tracker analyze --target-tokens-per-s-per-user 30 --price-book ...` stores its
settings with its findings, and `tracker report` reads them back: the serving
page reads the sweeps at 30 tokens/s/user and shows the cost per 1M input,
output and total tokens of every version, equal to what `tracker analyze`
printed. Options of `tracker report` override the stored settings and are
named; with no stored analysis the report uses the defaults and says so.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunTracker
from tracker.demo import ACCELERATORS, SERVING_VERSIONS, SERVING_WORKLOADS, write_serving_data
from tracker.report.filters import format_usd

SYSTEM = "example-node-4x (example data)"
PRICE_PER_HOUR = 4.0
TRIALS_PRICED = len(SERVING_VERSIONS) * len(SERVING_WORKLOADS) * 3
ANALYZE_COST = re.compile(
    rf"^Cost per 1M output tokens: {TRIALS_PRICED} of {TRIALS_PRICED} sweeps priced; "
    r"\$(?P<low>[0-9.,]+)-\$(?P<high>[0-9.,]+) at the target, ",
    re.MULTILINE,
)
STORED = r"those of the analysis stored \d{4}-\d\d-\d\d \d\d:\d\d UTC"


def _ok(run_tracker: RunTracker, url: str, *args: str) -> str:
    result = run_tracker(["--database-url", url, *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _ingest_serving(run_tracker: RunTracker, url: str, root: Path) -> None:
    write_serving_data(root, seed=1234)
    for version in SERVING_VERSIONS:
        for workload in SERVING_WORKLOADS:
            _ok(
                run_tracker,
                url,
                "ingest",
                str(root / "serving" / version / workload.name),
                "--kind=aiperf",
                "--software=example-serving-stack",
                f"--software-version={version}",
                f"--system={SYSTEM}",
                f"--accelerators={ACCELERATORS}",
                "--benchmark=example-llm-70b",
            )


def _price_book(path: Path, price: float) -> Path:
    path.write_text(f'"{SYSTEM}" = {price}\n"NVIDIA B200-SXM-180GB" = 6.25\n', "utf-8")
    return path


def _text(path: Path) -> str:
    """The page's words as a person reads them (scripts and tags left out)."""
    page = re.sub(r"<script.*?</script>", " ", path.read_text("utf-8"), flags=re.DOTALL)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _rows(site: Path) -> list[dict[str, Any]]:
    """Every version row of every serving curve (report.json), with its curve's title."""
    serving = json.loads((site / "report.json").read_text("utf-8"))["serving"]
    return [{**row, "curve": c["title"]} for c in serving["curves"] for row in c["rows"]]


def _cost_cells(site: Path) -> list[str]:
    """The text of every cost cell of the serving page, in order."""
    page = (site / "serving.html").read_text("utf-8")
    cells = re.findall(r'<td class="value cost"[^>]*>(.*?)</td>', page, flags=re.DOTALL)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split()) for c in cells]


def _usd(price: float, tokens_per_s: float) -> float:
    return price * ACCELERATORS / (tokens_per_s * 3600.0) * 1e6


def test_report_reads_the_stored_target_and_prices_the_versions_as_analyze_did(
    run_tracker: RunTracker, database_url: str, tmp_path: Path
) -> None:
    _ingest_serving(run_tracker, database_url, tmp_path / "data")
    book = _price_book(tmp_path / "prices.toml", PRICE_PER_HOUR)
    analysed = _ok(
        run_tracker,
        database_url,
        "analyze",
        "--target-tokens-per-s-per-user",
        "30",
        "--price-book",
        str(book),
    )
    printed = ANALYZE_COST.search(analysed)
    assert printed is not None, analysed
    site = tmp_path / "site"
    lines = _ok(run_tracker, database_url, "report", "--out", str(site)).splitlines()
    assert re.fullmatch(
        rf"Settings: {STORED}: target 30 tokens/s/user, efficiency floor 0.9, "
        rf"price book {re.escape(str(book))}",
        lines[0],
    ), lines[0]

    text = _text(site / "serving.html")
    assert "the throughput read off the front at the target of 30 tokens/s/user" in text
    assert re.search(r"The settings of the analysis stored \S+Z \( tracker analyze \)\.", text)
    assert "Interactivity target: 30 tokens/s/user" in text
    assert "example-node-4x (example data) $4/h" in text
    assert "target of 50" not in text and "50 tokens/s/user" not in text
    # the cheapest and dearest sweeps tracker analyze printed, as the page shows them
    cells = _cost_cells(site)
    assert any(f"${printed['low']}" in c for c in cells), cells
    assert any(f"${printed['high']}" in c for c in cells), cells

    rows = _rows(site)
    assert len(rows) == len(SERVING_VERSIONS) * len(SERVING_WORKLOADS)
    assert format_usd(min(r["cost"]["output_usd_min"] for r in rows)) == f"${printed['low']}"
    assert format_usd(max(r["cost"]["output_usd_max"] for r in rows)) == f"${printed['high']}"
    lengths = {w.name: w.isl / w.osl for w in SERVING_WORKLOADS}
    for row in rows:
        cost = row["cost"]
        assert cost["priced"] == 3 and cost["note"] == ""
        # 3 trials: the median cost is the cost of the median throughput
        assert cost["output_usd"] == pytest.approx(_usd(PRICE_PER_HOUR, row["system_at_target"]))
        ratio = lengths["chat"] if "isl1024-osl1024" in row["curve"] else lengths["agentic"]
        assert cost["input_usd"] == pytest.approx(cost["output_usd"] / ratio)
        assert cost["total_usd"] == pytest.approx(cost["output_usd"] / (1.0 + ratio))
    overview = _text(site / "index.html")
    assert "Interactivity target: 30 tokens/s/user" in overview
    assert "Cost per 1M input, output and total tokens at the target, per version" in overview


def test_report_options_override_the_stored_settings_and_are_named(
    run_tracker: RunTracker, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    _ingest_serving(run_tracker, url, tmp_path / "data")
    book = _price_book(tmp_path / "prices.toml", PRICE_PER_HOUR)
    _ok(
        run_tracker,
        url,
        "analyze",
        "--target-tokens-per-s-per-user",
        "30",
        "--price-book",
        str(book),
    )
    dearer = _price_book(tmp_path / "dearer.toml", 8.0)
    site = tmp_path / "site"
    args = ["report", "--out", str(site), "--target-tokens-per-s-per-user", "40"]
    lines = _ok(run_tracker, url, *args, "--price-book", str(dearer)).splitlines()
    assert re.fullmatch(
        rf"Settings: {STORED}, overridden by --target-tokens-per-s-per-user, --price-book: "
        rf"target 40 tokens/s/user, efficiency floor 0.9, price book {re.escape(str(dearer))}",
        lines[0],
    ), lines[0]
    text = _text(site / "serving.html")
    assert "at the target of 40 tokens/s/user" in text
    assert "overridden by this report's --target-tokens-per-s-per-user , --price-book ." in text
    assert "Interactivity target: 40 tokens/s/user this report's option" in text
    assert (
        f"Price book: {dearer} this report's option (example-node-4x (example data) $8/h;" in text
    )
    for row in _rows(site):
        assert row["cost"]["output_usd"] == pytest.approx(_usd(8.0, row["system_at_target"]))

    # a price book that does not cover the system: the versions say why there is no cost
    other = tmp_path / "other.toml"
    other.write_text('"NVIDIA H200-SXM-141GB" = 3.8\n', "utf-8")
    _ok(run_tracker, url, "report", "--out", str(site), "--price-book", str(other))
    cells = _cost_cells(site)
    assert cells.count("no cost: 'example-node-4x (example data)' is not in the price book") == 6
    assert "at the target of 30 tokens/s/user" in _text(site / "serving.html")  # stored again


def test_a_report_without_a_stored_analysis_uses_the_defaults_and_says_so(
    run_tracker: RunTracker, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    _ingest_serving(run_tracker, url, tmp_path / "data")
    site = tmp_path / "site"
    lines = _ok(run_tracker, url, "report", "--out", str(site)).splitlines()
    assert lines[0] == (
        "Settings: no stored analysis, the defaults: target 50 tokens/s/user, "
        "efficiency floor 0.9, no price book"
    )
    text = _text(site / "serving.html")
    assert "at the target of 50 tokens/s/user" in text
    assert (
        "No stored analysis: the defaults ( tracker analyze stores its settings with its "
        "findings)." in text
    )
    assert "Price book: none, so no costs ( --price-book )" in text
    assert "$/1M" not in text and _cost_cells(site) == []
    assert all(row["cost"] is None for row in _rows(site))
