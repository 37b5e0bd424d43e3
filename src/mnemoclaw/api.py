"""``Memory``: one object per agent workspace, the composition root.

    from mnemoclaw import Memory

    with Memory.open(workspace="~/notes") as mem:
        mem.sync()
        print(mem.tools.memory_search("what did we decide about the database?", max_results=5))
        print(mem.tools.memory_get("MEMORY.md", from_line=1, lines=20))

It puts together the provider in use (``embeddings/resolve.py``), the memory backend
(``backends/``: the index), the freshness machinery (``freshness/``), the one writer of memory
files (``notes/``) and the agent tools (``tools/``, reached as ``Memory.tools``). ``search`` and
``read`` raise typed errors; the tools never raise: a failure comes back as data with the next
step to take.
"""

from __future__ import annotations

import logging
import os
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .backends import Backend, open_backend
from .config import Settings, load_settings
from .embeddings.base import CachedModel, EmbeddingProvider, Remote
from .embeddings.resolve import AUTO, ProviderChoice, auto_provider, build_provider, resolve_provider
from .errors import (
    IndexCorruptError,
    MnemoclawError,
    PathDeniedError,
    ProviderError,
    ProviderResponseError,
    ReadOnlyError,
)
from .freshness import INLINE_SYNC_FILES, SEARCH_LOCK_WAIT, Freshness
from .markdown import provenance
from .notes import Notes, tombstones
from .notes.discovery import session_metas
from .notes.index import BackendIndex
from .notes.paths import read_lines, resolve_memory_path, split_citation
from .promote.events import RecallEvents
from .promote.record import Found, record
from .search.measured import floor_summary, ranking_summary
from .search.stages import this_project_first
from .store import Store, open_store
from .store.base import SharedNamespaces
from .tools import CORPORA, MAX_QUERY_CHARS, MAX_RESULTS, SNIPPET_MAX_CHARS
from .tools.dispatch import Tools
from .tools.services import Caller, Transcript
from .tools.wire import Situation, make_snippet
from .types import Hit, IndexReport, Progress

log = logging.getLogger(__name__)

# After the provider failed to embed a query, searches go by keyword for this long
# instead of waiting for its retries (and timeouts) every time.
QUERY_EMBEDDING_RETRY_SECONDS = 60.0
# A search for one project reads this many times the results asked for before putting the
# other projects' entries last.
PROJECT_LOOKAHEAD = 3
# daily logs whose text recall events keep between searches (each known by its size and mtime)
READ_CACHE_FILES = 64
# settings reported as not taking effect, so each is said once per process on stderr
_SAID: set[str] = set()

__all__ = ["INLINE_SYNC_FILES", "MAX_QUERY_CHARS", "SNIPPET_MAX_CHARS", "SEARCH_LOCK_WAIT", "Memory",
           "auto_provider", "build_provider", "make_snippet", "resolve_provider"]


def say_once(message: str) -> None:
    if message not in _SAID:
        _SAID.add(message)
        log.warning("%s", message)


