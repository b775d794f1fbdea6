"""The site's machine-readable files: ``results.csv``, ``comparisons.csv``, ``findings.csv``
and ``report.json``.

The CSV files hold the rows (every series at every version, every compared
series, every finding with its evidence) and are written a page at a time as
the site is rendered. ``report.json`` is what the pages show apart from those
rows and the chart specs: the overview, the list of pages, each comparison's
counts and pages, the scaling groups, the serving curves and the findings'
counts, with ``files`` naming the CSV files that hold the rows. Compact JSON
with sorted keys; the same input gives the same bytes.

Measured values (medians, minima, maxima, the compared levels) are written
exactly; the statistics of a change (Δ%, its CI, p and q) to 7 significant
digits (:func:`statistic`), far more than any of them means, and a sixth of the
size of ``comparisons.csv``.

Every text cell goes through :func:`tracker.text_safety.csv_cell`: a label that
starts like a spreadsheet formula (``=``, ``+``, ``-``, ``@``, tab, carriage
return) is written with a leading ``'``; numbers are written as numbers.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields, is_dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from tracker.report.common import FindingRow, SeriesColumns, SystemNames
from tracker.report.context import PageCounts, SeriesTable
from tracker.report.filters import evidence_json
from tracker.report.pages.compare import CompareRow, PairSummary
from tracker.text_safety import csv_cell

__all__ = [
    "COMPARISONS_HEADER",
    "FINDINGS_HEADER",
    "RESULTS_HEADER",
    "CsvFile",
    "comparison_csv_rows",
    "finding_csv_rows",
    "report_json",
    "result_csv_rows",
    "statistic",
]

FILES = {"results": "results.csv", "comparisons": "comparisons.csv", "findings": "findings.csv"}
_LEFT_OUT = frozenset(
    {"chart", "charts", "gains_chart", "evidence", "generated_at", "is_example", "analysed_at"}
)
"""Fields report.json leaves out: chart specs, evidence (in findings.csv), page chrome and
when the stored analysis ran (the same results give the same report.json)."""

_SERIES_COLUMNS = (
    "system",
    "submitter",
    "benchmark",
    "scenario",
    "workload",
    "metric",
    "unit",
    "higher_is_better",
)
"""What names a series in ``results.csv`` and ``comparisons.csv`` (:func:`_series_cells`)."""
_TEST_COLUMNS = ("ci_low_pct", "ci_high_pct", "p_value", "q_value", "method")
"""What the test of a change found, in ``comparisons.csv`` and ``findings.csv``
(:func:`_test_cells`)."""
RESULTS_HEADER = (
    "software",
    "version",
    *_SERIES_COLUMNS,
    "median",
    "n",
    "valid",
    "min",
    "max",
    "is_example",
)
COMPARISONS_HEADER = (
    "software",
    "baseline",
    "candidate",
    *_SERIES_COLUMNS,
    "baseline_value",
    "candidate_value",
    "delta_pct",
    *_TEST_COLUMNS,
    "verdict",
    "besides_software",
)
FINDINGS_HEADER = (
    "id",
    "status",
    "kind",
    "software",
    "system",
    "submitter",
    "benchmark",
    "scenario",
    "metric",
    "baseline",
    "candidate",
    "change_pct",
    "higher_is_better",
    *_TEST_COLUMNS,
    "series_key",
    "note",
    "evidence",
)


class CsvFile:
    """One CSV file written row by row (``None`` as an empty cell, ``\\n`` line ends,
    text cells through :func:`~tracker.text_safety.csv_cell`)."""

    def __init__(self, path: Path, header: Sequence[str]) -> None:
        self._file = path.open("w", encoding="utf-8", newline="")
        self._writer = csv.writer(self._file, lineterminator="\n")
        self._writer.writerow(header)

    def rows(self, rows: Iterable[Sequence[Any]]) -> None:
        """Append ``rows``."""
        self._writer.writerows(["" if v is None else csv_cell(v) for v in row] for row in rows)

    def __enter__(self) -> CsvFile:
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _error: BaseException | None,
        _trace: TracebackType | None,
    ) -> None:
        self._file.close()


def statistic(value: float | None) -> float | None:
    """A derived statistic (Δ%, CI bound, p, q) to 7 significant digits, for the CSV files.

    >>> statistic(-8.832458637373296), statistic(3.028007359895416e-09), statistic(None)
    (-8.832459, 3.028007e-09, None)
    """
    return None if value is None else float(f"{value:.7g}")


def _series_cells(row: SeriesColumns, names: SystemNames) -> tuple[Any, ...]:
    """The cells of :data:`_SERIES_COLUMNS` for the series of ``row``."""
    system = names.of(row.system_key)
    labels = (row.benchmark, row.scenario, row.workload, row.metric, row.unit)
    return (system.name, system.submitter, *labels, row.higher_is_better)


def _test_cells(
    ci_pct: tuple[float, float] | None, p_value: float | None, q_value: float | None, method: str
) -> tuple[Any, ...]:
    """The cells of :data:`_TEST_COLUMNS`."""
    ci_low, ci_high = ci_pct if ci_pct else (None, None)
    return (statistic(ci_low), statistic(ci_high), statistic(p_value), statistic(q_value), method)


def result_csv_rows(tables: Iterable[SeriesTable], names: SystemNames) -> Iterable[tuple[Any, ...]]:
    """``results.csv`` rows of ``tables``: one per series and version (median of its samples)."""
    for table in tables:
        for row in table.rows:
            series = _series_cells(row, names)
            for version, cell in zip(table.versions, row.cells, strict=True):
                if cell is not None:
                    yield (
                        table.software,
                        version,
                        *series,
                        cell.median,
                        cell.n,
                        cell.valid_count,
                        cell.min,
                        cell.max,
                        row.is_example,
                    )


def comparison_csv_rows(
    pair: PairSummary, rows: Iterable[CompareRow], names: SystemNames
) -> Iterable[tuple[Any, ...]]:
    """``comparisons.csv`` rows of one compared pair, as its pages list them."""
    for r in rows:
        yield (
            pair.software,
            pair.baseline,
            pair.candidate,
            *_series_cells(r, names),
            r.baseline_value,
            r.candidate_value,
            statistic(r.delta_pct),
            *_test_cells(r.ci_pct, r.p_value, r.q_value, r.method),
            r.verdict,
            r.besides,
        )


def finding_csv_rows(
    findings: Iterable[FindingRow], names: SystemNames
) -> Iterable[tuple[Any, ...]]:
    """``findings.csv`` rows, as the findings pages list them; ``evidence`` holds the
    evidence items that have no column of their own (JSON)."""
    for f in findings:
        system = names.of(f.system_key) if f.system_key else None
        yield (
            f.id,
            f.status,
            f.kind,
            f.software,
            system.name if system else "",
            system.submitter if system else "",
            f.benchmark,
            f.scenario,
            f.metric,
            f.baseline,
            f.candidate,
            statistic(f.change_pct),
            f.higher_is_better,
            *_test_cells(f.ci_pct, f.p_value, f.q_value, f.method),
            f.series_key,
            f.note,
            evidence_json(f.evidence),
        )


def _data(value: Any) -> Any:
    """``value`` as JSON-ready data (like ``asdict``, without copying), chart specs,
    evidence and page chrome left out."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _data(getattr(value, f.name)) for f in fields(value) if f.name not in _LEFT_OUT
        }
    if isinstance(value, tuple | list):
        return [_data(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _data(v) for k, v in value.items()}
    return str(value)


def report_json(
    *,
    title: str,
    generated_at: str,
    is_example: bool,
    counts: PageCounts,
    overview: Any,
    pages: Mapping[str, Any],
    comparisons: Sequence[PairSummary],
    scaling: Any,
    serving: Any,
    findings: Mapping[str, Any],
) -> str:
    """``report.json``: compact, sorted keys, final newline."""
    view = _data(overview)
    for key in ("title", "counts"):
        view.pop(key, None)
    content = {
        "title": title,
        "generated_at": generated_at,
        "is_example": is_example,
        "counts": _data(counts),
        "overview": view,
        "pages": _data(pages),
        "comparisons": _data(comparisons),
        "scaling": _data(scaling),
        "serving": _data(serving),
        "findings": _data(findings),
        "files": FILES,
    }
    text = json.dumps(
        content, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )
    return text + "\n"
