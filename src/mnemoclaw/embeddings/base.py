"""The provider interface and registry.

A provider turns a batch of texts into a float32 matrix. Built-in providers are registered
exactly like third-party ones: by name, as ``"module:factory"`` (imported only when used).
A package adds one with ``register_provider`` or, without any code of ours to call, an entry
point in the group ``mnemoclaw.providers`` (``name = "module:factory"``); the config accepts
every registered name, and error messages list the registry.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import UnknownProviderError


@runtime_checkable
class EmbeddingProvider(Protocol):
    id: str  # registry name, e.g. "local"
    model: str
    provider_key: str  # identity of the vector space: endpoint + model + non-secret headers
    max_input_tokens: int | None  # longer inputs are split before embedding; None: no limit

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """Embed a batch; returns an (n, dims) float32 array. ``query`` selects query-side encoding."""
        ...


# -- what only some providers have: declared, and checked with isinstance ---------------------
@runtime_checkable
class Batched(Protocol):
    """A provider with its own idea of how many texts a call should carry (a batch job takes
    thousands; the default is the indexer's ``EMBED_BATCH``)."""

    @property
    def embed_batch_size(self) -> int: ...


@runtime_checkable
class Remote(Protocol):
    """A provider behind an HTTP endpoint (``status`` shows where; never the key)."""

    @property
    def endpoint(self) -> str: ...


@runtime_checkable
class CachedModel(Protocol):
    """A bundled model that keeps its parsed form on disk (None: the cache is off)."""

    cache_dir: str | None


Factory = Callable[[dict[str, Any]], EmbeddingProvider]

# name -> "module:factory" (imported lazily, so an unused provider costs nothing at start-up)
_REGISTRY: dict[str, str | Factory] = {
    "local": "mnemoclaw.embeddings.local:create",
    "openai": "mnemoclaw.embeddings.openai:create",
    "gemini": "mnemoclaw.embeddings.gemini:create",
    "voyage": "mnemoclaw.embeddings.voyage:create",
    "mistral": "mnemoclaw.embeddings.mistral:create",
    "ollama": "mnemoclaw.embeddings.ollama:create",
}
# The order ``provider: "auto"`` tries remote providers in, by available API key.
AUTO_REMOTE_ORDER = ("openai", "gemini", "voyage", "mistral")


ENTRY_POINTS = "mnemoclaw.providers"  # the entry-point group installed packages register providers in
_plugins_loaded = False


def register_provider(name: str, factory: str | Factory) -> None:
    """Make ``name`` a provider (``memorySearch.provider: name``): ``factory`` takes the
    memorySearch settings and returns an ``EmbeddingProvider``; a ``"module:factory"`` string
    is imported only when the provider is first used."""
    _REGISTRY[name] = factory


def _load_plugins() -> None:
    """The providers installed packages declare as entry points (read once per process; a
    built-in name is never replaced)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINTS):
        _REGISTRY.setdefault(ep.name, ep.value)


def available_providers() -> list[str]:
    _load_plugins()
    return sorted(_REGISTRY)


def create_provider(name: str, settings: dict[str, Any]) -> EmbeddingProvider:
    """Build provider ``name`` from its settings (the memorySearch config block)."""
    _load_plugins()
    factory = _REGISTRY.get(name)
    if factory is None:
        raise UnknownProviderError(
            f"Unknown embedding provider {name!r}. Available: {', '.join(available_providers())}, "
            "auto, none (keyword-only)"
        )
    if isinstance(factory, str):
        module, _, attr = factory.partition(":")
        factory = getattr(importlib.import_module(module), attr)
        _REGISTRY[name] = factory
    return factory(settings)


def provider_key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