class Memory:
    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        provider: EmbeddingProvider | None | object = AUTO,
        clock: Callable[[], float] = time.time,
        background: bool = True,
    ):
        """``background=False`` (a short-lived process): work a search leaves over is not
        started in a thread but done by the next sync."""
        self.settings = settings
        self._clock = clock
        self.providers = ProviderChoice(settings, provider)
        self.backend: Backend = self._open_backend(store)
        self.freshness = Freshness(
            self.backend, settings.memory_search["sync"], workspace=str(settings.workspace),
            extra_paths=[str(p) for p in settings.extra_paths()],
            sessions_dir=str(settings.sessions_dir) if "sessions" in settings.index_sources() else None,
            inline_sync=self.sync, open_writer=lambda: _Writer(self), on_writer_error=self._writer_failed,
            allow_background=background)
        self._index = BackendIndex(self.backend, settings, self.sync, clock)
        self.notes = Notes(settings, self._index, clock)  # every write to the memory files
        self._vectors_error: str | None = None  # why new chunks were indexed without vectors
        self.recall_events = RecallEvents(settings.state_dir, clock=clock)  # opened at the first entry recalled
        self._recall_reads: dict[tuple[str, int, int], str | None] = {}  # daily logs recall events read
        self._query_embedding_off_until = 0.0
        for note in settings.ignored():
            if note not in settings.not_applied:
                say_once(note)
        if settings.not_applied:  # OpenClaw keys read and not applied: one line here, each in `status`
            n = len(settings.not_applied)
            say_once(f"{n} OpenClaw setting{'s' if n > 1 else ''} in {settings.config_path or 'the config'} "
                     f"{'are' if n > 1 else 'is'} read but not applied; `mnemoclaw status` names "
                     f"{'each' if n > 1 else 'it'} with what runs instead")

    def _open_backend(self, store: Store | None = None) -> Backend:
        s = self.settings
        return open_backend(s.memory["backend"], store=store or open_store(s.store_options()),
                            provider=self.providers.current, spec=s.index_spec(), options=s.query_options(),
                            clock=self._clock, qmd=s.qmd_config, qmd_home=s.qmd_home, transcripts=s.sessions_dir)

    @classmethod
    def open(
        cls,
        workspace: str | os.PathLike[str] | None = None,
        *,
        state_dir: str | os.PathLike[str] | None = None,
        config: str | os.PathLike[str] | dict[str, Any] | None = None,
        agent_id: str | None = None,
        overrides: dict[str, Any] | None = None,
        provider: EmbeddingProvider | None | object = AUTO,
        clock: Callable[[], float] = time.time,
        background: bool = True,
    ) -> Memory:
        settings = load_settings(workspace=workspace, state_dir=state_dir, config=config,
                                 agent_id=agent_id, overrides=overrides)
        return cls(settings, provider=provider, clock=clock, background=background)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.freshness.allow_background = False  # a watcher flush racing the close must not restart the writer
        self.freshness.stop()
        self.backend.close()
        self.recall_events.close()

    @property
    def provider(self) -> EmbeddingProvider | None:
        """The embedding provider in use (the fallback's while it serves)."""
        return self.providers.current

    @property
    def tools(self) -> Tools:
        """The agent tools over this memory, as an agent calls them (``Tools.said_by`` for another caller)."""
        return Tools(_Services(self))

    # -- the provider ---------------------------------------------------------------------
    def _provider_failed(self, exc: Exception) -> bool:
        """The provider in use failed: True if the fallback took over (the index is to be
        rebuilt with it); False to carry on with it (see ProviderChoice.switch)."""
        if not self.providers.switch(exc):
            return False
        self.freshness.restart_writer()  # it embeds with the old provider
        self.backend.use(self.providers.current)
        return True

    def _try_primary(self) -> bool:
        """If the fallback serves, go back to the primary when it works again."""
        if self.providers.fallback is None:
            return True
        if not self.providers.try_primary():
            return False
        self.freshness.restart_writer()
        self.backend.use(self.providers.current)
        return True

    def _writer_failed(self, exc: Exception) -> None:
        # the background writer could not reach the provider and no fallback was in use yet
        if isinstance(exc, ProviderError) and self._provider_failed(exc):
            self.freshness.request("fallback")

    # -- indexing -------------------------------------------------------------------------
    def sync(self, *, full: bool = False, progress: Progress | None = None, lock_timeout: float | None = None,
             sources: tuple[str, ...] | None = None, limit: int | None = None,
             fallback_now: bool = True, retry: bool = False, apart: bool = False) -> IndexReport:
        """Index what changed. If the provider cannot be reached and a fallback is configured,
        switch to it and rebuild with it right away (``fallback_now``) or in the background;
        with no fallback, index for keyword search and add the vectors later.
        ``retry`` (an explicit ``mnemoclaw index``): try again now whatever fell back — the
        primary provider while the fallback serves (the report's notes say which won), qmd, the
        chunks waiting for vectors. ``apart``: on a connection of its own, for a thread beside
        this object's searches (a web page's "sync now"). Undo copies a forget kept are deleted
        here once their time is up, and what a forget killed half-way still owes the index is
        finished first."""
        if apart:
            backend = self._open_backend()
            try:
                return self._sync_backend(backend, full=full, progress=progress, fallback_now=False)
            finally:
                backend.close()
        if not self._index.finishing and sources is None and limit is None and self._index.owed():
            finished = self._index.finish(full=full, progress=progress, lock_timeout=lock_timeout,
                                          fallback_now=fallback_now, retry=retry)
            if finished is not None:
                return finished.report
        self.notes.expire_copies()
        self.settings.refresh_transcripts()
        said = []
        if retry and self.providers.fallback is not None:
            fallback = dict(self.providers.fallback)
            if self._try_primary():
                said.append(f"the primary provider {self.provider.id if self.provider else 'none'} "
                            "works again: the index is rebuilt with it")
            else:
                said.append(f"still using the fallback provider {fallback['to']}: {fallback['from']} keeps failing")
        report = self._sync_backend(self.backend, full=full, progress=progress, lock_timeout=lock_timeout,
                                    sources=sources, limit=limit, fallback_now=fallback_now, retry=retry)
        report.notes[:0] = said
        return report

    def _sync_backend(self, backend: Backend, *, fallback_now: bool = True, retry: bool = False,
                      **kwargs: Any) -> IndexReport:
        if backend.read_only:
            fix = ("free some space, then run `mnemoclaw index`" if backend.read_only_why == "the disk is full"
                   else "give a writable --state-dir to index")
            raise ReadOnlyError(f"the index cannot be written ({backend.read_only_why}), so it was not synced; "
                                f"search and get still answer from it as it is. To sync, {fix}")
        try:
            report = backend.sync(**kwargs, retry=retry)
        except ProviderError as exc:
            if isinstance(exc, ProviderResponseError):
                raise
            if self._provider_failed(exc):
                if not fallback_now or backend is not self.backend:
                    self.freshness.request("fallback")
                    return IndexReport(reason=f"switched to the fallback provider "
                                              f"{self.settings.memory_search['fallback']} (the index is rebuilt "
                                              "with it in the background)")
                report = self.backend.sync(**kwargs)  # a rebuild with the fallback
            else:
                # no fallback: what is in the files is indexed for keyword search now, and the
                # vectors are added when the provider works again
                self._vectors_error = str(exc)
                log.warning("%s; indexing for keyword search only until it works again", exc)
                report = backend.sync(**kwargs, without_vectors=str(exc))
        except IndexCorruptError as exc:
            # the index cannot be used at all: start an empty one and fill it from the Markdown
            backend.recover(str(exc))
            report = backend.sync(**{**kwargs, "full": False})
        else:
            if report.vectors_error:
                self._vectors_error = report.vectors_error
            elif not report.vectors_pending:
                self._vectors_error = None
        self.freshness.error = None
        return report

    def start_background(self, *, watch: bool | None = None) -> Memory:
        """Everything a long-running process wants: session-start sync, watcher, interval sync
        (``Memory.freshness`` has each part, and ``stop``)."""
        self.freshness.start(watch=watch)
        return self

    # -- search -----------------------------------------------------------------------------
    def search(self, query: str, *, max_results: int | None = None, min_score: float | None = None,
               mode: str | None = None, sync: bool = True, kind: str | None = None,
               history: bool = False, corpus: str = "all", project: str | None = None,
               origin: str | None = None) -> list[Hit]:
        """Hits best first. ``kind``: only entries annotated with this type; ``history``: expired
        entries and the older values of keyed entries too (each marked ``superseded_by``);
        ``corpus``: ``memory`` (the Markdown), ``sessions`` (indexed transcripts) or ``all``
        (everything indexed; the ``memory_search`` tool reads ``memory`` unless asked);
        ``project``: entries annotated with another project come after this one's and the
        unannotated, scored no higher than what precedes them; ``origin``: only hits from there
        (provenance.ORIGINS)."""
        if not self.settings.memory_search["enabled"]:
            raise MnemoclawError("memory search is disabled (agents.defaults.memorySearch.enabled is false)")
        if sync and self._index.owed():  # a forget killed half-way: finished before anything is answered
            try:
                self._index.finish(lock_timeout=SEARCH_LOCK_WAIT)
            except (MnemoclawError, OSError) as exc:
                log.warning("could not finish an interrupted forget yet (%s); the next sync does", exc)
        if sync:
            self.freshness.before_search()
        else:
            self.freshness.left_over = None
        project = (project or "").strip().lower() or None
        if project or origin:  # look deeper, so the entries wanted can fill the places others held
            wanted = max_results or self.settings.query_options().max_results
            hits = self.search(query, max_results=min(MAX_RESULTS, wanted * PROJECT_LOOKAHEAD), min_score=min_score,
                               mode=mode, sync=False, kind=kind, history=history, corpus=corpus)
            if origin:
                hits = [h for h in hits if provenance.of(h.path, h.source, h.annotations)["origin"] == origin]
            return (this_project_first(hits, project) if project else hits)[:wanted]
        try:
            hits = self._search(query, max_results, min_score, mode, kind=kind, history=history, corpus=corpus)
        except IndexCorruptError as exc:
            hits = self._search_damaged(query, max_results, min_score, mode, exc, kind=kind, history=history,
                                        corpus=corpus)
        if self.backend.damaged() is not None:
            self.freshness.request("repair")  # a long-running process repairs at once; otherwise the next sync does
        return hits

    def _sources(self, corpus: str = "memory") -> tuple[str, ...] | None:
        """The index sources a search of ``corpus`` reads (None: every source there is)."""
        if corpus not in CORPORA:
            raise ValueError(f"corpus must be one of {', '.join(CORPORA)}; got {corpus!r}")
        indexed = self.settings.index_sources()
        if corpus == "all":
            return indexed if len(indexed) > 1 else None
        return (corpus,) if len(indexed) > 1 or corpus not in indexed else None

    def _search(self, query: str, max_results: int | None, min_score: float | None, mode: str | None, *,
                kind: str | None = None, history: bool = False, corpus: str = "memory") -> list[Hit]:
        wanted = mode or self.backend.default_mode()
        if wanted != "keyword" and not self.backend.vectors_usable():
            mode = "keyword"  # the index's vectors are from another model (a rebuild is under way)
        elif wanted != "keyword" and time.monotonic() < self._query_embedding_off_until:
            mode = "keyword"  # the provider just failed to embed a query: do not wait for it on every search
        kwargs: dict[str, Any] = dict(max_results=max_results, min_score=min_score, sources=self._sources(corpus),
                                      kind=kind, history=history)
        try:
            return self.backend.search(query, mode=mode, **kwargs).hits
        except ProviderError as exc:
            # the query could not be embedded: answer by keyword, and switch provider if configured
            if self._provider_failed(exc):
                self.freshness.request("fallback")
            else:
                self.freshness.error = f"vector search unavailable: {exc}"
                self._query_embedding_off_until = time.monotonic() + QUERY_EMBEDDING_RETRY_SECONDS
            return self.backend.search(query, mode="keyword", **kwargs).hits

    def _search_damaged(self, query: str, max_results: int | None, min_score: float | None, mode: str | None,
                        exc: IndexCorruptError, *, kind: str | None = None, history: bool = False,
                        corpus: str = "memory") -> list[Hit]:
        """Damage met while searching: answer from what can still be read, or else after
        rebuilding the index from the Markdown."""
        from .store.base import damage_reason

        self.backend.mark_damaged(damage_reason(exc))
        answer = self.backend.search_readable(query, max_results=max_results, min_score=min_score, mode=mode,
                                              sources=self._sources(corpus), kind=kind, history=history)
        if answer is not None:
            return answer.hits
        if self.backend.read_only:
            return []
        try:  # nothing readable answers this query: repair now, it is the only way to answer
            self.sync(lock_timeout=SEARCH_LOCK_WAIT, fallback_now=False)
            return self._search(query, max_results, min_score, mode, kind=kind, history=history, corpus=corpus)
        except (MnemoclawError, OSError) as err:
            self.freshness.error = str(err)
            return []

    def _indexing(self) -> dict[str, Any] | None:
        """The sync or rebuild under way right now, in this process or another, and how far it is."""
        state = self.backend.indexing()
        if state is None and self.freshness.left_over is not None:
            done, total = self.freshness.left_over  # this search indexed the newest files; the rest is on its way
            state = {"kind": "sync", "filesDone": done, "filesTotal": total, "by": "this process"}
        return state

    # -- reading and status ------------------------------------------------------------------
    def read(self, path: str, from_line: int | None = None, lines: int | None = None) -> tuple[str, str | None]:
        """(the path as results show it, the text or ``None`` if the file does not exist). A
        citation as results give it (``memory/2026-03-01.md#L3-L5``) reads those lines, unless
        ``from_line`` / ``lines`` say otherwise. What was forgotten is not read back."""
        return _read(self, path, from_line, lines)

    def status(self, *, check_dirty: bool = True, check_integrity: bool = False, deep: bool = False) -> dict[str, Any]:
        """The index and how it is kept. ``check_integrity`` reads every page and chunk of
        the index (about 0.5 s per 10 000 chunks; ``deep`` checks the keyword index too) so
        that damage is found even where no search has looked yet; damage found before, by
        any process, is always reported."""
        return _status(self, check_dirty=check_dirty, check_integrity=check_integrity, deep=deep)



