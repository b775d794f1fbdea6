"""`tracker demo`: example data in the LoadGen format, ingested by the demo job, reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli import cli
from tracker.demo_data import DEMO_SERIES, DEMO_VERSIONS, REPEATS, write_demo_data
from tracker.ingest import read_job
from tracker.parsers.loadgen import DETAIL_LOG_NAME, SUMMARY_LOG_NAME, parse_loadgen_run
from tracker.paths import ingest_jobs_dir

SPEC_EXPORT_KEYS = {
    "source_kind",
    "round",
    "division",
    "submitter",
    "system",
    "location",
    "benchmark",
    "scenario",
    "metric",
    "value",
    "unit",
    "higher_is_better",
    "valid",
    "accelerator",
    "nodes",
    "accelerators_total",
    "software",
    "software_version",
    "concurrency",
    "extra",
}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(cli, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == f"Report: {(out / 'site' / 'index.html').resolve()}"
    return out


def _export(demo_dir: Path, output_format: str = "json") -> str:
    url = f"sqlite:///{demo_dir / 'demo.db'}"
    result = CliRunner().invoke(cli, ["--database-url", url, "export", "--format", output_format])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_demo_writes_versions_times_series_times_repeats_runs(tmp_path: Path) -> None:
    runs = write_demo_data(tmp_path)
    assert len(runs) == len(DEMO_VERSIONS) * len(DEMO_SERIES) * REPEATS
    assert "Example data" in (tmp_path / "README.md").read_text()


def test_demo_data_is_seeded(tmp_path: Path) -> None:
    write_demo_data(tmp_path / "a", seed=7)
    write_demo_data(tmp_path / "b", seed=7)
    for path in (tmp_path / "a").rglob("*.txt"):
        assert path.read_bytes() == (tmp_path / "b" / path.relative_to(tmp_path / "a")).read_bytes()


def test_demo_logs_parse_the_same_from_detail_and_summary(tmp_path: Path) -> None:
    for run_dir in write_demo_data(tmp_path):
        summary = (run_dir / SUMMARY_LOG_NAME).read_bytes()
        detail = (run_dir / DETAIL_LOG_NAME).read_bytes().splitlines()
        kwargs = {"summary_path": "s", "detail_path": "d"}
        [a] = parse_loadgen_run(summary=summary, detail_lines=detail, **kwargs)
        [b] = parse_loadgen_run(summary=summary, detail_lines=None, **kwargs)
        assert a.metric == b.metric and a.is_valid and b.is_valid
        assert b.value == pytest.approx(a.value, rel=1e-4)


def test_demo_job_lists_every_demo_folder(tmp_path: Path) -> None:
    _job, specs = read_job(ingest_jobs_dir() / "demo.toml", root=tmp_path)
    expected = {
        tmp_path / version / series.folder for version in DEMO_VERSIONS for series in DEMO_SERIES
    }
    assert {Path(spec.location) for spec in specs} == expected
    assert all(spec.labels.is_example for spec in specs)


def test_demo_stores_every_run_as_a_labelled_example(demo_dir: Path) -> None:
    rows = json.loads(_export(demo_dir))
    assert len(rows) == len(DEMO_VERSIONS) * len(DEMO_SERIES) * REPEATS
    assert all(row["is_example"] for row in rows)
    assert {row["software_version"] for row in rows} == set(DEMO_VERSIONS)
    assert all(row["accelerators_total"] == 8 for row in rows)


def test_export_json_has_the_spec_keys(demo_dir: Path) -> None:
    rows = json.loads(_export(demo_dir))
    assert SPEC_EXPORT_KEYS <= set(rows[0])
    assert rows[0]["round"] is None and rows[0]["concurrency"] is None


def test_export_csv_has_a_header_and_one_row_per_result(demo_dir: Path) -> None:
    lines = _export(demo_dir, "csv").splitlines()
    assert SPEC_EXPORT_KEYS <= set(lines[0].split(","))
    assert len(lines) == 1 + len(DEMO_VERSIONS) * len(DEMO_SERIES) * REPEATS


def test_report_has_one_row_per_series_and_versions_in_order(demo_dir: Path) -> None:
    report = json.loads((demo_dir / "site" / "report.json").read_text())
    [table] = report["tables"]
    assert table["versions"] == list(DEMO_VERSIONS)
    assert len(table["rows"]) == len(DEMO_SERIES)
    assert all(cell["n"] == REPEATS for row in table["rows"] for cell in row["cells"])


def test_report_page_says_example_data(demo_dir: Path) -> None:
    html = (demo_dir / "site" / "index.html").read_text()
    assert "Example data" in html
    assert "static/report.css" in html


def test_demo_run_twice_gives_the_same_report_but_the_timestamp(demo_dir: Path) -> None:
    first = json.loads((demo_dir / "site" / "report.json").read_text())
    result = CliRunner().invoke(cli, ["demo", "--out", str(demo_dir)])
    assert result.exit_code == 0, result.output
    second = json.loads((demo_dir / "site" / "report.json").read_text())
    first.pop("generated_at"), second.pop("generated_at")
    assert first == second
