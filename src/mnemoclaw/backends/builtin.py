"""mnemoclaw's own index: the indexer and the searcher over a ``Store``."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..embeddings.base import EmbeddingProvider
from ..errors import IndexCorruptError
from ..index.indexer import Indexer, IndexSpec
from ..index.planning import host_notes
from ..search.searcher import QueryOptions, Searcher
from ..store.base import Store, damage_reason
from ..text import names, script
from ..text.tokenize import TOKENIZER_ID
from ..types import IndexReport, Progress, SearchOutcome, SourceFile


class BuiltinBackend:
    name = "builtin"

    def __init__(self, store: Store, provider: EmbeddingProvider | None, spec: IndexSpec, options: QueryOptions,
                 clock: Callable[[], float] = time.time):
        self.store = store
        self.spec = spec
        self.options = options
        self.clock = clock
        self.use(provider)
        self.indexer.remove_stale_builds()

    def use(self, provider: EmbeddingProvider | None) -> None:
        self.provider = provider
        self.indexer = Indexer(self.store, provider, self.spec)
        self.searcher = Searcher.over(self.store, provider, self.options, self.clock)

    @property
    def read_only(self) -> bool:
        return self.store.read_only

    @property
    def read_only_why(self) -> str:
        return self.store.read_only_why

    # -- keeping the index in step with the files --------------------------------
    def sync(self, *, full: bool = False, progress: Progress | None = None, lock_timeout: float | None = None,
             sources: Sequence[str] | None = None, limit: int | None = None, without_vectors: str | None = None,
             retry: bool = False) -> IndexReport:
        return self.indexer.sync(full=full, progress=progress, lock_timeout=lock_timeout, sources=sources,
                                 limit=limit, without_vectors=without_vectors, retry=retry)

    def dirty_sources(self, sources: Sequence[str] | None = None) -> set[str]:
        return self.indexer.dirty_sources(sources)

    def needs_rebuild(self) -> str:
        return self.indexer.needs_rebuild()

    def has_files(self) -> bool:
        return bool(self.store.file_records())

    def recover(self, why: str) -> None:
        self.store.recover(why)

    # -- answering -----------------------------------------------------------------
    def search(self, query: str, *, max_results: int | None = None, min_score: float | None = None,
               mode: str | None = None, sources: Sequence[str] | None = None, kind: str | None = None,
               history: bool = False) -> SearchOutcome:
        return self.searcher.search(query, max_results=max_results, min_score=min_score, mode=mode, sources=sources,
                                    kind=kind, history=history)

    def search_readable(self, query: str, *, max_results: int | None, min_score: float | None, mode: str | None,
                        sources: Sequence[str] | None, kind: str | None = None,
                        history: bool = False) -> SearchOutcome | None:
        """The keyword side or the vector side alone, whichever the damage left readable."""
        tried = mode or self.default_mode()
        for other in ("keyword", "vector"):
            if other == tried or (other == "vector" and self.provider is None):
                continue
            try:
                if other == "vector" and not self.vectors_usable():
                    continue
                return self.search(query, max_results=max_results, min_score=min_score, mode=other, sources=sources,
                                   kind=kind, history=history)
            except IndexCorruptError:
                continue
        return None

    def default_mode(self) -> str:
        return self.searcher.default_mode()

    def vectors_usable(self) -> bool:
        if self.provider is None:
            return False
        meta = self.store.meta()
        have = meta.get("provider_key")
        return have is None or (have == self.provider.provider_key and meta.get("model") == self.provider.model)

    def scope_denied(self) -> str | None:
        return None  # the builtin index answers every chat

    def files(self, sources: Sequence[str] | None = None) -> list[SourceFile]:
        return self.indexer.discover(list(sources) if sources is not None else None)

    @property
    def fallback(self) -> dict[str, Any] | None:
        return None  # it is the engine asked for

    def local_path(self, shown: str) -> str:
        return shown

    def shown_path(self, stored: str) -> str:
        return stored

    # -- what it can tell -----------------------------------------------------------
    def damaged(self) -> str | None:
        return self.store.damaged()

    def mark_damaged(self, why: str) -> None:
        self.store.mark_damaged(why)

    def indexing(self) -> dict[str, Any] | None:
        raw = self.store.meta().get("indexing")
        if not raw or not self.store.lock_busy():
            return None
        try:
            info = json.loads(raw)
            pid = int(info.get("pid") or 0)
            return {"kind": str(info.get("kind") or "sync"), "filesDone": int(info["done"]),
                    "filesTotal": int(info["total"]), "by": "this process" if pid == os.getpid() else f"process {pid}"}
        except (ValueError, KeyError, TypeError):
            return None

    def last_sync(self) -> float | None:
        synced = self.store.meta().get("last_sync")
        return float(synced) if synced else None

    def lock_holder(self) -> int | None:
        return self.store.lock_holder()

    def status(self, *, check_dirty: bool = True, check_integrity: bool = False, deep: bool = False) -> dict[str, Any]:
        """Reads that meet damage mark the index and report what they could not read as unknown."""
        def readable(read: Callable[[], Any], empty: Any) -> Any:
            try:
                return read()
            except IndexCorruptError as exc:
                self.store.mark_damaged(damage_reason(exc))
                return empty

        store = self.store
        meta = readable(store.meta, {})
        counts = readable(store.counts, {"files": None, "chunks": None, "vectors": None, "cacheEntries": None})
        if check_integrity and store.damaged() is None:
            problems = store.check(deep=deep)
            if problems:
                store.mark_damaged("; ".join(problems[:3]))
        desc = store.describe()
        out: dict[str, Any] = {
            "index": desc.path,
            "files": counts["files"],
            "chunks": counts["chunks"],
            "vectors": counts["vectors"],
            "cacheEntries": counts["cacheEntries"],
            "meta": meta,
            "mode": self.default_mode() if readable(self.vectors_usable, False) or self.provider is None else "keyword",
            "sqlite": desc.driver,
            "store": desc.driver,
            **({"namespace": desc.namespace} if desc.namespace is not None else {}),
            "vectorSearch": desc.vector,
            "ftsTokenizer": f"{TOKENIZER_ID}, in FTS5 {desc.fts_tokenizer}; BM25 k1 1.2 b 0.4"
                            + ("" if script.available() else "; OpenCC could not be loaded, so Traditional and "
                               "Simplified Chinese do not match each other (pip install --force-reinstall opencc)")
                            + ("" if names.available() else "; rjieba could not be found, so a Chinese question's "
                               "names are not looked for (pip install --force-reinstall rjieba)"),
            "sources": list(self.spec.sources),
            "vectorsPending": int(meta.get("vectors_pending", 0)),
            "indexReadOnly": store.read_only_why if store.read_only else None,
            "fingerprint": meta.get("fingerprint"),
            "fingerprintCurrent": self.indexer.fingerprint,
            "lastSync": float(meta["last_sync"]) if "last_sync" in meta else None,
            "indexing": readable(self.indexing, None),
            "integrityChecked": check_integrity,
        }
        if check_dirty and os.path.isdir(self.spec.workspace):
            rebuild = readable(lambda: self.indexer.needs_rebuild(meta), "")
            out["dirty"] = readable(self.indexer.is_dirty, True)
            kept = readable(self.indexer.kept_files, [])
            if kept:  # a namespace another host writes too: what of it this workspace lacks, and why
                out["keptForOtherHosts"] = IndexReport(kept=kept).as_dict()["kept"]
                out["hostNotes"] = host_notes(kept, [], [])
            if rebuild:
                out["rebuildReason"] = rebuild
        out["damaged"] = store.damaged()  # the reads above may have found more
        return out

    def close(self) -> None:
        self.store.close()
