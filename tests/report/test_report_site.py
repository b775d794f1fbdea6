"""The report site: slugs, page contexts, paging, report.json (golden), CSV and escaping."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.field_docs import field_docs
from tracker.analyze.run import run_analysis
from tracker.demo import DEMO_JOB, write_demo_data, write_mlperf_rounds, write_serving_data
from tracker.ingest.run import ingest_source, read_job
from tracker.paths import jobs_dir
from tracker.report import render_site
from tracker.report.charts import Chart
from tracker.report.common import (
    FindingRow,
    PageLink,
    Pager,
    SystemName,
    SystemNames,
    benchmark_href,
    page_href,
    paginate,
    slug,
    system_href,
)
from tracker.report.filters import chart_attribute, chart_json
from tracker.report.pages.compare import ComparePage, CompareRow, PairSummary, VerdictCount
from tracker.report.pages.findings import (
    FindingsPage,
    ScalingGroupSummary,
    ScalingPage,
    ScalingPanel,
    ScalingRow,
    StatusCount,
)
from tracker.report.pages.overview import CompareSummary, GainRow, OverviewPage, SoftwareSummary
from tracker.report.pages.series import BenchmarkPage, SystemPage
from tracker.report.pages.serving import ServingCurve, ServingPage, ServingRow
from tracker.report.publish import gather_report_input, publish_report, version_pairs
from tracker.report.render import MANIFEST, MANIFEST_HEADER
from tracker.store.facade import Store

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "report.json"
GOLDEN_CSV = ("comparisons.csv", "findings.csv")
"""Rows that report.json leaves to the CSV files, compared as well."""
GENERATED_AT = "2026-01-02T03:04:05Z"
HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"

PAGE_CLASSES = [
    BenchmarkPage,
    Chart,
    ComparePage,
    CompareRow,
    CompareSummary,
    FindingRow,
    FindingsPage,
    GainRow,
    OverviewPage,
    PageLink,
    Pager,
    PairSummary,
    ScalingGroupSummary,
    ScalingPage,
    ScalingPanel,
    ScalingRow,
    ServingCurve,
    ServingPage,
    ServingRow,
    SoftwareSummary,
    StatusCount,
    SystemName,
    SystemPage,
    VerdictCount,
]


@pytest.mark.parametrize("context_class", PAGE_CLASSES, ids=lambda c: c.__name__)
def test_every_page_context_field_has_help_text(context_class: type[Any]) -> None:
    docs = field_docs(context_class)
    for item in dataclasses.fields(context_class):
        assert docs.get(item.name), f"{context_class.__name__}.{item.name} has no help"


def test_slug_is_safe_readable_and_deterministic() -> None:
    assert slug("llama2-70b-99", "Server") == slug("llama2-70b-99", "Server")
    assert slug("llama2-70b-99", "Server").startswith("llama2-70b-99-server-")
    hostile = slug(HOSTILE)
    assert set(hostile) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")
    assert slug("../../etc/passwd").startswith("etc-passwd-")
    assert len(slug("x" * 500)) <= 48 + 11


def test_slug_separates_names_that_read_the_same() -> None:
    names = ["A100", "a100", "a-100", "a_100", "a 100", "a100 ", "ä100", "日本", "中国", ""]
    slugs = {slug(name) for name in names}
    assert len(slugs) == len(names)
    assert slug("a", "b c") != slug("a b", "c")


@given(st.lists(st.text(max_size=12), min_size=1, max_size=3))
def test_slug_never_leaves_the_safe_alphabet(parts: list[str]) -> None:
    text = slug(*parts)
    assert text and set(text) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")
    assert not text.startswith("-")


def test_page_links_are_relative_paths_in_their_folder() -> None:
    assert benchmark_href("resnet50", "Offline").startswith("benchmark/resnet50-offline-")
    assert system_href(HOSTILE).startswith("system/img-src-x-onerror")
    assert system_href(HOSTILE).endswith(".html")


def test_chart_json_is_compact_with_sorted_keys() -> None:
    assert chart_json({"b": 1, "a": [1.5, None]}) == '{"a":[1.5,null],"b":1}'
    with pytest.raises(ValueError):
        chart_json({"a": float("nan")})


def test_chart_attribute_escapes_what_ends_a_single_quoted_attribute() -> None:
    text = str(chart_attribute({"name": "it's <b>&amp;</b>"}))
    assert text == '{"name":"it&#39;s <b>&amp;amp;</b>"}'
    parsed = html_attribute(f"<div data-figure='{text}'></div>")
    assert json.loads(parsed) == {"name": "it's <b>&amp;</b>"}


def html_attribute(markup: str) -> str:
    """The data-figure attribute of ``markup`` as a browser reads it."""
    from html.parser import HTMLParser

    found: list[str] = []

    class _Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.extend(v or "" for k, v in attrs if k == "data-figure")

    _Parser().feed(markup)
    return found[0]


def test_paginate_splits_rows_and_links_every_page() -> None:
    pages = list(paginate(list(range(2500)), "compare/a-0123456789.html", size=1000))
    assert [href for href, _pager, _rows in pages] == [
        "compare/a-0123456789.html",
        "compare/a-0123456789-2.html",
        "compare/a-0123456789-3.html",
    ]
    _href, pager, rows = pages[1]
    assert list(rows) == list(range(1000, 2000))
    assert (pager.number, pager.count, pager.first_row, pager.last_row) == (2, 3, 1001, 2000)
    assert (pager.previous, pager.next) == ("a-0123456789.html", "a-0123456789-3.html")
    assert [link.href for link in pager.links][-1] == "a-0123456789-3.html"
    [(only, empty, none)] = list(paginate([], "findings.html"))
    assert (only, empty.count, empty.total_rows, list(none)) == ("findings.html", 1, 0, [])
    assert page_href("findings.html", 2) == "findings-2.html"


def test_system_names_add_the_submitter_only_where_names_collide() -> None:
    names = SystemNames([("NVIDIA/B200", "B200"), ("UF/B200", "B200"), ("NVIDIA/H200", "H200")])
    assert names.of("NVIDIA/B200").label == "B200 (NVIDIA)"
    assert names.of("UF/B200", "B200").label == "B200 (UF)"
    assert names.of("NVIDIA/H200").label == "H200"
    assert names.of("NVIDIA/B200").href != names.of("UF/B200").href
    assert names.of("/local").label == "local" and names.of("/local").submitter == ""


def test_version_pairs_are_consecutive_plus_newest_against_first() -> None:
    assert version_pairs(["1", "2", "3"]) == [
        ("1", "2", False, False),
        ("2", "3", True, False),
        ("1", "3", False, True),
    ]
    assert version_pairs(["1", "2"]) == [("1", "2", True, True)]
    assert version_pairs(["1"]) == []


def _seeded_store(work: Path) -> Store:
    store = Store.open(f"sqlite:///{work / 'golden.db'}")
    data = work / "data"
    write_demo_data(data)
    write_serving_data(data, seed=1234)
    write_mlperf_rounds(data)
    _job, specs = read_job(jobs_dir() / DEMO_JOB, root=data)
    for spec in specs:
        ingest_source(store, spec, strict=True)
    return store


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    work = tmp_path_factory.mktemp("golden")
    store = _seeded_store(work)
    render_site(gather_report_input(store), work / "before", generated_at=GENERATED_AT)
    before = (
        (work / "before" / "report.json").read_text(encoding="utf-8"),
        (work / "before" / "findings.csv").read_text(encoding="utf-8"),
    )
    run_analysis(store)
    site_dir = work / "site"
    publish_report(store, site_dir, generated_at=GENERATED_AT)
    yield store, site_dir, before
    store.close()


def test_report_json_matches_the_golden_file(seeded: Any, update_golden: bool) -> None:
    """Compared re-indented (report.json itself is compact), for readable diffs."""
    _store, site_dir, _before = seeded
    raw = (site_dir / "report.json").read_text(encoding="utf-8")
    text = json.dumps(json.loads(raw), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if update_golden:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8", newline="\n")
    assert GOLDEN.is_file(), "run pytest --update-golden to create tests/golden/report.json"
    assert text == GOLDEN.read_text(encoding="utf-8"), "run pytest --update-golden after review"


@pytest.mark.parametrize("name", GOLDEN_CSV)
def test_csv_rows_match_their_golden_files(seeded: Any, update_golden: bool, name: str) -> None:
    """The comparison and finding rows, which report.json leaves to the CSV files."""
    _store, site_dir, _before = seeded
    text = (site_dir / name).read_text(encoding="utf-8")
    golden = GOLDEN.parent / name
    if update_golden:
        golden.write_text(text, encoding="utf-8", newline="\n")
    assert golden.is_file(), f"run pytest --update-golden to create tests/golden/{name}"
    assert text == golden.read_text(encoding="utf-8"), "run pytest --update-golden after review"


def test_report_json_shows_what_the_pages_show(seeded: Any) -> None:
    _store, site_dir, _before = seeded
    data = json.loads((site_dir / "report.json").read_text(encoding="utf-8"))
    assert data["generated_at"] == GENERATED_AT
    assert data["overview"]["findings_stored"] is True
    assert data["comparisons"] and all(c["rows"] and c["pages"] for c in data["comparisons"])
    for pair in data["comparisons"]:
        assert all((site_dir / href).is_file() for href in pair["pages"])
        assert sum(c["count"] for c in pair["counts"]) == pair["rows"]
    assert data["serving"]["curves"]
    assert data["findings"]["total"] and data["pages"]["findings"] == ["findings.html"]
    assert "chart" not in json.dumps(data).replace("charts.", "")
    assert '"evidence":' not in json.dumps(data["overview"])


def test_without_stored_findings_the_report_shows_the_runs_findings_unstored(
    seeded: Any,
) -> None:
    _store, _site, (report, findings) = seeded
    data = json.loads(report)
    assert data["findings"]["stored"] is False
    assert data["findings"]["counts"] == {"not stored": data["findings"]["total"]}
    rows = list(csv.DictReader(io.StringIO(findings)))
    assert {row["status"] for row in rows} == {"not stored"}


def test_csv_downloads_parse_and_add_up(seeded: Any) -> None:
    _store, site_dir, _before = seeded
    report = json.loads((site_dir / "report.json").read_text())
    results = list(csv.DictReader(io.StringIO((site_dir / "results.csv").read_text())))
    assert sum(int(r["n"]) for r in results) == report["counts"]["samples"]
    series = {(r["software"], r["system"], r["submitter"], r["benchmark"], r["scenario"],
               r["workload"], r["metric"]) for r in results}  # fmt: skip
    assert len(series) == report["counts"]["series"]
    findings = list(csv.DictReader(io.StringIO((site_dir / "findings.csv").read_text())))
    assert len(findings) == report["findings"]["total"]
    assert {"status", "kind", "change_pct", "q_value", "evidence"} <= set(findings[0])
    assert all(isinstance(json.loads(f["evidence"]), dict) for f in findings)
    compared = list(csv.DictReader(io.StringIO((site_dir / "comparisons.csv").read_text())))
    assert len(compared) == sum(c["rows"] for c in report["comparisons"])


def test_comparison_pages_list_every_series_that_changed(seeded: Any) -> None:
    _store, site_dir, _before = seeded
    report = json.loads((site_dir / "report.json").read_text())
    for pair in report["comparisons"]:
        html = "".join((site_dir / h).read_text(encoding="utf-8") for h in pair["pages"])
        changed = sum(c["count"] for c in pair["counts"] if c["verdict"] != "no_change")
        assert html.count('<tr><td class="verdict-') == changed == pair["listed"]


def test_the_same_database_gives_the_same_bytes_but_the_generated_at_line(
    seeded: Any, tmp_path: Path
) -> None:
    store, site_dir, _before = seeded
    written: list[tuple[int, str]] = []
    publish_report(
        store, tmp_path, generated_at="another time", on_page=lambda n, p: written.append((n, p))
    )
    html = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.html"))
    assert [n for n, _ in written] == list(range(1, len(html) + 1))  # progress, once per page
    assert sorted(p for _, p in written) == html
    files = sorted(p.relative_to(site_dir) for p in site_dir.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    for name in files:
        if name == Path(MANIFEST):  # the pages' sha256s: those of pages that name the time
            assert _listed(site_dir) == _listed(tmp_path)
            continue
        ours = (site_dir / name).read_bytes().replace(GENERATED_AT.encode(), b"T")
        theirs = (tmp_path / name).read_bytes().replace(b"another time", b"T")
        assert ours == theirs, name


def _listed(site: Path) -> list[str]:
    """The paths the site's marker lists."""
    lines = (site / MANIFEST).read_text(encoding="utf-8").splitlines()
    assert lines[0] == MANIFEST_HEADER
    return [line.partition("  ")[2] for line in lines[1:]]


