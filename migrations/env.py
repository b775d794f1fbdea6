"""Alembic environment: the tracker's SQLModel metadata, SQLite and PostgreSQL.

The database URL comes from the Alembic config (set by ``tracker.store.schema``) or
from ``sqlalchemy.url`` in ``alembic.ini`` when a developer runs ``alembic``
by hand. On PostgreSQL an advisory lock serialises concurrent upgrades.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine, pool, text
from sqlmodel import SQLModel

import tracker.store.models  # noqa: F401  (registers the tables)

config = context.config
target_metadata = SQLModel.metadata
_LOCK_ID = 7_353_001  # arbitrary, constant: "tracker schema upgrade"


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run_locked(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if url is None:
        raise RuntimeError("no sqlalchemy.url set for the migrations")
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        _run_locked(connection)
    engine.dispose()


def _run_locked(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_lock(:id)"), {"id": _LOCK_ID})
        connection.commit()
    try:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()
    finally:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_unlock(:id)"), {"id": _LOCK_ID})
            connection.commit()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
