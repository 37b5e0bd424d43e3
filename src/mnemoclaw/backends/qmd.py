"""The QMD backend (``memory.backend: "qmd"``): a user's qmd index finds the files, mnemoclaw
ranks their chunks, and the builtin index answers whenever qmd cannot.

qmd runs isolated per agent (its own config and cache folders under the state dir, always
``--index mnemoclaw``), as a child process with a timeout, an output cap, no shell, and its
whole process group killed on timeout or close (``qmd_client.py``). Its collections are made
from the config: the workspace's memory files (``includeDefaultMemory``) and ``memory.qmd.paths``.

A search asks qmd for files (``qmd search`` ANDs every word, so a natural question rarely
matches as it is: mnemoclaw sends its analyser's content words, fewer when nothing comes
back), then ranks the chunks of those files, merged with the builtin keyword candidates
(``mergeBuiltin``, measured in docs/qmd.md), with the builtin ranking, so a score means what
it means everywhere and a result is a chunk's lines, not a whole file.

A search never waits for anything but its own ``qmd search``: setting qmd up (the ``--version``
probe, the collections, the first update, one trial search), retrying it after a failure and
``qmd update`` run in a background thread, started by a search or a sync. Until qmd is set up,
the builtin index answers and says so; a new process whose qmd an earlier one set up as this
config wants searches it at once (``SetUpRecord``). When qmd is missing, too old, times out or
answers garbage, the builtin index serves the search, the answer says so (``backendFallback``),
``status`` says so, one log line says so, and every process of the agent answers from the
builtin index without starting qmd until the background tries qmd again five minutes later
(the record they share: ``qmd_state.py``). Nothing in the user's folders is written by this
backend.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..embeddings.base import EmbeddingProvider
from ..errors import ConfigError, PathDeniedError
from ..notes.discovery import discover_sessions, display_path
from ..search.searcher import Searcher
from ..store.base import FileIndex, KeywordSource, Store
from ..text.tokenize import CJK_RUN, STOP_WORDS, WORD, KeywordQuery, keyword_query
from ..types import IndexReport, KeywordCandidates, Progress, SearchOutcome, SourceFile
from .builtin import BuiltinBackend
from .qmd_client import SHOWN, Collection, QmdClient, QmdError
from .qmd_config import QmdConfig
from .qmd_state import Held, SetUpRecord, SharedFallback

log = logging.getLogger(__name__)

MAX_CALLS = 3  # qmd searches one question may cost (each starts a process)
NOT_READY = ("qmd is not set up yet: its collections are being made and updated in the background "
             "(`mnemoclaw index` does it now and waits)")
MISSING = "Collection not found"  # qmd's words for a collection its config lacks
TRIAL = "mnemoclaw"  # what the setup searches for once, to know qmd answers


def export_sessions(transcripts: Path | None, dest: Path, retention_days: float, now: float,
                    fences: Any = None) -> int:
    """Each transcript (``*.jsonl``) as redacted Markdown in ``dest`` (``User: …`` / ``Assistant:
    …`` lines, as the builtin index reads them), without what a tombstone fences (``fences``,
    tombstones.Fences); exports of transcripts gone or untouched for ``retention_days`` are
    removed. How many files were written or removed."""
    from ..atomic import private_dir, write_atomic
    from ..notes.tombstones import Fences
    from ..sessions.transcript import parse_transcript

    fences = fences or Fences()

    private_dir(dest)
    keep: set[str] = set()
    changed = 0
    # the transcripts the builtin index would read (a linked one is not followed)
    for found in discover_sessions(transcripts) if transcripts else []:
        src = Path(found.abspath)
        try:
            if now - found.mtime_ns / 1e9 > retention_days * 86400:
                continue
            name = src.stem + ".md"
            keep.add(name)
            out = dest / name
            data, fenced = fences.transcript(src.stem, src.read_text(encoding="utf-8", errors="replace"))
            if not fenced and out.is_file() and out.stat().st_mtime_ns >= found.mtime_ns:
                continue
            rendered = parse_transcript(data)
            body = f"# Session {src.stem}\n\n{rendered.text}\n"
            if fenced and out.is_file() and out.read_text("utf-8", errors="replace") == body:
                continue
            write_atomic(out, body)
            os.utime(out, ns=(found.mtime_ns, found.mtime_ns))
            changed += 1
        except OSError as exc:
            log.warning("cannot export the transcript %s for qmd: %s", src, exc.strerror or exc)
    for old in dest.glob("*.md"):
        if old.name not in keep:
            old.unlink(missing_ok=True)
            changed += 1
    return changed


def _clock_time(when: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(when))


def _holding(collections: Sequence[Collection]) -> Held:
    return frozenset((c.name, str(c.path), c.pattern) for c in collections)


_JOBS: dict[str, threading.Lock] = {}
_JOBS_LOCK = threading.Lock()
_EXPORTING = threading.Lock()


def _job(home: Path) -> threading.Lock:
    """One setup or update at a time for an agent's qmd in this process: a search's backend and
    the background writer's each have one, and two `collection add`s of one name would fail."""
    with _JOBS_LOCK:
        return _JOBS.setdefault(os.path.realpath(home), threading.Lock())


