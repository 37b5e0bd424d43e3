"""``Memory``: one object per agent workspace, the library's facade.

    from mnemoclaw import Memory

    with Memory.open(workspace="~/notes") as mem:
        mem.sync()
        print(mem.memory_search("what did we decide about the database?", max_results=5))
        print(mem.memory_get("MEMORY.md", from_line=1, lines=20))

It puts together the provider in use (``providers.py``), the memory backend
(``backends/``: the index), the freshness machinery (``freshness.py``) and the agent
tools (``tools.py``: their wire format). ``search``/``get`` raise typed errors;
``memory_search``/``memory_get``/``memory_append`` are the agent tools and never raise:
a failure comes back as data with the next step to take.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from .backends import Backend, BuiltinBackend, QmdBackend, open_backend
from .config import Settings, load_settings, openclaw_transcripts
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
from .index.indexer import Indexer
from .markdown import provenance
from .notes import Forgotten, Notes, owed, tombstones
from .notes.paths import read_lines, resolve_memory_path, split_citation
from .search.measured import floor_summary, ranking_summary
from .search.stages import this_project_first
from .store import Store, open_store
from .store.base import SharedNamespaces
from .tools import (
    ALL_CORPORA_RESULTS,
    ANNOTATION_PARAMS,
    CORPORA,
    GET,
    MAX_QUERY_CHARS,
    MAX_RESULTS,
    SEARCH,
    SESSIONS,
    SNIPPET_MAX_CHARS,
    ToolArgumentError,
)
from .tools.wire import (
    AGENT,
    PERSON,
    SearchAnswer,
    Situation,
    append_failed,
    explain,
    get_failed,
    make_snippet,
    scrub,
    search_failed,
)
from .types import Hit, IndexReport, Progress, SourceFile

log = logging.getLogger(__name__)

# After the provider failed to embed a query, searches go by keyword for this long
# instead of waiting for its retries (and timeouts) every time.
QUERY_EMBEDDING_RETRY_SECONDS = 60.0
# A search for one project reads this many times the results asked for before putting the
# other projects' entries last.
PROJECT_LOOKAHEAD = 3
# settings reported as not taking effect, so each is said once per process on stderr
_SAID: set[str] = set()

__all__ = ["INLINE_SYNC_FILES", "MAX_QUERY_CHARS", "SNIPPET_MAX_CHARS", "SEARCH_LOCK_WAIT", "Memory",
           "auto_provider", "build_provider", "make_snippet", "resolve_provider"]


def say_once(message: str) -> None:
    if message not in _SAID:
        _SAID.add(message)
        log.warning("%s", message)


def _confirmed(shown: dict[str, Any], digest: str, confirm: str | None,
               run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``memory_forget``'s two calls: without ``confirm`` the preview and its id, with the id
    the removal (``run``), any other id refused."""
    if not confirm:
        return {"applied": False, **shown,
                "note": "nothing was removed: show the user what would go, and only if they agree call "
                        "memory_forget again with the same arguments and confirm set to id"}
    if confirm != digest:
        return {"applied": False, "error": "confirm does not match what these arguments name now (memory changed, "
                "or the id is from another preview); nothing was removed", **shown}
    return {"applied": True, **shown, **{k: v for k, v in run().items() if k != "removed"}}


