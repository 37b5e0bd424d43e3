"""Vectors for the chunks a sync writes: from the index, the embedding cache, or the provider,
by the hash of what is embedded; and later, the vectors of chunks indexed for keyword search
only while the provider was down.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

import numpy as np

from ..embeddings.base import Batched, EmbeddingProvider
from ..errors import ProviderError, ProviderResponseError
from ..markdown.chunker import text_hash
from ..store.base import CacheKey, EmbeddingCache, FileIndex
from ..text.script import fold
from ..types import ChunkRow, IndexReport
from ..vectors import unit_vector

log = logging.getLogger(__name__)

EMBED_BATCH = 256  # texts per provider call
# After the provider failed to embed the chunks that were indexed without vectors, a
# process tries again only after this long (an explicit `mnemoclaw index` always tries).
VECTOR_RETRY_SECONDS = 300.0


class SyncTarget(FileIndex, EmbeddingCache, Protocol):
    """What a sync writes into and reads vectors from: an index (or a rebuild of it) and its cache."""


def vector_input(text: str, digest: str) -> tuple[str, str]:
    """What a chunk's vector is stored and looked up under, and the text that is embedded: its
    text and that text's hash (``digest``), or for text with Traditional Chinese in it the text
    folded into Simplified (text/script.py) and the hash of that, so a vector of the text as
    written is never taken for it."""
    folded = fold(text)
    return (digest, text) if folded == text else (text_hash(FOLDED + folded), folded)


def vector_key(text: str, digest: str) -> str:
    return vector_input(text, digest)[0]


FOLDED = "mnemoclaw: embedded as Simplified Chinese\n"


def embed_batch_size(provider: EmbeddingProvider | None) -> int:
    """Texts per provider call: the provider's own preference (large for batch jobs)."""
    return int(provider.embed_batch_size or EMBED_BATCH) if isinstance(provider, Batched) else EMBED_BATCH


def record_pending(target: FileIndex) -> int:
    """Note in the index how many chunks wait for their vectors (searchers and ``status`` read it)."""
    pending = target.count_without_vectors()
    if pending:
        target.set_meta({"vectors_pending": str(pending)})
    else:
        target.delete_meta(["vectors_pending"])
    return pending


