"""Where the index lives. ``open_store`` is the one place a store is built; everything
above it is written against ``store.base.Store``."""

from __future__ import annotations

from ..errors import ConfigError
from .base import Store, StoreOptions

DRIVERS = ("sqlite", "postgres")


def open_store(options: StoreOptions) -> Store:
    """The store ``options`` name (``memorySearch.store.driver``)."""
    if options.driver == "sqlite":
        from .sqlite import SQLiteStore

        return SQLiteStore(options.path, vector_enabled=options.vector_enabled,
                           extension_path=options.extension_path, state_dir=options.state_dir)
    if options.driver == "postgres":
        from .postgres import PostgresStore

        if not options.url:
            raise ConfigError('store.driver "postgres" needs store.url (or env MNEMOCLAW_PG_URL), e.g. '
                              '"postgresql://mem@db.internal/mnemoclaw"')
        return PostgresStore(options.url, options.namespace, options.shared, host=options.host,
                             workspace=options.workspace)
    raise ConfigError(f"Unknown store driver {options.driver!r}. Available: {', '.join(DRIVERS)}")


__all__ = ["DRIVERS", "Store", "StoreOptions", "open_store"]
