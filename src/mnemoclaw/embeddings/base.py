"""The provider interface and registry.

A provider turns a batch of texts into a float32 matrix. Built-in providers are registered
exactly like third-party ones: by name, as ``"module:factory"`` (imported only when used).
A package adds one with ``register_provider`` or, without any code of ours to call, an entry
point in the group ``mnemoclaw.providers`` (``name = "module:factory"``); the config accepts
every registered name, and error messages list the registry. ``MNEMOCLAW_PLUGINS=off`` reads
no entry point (the test suite runs so: what is installed beside it changes nothing). A plugin
that cannot be imported never shows a traceback: using it is a ``ProviderError`` that names it,
and ``status`` names it in one line (``broken_plugins``).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ..errors import ProviderError, UnknownProviderError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint


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
ENV_PLUGINS = "MNEMOCLAW_PLUGINS"  # "off": read no entry point
_plugins_loaded = False
_plugins: dict[str, EntryPoint] = {}  # the providers registered by entry point, by name
_unreadable: list[str] = []  # installed packages whose entry points cannot be read: one line each


def register_provider(name: str, factory: str | Factory) -> None:
    """Make ``name`` a provider (``memorySearch.provider: name``): ``factory`` takes the
    memorySearch settings and returns an ``EmbeddingProvider``; a ``"module:factory"`` string
    is imported only when the provider is first used."""
    _REGISTRY[name] = factory


def plugins_on() -> bool:
    return os.environ.get(ENV_PLUGINS, "").strip().lower() not in ("off", "0", "no", "false")


def _load_plugins() -> None:
    """The providers installed packages declare as entry points (read once per process; a
    built-in name is never replaced). Nothing is imported here: a plugin is imported when used."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    if not plugins_on():
        return
    from importlib.metadata import entry_points

    try:
        found = list(entry_points(group=ENTRY_POINTS))
    except Exception:  # noqa: BLE001 - one package's damaged entry_points.txt fails the whole call
        found = _readable_entry_points()
    for ep in found:
        if ep.name not in _REGISTRY:
            _REGISTRY[ep.name] = ep.value
            _plugins[ep.name] = ep


def _readable_entry_points() -> list[EntryPoint]:
    """The group's entry points package by package, the damaged packages named in
    ``_unreadable`` and skipped (slower than ``entry_points()``: it reads every package's
    metadata, so only when that call failed)."""
    from importlib.metadata import distributions

    found: list[EntryPoint] = []
    seen: set[str] = set()
    for dist in distributions():
        package = "?"
        try:
            package = f"{dist.metadata['Name']} {dist.version}"
            key = re.sub(r"[-_.]+", "-", str(dist.metadata["Name"])).lower()
            if key in seen:  # found twice on the path: the first counts, as for an import
                continue
            seen.add(key)
            found.extend(dist.entry_points.select(group=ENTRY_POINTS))
        except Exception as exc:  # noqa: BLE001 - another package's damage is named, never raised
            _unreadable.append(f"the entry points of the installed package {package} cannot be read "
                               f"({type(exc).__name__}: {exc}); provider plugins it declares are skipped")
    return found


def _imported(factory: str) -> Factory:
    module, _, attr = factory.partition(":")
    made: Factory = getattr(importlib.import_module(module), attr)
    return made


def _broken(name: str, exc: Exception) -> str:
    ep = _plugins[name]
    package = f", from {ep.dist.name} {ep.dist.version}" if ep.dist is not None else ""
    return (f"the provider plugin {name!r} ({ep.name} = {ep.value}{package}) cannot be imported "
            f"({type(exc).__name__}: {exc})")


def broken_plugins() -> list[str]:
    """One line for each provider plugin that cannot be imported, and each installed package
    whose entry points cannot be read. Imports every plugin not imported yet: ``status`` checks
    them all; elsewhere a plugin costs nothing until it is used."""
    _load_plugins()
    said = list(_unreadable)
    for name in sorted(_plugins):
        factory = _REGISTRY.get(name)
        if isinstance(factory, str):
            try:
                _REGISTRY[name] = _imported(factory)
            except Exception as exc:  # noqa: BLE001 - a plugin's import is another package's code
                said.append(f"{_broken(name, exc)}: skipped; reinstall its package, or uninstall it")
    return said


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
        try:
            factory = _imported(factory)
        except Exception as exc:
            if name not in _plugins:  # a built-in provider, or one a program registered: a bug, with its traceback
                raise
            raise ProviderError(f"{_broken(name, exc)}: reinstall its package, or choose another provider") from None
        _REGISTRY[name] = factory
    return factory(settings)


def provider_key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
