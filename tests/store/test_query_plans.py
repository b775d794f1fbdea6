"""The queries of the report and the gate use indexes: no sort of, and no full scan for a
lookup in, the result table (EXPLAIN QUERY PLAN on SQLite, EXPLAIN on PostgreSQL).

The store's own queries are captured as it runs them (the report's point streams,
the sweeps, the analysis stream, an ingest), then explained
with their parameters. On PostgreSQL a small table would be read by a sequential
scan whatever the indexes, so sequential scans are turned off for the EXPLAIN
(``enable_seqscan = off``): what is checked is that an index can serve the query.
At 1,000,000 results (``benchmarks/bench_scale.py``) the same plans hold.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import Connection, event, select, text
from sqlmodel import col

from tracker.records.results import (
    ArtifactRecord,
    MetricRecord,
    ResultRecord,
    SoftwareRecord,
    SourceRecord,
    SystemRecord,
)
from tracker.store.facade import Store
from tracker.store.models import Result

SYSTEMS = 4
VERSIONS = 5


@dataclass(frozen=True, slots=True)
class Plan:
    """One query's plan, as lines of text."""

    sql: str
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _records(version: int) -> list[ResultRecord]:
    out = []
    software = SoftwareRecord("plan-stack", f"1.{version}")
    for s in range(SYSTEMS):
        system = SystemRecord(name=f"node-{s}", submitter="acme", accelerators_total=1 + s)
        for b in range(3):
            for m, (metric, sweep) in enumerate(
                ((MetricRecord("tokens_per_s", "tokens/s", True), None),
                 (MetricRecord("output_tokens_per_s", "tokens/s", True), f"sweep-{s}-{b}"))
            ):  # fmt: skip
                for repeat in range(2):
                    out.append(
                        ResultRecord(
                            system=system,
                            software=software,
                            benchmark=f"bench-{b}",
                            scenario="Offline",
                            metric=metric,
                            value=100.0 + s + b + m + repeat + version,
                            is_valid=True,
                            artifact_path="results.txt",
                            artifact_sha256=_digest(version),
                            line=len(out) + 1,
                            workload=f"c{repeat + 1}" if sweep else "",
                            concurrency=float(repeat + 1) if sweep else None,
                            sweep_key=sweep and f"{sweep}-{version}",
                        )
                    )
    return out


def _digest(version: int) -> str:
    return hashlib.sha256(f"plans-{version}".encode()).hexdigest()


def _save(store: Store, version: int) -> None:
    digest = _digest(version)
    artifact = ArtifactRecord("results.txt", digest, 1)
    source = SourceRecord("plans", f"plans/{version}", digest, digest, artifacts=(artifact,))
    store.save_source(source, _records(version))


