"""Tests of the results tables: their context, the rendered HTML, results.csv and report.json."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jinja2
import pytest

from tests.support.field_docs import field_docs
from tracker.records.findings import FindingRecord
from tracker.records.results import SeriesPoint, VersionInfo
from tracker.report import IndexPage, ReportInput, build_index_page, render_site
from tracker.report.context import Cell, PageCounts, SeriesRow, SeriesTable
from tracker.report.render import build_environment

GENERATED_AT = "2026-01-02T03:04:05Z"
HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def point(
    version: str = "1.0",
    *,
    values: tuple[float, ...] = (100.0,),
    valid_count: int | None = None,
    is_example: bool = False,
    software: str = "vllm",
    system: str = "h200-x8",
    benchmark: str = "llama2-70b",
    scenario: str = "Offline",
    workload: str = "",
    metric: str = "tokens_per_s",
    unit: str = "tokens/s",
    higher_is_better: bool = True,
    system_key: str = "",
) -> SeriesPoint:
    return SeriesPoint(
        software=software,
        version=version,
        system=system,
        benchmark=benchmark,
        scenario=scenario,
        workload=workload,
        metric=metric,
        unit=unit,
        higher_is_better=higher_is_better,
        values=values,
        valid_count=len(values) if valid_count is None else valid_count,
        is_example=is_example,
        system_key=system_key,
    )


def versions(*labels: str, software: str = "vllm") -> list[VersionInfo]:
    return [VersionInfo(software, label, f"{i:04d}") for i, label in enumerate(labels)]


def page_of(points: list[SeriesPoint], version_list: Sequence[VersionInfo] = ()) -> IndexPage:
    return build_index_page(points, version_list, generated_at=GENERATED_AT)


def only_cell(page: IndexPage) -> Cell:
    cell = page.tables[0].rows[0].cells[0]
    assert cell is not None
    return cell


def render_points(
    points: list[SeriesPoint], out: Path, version_list: Sequence[VersionInfo] = ()
) -> Path:
    """Render the site of ``points`` into ``out``; return its index page."""
    data = ReportInput(points=tuple(points), versions=tuple(version_list))
    return render_site(data, out, generated_at=GENERATED_AT)


def render(
    points: list[SeriesPoint], tmp_path: Path, version_list: Sequence[VersionInfo] = ()
) -> str:
    """The HTML of the one benchmark page: where the results tables are."""
    render_points(points, tmp_path, version_list)
    [page] = sorted((tmp_path / "benchmark").glob("*.html"))
    return page.read_text(encoding="utf-8")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.chunks.append(data)


def parse(html: str) -> _TextCollector:
    parser = _TextCollector()
    parser.feed(html)
    parser.close()
    return parser


# Context


def test_columns_follow_the_given_version_order_not_input_order() -> None:
    points = [point("2.0.13"), point("2.0.9"), point("2.1.0")]
    page = page_of(points, versions("2.0.9", "2.0.13", "2.1.0"))
    assert page.tables[0].versions == ("2.0.9", "2.0.13", "2.1.0")


def test_unlisted_versions_go_last_sorted_by_label() -> None:
    points = [point("zeta"), point("2.0"), point("alpha"), point("1.0")]
    page = page_of(points, versions("2.0", "1.0"))
    assert page.tables[0].versions == ("2.0", "1.0", "alpha", "zeta")


def test_listed_versions_without_results_get_no_column() -> None:
    page = page_of([point("1.0"), point("3.0")], versions("1.0", "2.0", "3.0"))
    assert page.tables[0].versions == ("1.0", "3.0")


def test_version_order_is_taken_per_software() -> None:
    points = [point("b", software="sglang"), point("a", software="sglang"), point("1.0")]
    listed = versions("b", "a", software="sglang") + versions("1.0")
    page = page_of(points, listed)
    assert [(t.software, t.versions) for t in page.tables] == [
        ("sglang", ("b", "a")),
        ("vllm", ("1.0",)),
    ]


def test_cells_line_up_with_the_version_columns() -> None:
    page = page_of(
        [point("2.0", values=(2.0,)), point("1.0", values=(1.0,))], versions("1.0", "2.0")
    )
    cells = page.tables[0].rows[0].cells
    assert [cell.median if cell else None for cell in cells] == [1.0, 2.0]


def test_a_version_not_measured_for_a_series_gives_an_empty_cell() -> None:
    points = [point("1.0"), point("2.0"), point("2.0", system="b200-x8")]
    page = page_of(points, versions("1.0", "2.0"))
    b200 = page.tables[0].rows[0]
    assert b200.system == "b200-x8"
    assert b200.cells[0] is None
    assert b200.cells[1] is not None


def test_cell_value_is_the_median_of_repeats() -> None:
    page = page_of([point(values=(1990.0, 2010.0, 1997.0))], versions("1.0"))
    assert only_cell(page) == Cell(
        median=1997.0, n=3, valid_count=3, min=1990.0, max=2010.0, has_invalid=False
    )


def test_median_of_an_even_number_of_repeats_is_the_mean_of_the_middle_two() -> None:
    page = page_of([point(values=(4.0, 1.0, 2.0, 3.0))])
    assert only_cell(page).median == 2.5


def test_cell_with_fewer_valid_than_samples_is_marked_invalid() -> None:
    page = page_of([point(values=(1.0, 2.0, 3.0), valid_count=2)])
    cell = only_cell(page)
    assert cell.has_invalid
    assert cell.valid_count == 2
    assert page.counts.invalid_samples == 1


def test_cell_with_all_samples_valid_is_not_marked_invalid() -> None:
    page = page_of([point(values=(1.0, 2.0), valid_count=2)])
    assert not only_cell(page).has_invalid


def test_rows_are_sorted_by_series_labels_whatever_the_input_order() -> None:
    points = [
        point(system="b", benchmark="resnet"),
        point(system="a", benchmark="resnet", scenario="Server"),
        point(system="a", benchmark="resnet", scenario="Offline"),
        point(system="a", benchmark="bert"),
    ]
    forward = page_of(points)
    backward = page_of(list(reversed(points)))
    keys = [(r.system, r.benchmark, r.scenario) for r in forward.tables[0].rows]
    assert keys == [
        ("a", "bert", "Offline"),
        ("a", "resnet", "Offline"),
        ("a", "resnet", "Server"),
        ("b", "resnet", "Offline"),
    ]
    assert forward == backward


def test_page_is_example_when_any_point_is_example_data() -> None:
    page = page_of([point(), point(system="demo", is_example=True)])
    assert page.is_example
    assert [row.is_example for row in page.tables[0].rows] == [True, False]


def test_page_is_not_example_when_no_point_is_example_data() -> None:
    assert not page_of([point()]).is_example


def test_counts_add_up_over_tables() -> None:
    points = [point(values=(1.0, 2.0)), point(software="sglang", values=(3.0,), valid_count=0)]
    assert page_of(points).counts == PageCounts(software=2, series=2, samples=3, invalid_samples=1)


@pytest.mark.parametrize("context_class", [IndexPage, SeriesTable, SeriesRow, Cell, PageCounts])
def test_every_context_field_has_help_text(context_class: type[Any]) -> None:
    docs = field_docs(context_class)
    for item in dataclasses.fields(context_class):
        assert docs.get(item.name), f"{context_class.__name__}.{item.name} has no help"


# Rendering


def test_hostile_system_name_is_escaped_in_the_html(tmp_path: Path) -> None:
    html = render([point(system=HOSTILE)], tmp_path)
    assert "&lt;script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert html.count("<script") == html.count('<script src="../static/')
    assert "<img" not in html
    assert "img" not in parse(html).tags
    assert HOSTILE in "".join(parse(html).chunks)


def test_rendering_twice_gives_identical_bytes(tmp_path: Path) -> None:
    points = [point("2.0", values=(1.0, 2.0, 3.0), valid_count=2), point("1.0", is_example=True)]
    first = render_points(points, tmp_path / "a", versions("1.0", "2.0")).parent
    second = render_points(points[::-1], tmp_path / "b", versions("1.0", "2.0")).parent
    names = sorted(str(p.relative_to(first)) for p in first.rglob("*") if p.is_file())
    assert names == sorted(str(p.relative_to(second)) for p in second.rglob("*") if p.is_file())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_example_banner_appears_when_example_data_is_present(tmp_path: Path) -> None:
    html = render([point(is_example=True)], tmp_path)
    assert "Example data" in html
    assert "example data" in html


def test_example_banner_is_absent_without_example_data(tmp_path: Path) -> None:
    html = render([point()], tmp_path)
    assert "Example data" not in html
    assert "example data" not in html


def test_html_shows_columns_in_version_order_and_formatted_values(tmp_path: Path) -> None:
    # Newest version first: the matrix reads from the left, the newest is what matters.
    points = [point("2.0.13", values=(2003.0,)), point("2.0.9", values=(1997.4,))]
    html = render(points, tmp_path, versions("2.0.9", "2.0.13"))
    table = html[html.index('<table class="series">') :]
    assert table.index(">2.0.13<") < table.index(">2.0.9<")
    # One metric: its unit is said once above the table, the cells hold the numbers.
    assert table.index(">2,003") < table.index(">1,997")
    assert "tokens_per_s (tokens/s, higher is better)" in html


def test_html_shows_repeats_and_marks_invalid_cells(tmp_path: Path) -> None:
    html = render([point(values=(1.0, 2.0, 3.0), valid_count=2)], tmp_path)
    assert "n=3" in html
    assert "has-invalid" in html
    assert "1 of 3 samples invalid" in html


def test_html_shows_no_repeat_count_for_a_single_sample(tmp_path: Path) -> None:
    html = render([point(values=(1.0,))], tmp_path)
    assert "n=1" not in html
    assert "has-invalid" not in html


def test_html_shows_lower_is_better_for_latency(tmp_path: Path) -> None:
    html = render([point(metric="latency_ms", unit="ms", higher_is_better=False)], tmp_path)
    assert "lower is better" in html


def test_empty_page_tells_the_user_to_run_ingest(tmp_path: Path) -> None:
    html = render_points([], tmp_path).read_text(encoding="utf-8")
    assert "No results yet" in html
    assert "<code>tracker ingest</code>" in html
    assert "<table" not in html


def test_site_links_its_stylesheet_relatively(tmp_path: Path) -> None:
    index = render_points([point()], tmp_path / "site")
    html = index.read_text(encoding="utf-8")
    assert index == tmp_path / "site" / "index.html"
    assert 'href="static/report.css"' in html
    assert (tmp_path / "site" / "static" / "report.css").is_file()
    assert "http://" not in html
    assert "https://" not in html


def test_results_csv_holds_the_rows_and_report_json_the_totals(tmp_path: Path) -> None:
    points = [point(values=(1.0, 3.0), system=HOSTILE), point("2.0", values=(5.0,))]
    render_points(points, tmp_path, versions("1.0", "2.0"))
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert data["generated_at"] == GENERATED_AT
    assert data["counts"] == {"software": 1, "series": 2, "samples": 3, "invalid_samples": 0}
    assert data["files"]["results"] == "results.csv" and "tables" not in data
    rows = list(csv.DictReader(io.StringIO((tmp_path / "results.csv").read_text("utf-8"))))
    hostile = [r for r in rows if r["system"] == HOSTILE]
    assert [(r["version"], r["median"], r["min"], r["max"], r["n"]) for r in hostile] == [
        ("1.0", "2.0", "1.0", "3.0", "2")
    ]
    assert len(rows) == 2


def test_systems_of_one_name_from_two_submitters_are_two_rows(tmp_path: Path) -> None:
    points = [
        point(system="b200-x8", system_key="NVIDIA/b200-x8", values=(1.0,)),
        point(system="b200-x8", system_key="UF/b200-x8", values=(2.0,)),
        point(system="h200-x8", system_key="NVIDIA/h200-x8", values=(3.0,)),
    ]
    rows = page_of(points).tables[0].rows
    assert [r.system for r in rows] == ["b200-x8 (NVIDIA)", "b200-x8 (UF)", "h200-x8"]
    render_points(points, tmp_path)
    assert len(list((tmp_path / "system").glob("*.html"))) == 3
    results = list(csv.DictReader(io.StringIO((tmp_path / "results.csv").read_text("utf-8"))))
    assert {(r["system"], r["submitter"], r["median"]) for r in results} == {
        ("b200-x8", "NVIDIA", "1.0"),
        ("b200-x8", "UF", "2.0"),
        ("h200-x8", "NVIDIA", "3.0"),
    }


def test_environment_raises_on_a_missing_variable() -> None:
    template = build_environment().from_string("{{ missing }}")
    with pytest.raises(jinja2.UndefinedError):
        template.render()


def test_environment_escapes_by_default() -> None:
    assert build_environment().from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


def test_findings_are_paginated_and_every_row_links_its_page(tmp_path: Path) -> None:
    findings = tuple(
        FindingRecord(
            fingerprint=f"f{i}",
            kind="change_point",
            series_key=f"vllm|/h200-x8|llama2-70b|Offline||m{i:05d}",
            method="e_divisive_means",
            software="vllm",
            candidate_version="2.0",
            change_pct=float(i),
            evidence={"benchmark": "llama2-70b", "scenario": "Offline", "level_after": 1.5},
        )
        for i in range(2500)
    )
    data = ReportInput(points=(point(), point("2.0")), versions=(), findings=findings)
    render_site(data, tmp_path, generated_at=GENERATED_AT)
    pages = sorted(p.name for p in tmp_path.glob("findings*.html"))
    assert pages == ["findings-2.html", "findings-3.html", "findings.html"]
    second = (tmp_path / "findings-2.html").read_text(encoding="utf-8")
    assert "Findings 1,001–2,000 of 2,500" in second
    assert 'href="findings-3.html" rel="next"' in second and 'data-sort="1000"' in second
    assert (
        second.count('<tr data-kind="change_point"') == 1000 and "<dt>level after<dd>1.5" in second
    )
    benchmark = next((tmp_path / "benchmark").glob("*.html")).read_text(encoding="utf-8")
    assert "2,500 findings, the first 50 shown" in benchmark
    rows = list(csv.DictReader(io.StringIO((tmp_path / "findings.csv").read_text("utf-8"))))
    assert len(rows) == 2500 and json.loads(rows[0]["evidence"]) == {"level_after": 1.5}
