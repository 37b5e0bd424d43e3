"""What every remote embedding provider shares.

A provider module says how to talk to its API (path, auth header, request and response
JSON) and its limits; this base class does the rest the same way for all of them:
settings and keys, splitting a batch by the API's item and token limits, a bounded
number of concurrent requests, checking every answer (count, dimension, finite values,
the model that answered), and the optional asynchronous batch API with its fallback to
inline requests after two failed jobs.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ProviderError
from ..text.tokenize import estimate_tokens
from .base import provider_key
from .http import HttpClient, ProviderResponseError, RetryPolicy, public_headers

log = logging.getLogger(__name__)

INLINE_CONCURRENCY = 4  # requests in flight per provider
INLINE_EMBED_BATCH = 256  # texts the indexer hands over per call when no batch API is used
BATCH_EMBED_BATCH = 10_000  # ... and when the batch API is on: one job per this many texts
BATCH_MIN_TEXTS = 100  # fewer texts than this are embedded inline even with batch on
BATCH_MAX_FAILURES = 2


class EmbeddingDataError(ProviderResponseError):
    """An answer arrived but its vectors cannot be used (count, dimension, NaN, model)."""


@dataclass(frozen=True)
class BatchSettings:
    enabled: bool = False
    wait: bool = True
    concurrency: int = 2
    poll_interval_s: float = 2.0
    timeout_s: float = 3600.0

    @classmethod
    def from_config(cls, cfg: dict[str, Any] | None) -> BatchSettings:
        cfg = cfg or {}
        return cls(
            enabled=bool(cfg.get("enabled", False)),
            wait=bool(cfg.get("wait", True)),
            concurrency=int(cfg.get("concurrency", 2)),
            poll_interval_s=float(cfg.get("pollIntervalMs", 2000)) / 1000,
            timeout_s=float(cfg.get("timeoutMinutes", 60)) * 60,
        )


class RemoteProvider:
    id = "remote"
    label = "remote embeddings"  # names the service in messages
    default_model = ""
    default_base_url = ""
    key_env: tuple[str, ...] = ()  # environment variables that may hold the key
    needs_key = True
    max_batch_items = 256
    max_batch_tokens: int | None = None
    max_input_tokens: int | None = 8192
    supports_batch_api = False

    def __init__(self, settings: dict[str, Any], *, retry: RetryPolicy | None = None, timeout_s: float = 60.0):
        remote = dict(settings.get("remote") or {})
        second = settings.get("_providerSettings") or {}  # models.providers.<id>.*: remote.* wins
        self.model = settings.get("model") or second.get("model") or self.default_model
        base = remote.get("baseUrl") or second.get("baseUrl") or self._env_base_url() or self.default_base_url
        self.base_url = base.rstrip("/")
        key = remote.get("apiKey") or second.get("apiKey") or self._env_key()
        custom_endpoint = self.base_url != self.default_base_url.rstrip("/")
        if self.needs_key and not key and not custom_endpoint:
            env = " or ".join(self.key_env) or "remote.apiKey"
            raise ProviderError(
                f"{self.label} need an API key: set agents.defaults.memorySearch.remote.apiKey or {env}, "
                "or choose another provider (provider: \"local\" works offline)"
            )
        extra = {**(second.get("headers") or {}), **(remote.get("headers") or {})}
        headers = {**self.auth_headers(key), **extra} if key else dict(extra)
        # the vector space: endpoint + model + non-secret headers; never the key
        self.provider_key = provider_key(self.id, self.base_url, self.model,
                                         json.dumps(public_headers(extra), sort_keys=True))
        hint = f"set remote.apiKey or {' / '.join(self.key_env)}" if self.key_env else "set remote.apiKey"
        self.client = HttpClient(self.base_url, headers, what=self.label, key_hint=hint, timeout_s=timeout_s,
                                 retry=retry)
        self.batch = BatchSettings.from_config(remote.get("batch"))
        if self.batch.enabled and not self.batch.wait:
            log.warning("remote.batch.wait=false is not supported: mnemoclaw waits for batch jobs it starts")
        self.batch_failures = 0
        self.dims: int | None = None
        self._lock = threading.Lock()

    # -- what a provider module supplies ------------------------------------------
    def auth_headers(self, key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"}

    def _request(self, texts: list[str], query: bool) -> tuple[list[Any], str | None]:
        """One inline request: (vectors, model the server says it used, if it says)."""
        raise NotImplementedError

    def _batch_job(self, texts: list[str]) -> list[Any]:
        """Embed ``texts`` through the provider's asynchronous batch API (waits for it)."""
        raise NotImplementedError

    def _env_key(self) -> str | None:
        for name in self.key_env:
            if os.environ.get(name):
                return os.environ[name]
        return None

    def _env_base_url(self) -> str | None:
        return None

    # -- the shared part --------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        return self.base_url

    @property
    def embed_batch_size(self) -> int:
        """How many texts the indexer should hand over per call."""
        return BATCH_EMBED_BATCH if self.batch_active else INLINE_EMBED_BATCH

    @property
    def batch_active(self) -> bool:
        return self.supports_batch_api and self.batch.enabled and self.batch_failures < BATCH_MAX_FAILURES

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        texts = [self._fit(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dims or 0), dtype=np.float32)
        if not query and self.batch_active and len(texts) >= BATCH_MIN_TEXTS:
            try:
                return self._check(self._batch_job(texts), len(texts), None)
            except EmbeddingDataError:
                raise
            except ProviderError as exc:
                self.batch_failures += 1
                left = BATCH_MAX_FAILURES - self.batch_failures
                log.warning("%s batch job failed (%s); %s", self.label, exc,
                            "embedding inline from now on" if left <= 0 else "embedding this batch inline")
        groups = self._groups(texts)
        if len(groups) == 1:
            parts = [self._inline(groups[0], query)]
        else:
            with ThreadPoolExecutor(max_workers=min(INLINE_CONCURRENCY, len(groups))) as pool:
                parts = list(pool.map(lambda g: self._inline(g, query), groups))
        return np.concatenate(parts, axis=0)

    def _inline(self, texts: list[str], query: bool) -> np.ndarray:
        vectors, model = self._request(texts, query)
        return self._check(vectors, len(texts), model)

    def _fit(self, text: str) -> str:
        """A text over the model's input limit is cut (the indexer splits chunks before this)."""
        limit = self.max_input_tokens
        if limit is None or estimate_tokens(text) <= limit:
            return text
        keep = len(text)
        while keep > 16 and estimate_tokens(text[:keep]) > limit:
            keep = int(keep * 0.9)
        log.debug("%s: input of ~%d tokens cut to the model's %d", self.label, estimate_tokens(text), limit)
        return text[:keep]

    def _groups(self, texts: list[str]) -> list[list[str]]:
        groups: list[list[str]] = [[]]
        tokens = 0
        for t in texts:
            n = estimate_tokens(t)
            full = len(groups[-1]) >= self.max_batch_items or (
                self.max_batch_tokens is not None and tokens + n > self.max_batch_tokens)
            if groups[-1] and full:
                groups.append([])
                tokens = 0
            groups[-1].append(t)
            tokens += n
        return groups

    def _check(self, vectors: Any, expected: int, model: str | None) -> np.ndarray:
        """Every answer is checked before it can reach the index."""
        if model and _norm_model(model) != _norm_model(self.model):
            raise EmbeddingDataError(
                f"{self.label} answered with model {model!r} where {self.model!r} was asked for; "
                "vectors from another model would not be comparable, so they were not stored"
            )
        if not isinstance(vectors, list) or len(vectors) != expected:
            got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
            raise EmbeddingDataError(f"{self.label} returned {got} vectors for {expected} texts")
        try:
            mat = np.asarray(vectors, dtype=np.float32)
        except (ValueError, TypeError):
            raise EmbeddingDataError(f"{self.label} returned vectors of different lengths or non-numbers") from None
        if mat.ndim != 2 or mat.shape[1] == 0:
            raise EmbeddingDataError(f"{self.label} returned empty vectors")
        if not np.all(np.isfinite(mat)):
            raise EmbeddingDataError(f"{self.label} returned NaN or infinite values")
        with self._lock:
            if self.dims is None:
                self.dims = int(mat.shape[1])
            elif mat.shape[1] != self.dims:
                raise EmbeddingDataError(
                    f"{self.label} returned {mat.shape[1]}-dimensional vectors after {self.dims}-dimensional ones; "
                    "did the model behind the endpoint change?"
                )
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        if np.any(norms == 0):
            raise EmbeddingDataError(f"{self.label} returned an all-zero vector")
        return mat / norms


def _norm_model(name: str) -> str:
    name = name.strip().lower()
    for prefix in ("models/",):
        name = name.removeprefix(prefix)
    return name.removesuffix(":latest")


def vectors_from_data(body: Any, label: str) -> list[Any]:
    """``{"data": [{"embedding": [...], "index": i}, ...]}`` (OpenAI, Voyage, Mistral), in input order."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise EmbeddingDataError(f"{label} answered without a \"data\" list")
    try:
        ordered = sorted(data, key=lambda d: d.get("index", 0)) if all("index" in d for d in data) else data
        return [d["embedding"] for d in ordered]
    except (TypeError, KeyError, AttributeError):
        raise EmbeddingDataError(f"{label} answered with entries that have no \"embedding\"") from None