def query_words(query: str) -> list[str]:
    """What qmd can match from a question: its content words (no stop words, question words or
    punctuation, which qmd would AND in) and its CJK runs cut into pairs, in the question's order."""
    cleaned = keyword_query(query)  # only to know it has terms; the words sent are the surface forms
    if cleaned.empty:
        return []
    out: list[str] = []
    from ..text.tokenize import _ZH_QUESTION  # the same question words the analyser drops

    for piece in _ZH_QUESTION.sub(" ", query).split():
        for run in CJK_RUN.findall(piece):
            out.extend(run[i:i + 2] for i in range(0, len(run), 2))
        for word in WORD.findall(CJK_RUN.sub(" ", piece)):
            if word.lower() not in STOP_WORDS and not (len(word) == 1 and word.isascii()):
                out.append(word.lower())
    return list(dict.fromkeys(w for w in out if w))


class _QmdKeywords:
    """The keyword side of a search inside the QMD backend: the chunks of the files qmd found
    (and, merged, the store's own candidates); before qmd has been asked, the store's own."""

    def __init__(self, store: FileIndex, own: KeywordSource, merge: bool):
        self.store = store
        self.own = own
        self.merge = merge
        self._local = threading.local()

    def files(self, paths: list[str] | None) -> None:
        """The files qmd found for the search this thread is running (None: qmd was not asked)."""
        self._local.paths = paths

    def keyword_candidates(self, query: KeywordQuery, depth: int,
                           sources: Sequence[str] | None = None) -> KeywordCandidates:
        paths: list[str] | None = getattr(self._local, "paths", None)
        own = self.own.keyword_candidates(query, depth, sources)
        if paths is None:
            return own
        found = self.store.file_candidates(query, paths, sources) if paths else KeywordCandidates()
        lines = {**own.lines, **found.lines} if self.merge else found.lines
        return KeywordCandidates(lines, own.df, own.n_docs, own.avgdl)

    def terms_starting(self, letters: str, shortest: int, longest: int) -> list[str]:
        return self.own.terms_starting(letters, shortest, longest)

    def doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        return self.own.doc_freqs(terms)