class Memory:
    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        provider: EmbeddingProvider | None | object = AUTO,
        clock: Callable[[], float] = time.time,
        background: bool = True,
        reader: str = AGENT,
    ):
        """``background=False`` (a short-lived process): work a search leaves over is not
        started in a thread but done by the next sync. ``reader="person"`` when the answers
        are read by the person at this machine (the CLI), not an agent: messages name the real
        workspace and state directory instead of "the workspace" and STATE_DIR, and say which
        command to run where an agent is told what to tell its user."""
        self.settings = settings
        self.clock = clock
        self.reader = reader
        self.providers = ProviderChoice(settings, provider)
        self.backend: Backend = self._open_backend(store)
        self.freshness = Freshness(
            self.backend, settings.memory_search["sync"], workspace=str(settings.workspace),
            extra_paths=[str(p) for p in settings.extra_paths()],
            sessions_dir=str(settings.sessions_dir) if "sessions" in settings.index_sources() else None,
            inline_sync=self.sync, open_writer=lambda: _Writer(self), on_writer_error=self._writer_failed,
            allow_background=background)
        self.notes = Notes(settings, _NotesIndex(self), clock)  # every write to the memory files
        self.vectors_error: str | None = None  # why new chunks were indexed without vectors
        self._query_embedding_off_until = 0.0
        self._finishing = False  # finishing what a forget owes: its own sync must not start another
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
                            clock=self.clock, qmd=s.qmd_config, qmd_home=s.qmd_home, transcripts=s.sessions_dir)

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

    # -- what is inside (for the CLI, benchmarks and tests) -------------------------------
    @property
    def provider(self) -> EmbeddingProvider | None:
        return self.providers.current

    @property
    def fallback(self) -> dict[str, Any] | None:
        return self.providers.fallback

    @property
    def store(self) -> Store:
        assert isinstance(self.backend, BuiltinBackend | QmdBackend)
        return self.backend.store

    @property
    def indexer(self) -> Indexer:
        assert isinstance(self.backend, BuiltinBackend | QmdBackend)
        return self.backend.indexer

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
             fallback_now: bool = True, retry: bool = False) -> IndexReport:
        """Index what changed. If the provider cannot be reached and a fallback is configured,
        switch to it and rebuild with it right away (``fallback_now``) or in the background;
        with no fallback, index for keyword search and add the vectors later.
        ``retry`` (an explicit ``mnemoclaw index``): try again now whatever fell back — the
        primary provider while the fallback serves (the report's notes say which won), qmd, the
        chunks waiting for vectors. Undo copies a forget kept are deleted here once their time is up,
        and what a forget killed half-way still owes the index is finished first."""
        if not self._finishing and sources is None and limit is None and self._owed():
            finished = self.finish_forgets(full=full, progress=progress, lock_timeout=lock_timeout,
                                           fallback_now=fallback_now, retry=retry)
            if finished is not None:
                return finished.report
        self.notes.expire_copies()
        self.settings.refresh_transcripts()
        said = []
        if retry and self.providers.fallback is not None:
            fallback = dict(self.providers.fallback)
            if self._try_primary():
                said.append(f"the primary provider {self.providers.current.id if self.providers.current else 'none'} "
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
                self.vectors_error = str(exc)
                log.warning("%s; indexing for keyword search only until it works again", exc)
                report = backend.sync(**kwargs, without_vectors=str(exc))
        except IndexCorruptError as exc:
            # the index cannot be used at all: start an empty one and fill it from the Markdown
            backend.recover(str(exc))
            report = backend.sync(**{**kwargs, "full": False})
        else:
            if report.vectors_error:
                self.vectors_error = report.vectors_error
            elif not report.vectors_pending:
                self.vectors_error = None
        self.freshness.error = None
        return report

    # -- what forgets owe -----------------------------------------------------------------
    def _owed(self) -> bool:
        return bool(tombstones.load(self.settings.state_dir, quiet=True).pending) and not self.backend.read_only

    def finish_forgets(self, *, before: set[str] | None = None, **sync: Any) -> Forgotten | None:
        """Pay what forgets owe the index (``notes/owed.py``), one killed half-way included:
        None when nothing is owed, or the index cannot be written now (``status`` says so until
        it can). ``sync``: how to sync meanwhile (``Memory.sync``'s arguments)."""
        if self._finishing or self.backend.read_only or not isinstance(self.backend, BuiltinBackend | QmdBackend):
            return None
        self._finishing = True
        try:
            return owed.finish(self.store, self.settings.state_dir, lambda: self.sync(**sync), before=before)
        finally:
            self._finishing = False

    # -- keeping fresh --------------------------------------------------------------------
    def sync_apart(self, *, full: bool = False, progress: Progress | None = None) -> IndexReport:
        """``sync`` on a connection of its own, for a thread beside this object's searches (a
        web page's "sync now"); the index's write lock keeps it from meeting another writer."""
        backend = self._open_backend()
        try:
            return self._sync_backend(backend, full=full, progress=progress, fallback_now=False)
        finally:
            backend.close()

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
        if sync and self._owed():  # a forget killed half-way: finished before anything is answered
            try:
                self.finish_forgets(fallback_now=False, lock_timeout=SEARCH_LOCK_WAIT)
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

    def indexing(self) -> dict[str, Any] | None:
        """The sync or rebuild under way right now, in this process or another, and how far it is."""
        state = self.backend.indexing()
        if state is None and self.freshness.left_over is not None:
            done, total = self.freshness.left_over  # this search indexed the newest files; the rest is on its way
            state = {"kind": "sync", "filesDone": done, "filesTotal": total, "by": "this process"}
        return state

    # -- the agent tools ----------------------------------------------------------------------
    def memory_search(self, query: str, max_results: int | None = None, min_score: float | None = None, *,
                      mode: str | None = None, kind: str | None = None,
                      history: bool | None = None, corpus: str | None = None,
                      project: str | None = None, origin: str | None = None) -> dict[str, Any]:
        """The ``memory_search`` tool: never raises; failures come back with an ``action``."""
        try:
            args = SEARCH.check(query=query, max_results=max_results, min_score=min_score, kind=kind,
                                history=history, corpus=corpus, project=project, origin=origin)
        except ToolArgumentError as exc:
            if isinstance(query, str) and len(query) > MAX_QUERY_CHARS:  # refused at once, and not "unavailable"
                return {"results": [], "error": f"the query is {len(query)} characters long; at most "
                        f"{MAX_QUERY_CHARS}", "action": "search for the key words or one sentence of what you "
                        "are looking for"}
            return search_failed(exc, self.public)
        if not args["query"].strip():  # asked for nothing: not "memory has nothing on this"
            return {"results": [], "error": "the query is empty",
                    "action": "call memory_search again with the words of what you are looking for"}
        denied = self.backend.scope_denied() if isinstance(self.backend, QmdBackend) else None
        if denied:
            say_once(f"memory_search refused: {denied} (chatType direct, agent {self.settings.agent_id})")
            return {"results": [], "mode": mode or self.backend.default_mode(),
                    "note": f"memory search is off in this chat: {denied}; say you cannot search memory here"}
        corpus = args["corpus"] or ("sessions" if args["origin"] == provenance.TRANSCRIPT else "memory")
        if corpus == "sessions" and "sessions" not in self.settings.index_sources():
            return {"results": [], "corpus": corpus,
                    "error": "past conversations are not indexed for this agent (memory.search.sources lacks "
                             "\"sessions\", or memory.search.experimental.sessionMemory is off)",
                    "action": "use sessions_search to find their exact words, or corpus memory; to index them, "
                              "set both in the config"}
        wanted = args["max_results"]
        if wanted is None and corpus == "all":
            wanted = ALL_CORPORA_RESULTS
        try:
            hits = self.search(args["query"], max_results=wanted, min_score=args["min_score"], mode=mode,
                               kind=args["kind"], history=bool(args["history"]), corpus=corpus,
                               project=args["project"], origin=args["origin"])
        except (MnemoclawError, ValueError, OSError) as exc:
            return search_failed(exc, self.public)
        wire = self.answer(hits, args["query"], mode, args["min_score"]).wire()
        if corpus != "memory":
            wire["corpus"] = corpus
        return wire

    def answer(self, hits: list[Hit], query: str, mode: str | None = None, min_score: float | None = None, *,
               citations: bool | None = None) -> SearchAnswer:
        """``hits`` as ``memory_search`` answers them: with the provider, and warnings for
        whatever makes them incomplete (indexing, damage, a read-only or stale index)."""
        provider = self.provider
        answer = SearchAnswer(hits, query, citations=self.settings.memory["citations"] != "off" if citations is None
                              else citations,
                              provider=provider.id if provider else "none",
                              model=provider.model if provider else None, fallback=self.fallback is not None,
                              mode=mode or self.backend.default_mode(),
                              min_score=self.settings.query_options().min_score if min_score is None else min_score,
                              sessions=self.session_channels() if any(h.source == "sessions" for h in hits) else {})
        explain(answer, self._situation(), self.reader)
        answer.warnings[:] = [self.public(w) for w in answer.warnings]
        return answer

    def session_channels(self) -> dict[str, dict[str, str]]:
        """Each transcript's channel and chat type, from its ``sessions.json`` ({} when there is none
        or it cannot be read: a result then shows its session without them)."""
        from .notes.discovery import session_metas

        return session_metas(self.settings.sessions_dir)

    def _situation(self) -> Situation:
        backend = self.backend
        return Situation(backend_fallback=backend.fallback if isinstance(backend, QmdBackend) else None,
                         damaged=backend.damaged(),
                         read_only_why=backend.read_only_why if backend.read_only else None,
                         last_sync=backend.last_sync() if backend.read_only else None,
                         indexing=self.indexing(), update_error=self.freshness.error,
                         vectors_error=self.vectors_error)

    def memory_get(self, path: str, from_line: int | None = None, lines: int | None = None) -> dict[str, Any]:
        """The ``memory_get`` tool: never raises."""
        try:
            args = GET.check(path=path, from_line=from_line, lines=lines)
            return self.get(args["path"], args["from_line"], args["lines"])
        except (MnemoclawError, ValueError, OSError) as exc:
            return get_failed(path, exc, self.public)

    def memory_append(self, text: str, target: str | None = None, *, importance: int | None = None,
                      kind: str | None = None, expires: str | None = None, key: str | None = None,
                      session: str | None = None, channel: str | None = None,
                      chat: str | None = None) -> dict[str, Any]:
        """The ``memory_append`` tool: never raises. What it writes is the agent's
        (``<!-- origin: agent -->``, with the session, channel and chat type it was said in when
        given), so it can be told from the owner's lines, found by origin and forgotten by session."""
        try:  # the one writer of memory files checks the text and names every target it refuses
            given = {"importance": importance, "kind": kind, "expires": expires, "key": key}
            for param in ANNOTATION_PARAMS:
                param.check(given[param.keyword])
            return {"ok": True, **self.notes.append(text, target, importance=importance, kind=kind, expires=expires,
                                                    key=key, origin="agent", session=session, channel=channel,
                                                    chat=chat)}
        except (MnemoclawError, OSError, ValueError) as exc:
            return append_failed(exc, self.public)

    def memory_status(self) -> dict[str, Any]:
        return self.status()

    def session_dirs(self) -> list[tuple[str, Path]]:
        """The transcript folders ``sessions_search`` may read, by agent: this agent's own, or
        every agent's beside it when ``tools.sessions.visibility`` is ``"all"``."""
        self.settings.refresh_transcripts()
        own = self.settings.sessions_dir
        tools_cfg = self.settings.raw.get("tools")
        sessions_cfg = tools_cfg.get("sessions") if isinstance(tools_cfg, dict) else None
        if not isinstance(sessions_cfg, dict) or sessions_cfg.get("visibility") != "all":
            return [(self.settings.agent_id, own)]
        layout = self.settings.openclaw_layout
        if self.settings.openclaw_dir is not None and layout is not None:  # every OpenClaw agent, its way
            from .sessions.openclaw import agents

            out = [(self.settings.agent_id, own)]
            for agent in agents(self.settings.openclaw_dir):
                if agent != self.settings.agent_id:
                    found = openclaw_transcripts(self.settings.openclaw_dir, agent, self.settings.state_dir,
                                                 layout.version)
                    if found.sessions_dir.is_dir():
                        out.append((agent, found.sessions_dir))
            return out
        agents_root = own.parent.parent
        others = sorted(p for p in agents_root.glob("*/sessions") if p.is_dir() and p != own)
        return [(self.settings.agent_id, own), *((p.parent.name, p) for p in others)]

    def sessions_search(self, query: str, role: str | None = None, since: str | None = None,
                        until: str | None = None, max_results: int | None = None) -> dict[str, Any]:
        """The ``sessions_search`` tool: never raises; a bad argument comes back as ``error``."""
        from .sessions.search import parse_day, search_sessions

        try:
            args = SESSIONS.check(query=query, role=role, since=since, until=until, max_results=max_results)
            first = parse_day(args["since"], "since") if args["since"] else None
            last = parse_day(args["until"], "until") if args["until"] else None
        except (ToolArgumentError, ValueError) as exc:
            return {"results": [], "error": str(exc), "action": "call sessions_search again as the error says"}
        if not args["query"].strip():
            return {"results": [], "error": "the query is empty",
                    "action": "call sessions_search again with the words to find"}
        dirs = self.session_dirs()
        by_id: dict[str, str] = {}
        fences = tombstones.load(self.settings.state_dir)

        def transcripts() -> Iterator[tuple[str, str]]:
            for agent, folder in dirs:
                for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else ():
                    session = path.stem if agent == self.settings.agent_id else f"{agent}/{path.stem}"
                    try:
                        data = path.read_text("utf-8", errors="replace")
                    except OSError:
                        continue
                    by_id[session] = agent
                    yield session, fences.transcript(path.stem, data)[0]  # what was forgotten is not found

        found = search_sessions(transcripts(), args["query"], roles=(args["role"],) if args["role"] else (),
                                since=first, until=last, limit=int(args["max_results"] or 10))
        out: dict[str, Any] = {"results": [
            {"session": h.session, "agent": by_id.get(h.session, self.settings.agent_id), "line": h.line,
             "role": h.role, "timestamp": (time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(h.timestamp))
                                           if h.timestamp is not None else None), "excerpt": h.excerpt}
            for h in found.hits], "sessionsSearched": found.sessions}
        if found.unreadable:
            out["unreadable"] = [{"session": s, "why": why} for s, why in found.unreadable]
        if not found.hits:
            out["note"] = (f"no message of the {found.sessions} session{'s' if found.sessions != 1 else ''} "
                           "searched holds every word of the query")
        return out

    def memory_forget(self, target: str | None = None, confirm: str | None = None, *, session: str | None = None,
                      source: str | None = None, participant: str | None = None,
                      since: str | None = None) -> dict[str, Any]:
        """The ``memory_forget`` tool (offered when memory.forget.tool is true): a preview with an
        id, then, called again with ``confirm`` = that id, the removal; by a query or citation
        (``target``) or by origin (``session``, ``source``, ``participant``, ``since``). Never raises."""
        origins = [(k, v) for k, v in (("session", session), ("source", source), ("participant", participant)) if v]
        if len(origins) + bool(target) != 1:
            return {"applied": False, "error": "say what to forget: one of target, session, source or participant"}
        if since and not origins:
            return {"applied": False, "error": "since goes with session, source or participant"}
        try:
            if origins:
                origin = self.notes.forget_origin_plan(*origins[0], since)
                if origin.empty():
                    return {"applied": False, **origin.as_dict(),
                            "note": f"nothing in memory came from {origin.target}"}

                def forget_origin() -> dict[str, Any]:
                    done = self.notes.forget_origin(origin)
                    return {**done, "tombstone": self.public(done["tombstone"])}
                return _confirmed(origin.as_dict(), origin.digest(), confirm, forget_origin)
            assert target is not None
            plan = self.notes.forget_plan(target)
            return _confirmed(plan.as_dict(), plan.digest(), confirm, lambda: self.notes.forget(plan))
        except (MnemoclawError, OSError) as exc:
            return {"applied": False, "error": self.public(str(exc))}

    def public(self, message: str) -> str:
        """An error as its reader sees it: for an agent, paths relative to the workspace (the
        state directory as STATE_DIR), never where either is on this machine; a person at this
        machine sees them as they are."""
        if self.reader == PERSON:
            return message
        return scrub(message, ((str(self.settings.workspace), "", "the workspace"),
                               (str(self.settings.state_dir), "STATE_DIR/", "STATE_DIR")))

    # -- reading and writing --------------------------------------------------------------------
    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> dict[str, Any]:
        """``{"path", "text"}``: the lines asked for; empty text past the end or for a missing file."""
        shown, text = self.read(path, from_line, lines)
        return {"path": shown, "text": text or ""}

    def read(self, path: str, from_line: int | None = None, lines: int | None = None) -> tuple[str, str | None]:
        """(the path as results show it, the text or ``None`` if the file does not exist). A
        citation as results give it (``memory/2026-03-01.md#L3-L5``) reads those lines, unless
        ``from_line`` / ``lines`` say otherwise."""
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
            store = self.store
            text = store.shared_file(path.strip()) if isinstance(store, SharedNamespaces) else None
            if text is None:
                raise PathDeniedError(f"{path!r} is not a file of a namespace this agent shares "
                                      "(memorySearch.store.shared)")
            chosen = text.split("\n")[(from_line or 1) - 1:]
            return path.strip(), "\n".join(chosen[:lines] if lines is not None else chosen)
        local = self.backend.local_path(path) if isinstance(path, str) else path
        resolved = resolve_memory_path(local, self.settings.workspace, self.settings.extra_paths())
        shown = self.backend.shown_path(resolved.display)
        fences = tombstones.load(self.settings.state_dir)
        if not fences.tombstones:
            return shown, read_lines(resolved.abspath, from_line, lines, shown)
        whole = read_lines(resolved.abspath, None, None, shown)
        if whole is None:
            return shown, None
        chosen = fences.view(resolved.display, "memory", whole)[0].split("\n")[(from_line or 1) - 1:]
        return shown, "\n".join(chosen[:lines] if lines is not None else chosen)

    # -- status -----------------------------------------------------------------------------------
    def status(self, *, check_dirty: bool = True, check_integrity: bool = False, deep: bool = False) -> dict[str, Any]:
        """The index and how it is kept. ``check_integrity`` reads every page and chunk of
        the index (about 0.5 s per 10 000 chunks; ``deep`` checks the keyword index too) so
        that damage is found even where no search has looked yet; damage found before, by
        any process, is always reported."""
        index = self.backend.status(check_dirty=check_dirty, check_integrity=check_integrity, deep=deep)
        meta = index.pop("meta")
        host_notes = index.pop("hostNotes", [])  # another host writes this namespace too
        provider = self.provider
        options = self.settings.query_options()
        asked = self.settings.memory["backend"]
        out: dict[str, Any] = {
            "agent": self.settings.agent_id,
            "workspace": str(self.settings.workspace),
            "workspaceExists": self.settings.workspace.is_dir(),
            "config": str(self.settings.config_path) if self.settings.config_path else None,
            "backend": self.backend.name if asked == self.backend.name
            else f"{self.backend.name} (memory.backend {asked!r} is not available in this version)",
            **index,
            "provider": provider.id if provider else "none",
            "model": provider.model if provider else None,
            "endpoint": provider.endpoint if isinstance(provider, Remote) else None,  # never the key
            "fallback": self.fallback,
            "cache": _cache_status(self.settings, meta, index["cacheEntries"] or 0),
            "modelCache": _model_cache_status(provider),
            "fusion": options.fusion,
            "ranking": ranking_summary(options),
            "minScore": floor_summary(options),
            "ignoredSettings": self.settings.ignored(),
            "extraPaths": [str(p) for p in self.settings.extra_paths()],
            "vectorsError": self.vectors_error,
            "warnings": [*self.settings.warnings, *host_notes, *_readable_by_others(self.settings.state_dir)],
            "background": self.freshness.status(),
        }
        if self.settings.openclaw_layout is not None:
            out["openclaw"] = self.settings.openclaw_layout.describe()
        unpaid = tombstones.load(self.settings.state_dir, quiet=True).owed()
        out["forgetUnfinished"] = ({"since": unpaid.at, "files": len(unpaid.paths),
                                    "owes": "index its files again, delete their cached vectors, scrub, check"}
                                   if unpaid else None)
        out["indexing"] = self.indexing() if index.get("indexing") is None else index["indexing"]
        if not out["workspaceExists"]:
            out.pop("dirty", None)
        return out


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


