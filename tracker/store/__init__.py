"""The database layer: :class:`Store` is the only way in (see :mod:`tracker.store.facade`).

Everything above it imports this package's face alone: :class:`Store`, the
:class:`DatabaseTarget` a command was given, and the :class:`SchemaStatus` of
``tracker db current``. Importing it loads neither SQLAlchemy nor Alembic: the store
loads them when it first needs them.
"""

from tracker.store.facade import (
    DatabaseTarget,
    SchemaStatus,
    Store,
    normalise_database_url,
)

__all__ = ["DatabaseTarget", "SchemaStatus", "Store", "normalise_database_url"]