def _read(memory: Memory, path: str, from_line: int | None, lines: int | None) -> tuple[str, str | None]:
    cited = split_citation(path) if isinstance(path, str) else None
    if cited is not None:
        path = cited[0]
        from_line = cited[1] if from_line is None else from_line
        lines = cited[2] - cited[1] + 1 if lines is None and cited[2] >= cited[1] else lines
    if from_line is not None and from_line < 1:
        raise PathDeniedError(f"from must be 1 or more (lines are numbered from 1), got {from_line}")
    if lines is not None and lines < 0:
        raise PathDeniedError(f"lines must be 0 or more, got {lines}")
    if isinstance(path, str) and path.startswith("shared/"):  # another namespace's file, from the index
        store = memory.backend.store
        text = store.shared_file(path.strip()) if isinstance(store, SharedNamespaces) else None
        if text is None:
            raise PathDeniedError(f"{path!r} is not a file of a namespace this agent shares "
                                  "(memorySearch.store.shared)")
        chosen = text.split("\n")[(from_line or 1) - 1:]
        return path.strip(), "\n".join(chosen[:lines] if lines is not None else chosen)
    local = memory.backend.local_path(path) if isinstance(path, str) else path
    resolved = resolve_memory_path(local, memory.settings.workspace, memory.settings.extra_paths())
    shown = memory.backend.shown_path(resolved.display)
    fences = tombstones.load(memory.settings.state_dir)
    if not fences.tombstones:
        return shown, read_lines(resolved.abspath, from_line, lines, shown)
    whole = read_lines(resolved.abspath, None, None, shown)
    if whole is None:
        return shown, None
    chosen = fences.view(resolved.display, "memory", whole)[0].split("\n")[(from_line or 1) - 1:]
    return shown, "\n".join(chosen[:lines] if lines is not None else chosen)