class _NotesIndex:
    """What the notes side asks of the index, answered from this memory's backend."""

    def __init__(self, memory: Memory):
        self.memory = memory

    def files(self, sources: Sequence[str] | None = None) -> list[SourceFile]:
        backend = self.memory.backend
        if not isinstance(backend, BuiltinBackend | QmdBackend):
            return []
        return backend.indexer.discover(list(sources) if sources is not None else None)

    def transcripts(self) -> list[SourceFile]:
        from .notes.discovery import discover_sessions

        out = []
        for agent, folder in self.memory.session_dirs():
            for f in discover_sessions(folder):
                shown = f.path if agent == self.memory.settings.agent_id else f"sessions/{agent}/{Path(f.abspath).name}"
                out.append(dataclasses.replace(f, path=shown))
        return out

    def refresh(self) -> IndexReport:
        return self.memory.sync(fallback_now=False)

    def finish(self) -> None:
        self.memory.finish_forgets(fallback_now=False)

    def forgetting(self, paths: Sequence[str], texts: Sequence[str], fences: Sequence[tombstones.Tombstone] = (),
                   said: Sequence[str] = ()) -> AbstractContextManager[Forgotten]:
        memory = self.memory
        at = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(memory.clock()))
        return owed.forgetting(memory.store, memory.settings.state_dir, at, paths, texts, fences, said,
                               lambda before: memory.finish_forgets(before=before, fallback_now=False))


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