class ChunkVectors:
    """The vectors of one provider for the chunks a sync writes (``cache``: through the embedding
    cache). Remembers when the provider last failed the chunks that wait for vectors."""

    def __init__(self, provider: EmbeddingProvider, *, cache: bool):
        self.provider = provider
        self.cache = cache
        self.key = CacheKey(provider.id, provider.model, provider.provider_key)
        self.retry_at = 0.0  # monotonic time after which pending vectors are tried again

    def for_rows(self, rows: list[ChunkRow], target: SyncTarget, cache_source: SyncTarget, report: IndexReport, *,
                 salvaging: bool = False, without: str | None = None) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """Vectors by chunk hash: from the index, the cache, or the provider.

        An answer the provider gave but that cannot be used (wrong count or dimension,
        NaN, another model) fails only the texts it was for; the caller marks their
        files failed. A provider that cannot be reached at all raises. ``salvaging``: the
        index read is damaged, so a vector from it is checked first; ``without`` (why): the
        provider is not asked, and what neither the index nor the cache has stays missing.
        """
        inputs = {r.hash: vector_input(r.text, r.hash) for r in rows}
        keys = {h: key for h, (key, _) in inputs.items()}
        texts = dict(inputs.values())  # what is embedded, by what its vector is stored under
        found = cache_source.vectors_for_hashes(texts, self.provider.model)
        key = self.key
        if self.cache:
            missing = [h for h in texts if h not in found]
            if missing:
                found.update(cache_source.cache_get(key, missing))
        if salvaging:
            # read from a damaged index: keep a vector only if it is still a unit vector of
            # numbers (every provider's are); the new index gets them into its own cache
            found = {h: v for h, v in found.items() if _sound(v, target)}
            if found and self.cache:
                target.cache_put(key, found)
        todo = [h for h in texts if h not in found]
        report.chunks_reused += len(texts) - len(todo)
        if without is not None:
            report.vectors_error = without
            return found, {}
        fresh: dict[str, np.ndarray] = {}
        errors: dict[str, str] = {}
        dims = target.vector_dims()
        size = embed_batch_size(self.provider)
        for i in range(0, len(todo), size):
            group = todo[i : i + size]
            try:
                mat = self.provider.embed([texts[h] for h in group])
                mat = np.asarray(mat, dtype=np.float32)
                if mat.ndim != 2 or mat.shape[0] != len(group) or not np.all(np.isfinite(mat)):
                    raise ProviderResponseError(
                        f"{self.provider.id}/{self.provider.model} returned {mat.shape[0] if mat.ndim else 0} vectors "
                        f"for {len(group)} texts or non-finite values")
                if dims is not None and mat.shape[1] != dims:
                    raise ProviderResponseError(
                        f"{self.provider.id}/{self.provider.model} returned {mat.shape[1]}-dimensional vectors but the "
                        f"index holds {dims}-dimensional ones; if the model changed, run `mnemoclaw index --full`")
            except ProviderResponseError as exc:
                log.warning("embedding %d texts failed: %s", len(group), exc)
                errors.update((h, str(exc)) for h in group)
                continue
            except ProviderError:
                raise
            except Exception as exc:  # a provider bug must not corrupt the index: report and stop
                raise ProviderError(f"embedding with {self.provider.id}/{self.provider.model} failed: {exc}") from exc
            fresh.update(zip(group, mat, strict=False))
        report.chunks_embedded += len(fresh)
        if fresh and self.cache:
            target.cache_put(key, fresh)
        found.update(fresh)
        return ({h: found[k] for h, k in keys.items() if k in found},
                {h: errors[k] for h, k in keys.items() if k in errors})

    def fill_missing(self, store: SyncTarget, report: IndexReport, *, force: bool) -> None:
        """Embed the chunks a sync indexed while the provider was down (the caller holds the
        write lock); after a failure, not again for VECTOR_RETRY_SECONDS unless ``force``."""
        if "vectors_pending" not in store.meta() or (not force and time.monotonic() < self.retry_at):
            return
        key = self.key
        size = embed_batch_size(self.provider)
        while True:
            rows = store.chunks_without_vectors(size)
            if not rows:
                break
            rows = [(rid, *vector_input(text, h)) for rid, h, text in rows]
            cached = store.cache_get(key, [h for _, h, _ in rows]) if self.cache else {}
            todo = [(rid, h, text) for rid, h, text in rows if h not in cached]
            try:
                mat = np.asarray(self.provider.embed([text for _, _, text in todo]), dtype=np.float32) if todo \
                    else np.zeros((0, 0), dtype=np.float32)
                dims = store.vector_dims()
                if todo and (mat.ndim != 2 or mat.shape[0] != len(todo) or not np.all(np.isfinite(mat))
                             or (dims is not None and mat.shape[1] != dims)):
                    raise ProviderResponseError(f"{self.provider.id}/{self.provider.model} returned vectors that do "
                                                "not fit the index (count, dimension or values)")
            except ProviderError as exc:
                self.retry_at = time.monotonic() + VECTOR_RETRY_SECONDS
                report.vectors_error = str(exc)
                log.warning("the chunks indexed without vectors still wait for them: %s", exc)
                break
            fresh = {h: v for (_, h, _), v in zip(todo, mat, strict=False)}
            if fresh and self.cache:
                store.cache_put(key, fresh)
            store.add_vectors([(rid, cached[h] if h in cached else fresh[h]) for rid, h, _ in rows])
            report.chunks_embedded += len(fresh)
            report.chunks_reused += len(rows) - len(fresh)
        report.vectors_pending = record_pending(store)


def _sound(vec: np.ndarray, target: FileIndex) -> bool:
    return unit_vector(vec, target.vector_dims())