def _status(memory: Memory, *, check_dirty: bool, check_integrity: bool, deep: bool) -> dict[str, Any]:
    index = memory.backend.status(check_dirty=check_dirty, check_integrity=check_integrity, deep=deep)
    meta = index.pop("meta")
    host_notes = index.pop("hostNotes", [])  # another host writes this namespace too
    provider = memory.provider
    options = memory.settings.query_options()
    asked = memory.settings.memory["backend"]
    unpaid = tombstones.load(memory.settings.state_dir, quiet=True).owed()
    out: dict[str, Any] = {
        "agent": memory.settings.agent_id,
        "workspace": str(memory.settings.workspace),
        "workspaceExists": memory.settings.workspace.is_dir(),
        "config": str(memory.settings.config_path) if memory.settings.config_path else None,
        "backend": memory.backend.name if asked == memory.backend.name
        else f"{memory.backend.name} (memory.backend {asked!r} is not available in this version)",
        **index,
        "provider": provider.id if provider else "none",
        "model": provider.model if provider else None,
        "endpoint": provider.endpoint if isinstance(provider, Remote) else None,  # never the key
        "fallback": memory.providers.fallback,
        "cache": _cache_status(memory.settings, meta, index["cacheEntries"] or 0),
        "modelCache": _model_cache_status(provider),
        "fusion": options.fusion,
        "ranking": ranking_summary(options),
        "minScore": floor_summary(options),
        "ignoredSettings": memory.settings.ignored(),
        "extraPaths": [str(p) for p in memory.settings.extra_paths()],
        "vectorsError": memory._vectors_error,
        "warnings": [*memory.settings.warnings, *host_notes, *_readable_by_others(memory.settings.state_dir)],
        "background": memory.freshness.status(),
        "forgetUnfinished": {"since": unpaid.at, "files": len(unpaid.paths),
                             "owes": "index its files again, delete their cached vectors, scrub, check"}
        if unpaid else None,
    }
    if memory.settings.openclaw_layout is not None:
        out["openclaw"] = memory.settings.openclaw_layout.describe()
    out["indexing"] = memory._indexing() if index.get("indexing") is None else index["indexing"]
    if not out["workspaceExists"]:
        out.pop("dirty", None)
    return out


