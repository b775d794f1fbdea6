"""initial schema

Revision ID: 3e70348a9baa
Revises:
Create Date: 2026-12-02 17:27:41.798353
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "3e70348a9baa"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "benchmark",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("scenario", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
        sa.Column("model", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_benchmark")),
        sa.UniqueConstraint("name", "scenario", name=op.f("uq_benchmark_name_scenario")),
    )
    op.create_table(
        "metric",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("unit", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
        sa.Column("higher_is_better", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_metric")),
        sa.UniqueConstraint("name", "unit", name=op.f("uq_metric_name_unit")),
    )
    op.create_table(
        "software_version",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("software", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("version", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("sort_key", sqlmodel.sql.sqltypes.AutoString(length=400), nullable=False),
        sa.Column("release_date", sa.Date(), nullable=True),
        sa.Column("stack", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_software_version")),
        sa.UniqueConstraint(
            "software", "version", name=op.f("uq_software_version_software_version")
        ),
    )
    op.create_table(
        "source",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
        sa.Column("location", sa.Text(), nullable=False),
        sa.Column("content_sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("identity_sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("is_example", sa.Boolean(), nullable=False),
        sa.Column("ingested_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_source")),
        sa.UniqueConstraint("identity_sha256", name=op.f("uq_source_identity_sha256")),
    )
    with op.batch_alter_table("source", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_source_content_sha256"), ["content_sha256"], unique=False
        )

    op.create_table(
        "system",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(length=400), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
        sa.Column("submitter", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column("accelerator", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=True),
        sa.Column("accelerators_per_node", sa.Integer(), nullable=True),
        sa.Column("nodes", sa.Integer(), nullable=True),
        sa.Column("accelerators_total", sa.Integer(), nullable=True),
        sa.Column("host_cpu", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=True),
        sa.Column("division", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=True),
        sa.Column("availability", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=True),
        sa.Column("raw_json", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_system")),
        sa.UniqueConstraint("key", name=op.f("uq_system_key")),
    )
    op.create_table(
        "artifact",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["source.id"],
            name=op.f("fk_artifact_source_id_source"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_artifact")),
        sa.UniqueConstraint("source_id", "path", name=op.f("uq_artifact_source_id_path")),
    )
    with op.batch_alter_table("artifact", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_artifact_source_id"), ["source_id"], unique=False)

    op.create_table(
        "finding",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("fingerprint", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
        sa.Column("series_key", sa.Text(), nullable=False),
        sa.Column("baseline_version_id", sa.Integer(), nullable=True),
        sa.Column("candidate_version_id", sa.Integer(), nullable=True),
        sa.Column("method", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column("change_pct", sa.Float(), nullable=True),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
        sa.Column("status_note", sa.Text(), nullable=True),
        sa.Column("is_current", sa.Boolean(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["baseline_version_id"],
            ["software_version.id"],
            name=op.f("fk_finding_baseline_version_id_software_version"),
        ),
        sa.ForeignKeyConstraint(
            ["candidate_version_id"],
            ["software_version.id"],
            name=op.f("fk_finding_candidate_version_id_software_version"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_finding")),
        sa.UniqueConstraint("fingerprint", name=op.f("uq_finding_fingerprint")),
    )
    with op.batch_alter_table("finding", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_finding_status"), ["status"], unique=False)

    op.create_table(
        "result",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("sample_key", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("artifact_id", sa.Integer(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("system_id", sa.Integer(), nullable=False),
        sa.Column("software_version_id", sa.Integer(), nullable=False),
        sa.Column("benchmark_id", sa.Integer(), nullable=False),
        sa.Column("metric_id", sa.Integer(), nullable=False),
        sa.Column("workload", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("concurrency", sa.Float(), nullable=True),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("is_valid", sa.Boolean(), nullable=False),
        sa.Column("run_label", sa.Text(), server_default="", nullable=False),
        sa.Column("sweep_key", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("software_stack", sa.Text(), nullable=True),
        sa.Column("location", sa.Text(), nullable=True),
        sa.Column("round", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["artifact_id"],
            ["artifact.id"],
            name=op.f("fk_result_artifact_id_artifact"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["benchmark_id"], ["benchmark.id"], name=op.f("fk_result_benchmark_id_benchmark")
        ),
        sa.ForeignKeyConstraint(
            ["metric_id"], ["metric.id"], name=op.f("fk_result_metric_id_metric")
        ),
        sa.ForeignKeyConstraint(
            ["software_version_id"],
            ["software_version.id"],
            name=op.f("fk_result_software_version_id_software_version"),
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["source.id"],
            name=op.f("fk_result_source_id_source"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["system_id"], ["system.id"], name=op.f("fk_result_system_id_system")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_result")),
        sa.UniqueConstraint("sample_key", name=op.f("uq_result_sample_key")),
    )
    with op.batch_alter_table("result", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_result_artifact_id"), ["artifact_id"], unique=False)
        batch_op.create_index(
            "ix_result_series",
            ["system_id", "benchmark_id", "metric_id", "workload", "software_version_id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_result_software_version_id"), ["software_version_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_result_source_id"), ["source_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_result_sweep_key"), ["sweep_key"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("result", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_result_sweep_key"))
        batch_op.drop_index(batch_op.f("ix_result_source_id"))
        batch_op.drop_index(batch_op.f("ix_result_software_version_id"))
        batch_op.drop_index("ix_result_series")
        batch_op.drop_index(batch_op.f("ix_result_artifact_id"))

    op.drop_table("result")
    with op.batch_alter_table("finding", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_finding_status"))

    op.drop_table("finding")
    with op.batch_alter_table("artifact", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_artifact_source_id"))

    op.drop_table("artifact")
    op.drop_table("system")
    with op.batch_alter_table("source", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_source_content_sha256"))

    op.drop_table("source")
    op.drop_table("software_version")
    op.drop_table("metric")
    op.drop_table("benchmark")