class _Captured:
    """The statements a store runs against the result table, with their parameters."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, Any]] = []

    def __call__(self, _conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        lowered = statement.lower()
        if lowered.lstrip().startswith("select") and "from result" in lowered:
            self.statements.append((statement, parameters))

    def one(self, *needles: str) -> tuple[str, Any]:
        found = [s for s in self.statements if all(n in s[0].lower() for n in needles)]
        assert found, f"no statement with {needles} among {[s[0] for s in self.statements]}"
        return found[-1]


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    with Store.open(database_url) as opened:
        for version in range(VERSIONS):
            _save(opened, version)
        with opened.engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.execute(text("ANALYZE"))
        yield opened


def _explain(connection: Connection, statement: str, parameters: Any) -> Plan:
    if connection.dialect.name == "sqlite":
        rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
        return Plan(statement, tuple(str(row[-1]) for row in rows))
    connection.exec_driver_sql("SET enable_seqscan = off")
    rows = connection.exec_driver_sql(f"EXPLAIN {statement}", parameters)
    return Plan(statement, tuple(str(row[0]) for row in rows))


def _plan_of(store: Store, statement: str, parameters: Any) -> Plan:
    with store.engine.connect() as connection:
        return _explain(connection, statement, parameters)


def _plan_of_query(store: Store, query: Any) -> Plan:
    with store.engine.connect() as connection:
        compiled = query.compile(
            dialect=connection.dialect, compile_kwargs={"render_postcompile": True}
        )
        params = compiled.construct_params()
        if connection.dialect.name == "sqlite":
            values: Any = tuple(params[name] for name in compiled.positiontup or ())
        else:
            values = params
        return _explain(connection, str(compiled), values)


def _uses_index(plan: Plan, index: str) -> bool:
    return any(
        f"using index {index}" in line.lower()
        or f"using covering index {index}" in line.lower()
        or f"using {index} on" in line.lower()  # PostgreSQL: Index (Only) Scan using
        or f"index scan on {index}" in line.lower()  # PostgreSQL: Bitmap Index Scan on
        for line in plan.lines
    )


def _full_scan_of_result(plan: Plan) -> bool:
    for line in plan.lines:
        lowered = line.lower().strip()
        if lowered == "scan result" or lowered.startswith("scan result "):
            return "using" not in lowered  # SQLite: a scan by an index is an ordered read
        if "seq scan on result" in lowered:
            return True
    return False


def _sorts(plan: Plan) -> bool:
    """A sort of everything read (SQLite's temp B-tree; PostgreSQL's Sort node).

    PostgreSQL's Incremental Sort of rows already in index order (by the last
    tie-breaker, the id) sorts only the rows of one group at a time: it streams.
    """
    for line in plan.lines:
        lowered = line.lower().replace("->", "").strip()
        if "use temp b-tree" in lowered or lowered.startswith("sort "):
            return True
    return False


def _stream_plans(store: Store) -> tuple[_Captured, dict[str, Plan]]:
    captured = _Captured()
    event.listen(store.engine, "before_cursor_execute", captured)
    try:
        by_benchmark = list(store.iter_series_points(order="benchmark"))
        by_system = list(store.iter_series_points(order="system"))
        assert len(by_benchmark) == len(by_system) > 0
        assert list(store.iter_sweep_samples(metric="output_tokens_per_s"))
        assert list(store.iter_analysis_samples())
    finally:
        event.remove(store.engine, "before_cursor_execute", captured)
    plans = {
        "points by benchmark": captured.one("from result", "order by result.benchmark_id"),
        "points by system": captured.one("from result", "order by result.system_id"),
        "sweeps": captured.one("from result", "sweep_key is not null"),
        "analysis": captured.one("from result", "order by result.id"),
    }
    return captured, {name: _plan_of(store, *found) for name, found in plans.items()}


def test_the_report_streams_points_in_index_order(store: Store) -> None:
    _captured, plans = _stream_plans(store)
    for name, index in (
        ("points by benchmark", "ix_result_benchmark_points"),
        ("points by system", "ix_result_system_points"),
    ):
        plan = plans[name]
        assert _uses_index(plan, index), f"{name}: {plan.text}"
        assert not _sorts(plan), f"{name} sorts the result table: {plan.text}"
        assert not _full_scan_of_result(plan), f"{name}: {plan.text}"


def test_the_sweeps_the_report_and_the_gate_read_use_the_sweep_key_index(store: Store) -> None:
    plan = _stream_plans(store)[1]["sweeps"]
    assert _uses_index(plan, "ix_result_sweep_key"), plan.text
    assert not _full_scan_of_result(plan), plan.text


def test_the_analysis_stream_reads_in_stored_order_without_a_sort(store: Store) -> None:
    # the analysis (report, gate, analyze) reads every result once, by id: the
    # table's own order on SQLite, the primary key on PostgreSQL; never a sort
    plan = _stream_plans(store)[1]["analysis"]
    assert not _sorts(plan), plan.text


@pytest.mark.parametrize(
    ("what", "indexes"),
    [
        ("version", ("ix_result_software_version_id",)),
        ("series", ("ix_result_system_points", "ix_result_benchmark_points")),
        ("system", ("ix_result_system_points",)),
        ("benchmark", ("ix_result_benchmark_points",)),
    ],
)
def test_per_version_series_system_and_benchmark_lookups_use_an_index(
    store: Store, what: str, indexes: tuple[str, ...]
) -> None:
    with store.engine.connect() as connection:
        one = connection.execute(
            select(
                col(Result.software_version_id),
                col(Result.system_id),
                col(Result.benchmark_id),
                col(Result.metric_id),
                col(Result.workload),
            ).limit(1)
        ).one()
    version, system, benchmark, metric, workload = one
    conditions = {
        "version": [col(Result.software_version_id).in_([version, version + 1])],
        "series": [
            col(Result.system_id) == system,
            col(Result.benchmark_id) == benchmark,
            col(Result.metric_id) == metric,
            col(Result.workload) == workload,
        ],
        "system": [col(Result.system_id) == system],
        "benchmark": [col(Result.benchmark_id) == benchmark],
    }[what]
    query = select(col(Result.id), col(Result.value)).where(*conditions)
    plan = _plan_of_query(store, query)
    assert any(_uses_index(plan, index) for index in indexes), f"{what}: {plan.text}"
    assert not _full_scan_of_result(plan), f"{what}: {plan.text}"


def test_an_ingest_finds_stored_samples_by_key(store: Store) -> None:
    captured = _Captured()
    event.listen(store.engine, "before_cursor_execute", captured)
    try:
        _save(store, VERSIONS)
    finally:
        event.remove(store.engine, "before_cursor_execute", captured)
    plan = _plan_of(store, *captured.one("from result", "sample_key in"))
    assert not _full_scan_of_result(plan), plan.text
    assert any("sample_key" in line.lower() for line in plan.lines), plan.text


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_postgres_plans_each_query_for_the_table_as_it_is(database_url: str) -> None:
    """No server-side prepared statements: a generic plan kept from when the table was
    empty (a sequential scan for the sample-key lookup) made a 6-round ingest 8× slower.
    (psycopg prepares a query after its 5th run.)"""
    with Store.open(database_url) as opened:
        for version in range(VERSIONS):  # each lookup and insert run more than 5 times
            _save(opened, version)
        with opened.engine.connect() as connection:
            kept = connection.exec_driver_sql("SELECT count(*) FROM pg_prepared_statements")
            assert kept.scalar_one() == 0
