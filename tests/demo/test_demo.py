"""`tracker demo`: example data in the real formats, ingested by the demo job, reported, gated.

The LoadGen runs (3 versions × 3 series × 3 repeats), the AIPerf sweeps of the
example serving stack (718 → 1,997 tokens/s at 50 tokens/s/user, then an 8%
regression of the chat workload) and two MLPerf-layout rounds (1.6× gain, 72 → 288
at 99% efficiency, one configuration whose efficiency drops).
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli import cli
from tracker.demo import (
    DEMO_SERIES,
    DEMO_VERSIONS,
    MLPERF_ROUNDS,
    REPEATS,
    SERVING_VERSIONS,
    SERVING_WORKLOADS,
    write_demo_data,
)
from tracker.formats.loadgen.parse import DETAIL_LOG_NAME, SUMMARY_LOG_NAME, parse_loadgen_run
from tracker.ingest.run import read_job
from tracker.paths import jobs_dir

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


LOADGEN_RESULTS = len(DEMO_VERSIONS) * len(DEMO_SERIES) * REPEATS


@pytest.fixture(scope="module")
def demo_output(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(cli, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, result.stdout


@pytest.fixture(scope="module")
def demo_dir(demo_output: tuple[Path, str]) -> Path:
    out, stdout = demo_output
    assert stdout.splitlines()[-1] == f"Report: {(out / 'site' / 'index.html').resolve()}"
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
    _job, specs = read_job(jobs_dir() / "demo.toml", root=tmp_path)
    expected = {
        tmp_path / version / series.folder for version in DEMO_VERSIONS for series in DEMO_SERIES
    }
    expected |= {
        tmp_path / "serving" / version / w.name
        for version in SERVING_VERSIONS
        for w in SERVING_WORKLOADS
    }
    expected |= {tmp_path / "mlperf" / label for label in MLPERF_ROUNDS}
    assert {Path(spec.location) for spec in specs} == expected
    assert all(spec.labels.is_example for spec in specs)


def test_demo_stores_every_run_as_a_labelled_example(demo_dir: Path) -> None:
    rows = json.loads(_export(demo_dir))
    assert all(row["is_example"] for row in rows)
    loadgen = [row for row in rows if row["source_kind"] == "loadgen"]
    assert len(loadgen) == LOADGEN_RESULTS
    assert {row["software_version"] for row in loadgen} == set(DEMO_VERSIONS)
    assert all(row["accelerators_total"] == 8 for row in loadgen)
    aiperf = [row for row in rows if row["source_kind"] == "aiperf"]
    assert {row["accelerators_total"] for row in aiperf} == {4}
    mlperf = [row for row in rows if row["source_kind"] == "mlperf-inference"]
    assert {row["round"] for row in mlperf} == set(MLPERF_ROUNDS)
    assert all("example" in row["system"].lower() for row in rows)


def test_export_json_has_the_spec_keys(demo_dir: Path) -> None:
    rows = json.loads(_export(demo_dir))
    assert SPEC_EXPORT_KEYS <= set(rows[0])
    assert rows[0]["round"] is None and rows[0]["concurrency"] is None


def test_export_csv_has_a_header_and_one_row_per_result(demo_dir: Path) -> None:
    lines = _export(demo_dir, "csv").splitlines()
    assert SPEC_EXPORT_KEYS <= set(lines[0].split(","))
    assert len(lines) == 1 + len(json.loads(_export(demo_dir)))


def test_report_has_one_row_per_series_and_versions_in_order(demo_dir: Path) -> None:
    text = (demo_dir / "site" / "results.csv").read_text(encoding="utf-8")
    by_series: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        labels = ("software", "system", "benchmark", "scenario", "workload", "metric")
        by_series.setdefault(tuple(row[k] for k in labels), []).append(row)
    loadgen = {
        key: rows
        for key, rows in by_series.items()
        if key[:2] == ("example-serving-stack", "example-node-8x (example data)")
    }
    assert len(loadgen) == len(DEMO_SERIES)
    for rows in loadgen.values():
        assert [r["version"] for r in rows] == list(DEMO_VERSIONS)
        assert all(int(r["n"]) == REPEATS for r in rows)
    rounds = [
        [r["version"] for r in rows] for k, rows in by_series.items() if k[0] == "mlperf-inference"
    ]
    assert {v for found in rounds for v in found} == set(MLPERF_ROUNDS)
    assert all(found == [v for v in MLPERF_ROUNDS if v in found] for found in rounds)


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


def test_demo_gates_the_newest_version_and_finds_the_planted_regression(
    demo_output: tuple[Path, str],
) -> None:
    _out, stdout = demo_output
    gate_lines = [line for line in stdout.splitlines() if line.startswith("gate: ")]
    # one planted regression, one issue: every point of the sweep, both forms, the target
    assert gate_lines == [
        "gate: 1 (1 regression, 1.1.0 → 1.2.0; every series could see a 5% change)"
    ]
    assert (
        "  example-llm-70b · concurrency · isl1024-osl1024: -8.0% (worse; CI [-9.3%, -5.4%]) "
        "at c2–c32 and at 50 tokens/s/user\n"
    ) in stdout


def test_demo_gate_through_the_cli_exits_1(demo_dir: Path) -> None:
    url = f"sqlite:///{demo_dir / 'demo.db'}"
    result = CliRunner().invoke(cli, ["--database-url", url, "gate", "--candidate", "1.2.0"])
    assert result.exit_code == 1, result.output
    improved = CliRunner().invoke(
        cli, ["--database-url", url, "gate", "--baseline", "1.0.0", "--candidate", "1.1.0"]
    )
    assert improved.exit_code == 0, improved.output


def test_serving_page_shows_the_718_to_1997_gain(demo_dir: Path) -> None:
    # 4 accelerators: 718 and 1,997 tokens/s are 179.5 and 499.25 per accelerator
    html = (demo_dir / "site" / "serving.html").read_text("utf-8")
    assert "179.5" in html and "499.2" in html and "isl65536-osl400" in html
    assert "718 tokens/s" in html and "1,997 tokens/s" in html  # the whole system
    report = json.loads((demo_dir / "site" / "report.json").read_text())
    text = json.dumps(report["serving"])
    assert "179.5" in text and "499.2" in text


def _serving_rows(page: str) -> list[list[str]]:
    """The cells of every row of the serving page's tables, as text."""
    rows = re.findall(r"<tr.*?</tr>", page, re.S)
    cells = (re.findall(r"<t[hd].*?</t[hd]>", row, re.S) for row in rows)
    return [[" ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split()) for c in r] for r in cells]


def test_serving_tables_fold_the_trials_into_one_row_per_version(demo_dir: Path) -> None:
    rows = _serving_rows((demo_dir / "site" / "serving.html").read_text("utf-8"))
    heads = [r for r in rows if r[0] == "Version"]
    assert len(heads) == len(SERVING_WORKLOADS)
    assert all("median, range" in head[1] and head[-1] == "Trials" for head in heads)
    body = [r for r in rows if r[0] in SERVING_VERSIONS]
    assert len(body) == len(SERVING_WORKLOADS) * len(SERVING_VERSIONS)  # not one per trial
    for row in body:
        median, low, high = (float(x.replace(",", "")) for x in re.findall(r"[\d,.]+", row[1])[:3])
        assert low <= median <= high
        assert row[-1] == "3"  # the trials folded into the row


def _chart_traces(page: Path) -> list[dict[str, object]]:
    """Every trace of every chart of ``page`` (the specs are in ``data-figure`` attributes)."""
    specs = re.findall(r"data-figure='([^']*)'", page.read_text(encoding="utf-8"))
    return [trace for spec in specs for trace in json.loads(html.unescape(spec))["data"]]


def test_findings_are_marked_on_the_charts_with_hover_text(demo_dir: Path) -> None:
    pages = sorted((demo_dir / "site" / "benchmark").glob("example-llm-70b-concurrency-*.html"))
    assert len(pages) == 1
    marks = [t for t in _chart_traces(pages[0]) if t["name"] == "Regression"]
    assert marks and all(t["mode"] == "markers" for t in marks)
    texts = {text for t in marks for text in t["text"]}  # type: ignore[attr-defined]
    assert texts == {"regression 1.1.0 → 1.2.0: −8.0% worse (open)"}
    assert all(t["hovertemplate"] == "%{text}<extra></extra>" for t in marks)
    assert all(x == "1.2.0" for t in marks for x in t["x"])  # type: ignore[attr-defined]


def test_demo_mlperf_rounds_scale_72_to_288_at_99_percent(demo_dir: Path) -> None:
    url = f"sqlite:///{demo_dir / 'demo.db'}"
    result = CliRunner().invoke(cli, ["--database-url", url, "findings", "--format", "json"])
    found = json.loads(result.stdout)
    scaling = [f for f in found if f["kind"] == "scaling_efficiency"]
    assert scaling and all("Example Accel Y" in f["series_key"] for f in scaling)
    gains = [f for f in found if f["kind"] == "improvement" and "NVL72x72" in f["series_key"]]
    assert gains and gains[0]["change_pct"] == pytest.approx(60.0, rel=1e-4)
