"""CSV formula injection (item 12 of issue #21): labels that start like a spreadsheet
formula are written with a leading ``'`` to the report's CSV files and to
``tracker export --format csv``; numbers, negative ones included, stay numbers."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tracker.cli import cli
from tracker.report.files import CsvFile
from tracker.text_safety import csv_cell

HOSTILE = {
    "--software": '=HYPERLINK("https://example.com","x")',
    "--system": "@SUM(1+1)*cmd|' /C calc'!A0",
    "--benchmark": "+resnet50",
}
VERSIONS = ("-2.0", "1.0")


def _tracker(database: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", f"sqlite:///{database}", *args])


@pytest.fixture(scope="module")
def database(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("csv") / "tracker.db"
    for version in VERSIONS:
        labels = [item for option, value in HOSTILE.items() for item in (option, value)]
        result = _tracker(
            path,
            "ingest",
            str(shared_data / "loadgen-local" / "Offline"),
            "--kind",
            "loadgen",
            "--software-version",
            version,
            *labels,
        )
        assert result.exit_code == 0, result.output
    return path


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _neutralised(row: dict[str, str]) -> None:
    assert row["software"] == "'" + HOSTILE["--software"]
    assert row["system"] == "'" + HOSTILE["--system"]
    assert row["benchmark"] == "'" + HOSTILE["--benchmark"]


def test_report_csv_files_neutralise_formula_labels(database: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert _tracker(database, "report", "--out", str(site)).exit_code == 0
    results = _rows((site / "results.csv").read_text(encoding="utf-8"))
    assert len(results) == 2
    for row in results:
        _neutralised(row)
        assert row["median"] == row["min"] == row["max"] == "309778.0"
    assert {row["version"] for row in results} == {"'-2.0", "1.0"}
    [compared] = _rows((site / "comparisons.csv").read_text(encoding="utf-8"))
    _neutralised(compared)
    assert compared["baseline_value"] == "309778.0"
    assert "'-2.0" in (compared["baseline"], compared["candidate"])


def test_export_csv_neutralises_formula_labels(database: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.csv"
    result = _tracker(database, "export", "--format", "csv", "--out", str(out))
    assert result.exit_code == 0, result.output
    rows = _rows(out.read_text(encoding="utf-8"))
    assert len(rows) == 2
    for row in rows:
        _neutralised(row)
        assert row["value"] == "309778.0" and row["extra"].startswith("{")
    assert {row["software_version"] for row in rows} == {"'-2.0", "1.0"}


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_every_formula_start_is_neutralised(start: str) -> None:
    assert csv_cell(f"{start}1+2") == f"'{start}1+2"


def test_numbers_stay_numbers_and_plain_text_is_untouched(tmp_path: Path) -> None:
    assert csv_cell(-8.0) == -8.0 and csv_cell(-3) == -3 and csv_cell(False) is False
    assert csv_cell("vllm") == "vllm" and csv_cell("") == ""
    path = tmp_path / "x.csv"
    with CsvFile(path, ("label", "delta_pct", "n")) as out:
        out.rows([("-rc1", -8.0, -2), ("=1+1", None, 0)])
    assert path.read_text(encoding="utf-8") == "label,delta_pct,n\n'-rc1,-8.0,-2\n'=1+1,,0\n"
