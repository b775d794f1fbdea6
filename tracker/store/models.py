"""The database tables (SQLModel). Only :mod:`tracker.store` uses them.

Tables are changed only by the Alembic migrations in ``migrations/``;
``tests/store/test_migrations.py`` checks that the two agree. A new, empty SQLite
file is the one case where they are created from these models, at the head
revision (:mod:`tracker.store.first_use`; ``tests/store/test_new_database.py``
compares the result with what the migrations make).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

__all__ = [
    "AnalysisRun",
    "Artifact",
    "Benchmark",
    "Finding",
    "Metric",
    "Result",
    "SoftwareVersion",
    "Source",
    "System",
    "SystemAlias",
    "SystemDescription",
]

SQLModel.metadata.naming_convention = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Source(SQLModel, table=True):
    """One ingested source (folder, archive, URL or job entry), stored all or nothing."""

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=40)
    location: str = Field(sa_column=Column(Text, nullable=False))
    content_sha256: str = Field(max_length=64, index=True)
    identity_sha256: str = Field(max_length=64, unique=True)
    is_example: bool = False
    ingested_at: datetime


class Artifact(SQLModel, table=True):
    """A file of a source: path inside the source, sha256 and size."""

    __table_args__ = (UniqueConstraint("source_id", "path"),)

    id: int | None = Field(default=None, primary_key=True)
    source_id: int = Field(foreign_key="source.id", ondelete="CASCADE", index=True)
    path: str = Field(sa_column=Column(Text, nullable=False))
    sha256: str = Field(max_length=64)
    size_bytes: int


class System(SQLModel, table=True):
    """A system under test across rounds (a platform); ``key`` is submitter/name, and the
    division unless closed (:attr:`tracker.records.results.SystemRecord.platform_key`).

    What a system is (accelerator, counts, host CPU, availability, its JSON) is a fact
    of one round: :class:`SystemDescription`. The description columns here keep the
    first one seen, for databases and tools that read them; the tracker reads the round's.
    """

    id: int | None = Field(default=None, primary_key=True)
    key: str = Field(max_length=400, unique=True)
    name: str = Field(max_length=300)
    submitter: str | None = Field(default=None, max_length=200)
    accelerator: str | None = Field(default=None, max_length=300)
    accelerators_per_node: int | None = None
    nodes: int | None = None
    accelerators_total: int | None = None
    host_cpu: str | None = Field(default=None, max_length=300)
    division: str | None = Field(default=None, max_length=40)
    availability: str | None = Field(default=None, max_length=40)
    raw_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class SystemDescription(SQLModel, table=True):
    """What one software version (an MLPerf round) says of a system: counts may be missing.

    With the configuration the comparability rule reads
    (:class:`tracker.records.results.Configuration`): ``accelerators_total`` is the
    checker's count, ``accelerators_stated`` the description's own where it differs;
    host CPUs per node and their cores, host memory, interconnect, framework, the rest
    of the stack, driver, power mode and TGP, CPU-only, notes.
    """

    __tablename__ = "system_description"
    __table_args__ = (UniqueConstraint("system_id", "software_version_id"),)

    id: int | None = Field(default=None, primary_key=True)
    system_id: int = Field(foreign_key="system.id", ondelete="CASCADE")
    software_version_id: int = Field(foreign_key="software_version.id", index=True)
    accelerator: str | None = Field(default=None, max_length=300)
    accelerators_per_node: int | None = None
    nodes: int | None = None
    accelerators_total: int | None = None
    host_cpu: str | None = Field(default=None, max_length=300)
    availability: str | None = Field(default=None, max_length=40)
    raw_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    accelerators_stated: int | None = None
    host_cpus_per_node: int | None = None
    host_cores: int | None = None
    host_memory: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    interconnect: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    framework: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    software: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    driver: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    power_mode: str | None = Field(default=None, max_length=60)
    tgp_w: float | None = None
    cpu_only: bool | None = None
    notes: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class SystemAlias(SQLModel, table=True):
    """A system key that names another system (a system renamed between rounds).

    Results stored or ingested under ``alias_key`` belong to the system ``key``.
    """

    __tablename__ = "system_alias"

    id: int | None = Field(default=None, primary_key=True)
    alias_key: str = Field(max_length=400, unique=True)
    key: str = Field(max_length=400)
    created_at: datetime


class SoftwareVersion(SQLModel, table=True):
    """A version label of one software, with the key that orders it."""

    __tablename__ = "software_version"
    __table_args__ = (UniqueConstraint("software", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    software: str = Field(max_length=200)
    version: str = Field(max_length=200)
    sort_key: str = Field(max_length=400)
    release_date: date | None = None
    stack: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class Benchmark(SQLModel, table=True):
    """A benchmark (model or workload) in one scenario."""

    __table_args__ = (UniqueConstraint("name", "scenario"),)

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=200)
    scenario: str = Field(max_length=60)
    model: str | None = Field(default=None, max_length=200)


class Metric(SQLModel, table=True):
    """A metric: name (unit in the name), unit label and direction."""

    __table_args__ = (UniqueConstraint("name", "unit"),)

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=200)
    unit: str = Field(max_length=60)
    higher_is_better: bool


class Result(SQLModel, table=True):
    """One sample of one metric; samples with the same labels are repeats.

    ``sweep_key`` ties together the points of one sweep (e.g. one result per
    concurrency of an AIPerf sweep); ``software_stack`` describes the software
    the result ran on where the version label alone does not (an MLPerf round's
    framework and stack strings).
    """

    __table_args__ = (
        # The report streams every point grouped per system and per benchmark
        # (Store.iter_series_points, each point's samples by id): each order is one
        # of these indexes, so the rows come in order without a sort; a system's,
        # a benchmark's or a series' results are a range of one of them
        # (tests/store/test_query_plans.py checks the plans on SQLite and PostgreSQL).
        Index(
            "ix_result_system_points",
            "system_id",
            "benchmark_id",
            "software_version_id",
            "metric_id",
            "workload",
            "id",
        ),
        Index(
            "ix_result_benchmark_points",
            "benchmark_id",
            "system_id",
            "software_version_id",
            "metric_id",
            "workload",
            "id",
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    sample_key: str = Field(max_length=64, unique=True)
    source_id: int = Field(foreign_key="source.id", ondelete="CASCADE", index=True)
    artifact_id: int = Field(foreign_key="artifact.id", ondelete="CASCADE", index=True)
    line: int | None = None
    system_id: int = Field(foreign_key="system.id")
    software_version_id: int = Field(foreign_key="software_version.id", index=True)
    benchmark_id: int = Field(foreign_key="benchmark.id")
    metric_id: int = Field(foreign_key="metric.id")
    workload: str = Field(default="", max_length=200)
    concurrency: float | None = None
    value: float
    is_valid: bool
    run_label: str = Field(default="", sa_column=Column(Text, nullable=False, server_default=""))
    sweep_key: str | None = Field(default=None, max_length=64, index=True)
    software_stack: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    location: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    round: str | None = Field(default=None, max_length=20)
    extra: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class Finding(SQLModel, table=True):
    """A regression, improvement, change point, scaling drop or SLA miss.

    ``fingerprint`` identifies the finding across analysis runs so that its
    triage ``status`` (open, acknowledged, expected, fixed) survives re-analysis;
    ``is_current`` says whether the latest analysis run found it.
    """

    id: int | None = Field(default=None, primary_key=True)
    fingerprint: str = Field(max_length=64, unique=True)
    kind: str = Field(max_length=40)
    series_key: str = Field(sa_column=Column(Text, nullable=False))
    baseline_version_id: int | None = Field(default=None, foreign_key="software_version.id")
    candidate_version_id: int | None = Field(default=None, foreign_key="software_version.id")
    method: str = Field(max_length=80)
    change_pct: float | None = None
    evidence: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    status: str = Field(default="open", max_length=20, index=True)
    status_note: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    is_current: bool = True
    created_at: datetime
    updated_at: datetime


class AnalysisRun(SQLModel, table=True):
    """The settings of one stored analysis run, written with its findings.

    ``tracker report`` reads the latest (highest id). ``price_book`` holds the
    resolved prices (normalised accelerator name → $/accelerator-hour), ``None``
    without a price book; ``settings`` the other knobs (JSON).
    """

    __tablename__ = "analysis_run"

    id: int | None = Field(default=None, primary_key=True)
    analysed_at: datetime
    target_tokens_per_s_per_user: float
    efficiency_floor: float
    efficiency_drop_floor: float
    price_book: dict[str, float] | None = Field(
        default=None, sa_column=Column(JSON(none_as_null=True), nullable=True)
    )
    price_book_source: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    settings: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    findings: int = 0
    """How many findings the run stored (found, deduplicated)."""
