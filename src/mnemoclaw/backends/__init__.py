"""Memory backends: ``memory.backend`` chooses one here, and only here."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..embeddings.base import EmbeddingProvider
from ..errors import ConfigError
from ..index.indexer import IndexSpec
from ..search.searcher import QueryOptions
from ..store.base import Store
from .base import Backend
from .builtin import BuiltinBackend
from .qmd import QmdBackend, QmdConfig

log = logging.getLogger(__name__)

BACKENDS = ("builtin", "qmd")
AVAILABLE = BACKENDS


def open_backend(name: str, *, store: Store, provider: EmbeddingProvider | None, spec: IndexSpec,
                 options: QueryOptions, clock: Callable[[], float] = time.time, qmd: Any = None,
                 qmd_home: Path | None = None, transcripts: Path | None = None) -> Backend:
    """The backend ``memory.backend`` names: the builtin index, or qmd over it (``qmd``: the
    ``memory.qmd`` config, ``qmd_home``: the agent's own qmd folders)."""
    if name not in BACKENDS:
        raise ConfigError(f"Unknown memory backend {name!r}. Available: {', '.join(AVAILABLE)}")
    builtin = BuiltinBackend(store, provider, spec, options, clock)
    if name == "builtin":
        return builtin
    if qmd_home is None:
        raise ValueError("the QMD backend needs qmd_home: the agent's own folder for qmd's config and cache")
    try:
        config = QmdConfig.parse(qmd)
        config.check_paths()
    except ConfigError:
        builtin.close()
        raise
    return QmdBackend(builtin, config, workspace=Path(spec.workspace), home=qmd_home, transcripts=transcripts,
                      clock=clock)


__all__ = ["AVAILABLE", "BACKENDS", "Backend", "BuiltinBackend", "QmdBackend", "QmdConfig", "open_backend"]
