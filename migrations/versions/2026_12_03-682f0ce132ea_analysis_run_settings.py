"""analysis run settings

``analysis_run`` keeps the settings of every stored analysis (``tracker analyze``):
the interactivity target, the efficiency floors, the resolved price book
(normalised accelerator name → $/accelerator-hour, NULL without one) and its
file, the other knobs as JSON, and how many findings the run stored. It is
written in the transaction that stores the run's findings; ``tracker report``
reads the newest row. Existing databases start with no row: their report uses
the defaults (and says so) until the next ``tracker analyze``.

Revision ID: 682f0ce132ea
Revises: 97c2806438f6
Create Date: 2026-12-03 16:15:37.737870
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "682f0ce132ea"
down_revision: str | None = "97c2806438f6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "analysis_run",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("analysed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("target_tokens_per_s_per_user", sa.Float(), nullable=False),
        sa.Column("efficiency_floor", sa.Float(), nullable=False),
        sa.Column("efficiency_drop_floor", sa.Float(), nullable=False),
        sa.Column("price_book", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("price_book_source", sa.Text(), nullable=True),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("findings", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_analysis_run")),
    )


def downgrade() -> None:
    op.drop_table("analysis_run")
