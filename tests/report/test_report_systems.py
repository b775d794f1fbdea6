"""Systems are told apart by identity (submitter and name), not by name, in the store's
points and in the report: the real MLPerf Inference v5.1 round has NVIDIA's and the
University of Florida's "B200-SXM-180GBx8_TRT"."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tracker.ingest.run import ingest_source
from tracker.records.results import SourceSpec
from tracker.report.publish import publish_report
from tracker.store.facade import Store

NAME = "B200-SXM-180GBx8_TRT"
KEYS = {f"NVIDIA/{NAME}", f"University-of-Florida/{NAME}"}


@pytest.fixture
def v51(store: Store, shared_data: Path) -> Store:
    ingest_source(store, SourceSpec(str(shared_data / "mlperf-inference" / "v5.1")))
    return store


@pytest.mark.parametrize("order", ["benchmark", "system"])
def test_points_keep_systems_of_one_name_apart(v51: Store, order: str) -> None:
    points = [p for p in v51.iter_series_points(order=order, batch_size=7) if p.system == NAME]
    assert {p.system_key for p in points} == KEYS
    series = [(p.system_key, p.benchmark, p.scenario, p.workload, p.metric) for p in points]
    assert len(series) == len(set(series)), "one point per series and version"


def test_points_come_grouped_as_asked(v51: Store) -> None:
    for order, key in (
        ("benchmark", lambda p: (p.benchmark, p.scenario)),
        ("system", lambda p: p.system_key),
    ):
        seen: list[object] = []
        for point in v51.iter_series_points(order=order, batch_size=3):
            if not seen or seen[-1] != key(point):
                assert key(point) not in seen, f"{order}: group {key(point)} split"
                seen.append(key(point))
    with pytest.raises(ValueError):
        list(v51.iter_series_points(order="software"))


def test_the_report_shows_two_systems_each_with_its_submitter(v51: Store, tmp_path: Path) -> None:
    site = tmp_path / "site"  # tmp_path holds the database: no report goes there
    publish_report(v51, site, generated_at="now")
    report = json.loads((site / "report.json").read_text(encoding="utf-8"))
    titles = sorted(t for t in report["pages"]["systems"].values() if t.startswith(NAME))
    assert titles == [f"{NAME} (NVIDIA)", f"{NAME} (University-of-Florida)"]
    rows = list(csv.DictReader(io.StringIO((site / "results.csv").read_text("utf-8"))))
    submitters = {r["submitter"] for r in rows if r["system"] == NAME}
    assert submitters == {"NVIDIA", "University-of-Florida"}
    pages = [
        (site / href).read_text(encoding="utf-8")
        for href, title in report["pages"]["systems"].items()
        if title.startswith(NAME)
    ]
    nvidia, florida = sorted(pages, key=lambda html: "University-of-Florida" in html)
    assert f"{NAME} (NVIDIA)" in nvidia and "University-of-Florida" not in nvidia
    assert f"{NAME} (University-of-Florida)" in florida
    count = {r["submitter"]: 0 for r in rows if r["system"] == NAME}
    for r in rows:
        if r["system"] == NAME:
            count[r["submitter"]] += 1
    # The system page's results table: a row per benchmark and scenario it ran (one metric).
    results = nvidia[nvidia.index('<table class="series">') :]
    assert results.count('<tr><th scope="row">') == count["NVIDIA"]