class _Services:
    """``ToolServices`` (``tools/services.py``) over a ``Memory``: what the agent tools ask of it."""

    def __init__(self, memory: Memory):
        self._memory = memory

    @property
    def settings(self) -> Settings:
        return self._memory.settings

    @property
    def notes(self) -> Notes:
        return self._memory.notes

    def search(self, query: str, **options: Any) -> list[Hit]:
        return self._memory.search(query, **options)

    def read(self, path: str, from_line: int | None = None, lines: int | None = None) -> tuple[str, str | None]:
        return self._memory.read(path, from_line, lines)

    def status(self, *, check_dirty: bool = True) -> dict[str, Any]:
        return self._memory.status(check_dirty=check_dirty)

    def transcripts(self) -> Iterator[Transcript]:
        memory = self._memory
        fences = tombstones.load(memory.settings.state_dir)
        own = memory.settings.agent_id
        for agent, folder in memory._index.transcript_folders():
            for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else ():
                try:
                    data = path.read_text("utf-8", errors="replace")
                except OSError:
                    continue
                session = path.stem if agent == own else f"{agent}/{path.stem}"
                # what was forgotten is not found
                yield Transcript(session, agent, fences.transcript(path.stem, data)[0])

    def situation(self, hits: Sequence[Hit] = ()) -> Situation:
        memory = self._memory
        backend, provider = memory.backend, memory.provider
        sessions = session_metas(memory.settings.sessions_dir) if any(h.source == "sessions" for h in hits) else {}
        return Situation(provider=provider.id if provider else "none", model=provider.model if provider else None,
                         fallback=memory.providers.fallback is not None, mode=backend.default_mode(),
                         refusal=backend.scope_denied(), sessions=sessions, backend_fallback=backend.fallback,
                         damaged=backend.damaged(), read_only_why=backend.read_only_why if backend.read_only else None,
                         last_sync=backend.last_sync() if backend.read_only else None,
                         indexing=memory._indexing(), update_error=memory.freshness.error,
                         vectors_error=memory._vectors_error)

    def corpus_size(self) -> int:
        return self._memory.backend.store.corpus_size()

    def recalled(self, query: str, found: Sequence[Found], *, via: str, caller: Caller) -> None:
        memory = self._memory
        if not found:
            return

        def read(path: str) -> str | None:
            try:
                stat = os.stat(memory.settings.workspace / path)
                seen = (path, stat.st_mtime_ns, stat.st_size)
            except (OSError, ValueError):
                seen = None
            if seen is not None and seen in memory._recall_reads:
                return memory._recall_reads[seen]
            try:
                text = memory.read(path)[1]
            except (MnemoclawError, OSError, ValueError):
                return None
            if seen is not None:  # a daily log read again only once it changed
                if len(memory._recall_reads) > READ_CACHE_FILES:
                    memory._recall_reads.clear()
                memory._recall_reads[seen] = text
            return text

        # in the search's own thread: 1.4 ms at most measured (a thread of its own cost more: GIL-bound)
        record(memory.recall_events, memory.settings.agent_id, query, found, read, via=via, session=caller.session)