def test_pages_use_relative_links_only(seeded: Any) -> None:
    _store, site_dir, _before = seeded
    for page in site_dir.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert "http://" not in html and "https://" not in html, page
        assert 'href="/' not in html and 'src="/' not in html, page


def test_a_render_over_an_earlier_one_removes_only_that_renders_stale_files(
    seeded: Any, tmp_path: Path
) -> None:
    store, site_dir, _before = seeded
    target = tmp_path / "site"
    publish_report(store, target, generated_at=GENERATED_AT)
    manifest = target / MANIFEST
    # An earlier render wrote a page that this data no longer has, and listed it;
    # the user keeps a file of their own beside the site; a tampered list points out.
    (target / "system" / "gone.html").write_text("stale", encoding="utf-8")
    (target / "notes.txt").write_text("mine", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("not the site's", encoding="utf-8")
    listed = manifest.read_text(encoding="utf-8")
    lines = [("stale", "system/gone.html"), ("not the site's", "../outside.txt")]
    lines += [("x", "/etc/hostname")]
    manifest.write_text(
        listed + "".join(f"{hashlib.sha256(t.encode()).hexdigest()}  {p}\n" for t, p in lines)
    )
    publish_report(store, target, generated_at=GENERATED_AT)
    assert not (target / "system" / "gone.html").exists()
    assert (target / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (tmp_path / "outside.txt").exists()
    assert manifest.read_text(encoding="utf-8") == listed
    ours = {p.relative_to(target) for p in target.rglob("*") if p.is_file()}
    fresh = {p.relative_to(site_dir) for p in site_dir.rglob("*") if p.is_file()}
    assert ours - fresh == {Path("notes.txt")} and fresh <= ours
