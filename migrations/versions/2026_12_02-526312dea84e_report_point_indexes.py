"""indexes for the report's point streams

The report reads every result grouped per system and per benchmark
(``Store.iter_series_points``, ordered by system, benchmark, version, metric,
workload, or by benchmark first; a point's samples by id). One index per
order lets both stream in order without sorting the whole table.
``ix_result_system_points`` also serves every lookup of one system, one system
and benchmark, or one series, so it replaces ``ix_result_series`` (same first
two columns).

Revision ID: 526312dea84e
Revises: 3e70348a9baa
Create Date: 2026-12-02 19:52:05.098816
"""

from collections.abc import Sequence

from alembic import op

revision: str = "526312dea84e"
down_revision: str | None = "3e70348a9baa"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_POINT_COLUMNS = ["software_version_id", "metric_id", "workload", "id"]


def upgrade() -> None:
    op.create_index(
        "ix_result_system_points", "result", ["system_id", "benchmark_id", *_POINT_COLUMNS]
    )
    op.create_index(
        "ix_result_benchmark_points", "result", ["benchmark_id", "system_id", *_POINT_COLUMNS]
    )
    op.drop_index("ix_result_series", table_name="result")


def downgrade() -> None:
    op.create_index(
        "ix_result_series",
        "result",
        ["system_id", "benchmark_id", "metric_id", "workload", "software_version_id"],
    )
    op.drop_index("ix_result_benchmark_points", table_name="result")
    op.drop_index("ix_result_system_points", table_name="result")