class _Writer:
    """What the background thread syncs with: its own connection to the index, the owner's
    decisions about the provider."""

    def __init__(self, memory: Memory):
        self.memory = memory
        self.backend = memory._open_backend()

    def sync(self, *, lock_timeout: float | None = None, progress: Progress | None = None) -> IndexReport:
        return self.memory._sync_backend(self.backend, lock_timeout=lock_timeout, progress=progress,
                                         fallback_now=False)

    def close(self) -> None:
        self.backend.close()


def _readable_by_others(state_dir: Path) -> list[str]:
    """What ``status`` says of a state directory other users can read (mnemoclaw makes its
    folders 0700, but one made by an older version, or by hand, may not be)."""
    try:
        mode = os.stat(state_dir).st_mode & 0o777
    except OSError:
        return []
    if not mode & 0o077:
        return []
    quoted = shlex.quote(str(state_dir))
    return [f"the state directory {state_dir} can be read by other users of this machine (mode {mode:o}): it holds "
            f"the index of your memory, transcripts and tombstones; make it yours alone with `chmod -R go-rwx "
            f"{quoted}`"]


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
    """The bundled model's cache folder: where, how big (``None`` for other providers)."""
    if not isinstance(provider, CachedModel):
        return None
    folder = provider.cache_dir
    if not folder:
        return {"path": None, "bytes": 0, "note": "off (local.modelCacheDir / MNEMOCLAW_MODEL_CACHE)"}
    from .embeddings.usem3_cache import cache_bytes

    return {"path": folder, "bytes": cache_bytes(folder)}
