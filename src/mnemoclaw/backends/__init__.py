"""Memory backends: ``memory.backend`` chooses one here, and only here."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..embeddings.base import EmbeddingProvider
from ..errors import ConfigError
from ..index.indexer import IndexSpec
from ..search.searcher import QueryOptions
from ..store.base import Store
from .base import Backend
from .builtin import BuiltinBackend

log = logging.getLogger(__name__)

BACKENDS = ("builtin", "qmd")
AVAILABLE = ("builtin",)  # "qmd" is accepted in configs and served by the builtin index, with a warning


def open_backend(name: str, *, store: Store, provider: EmbeddingProvider | None, spec: IndexSpec,
                 options: QueryOptions, clock: Callable[[], float] = time.time) -> Backend:
    """The backend ``memory.backend`` names. One that this version does not have is served
    by the builtin index; ``config.Settings.ignored`` says so in ``status`` and on stderr."""
    if name not in BACKENDS:
        raise ConfigError(f"Unknown memory backend {name!r}. Available: {', '.join(AVAILABLE)}")
    return BuiltinBackend(store, provider, spec, options, clock)


__all__ = ["AVAILABLE", "BACKENDS", "Backend", "BuiltinBackend", "open_backend"]
