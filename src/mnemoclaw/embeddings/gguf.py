"""A GGUF embedding model of the user's own, run through llama.cpp
(``pip install 'mnemoclaw[gguf]'``). The file must already be on disk: mnemoclaw never
downloads a model (``local.modelPath`` is a path, not a URL or ``hf:`` reference)."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ProviderError
from .base import cpu_count, provider_key


class LocalGGUF:
    id = "local"
    max_input_tokens = 512  # safe for the common GGUF embedding models; longer chunks are split

    def __init__(self, model_path: str, threads: int | None = None):
        if "://" in model_path or model_path.startswith("hf:"):
            raise ProviderError(
                f"local.modelPath {model_path!r} is a download reference; mnemoclaw never downloads models. "
                "Download the .gguf file yourself and set local.modelPath to its path"
            )
        path = os.path.abspath(os.path.expanduser(model_path))
        if not os.path.isfile(path):
            raise ProviderError(f"local.modelPath {path} does not exist; point it at a .gguf embedding model file")
        self.path = path
        self.model = os.path.basename(path)
        # the vector space is this file: its name and size
        self.provider_key = provider_key("local", "gguf", self.model, str(os.path.getsize(path)))
        self.threads = max(1, min(threads or cpu_count(), cpu_count()))
        self._llm: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._llm is None:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise ProviderError(
                    "A GGUF model in local.modelPath needs llama.cpp: pip install 'mnemoclaw[gguf]' "
                    "(or pip install llama-cpp-python)"
                ) from None
            try:
                self._llm = Llama(model_path=self.path, embedding=True, n_threads=self.threads, verbose=False)
            except Exception as exc:
                raise ProviderError(f"llama.cpp could not load {self.path}: {exc}") from exc
        return self._llm

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            out = self._load().embed(list(texts), normalize=True)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)
