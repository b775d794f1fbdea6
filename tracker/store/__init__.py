"""The database layer: :class:`Store` is the only way in (see :mod:`tracker.store.facade`)."""

from tracker.store.facade import Store, normalise_database_url

__all__ = ["Store", "normalise_database_url"]
