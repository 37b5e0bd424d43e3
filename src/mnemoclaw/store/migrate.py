"""Copy an index from one store to another (SQLite <-> Postgres) without embedding anything again:
files, chunks with their vectors and annotations, the index's fingerprint and the embedding
cache. The copy is built aside in the target and swapped in at once, so the target keeps
answering from what it held until the copy is complete; the source is only read."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from . import open_store
from .base import BulkLoad, EmbeddingCache, FileIndex, FileWrite, Handle, Rebuilds, StoreOptions, WriteLock

BATCH_FILES = 200


class Source(FileIndex, EmbeddingCache, Handle, Protocol):
    """What a copy reads: every file's chunks and vectors, the index's metadata, the cache."""


class Target(WriteLock, Rebuilds, Handle, Protocol):
    """What a copy writes into: a rebuild, built aside under the write lock and swapped in."""


def migrate(options: StoreOptions, url: str, *, to_postgres: bool, namespace: str | None = None,
            progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Copy this agent's index from its SQLite file to its Postgres namespace at ``url``
    (``to_postgres``), or back; the report of ``copy_index`` and the namespace used."""
    if namespace:
        options = replace(options, namespace=namespace)
    lite = replace(options, driver="sqlite")
    pg = replace(options, driver="postgres", url=url, shared=())
    source = open_store(lite if to_postgres else pg)
    try:
        target = open_store(pg if to_postgres else lite)
        try:
            return {**copy_index(source, target, progress), "namespace": options.namespace}
        finally:
            target.close()
    finally:
        source.close()


def copy_index(source: Source, target: Target, progress: Callable[[int, int], None] | None = None,
               lock_timeout: float = 30.0) -> dict[str, Any]:
    t = time.monotonic()
    records = source.file_records()
    paths = sorted(records)
    chunks = vectors = cached = 0
    with target.write_lock(timeout=lock_timeout):
        build = target.begin_rebuild()
        # a Postgres target builds a vector index it does not have yet once, after the rows
        try:
            with build.bulk_load() if isinstance(build, BulkLoad) else contextlib.nullcontext():
                batch: list[FileWrite] = []
                for i, path in enumerate(paths, 1):
                    got = source.file_chunks(path)
                    if got is not None:
                        batch.append(got)
                        chunks += len(got.chunks)
                        vectors += sum(v is not None for v in got.vectors)
                    if len(batch) >= BATCH_FILES or i == len(paths):
                        build.apply(batch)
                        batch = []
                    if progress:
                        progress(i, len(paths))
            build.set_meta(source.meta())  # what was indexed; a store's own bookkeeping is not in meta()
            for key, items in source.cache_items():
                build.cache_put(key, items)
                cached += len(items)
            target.commit_rebuild(build)
        except BaseException:
            target.discard_rebuild(build)
            raise
    return {"from": source.path, "to": target.path, "files": len(paths), "chunks": chunks, "vectors": vectors,
            "cacheEntries": cached, "seconds": round(time.monotonic() - t, 2)}
