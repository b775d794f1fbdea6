"""The v6.0 and v6.1 results tables in one database give one report page per canonical
benchmark and scenario (issue #13): v6.1 spells ``llama3_1-8b`` and ``offline`` where
v6.0 spells ``llama3.1-8b`` and ``Offline``."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from tests.support.cli_rows import tracker

TABLES = ("tables/v6.0/summary_results.json", "v6.1/summary.json")


def test_two_rounds_of_tables_give_one_page_per_canonical_benchmark_and_scenario(
    shared_data: Path, tmp_path: Path
) -> None:
    url, cache, site = f"sqlite:///{tmp_path / 'tracker.db'}", tmp_path / "cache", tmp_path / "site"
    tables = [str(shared_data / "mlperf-inference" / table) for table in TABLES]
    assert tracker(url, cache, "ingest", *tables).exit_code == 0
    result = tracker(url, cache, "report", "--out", str(site))
    assert result.exit_code == 0, result.output
    pages = sorted(p.name for p in (site / "benchmark").glob("*.html"))
    names = Counter(re.sub(r"-[0-9a-f]{10}\.html$", "", page) for page in pages)
    assert [name for name, count in names.items() if count > 1] == []
    for name in ("llama3-1-8b-offline", "llama3-1-8b-server", "yolo-95-offline"):
        (page,) = (site / "benchmark").glob(f"{name}-*.html")
        text = page.read_text(encoding="utf-8")
        assert "v6.0" in text and "v6.1" in text, name