class QmdBackend:
    name = "qmd"

    def __init__(self, builtin: BuiltinBackend, config: QmdConfig, *, workspace: Path, home: Path,
                 transcripts: Path | None = None, clock: Callable[[], float] = time.time):
        self.builtin = builtin
        self.config = config
        self.transcripts = transcripts
        sessions = config.session_collection(home)
        self.extra = (*config.paths, *([sessions] if sessions else []))  # collections outside the workspace
        self.workspace = Path(workspace).absolute()
        self.client = QmdClient(config.command, home, config.timeout, dict(config.timeouts))
        self.clock = clock
        self.fallback: dict[str, Any] | None = None  # why this process's last answer did not come from qmd
        self.state = SharedFallback(home, self.client.identity, clock)
        self.set_up = SetUpRecord(home)
        self._held: Held | None = None  # the collections qmd was set up with, as this process knows
        self._waiting_since: float | None = None  # since when searches have waited for a setup
        self._last_update = self._updated_at()
        self._pending = False  # files changed since the last `qmd update`
        self._lock = threading.RLock()  # held for moments only: never while qmd runs
        self._worker: threading.Thread | None = None  # setting qmd up or updating it, in the background
        self._again = False  # the worker is asked to look again once it is done
        self._idle = threading.Event()
        self._idle.set()
        self._closed = False
        self._keywords = _QmdKeywords(builtin.store, builtin.store, config.merge_builtin)
        self.use(builtin.provider)

    # -- the builtin index underneath --------------------------------------------------
    @property
    def store(self) -> Store:
        return self.builtin.store

    @property
    def indexer(self) -> Any:
        return self.builtin.indexer

    @property
    def provider(self) -> EmbeddingProvider | None:
        return self.builtin.provider

    @provider.setter
    def provider(self, value: EmbeddingProvider | None) -> None:
        self.use(value)

    def use(self, provider: EmbeddingProvider | None) -> None:
        self.builtin.use(provider)
        store = self.builtin.store
        self.searcher = Searcher(keywords=self._keywords, vectors=store, chunks=store, cache=store, provider=provider,
                                 options=self.builtin.options, clock=self.clock)

    @property
    def read_only(self) -> bool:
        return self.builtin.read_only

    @property
    def read_only_why(self) -> str:
        return self.builtin.read_only_why

    def dirty_sources(self, sources: Sequence[str] | None = None) -> set[str]:
        return self.builtin.dirty_sources(sources)

    def needs_rebuild(self) -> str:
        return self.builtin.needs_rebuild()

    def has_files(self) -> bool:
        return self.builtin.has_files()

    def files(self, sources: Sequence[str] | None = None) -> list[SourceFile]:
        return self.builtin.files(sources)

    def recover(self, why: str) -> None:
        self.builtin.recover(why)

    def damaged(self) -> str | None:
        return self.builtin.damaged()

    def mark_damaged(self, why: str) -> None:
        self.builtin.mark_damaged(why)

    def indexing(self) -> dict[str, Any] | None:
        return self.builtin.indexing()

    def last_sync(self) -> float | None:
        return self.builtin.last_sync()

    def lock_holder(self) -> int | None:
        return self.builtin.lock_holder()

    def vectors_usable(self) -> bool:
        return self.builtin.vectors_usable()

    def default_mode(self) -> str:
        # searchMode chooses how qmd finds files; the chunks are ranked as the builtin index ranks
        # (hybrid with the bundled embedder, which needs no download, unlike qmd's models)
        return self.builtin.default_mode()

    def scope_denied(self, chat_type: str = "direct", channel: str | None = None, key: str = "") -> str | None:
        """Why ``memory.qmd.scope`` refuses this chat a search (every caller of this version, the
        CLI, MCP and ``chat``, is a direct chat)."""
        return self.config.scope_denies(chat_type, channel, key)

    def close(self) -> None:
        """Stop qmd's setup or update if one runs (its processes killed) and close the index."""
        with self._lock:
            self._closed = True
            worker = self._worker
        self.client.stop()
        if worker is not None:
            worker.join(timeout=5)
        self.builtin.close()

    # -- qmd itself: what a search may do -----------------------------------------------------
    def _may_search(self) -> bool:
        """qmd may be asked now: no failure of it is on record (from any process), and it holds
        the collections the config wants (set up by this process or an earlier one). Otherwise
        the builtin index answers, saying why, and what is due (a setup, a retry once the
        failure's retry time came) is started in the background: never waited for here."""
        with self._lock:
            record = self.state.get()
            if record is not None:
                self._held = None
                self._announce(record)
                due = self.state.due(record)
            elif self._ready():
                return True
            else:
                try:
                    self.client.executable()  # a qmd that is not there is known at once
                except QmdError as exc:
                    self._fail(str(exc))
                    return False
                self._not_ready()
                due = True
        if due:
            self._kick()
        return False

    def _ready(self) -> bool:
        wanted = _holding(self._wanted())
        if self._held != wanted:
            found = self.set_up.get(self.client.identity())
            if found is not None and found[1] == wanted:  # set up by an earlier process
                self.client.version, self._held = found
        return self._held == wanted

    def _not_ready(self) -> None:
        now = self.clock()
        if self._waiting_since is None:
            self._waiting_since = now
            log.info("qmd is being set up in the background; the builtin index answers meanwhile")
        self.fallback = {"from": "qmd", "reason": NOT_READY, "since": self._waiting_since, "retryAt": now}

    def _fail(self, why: str) -> None:
        """qmd failed here and now: recorded for every process of the agent."""
        if self.client.stopped:  # killed by close(): not qmd's failure
            return
        with self._lock:
            self._held = None
            self._announce(self.state.record(why))

    def _announce(self, record: dict[str, Any]) -> None:
        shown = SharedFallback.public(record)
        if self.fallback is None or self.fallback.get("reason") != shown["reason"]:
            log.warning("qmd cannot serve memory search (%s): the builtin index answers instead; qmd is tried "
                        "again at %s", shown["reason"], _clock_time(shown["retryAt"]))
        self.fallback = shown

    def _served(self) -> None:
        """qmd answered a search: every process may use it again."""
        with self._lock:
            if self.fallback is not None and self.fallback["reason"] != NOT_READY:
                log.warning("qmd serves memory search again")
            self.fallback = None
            self._waiting_since = None
        self.state.clear()

    # -- qmd itself: set up, retried and updated in the background ----------------------------
    def _kick(self) -> None:
        """Have the background look at what is due (a setup, a retry, an update); returns at once."""
        with self._lock:
            if self._closed:
                return
            if self._worker is not None:
                self._again = True
                return
            self._idle.clear()
            self._worker = threading.Thread(target=self._keep, name="mnemoclaw-qmd", daemon=True)
            self._worker.start()

    def _keep(self) -> None:
        while True:
            with self._lock:
                self._again = False
            try:
                self._tend()
            except Exception:  # a bug: said, and the next kick starts afresh
                log.exception("setting qmd up failed unexpectedly")
            with self._lock:
                if not self._again or self._closed:
                    self._worker = None
                    self._idle.set()
                    return

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until qmd's setup or update in the background, if one runs, is done (for a caller
        that wants qmd's answers from its first search: a benchmark, a test); False on timeout."""
        return self._idle.wait(timeout)

    def _tend(self) -> None:
        """The background's work: retry qmd once its failure's retry time came (moving that time
        on first, so every process keeps answering from the builtin index meanwhile), set it up
        when it is not, update it when files changed or the update interval passed."""
        job = _job(self.client.home)
        while not job.acquire(timeout=0.2):  # another backend of this process is at it: wait, or go on close
            if self._closed:
                return
        try:
            record = self.state.get()
            with self._lock:
                ready = record is None and self._ready()
            if record is not None:
                if not self.state.due(record):
                    return
                self.state.record(record["reason"])
            elif ready:
                if self._update_due():
                    # at most one `qmd update` per update.debounceMs after changes: the builtin
                    # candidates merged in hold a note written a moment ago in the meantime
                    self._update()
                return
            self._set_up()
            if record is not None:
                log.warning("qmd serves memory search again")
            self.state.clear()
        except QmdError as exc:
            self._fail(str(exc))
        finally:
            job.release()

    def _set_up(self, probe_timeout: float | None = None, *, update: bool = False) -> None:
        """qmd present and new enough, its collections as the config says, updated, and one
        search answered (a qmd that hangs on search is found here, not by a search)."""
        with self._lock:
            self._held = None
        version = self.client.check_version(probe_timeout)
        self._export()
        wanted = self._wanted()
        changed = self.client.reconcile(wanted)
        if update or changed or self.config.on_boot or not self.client.database.is_file():
            self._update()
        if wanted:
            self.client.search(self.config.search_mode, TRIAL, 1, [c.name for c in wanted])
        held = _holding(wanted)
        self.set_up.put(self.client.identity(), version, held)
        with self._lock:
            self._held = held

    def _updated_at(self) -> float:
        try:  # any process's last update
            return float((self.client.home / "last-update").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return 0.0

    def _update_due(self) -> bool:
        self._last_update = max(self._last_update, self._updated_at())
        since = time.time() - self._last_update
        return (self._pending and since >= self.config.debounce) or since >= self.config.update_interval

    def _update(self) -> None:
        self._pending = False  # a change from now on asks for another update
        self._export()
        self.client.update()
        if self.config.search_mode != "search":
            self.client.embed()
        self._last_update = time.time()
        try:  # for status and the update's debounce in another process
            write_atomic(self.client.home / "last-update", f"{self._last_update:.0f}\n")
        except OSError:
            pass

    def start(self) -> dict[str, Any] | None:
        """Set qmd up now and wait for it, whatever is on record (what ``mnemoclaw index``
        does); the failure if it could not."""
        with _job(self.client.home):  # after a setup or update running in the background
            try:
                self._set_up(self.client.timeouts["collection"], update=True)
            except QmdError as exc:
                self._fail(str(exc))
                return self.fallback
        self._served()
        return None

    def sync(self, *, full: bool = False, progress: Progress | None = None, lock_timeout: float | None = None,
             sources: Sequence[str] | None = None, limit: int | None = None, without_vectors: str | None = None,
             retry: bool = False) -> IndexReport:
        """The builtin index first (it is what answers when qmd cannot), then qmd's part in the
        background: its setup, or ``qmd update`` when files changed or the update interval
        passed. ``retry`` (an explicit ``mnemoclaw index``, which retries what was put off)
        sets qmd up now, a failed one too, and waits for it."""
        self._export()  # before the builtin index reads the export folder
        report = self.builtin.sync(full=full, progress=progress, lock_timeout=lock_timeout, sources=sources,
                                   limit=limit, without_vectors=without_vectors, retry=retry)
        if report.added or report.changed or report.removed or full:
            self._pending = True
        if retry:
            self.start()
        else:
            self._kick()
        return report

    def _wanted(self) -> list[Collection]:
        wanted = self.config.collections(self.workspace)
        return wanted + [c for c in self.extra if c not in wanted and c.path.is_dir()]

    def _export(self) -> None:
        sessions = self.config.session_collection(self.client.home)
        if sessions is None:
            return
        try:
            from ..notes import tombstones

            state = self.builtin.indexer.spec.state_dir
            with _EXPORTING:  # a sync and the background both export: each file's temporary is named by the process
                export_sessions(self.transcripts, sessions.path, self.config.retention_days, time.time(),
                                tombstones.load(state) if state else None)
        except OSError as exc:  # a read-only state dir: qmd searches the last export
            log.warning("cannot export transcripts for qmd: %s", exc)

    def _collection_names(self) -> list[str]:
        return [c.name for c in self._wanted()]

    def _by_name(self) -> dict[str, Collection]:
        return {c.name: c for c in (*self._wanted(), *self.extra)}

    def qmd_files(self, query: str, limit: int) -> list[str]:
        """The files qmd finds for ``query`` (as the builtin index names them), best first:
        all its content words, then fewer (the rarest first) while too few come back."""
        words = query_words(query)
        if not words:
            return []
        names = self._collection_names()
        if not names:
            return []
        tries = [words]
        # merged with the builtin candidates, fewer words find nothing those do not (measured:
        # docs/qmd.md): one qmd process a search, and no look-up of which words are rarest
        if not self.config.merge_builtin and len(words) > 1:
            df = self.store.keyword_candidates(keyword_query(" ".join(words)), 1).df
            terms = {w: keyword_query(w).as_written for w in words}
            rare = sorted(words, key=lambda w: min((df.get(t, 0) for t in terms[w]), default=0))
            tries += ([rare[:2]] if len(words) > 2 else []) + [rare[:1]]
        by_name = self._by_name()
        real_ws = os.path.realpath(self.workspace)
        out: list[str] = []
        for words_now in tries[:MAX_CALLS]:
            found = self.client.search(self.config.search_mode, " ".join(words_now), limit, names)
            for hit in found:
                c = by_name.get(hit.collection)
                if c is None:
                    continue
                # named as discovery names it: the real path, workspace-relative inside it
                stored = display_path(os.path.realpath(c.path / hit.path), real_ws)
                if stored not in out:
                    out.append(stored)
            if len(out) >= limit:
                break
        return out

    # -- answering ----------------------------------------------------------------------
    def search(self, query: str, *, max_results: int | None = None, min_score: float | None = None,
               mode: str | None = None, sources: Sequence[str] | None = None, kind: str | None = None,
               history: bool = False) -> SearchOutcome:
        files: list[str] | None = None
        if self._may_search():
            try:
                files = self.qmd_files(query, max(10, 2 * (max_results or self.builtin.options.max_results)))
            except QmdError as exc:
                if MISSING not in str(exc):
                    self._fail(str(exc))
                else:  # a collection vanished from qmd's config behind our back: made again in the background
                    log.warning("a qmd collection was missing (%s): it is made again from the config", exc)
                    self.set_up.forget()
                    with self._lock:
                        self._held = None
                        self._not_ready()
                    self._kick()
            else:
                self._served()
        mode = mode or self.default_mode()
        if max_results is None and self.config.max_results:
            max_results = self.config.max_results  # limits.maxResults
        if files is None:
            outcome = self.builtin.search(query, max_results=max_results, min_score=min_score, mode=mode,
                                          sources=sources, kind=kind, history=history)
        else:
            self._keywords.files(files)
            try:
                outcome = self.searcher.search(query, max_results=max_results, min_score=min_score, mode=mode,
                                               sources=sources, kind=kind, history=history)
            finally:
                self._keywords.files(None)
        return SearchOutcome([replace(h, path=self.shown_path(h.path)) for h in outcome.hits], outcome.mode,
                             outcome.candidates)

    def search_readable(self, query: str, *, max_results: int | None, min_score: float | None, mode: str | None,
                        sources: Sequence[str] | None, kind: str | None = None,
                        history: bool = False) -> SearchOutcome | None:
        got = self.builtin.search_readable(query, max_results=max_results, min_score=min_score, mode=mode,
                                           sources=sources, kind=kind, history=history)
        if got is None:
            return None
        return SearchOutcome([replace(h, path=self.shown_path(h.path)) for h in got.hits], got.mode, got.candidates)

    # -- paths ------------------------------------------------------------------------------
    def shown_path(self, stored: str) -> str:
        """A path of the builtin index as the QMD backend shows it (qmd/<collection>/<path>)."""
        if not os.path.isabs(stored):
            return stored
        for c in self.extra:
            # the index holds real paths: a folder configured through a link matches by either
            for root in dict.fromkeys((str(c.path), os.path.realpath(c.path))):
                root = root.rstrip(os.sep) + os.sep
                if stored.startswith(root):
                    return c.shown(stored[len(root):].replace(os.sep, "/"))
        return stored

    def local_path(self, shown: str) -> str:
        """``qmd/<collection>/<path>`` as a path ``memory_get`` can check and read."""
        text = shown.strip()
        if not text.startswith(SHOWN):
            return shown
        name, _, rel = text[len(SHOWN):].partition("/")
        c = next((p for p in self.extra if p.name == name), None)
        if c is None:
            known = ", ".join(f"{SHOWN}{p.name}/" for p in self.extra) or "none are configured"
            raise PathDeniedError(f"{text!r} names no qmd collection of this agent (memory.qmd.paths: {known})")
        parts = Path(rel).parts
        if not rel or ".." in parts or Path(rel).is_absolute():
            raise PathDeniedError(f"{text!r} climbs out of the qmd collection {name!r} with '..'; give a path "
                                  f"inside it, e.g. {SHOWN}{name}/notes.md")
        return str(c.path / rel)

    # -- what it can tell -----------------------------------------------------------------
    def status(self, *, check_dirty: bool = True, check_integrity: bool = False, deep: bool = False) -> dict[str, Any]:
        out = self.builtin.status(check_dirty=check_dirty, check_integrity=check_integrity, deep=deep)
        out["mode"] = self.default_mode()
        out["qmd"] = self.qmd_status()
        return out

    def qmd_status(self) -> dict[str, Any]:
        """qmd's version, collections and fallback record; qmd is not started while a failure
        is on record (the record says why, since when and when it is tried again)."""
        info: dict[str, Any] = {"command": self.client.command, "searchMode": self.config.search_mode,
                                "vectors": self.config.search_mode != "search", "home": str(self.client.home),
                                "mergeBuiltin": self.config.merge_builtin, "version": None, "fallback": None}
        with self._lock:
            record = self.state.get()
            info["ready"] = record is None and self._ready()  # else the builtin index answers
        try:  # the probe outside the lock: a search meanwhile does not wait for it
            version = self.client.version
            if version is None and (record is None or self.state.due(record)):
                version = self.client.check_version()
            if version is not None:
                info["version"] = ".".join(map(str, version))
                info["collections"] = self._counts()
            info["fallback"] = SharedFallback.public(record) if record is not None else None
        except QmdError as exc:
            self._fail(str(exc))
            info["fallback"] = self.fallback
        try:
            info["lastUpdate"] = float((self.client.home / "last-update").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            info["lastUpdate"] = None
        return info

    def _counts(self) -> list[dict[str, Any]]:
        have = self.client.collections()
        counts: dict[str, int] = {}
        if self.client.database.is_file():
            import sqlite3

            try:
                with sqlite3.connect(f"file:{self.client.database}?mode=ro", uri=True) as db:
                    counts = dict(db.execute("SELECT collection, count(*) FROM documents WHERE active = 1 "
                                             "GROUP BY collection").fetchall())
            except sqlite3.Error:
                counts = {}
        return [{"name": n, "path": p, "pattern": pat, "files": counts.get(n)} for n, (p, pat) in sorted(have.items())]


def qmd_roots(raw: Any, home: Path) -> list[Path]:
    """The folders of ``memory.qmd.paths``, and the transcripts' export when sessions are on
    (the builtin index holds them too)."""
    try:
        config = QmdConfig.parse(raw)
    except ConfigError:
        return []
    sessions = config.session_collection(home)
    return [c.path for c in config.paths] + ([sessions.path] if sessions else [])


def as_extra_paths(config: QmdConfig) -> list[dict[str, Any]]:
    """``memory.qmd.paths`` as builtin ``extraPaths`` (for ``migrate-from-qmd``)."""
    return [{"path": str(c.path), "pattern": c.pattern, "name": c.name} for c in config.paths]

def leave_qmd(doc: dict[str, Any], extra_paths: Sequence[str]) -> None:
    """A config document moved off qmd: the builtin backend, no memory.qmd, its collections'
    folders added to memorySearch.extraPaths (``migrate-from-qmd``)."""
    memory = doc.setdefault("memory", {})
    memory["backend"] = "builtin"
    memory.pop("qmd", None)
    search = doc.setdefault("agents", {}).setdefault("defaults", {}).setdefault("memorySearch", {})
    search["extraPaths"] = list(dict.fromkeys([*search.get("extraPaths", []), *extra_paths]))
