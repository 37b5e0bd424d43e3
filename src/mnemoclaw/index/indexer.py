"""Keeping the index in step with the Markdown files.

A sync re-reads only files whose size or mtime changed, re-chunks only files whose
content hash changed, and embeds only chunk texts that neither the index nor the
embedding cache already has a vector for. Files are written in small atomic batches,
so a process killed mid-sync leaves every file either fully indexed or as before.

When the index fingerprint (provider, model, chunking, tokenizer, sources, ...)
changes, the whole index is rebuilt in a separate database and swapped in with one
transaction: until that commit, searches keep using the old index.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from ..embeddings.base import EmbeddingProvider
from ..errors import (
    DiskFullError,
    IndexCorruptError,
    IndexGoneError,
    LockTimeoutError,
    ProviderError,
    StoreError,
    StoreUnavailableError,
    WorkspaceError,
)
from ..markdown.chunker import CHUNKER_ID
from ..markdown.provenance import excluded, session_of
from ..notes.discovery import discover, discover_sessions, session_metas
from ..store.base import FileWrite, Handle, Health, HostedFiles, Rebuilds, Store, WriteLock, damage_reason
from ..text.tokenize import TOKENIZER_ID
from ..types import FileRecord, IndexReport, Progress, SourceFile
from .embedding import EMBED_BATCH, ChunkVectors, SyncTarget, embed_batch_size, record_pending
from .planning import SyncPlan, had_it, host_notes, indexed_elsewhere, plan_sync
from .preparing import Prepared, prepare

log = logging.getLogger(__name__)


KEYWORD_ONLY_MODEL = "fts-only"
WRITE_BATCH_FILES = 200  # files per transaction when nothing needs embedding
SCHEMA_FINGERPRINT = 2
# A transcript that grew by less than the delta thresholds is indexed anyway once it
# has been quiet this long, so the end of a short session becomes searchable too.
SESSION_IDLE_SECONDS = 60.0
# How often a sync records its progress for searchers (``meta.indexing``).
INDEXING_NOTE_EVERY = 0.5
# A sync limited to N changed files (a search's) reads up to this many times as many to find them:
# files whose stat changed but whose content did not (another host's copies) are no changed files
READS_PER_PLACE = 16


@dataclass(frozen=True)
class IndexSpec:
    """Everything that decides what the index contains; a change means a full rebuild."""

    workspace: str
    extra_paths: tuple[str, ...]
    sources: tuple[str, ...]
    chunk_tokens: int
    chunk_overlap: int
    cache_enabled: bool = True
    cache_max_entries: int | None = None
    sessions_dir: str | None = None
    session_delta_bytes: int = 100_000
    session_delta_messages: int = 50
    # where the tombstones are (tombstones.py): what forget by origin took out stays out
    state_dir: str | None = None
    # the admission policy (memoryPolicy.excludeSessions): transcripts of these sessions are not indexed
    exclude_sessions: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def fingerprint(self, provider: EmbeddingProvider | None) -> tuple[str, str]:
        data = {
            "schema": SCHEMA_FINGERPRINT,
            "provider": provider.id if provider else "none",
            "model": provider.model if provider else KEYWORD_ONLY_MODEL,
            "providerKey": provider.provider_key if provider else "",
            "sources": sorted(self.sources),
            "extraPaths": sorted(self.extra_paths),
            "chunking": [self.chunk_tokens, self.chunk_overlap],
            "tokenizer": TOKENIZER_ID,
            "chunker": CHUNKER_ID,
        }
        text = json.dumps(data, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16], text


class IndexedStore(SyncTarget, WriteLock, Rebuilds, Health, Handle, Protocol):
    """What the indexer uses of a store: its files, chunks and cache, the write lock, rebuilds,
    its health, and its path for messages (none of a search's sides)."""


class Indexer:
    def __init__(self, store: IndexedStore, provider: EmbeddingProvider | None, spec: IndexSpec):
        self.store = store
        self.provider = provider
        self.spec = spec
        self.model = provider.model if provider else KEYWORD_ONLY_MODEL
        self.fingerprint, self.fingerprint_text = spec.fingerprint(provider)
        self.failed: dict[str, tuple[int, int]] = {}  # path -> (mtime_ns, size) that failed to read
        self.links: list[str] = []  # symbolic links the last discovery met (never followed)
        self._no_vectors: str | None = None  # during a sync: why the provider is not asked
        self._salvaging = False  # during a repair: vectors read from the damaged index are checked
        self.vectors = ChunkVectors(provider, cache=spec.cache_enabled) if provider is not None else None
        # this host and workspace, where several hosts write one namespace (None: one host does)
        self.origin = store.origin if isinstance(store, HostedFiles) else None

    # -- inspection ---------------------------------------------------------------
    def discover(self, sources: Sequence[str] | None = None) -> list[SourceFile]:
        want = self.spec.sources if sources is None else sources
        out: list[SourceFile] = []
        if "memory" in want:
            self.links = []
            out += discover(Path(self.spec.workspace), [Path(p) for p in self.spec.extra_paths], self.links.append)
        if "sessions" in want and self.spec.sessions_dir:
            found = discover_sessions(Path(self.spec.sessions_dir))
            if self.spec.exclude_sessions:  # the admission policy: an excluded session is not memory
                policy = dict(self.spec.exclude_sessions)
                metas = session_metas(self.spec.sessions_dir)
                found = [f for f in found if not excluded(metas.get(session_of(f.path)) or {}, policy)]
            out += found
        return out

    def needs_rebuild(self, meta: dict[str, str] | None = None) -> str:
        """Why a full rebuild is due ("" if not)."""
        meta = self.store.meta() if meta is None else meta
        have = meta.get("fingerprint")
        if have is None:
            return ""
        if have != self.fingerprint:
            changed = _diff_fingerprints(meta.get("fingerprint_text", "{}"), self.fingerprint_text)
            return f"index settings changed ({changed})"
        return ""

    def plan(self, indexed: dict[str, FileRecord], sources: Sequence[str] | None = None,
             full: bool = False) -> tuple[SyncPlan, dict[str, FileRecord]]:
        """What a sync of ``sources`` would do, against the records of those sources only."""
        sources = tuple(self.spec.sources if sources is None else sources)
        mine = {p: r for p, r in indexed.items() if r.source in sources}
        plan = plan_sync(self.discover(sources), mine, full=full, origin=self.origin)
        if not full and "sessions" in sources:
            waiting = [f for f in plan.suspect if self._transcript_waits(f, mine.get(f.path))]
            if waiting:
                plan.suspect = [f for f in plan.suspect if f not in waiting]
                plan.unchanged += waiting
        return plan, mine

    def _transcript_waits(self, f: SourceFile, old: FileRecord | None) -> bool:
        """A transcript that grew a little since it was indexed waits for more (or for quiet)."""
        if f.source != "sessions" or old is None or f.size <= old.size:
            return False
        grown = f.size - old.size
        if grown >= self.spec.session_delta_bytes:
            return False
        if time.time() - f.mtime_ns / 1e9 >= SESSION_IDLE_SECONDS:
            return False
        try:
            with open(f.abspath, "rb") as fh:
                fh.seek(old.size)
                new_lines = fh.read(grown).count(b"\n")
        except OSError:
            return False
        return new_lines < self.spec.session_delta_messages

    def dirty_sources(self, sources: Sequence[str] | None = None) -> set[str]:
        """Which of ``sources`` have files to index or remove (all of them before a rebuild).

        One look at the index and the disk for every source: this runs before every search.
        """
        sources = tuple(self.spec.sources if sources is None else sources)
        meta = self.store.meta()
        if meta.get("fingerprint") is None or self.needs_rebuild(meta):
            return set(sources)
        plan, indexed = self.plan(self.store.file_records(), sources)
        dirty = {f.source for f in plan.new + plan.suspect if self.failed.get(f.path) != (f.mtime_ns, f.size)}
        dirty.update(indexed[p].source for p in plan.removed + plan.claimed)
        return dirty

    def kept_files(self) -> list[tuple[str, str]]:
        """Files in the index that this workspace does not have and only other hosts have had:
        (path, "host:workspace" of the copy indexed); [] where one host writes the index."""
        if self.origin is None:
            return []
        plan, indexed = self.plan(self.store.file_records())
        return _named(plan.kept, indexed)

    def is_dirty(self, sources: Sequence[str] | None = None) -> bool:
        return bool(self.dirty_sources(sources))

    # -- sync ---------------------------------------------------------------------
    def sync(self, *, full: bool = False, progress: Progress | None = None, lock_timeout: float | None = None,
             sources: Sequence[str] | None = None, limit: int | None = None,
             without_vectors: str | None = None, retry: bool = False) -> IndexReport:
        """Bring the index up to date with the files.

        ``sources`` restricts an incremental sync to some sources; ``limit`` processes at
        most that many changed files, newest first, and reports the rest as ``deferred``.
        A full rebuild always covers everything.

        ``without_vectors`` (why: the provider cannot be reached) indexes new chunks for
        keyword search only, reusing every vector the index or the cache already has; a
        later sync adds the missing vectors (``retry``: now, whatever the backoff).
        """
        self._no_vectors = without_vectors
        try:
            try:
                return self._sync(full=full, progress=progress, lock_timeout=lock_timeout, sources=sources,
                                  limit=limit, retry=retry)
            except IndexGoneError as exc:  # the file was deleted mid-sync: fill the new one, once
                log.warning("%s; indexing again into the new file", exc)
                return self._sync(full=full, progress=progress, lock_timeout=lock_timeout, sources=sources,
                                  limit=limit, retry=retry)
        finally:
            self._no_vectors = None

    def _sync(self, *, full: bool, progress: Progress | None, lock_timeout: float | None,
              sources: Sequence[str] | None, limit: int | None, retry: bool) -> IndexReport:
        started = time.monotonic()
        ws = Path(self.spec.workspace)
        if not ws.is_dir():
            raise WorkspaceError(f"workspace {ws} does not exist; create it with `mnemoclaw init --workspace {ws}`")
        with self.store.write_lock(lock_timeout):
            waited, started = time.monotonic() - started, time.monotonic()
            self.store.remove_stale_builds()
            try:
                report = self._sync_locked(full=full, progress=progress, sources=sources, limit=limit)
            except IndexCorruptError as exc:
                # damage met on the way: rebuild from the files, keeping every vector still readable
                self.store.mark_damaged(damage_reason(exc))
                report = self._repair_announced(progress, str(exc))
            if limit is None and self.vectors is not None and self._no_vectors is None:
                self.vectors.fill_missing(self.store, report, force=retry)
            if self.spec.cache_enabled and self.spec.cache_max_entries:
                self.store.cache_prune(self.spec.cache_max_entries)
        report.seconds = time.monotonic() - started
        report.waited = waited
        return report

    def _sync_locked(self, *, full: bool, progress: Progress | None, sources: Sequence[str] | None,
                     limit: int | None) -> IndexReport:
        damage = self.store.damaged()
        if damage is not None:
            return self._repair_announced(progress, damage)
        reason = self.needs_rebuild()
        has_files = bool(self.store.file_records())
        recovered = self.store.take_recovery()
        if recovered:
            reason = f"the index file was damaged and was moved to {recovered}"
        if (full or reason) and has_files:
            if self._no_vectors is not None:
                # a rebuild without vectors would replace a complete index by a lesser one:
                # the old index keeps serving until the provider works
                raise ProviderError(self._no_vectors)
            try:
                return self._rebuild(self._announce(progress, "rebuild"), reason or "full rebuild requested")
            finally:
                self._end_announce()
        try:
            # a search's own small inline sync is not announced: that search is the one waiting
            announce = self._announce(progress, "sync") if limit is None else progress
            report = self._sync_into(self.store, self.store, full=full, progress=announce,
                                     sources=sources, limit=limit)
        finally:
            self._end_announce()
        report.reason = reason
        return report

    def _repair_announced(self, progress: Progress | None, why: str) -> IndexReport:
        if self._no_vectors is not None:
            raise ProviderError(self._no_vectors)  # the repair waits for the provider, like a rebuild
        try:
            return self._repair(self._announce(progress, "repair"), why)
        finally:
            self._end_announce()

    def _repair(self, progress: Progress | None, why: str) -> IndexReport:
        """Rebuild a damaged index from the Markdown files into a new one, reusing every
        vector the damaged one can still give (checked), and put it in place of the damaged one."""
        build = self.store.begin_rebuild()
        self._salvaging = True
        try:
            report = self._sync_into(build, self.store, full=True, progress=progress)
            self._keep_unreadable(build, report)
            self.store.commit_rebuild(build, repair=True)
        except BaseException:
            self._discard(build)
            raise
        finally:
            self._salvaging = False
        log.warning("repaired the damaged index %s from the Markdown files (%s)", self.store.path, why)
        report.full_rebuild = True
        report.reason = f"repaired the damaged index from the Markdown files ({why})"
        return report

    def remove_stale_builds(self) -> None:
        """Delete rebuild databases a crashed process left behind, unless a writer is busy."""
        if self.store.read_only:
            return
        try:
            with self.store.write_lock(0):
                self.store.remove_stale_builds()
        except (LockTimeoutError, OSError):
            pass

    def _announce(self, progress: Progress | None, kind: str) -> Callable[[int, int], None]:
        """A progress callback that also tells other searchers (in this process or another)
        how far the index is: ``meta.indexing`` in the index, while the write lock is held."""
        last = [0.0]
        started = time.time()

        def report(done: int, total: int) -> None:
            if progress:
                progress(done, total)
            now = time.monotonic()
            if total <= 0 or (done not in (0, total) and now - last[0] < INDEXING_NOTE_EVERY):
                return
            last[0] = now
            try:
                self.store.set_meta({"indexing": json.dumps({"done": done, "total": total, "pid": os.getpid(),
                                                             "kind": kind, "startedAt": started})})
            except StoreError as exc:  # a full disk, say: the sync itself will say so
                log.debug("could not record indexing progress: %s", exc)

        return report

    def _end_announce(self) -> None:
        try:
            if "indexing" in self.store.meta():
                self.store.delete_meta(["indexing"])
        except StoreError as exc:
            log.debug("could not clear indexing progress: %s", exc)

    def _rebuild(self, progress: Progress | None, reason: str) -> IndexReport:
        before = self.store.file_records()
        build = self.store.begin_rebuild()
        try:
            report = self._sync_into(build, self.store, full=True, progress=progress)
            self._keep_unreadable(build, report)
            self.store.commit_rebuild(build)
        except BaseException as exc:
            self._discard(build)
            if isinstance(exc, DiskFullError):
                raise DiskFullError(
                    f"disk full: the rebuild ({reason}) was abandoned and its temporary database removed; "
                    "the previous index is unchanged and answers searches. Free some space and run "
                    "`mnemoclaw index` again") from exc
            if isinstance(exc, StoreUnavailableError):
                raise StoreUnavailableError(f"{exc}. The rebuild ({reason}) was abandoned and the previous index "
                                            "is unchanged; once the server is back, `mnemoclaw index` starts it "
                                            "again") from None
            raise
        report.full_rebuild = True
        report.reason = reason
        if self.origin is not None:
            # a rebuild is this workspace's files: another host's that it lacks are left out,
            # and come back with that host's next sync (its files are new to the index then)
            now = self.store.file_records()
            report.dropped = [(p, r.hosts[0]) for p, r in sorted(before.items())
                              if p not in now and not had_it(r, self.origin)]
            report.notes = host_notes(report.kept, report.replaced, report.dropped)
        return report

    def _discard(self, build: Store) -> None:
        """Remove a build that failed; if that fails too (the server is gone), the next sync
        removes it (``remove_stale_builds``), and what made the build fail is what is reported."""
        try:
            self.store.discard_rebuild(build)
        except StoreError as exc:
            log.debug("could not remove the abandoned build now: %s", exc)

    def _keep_unreadable(self, build: SyncTarget, report: IndexReport) -> None:
        """A file that cannot be read now keeps what the old index had for it.

        Its vectors are kept only if they come from the model being built; otherwise the
        chunks stay searchable by keyword until the file can be read again.
        """
        for path, _ in report.failed:
            old = self.store.file_chunks(path)
            if old is None or not old.chunks:
                continue
            vectors = [v if (self.provider and row.model == self.model) else None
                       for row, v in zip(old.chunks, old.vectors, strict=False)]
            build.apply([FileWrite(old.record, old.chunks, vectors)])

    def _sync_into(self, target: SyncTarget, cache_source: SyncTarget, *, full: bool, progress: Progress | None,
                   sources: Sequence[str] | None = None, limit: int | None = None) -> IndexReport:
        counted = [0, 0]  # files committed, files to do: what a full disk leaves in the index
        report = IndexReport()  # what is committed so far, batch by batch

        def count(done: int, total: int) -> None:
            counted[:] = [done, total]
            if progress:
                progress(done, total)

        try:
            return self._sync_batches(target, cache_source, report, full=full, progress=count, sources=sources,
                                      limit=limit)
        except StoreUnavailableError as exc:
            if target is not self.store:
                raise  # a rebuild: _rebuild says what that means
            written = report.added + report.changed
            lost = StoreUnavailableError(
                f"{exc}. The sync had indexed {written} of the {counted[1]} files it had to ({report.added} added, "
                f"{report.changed} changed) and removed {report.removed} before it was cut off; once the server is "
                "back, `mnemoclaw index` indexes the rest")
            lost.report = report
            raise lost from None
        except DiskFullError as exc:
            if target is not self.store:
                raise  # a rebuild: _rebuild says what that means
            done, total = counted
            if done == 0:
                what = "nothing was indexed; the index is unchanged and answers searches as before"
            elif done >= total:
                what = (f"all {total} changed files were indexed, but the sync could not be recorded; the index "
                        "answers searches with them")
            else:
                what = (f"{done} of {total} changed files were indexed before the disk filled; the index is "
                        "consistent and answers searches with what it holds")
            raise DiskFullError(f"disk full: {what}. Free some space and run `mnemoclaw index` "
                                f"(index {self.store.path})") from exc

    def _sync_batches(self, target: SyncTarget, cache_source: SyncTarget, report: IndexReport, *, full: bool,
                      progress: Progress, sources: Sequence[str] | None, limit: int | None) -> IndexReport:
        # the fingerprint goes in before the first batch: if this sync is cut short and
        # the settings change before the next one, that one must rebuild, not mix
        target.set_meta({"fingerprint": self.fingerprint, "fingerprint_text": self.fingerprint_text})
        plan, indexed = self.plan(target.file_records(), sources, full=full)
        report.skipped = list(dict.fromkeys(self.links))
        report.unchanged = len(plan.unchanged)
        # files only other hosts have had: theirs, not deletions here
        report.kept = _named(plan.kept, indexed)
        todo = plan.new + plan.suspect
        if limit is not None and len(todo) > limit:
            todo.sort(key=lambda f: f.mtime_ns, reverse=True)  # what was written last is wanted first
            # a file whose content is unchanged (another host's copy, a touch) costs a read and a
            # hash, not chunks and vectors: it takes none of the ``limit`` places, up to a bound
            report.deferred = max(len(todo) - limit * READS_PER_PLACE, 0)
            todo = todo[:limit * READS_PER_PLACE]
        examined = 0  # of todo, files read so far

        def reading() -> Iterator[SourceFile]:
            nonlocal examined
            for f in todo:
                examined += 1
                yield f

        total = len(todo)
        done = 0
        progress(0, total)

        per_call = embed_batch_size(self.provider)
        max_files = max(WRITE_BATCH_FILES, per_call if per_call > EMBED_BATCH else 0)
        # unchanged files whose record does not name this host yet: a deletion here must find it
        touches: list[FileRecord] = [indexed[p] for p in plan.claimed]
        touched = 0  # touches of files to do (the claims are not)
        batch: list[Prepared] = []
        pending_texts = 0
        removes: list[str] = list(plan.removed)

        def flush() -> None:
            nonlocal batch, pending_texts, removes, touches, touched, done
            self._write(target, cache_source, batch, removes, touches, report)
            # counted once committed, so a sync cut short reports what it wrote
            for p in batch:
                if p.file.path in indexed:
                    report.changed += 1
                else:
                    report.added += 1
            report.removed += len(removes)
            done += len(batch) + touched
            batch, removes, touches, pending_texts, touched = [], [], [], 0, 0
            progress(min(done, total), total)

        # every batch is one transaction: a failure leaves the batches before it whole and searchable
        to_index = 0
        limit_tokens = self.provider.max_input_tokens if self.provider else None
        for f, prepared in prepare(reading(), indexed, report, model=self.model, chunk_tokens=self.spec.chunk_tokens,
                                   chunk_overlap=self.spec.chunk_overlap, max_tokens=limit_tokens,
                                   state_dir=self.spec.state_dir, failed=self.failed, earlier=self.store.file_chunks):
            if prepared is None:
                old = indexed.get(f.path)
                if old is not None:
                    touches.append(FileRecord(f.path, f.source, old.hash, f.mtime_ns, f.size))
                    touched += 1
                    report.unchanged += 1
                continue
            old = indexed.get(f.path)
            other = indexed_elsewhere(old, self.origin) if old is not None and self.origin is not None else None
            if other is not None:
                report.replaced.append((f.path, other))
            batch.append(prepared)
            pending_texts += len(prepared.rows)
            to_index += 1
            if pending_texts >= per_call or len(batch) >= max_files:
                flush()
            if limit is not None and to_index >= limit:
                break
        report.deferred += len(todo) - examined
        flush()
        # files that failed to read keep their old chunks, but vanish from "unchanged"
        try:
            before = cache_source.meta()
        except IndexCorruptError:  # a repair reads from a damaged index: its counts are lost
            before = {}
        target.set_meta({
            "model": self.model,
            "provider": self.provider.id if self.provider else "none",
            "provider_key": self.provider.provider_key if self.provider else "",
            "last_sync": str(time.time()),
            # lifetime counts behind the cache hit rate in `status`
            "vectors_reused": str(int(before.get("vectors_reused", 0)) + report.chunks_reused),
            "vectors_embedded": str(int(before.get("vectors_embedded", 0)) + report.chunks_embedded),
        })
        if self.provider is not None and (report.vectors_pending or "vectors_pending" in before):
            record_pending(target)
        report.chunks_total = target.counts()["chunks"]
        report.notes = host_notes(report.kept, report.replaced, report.dropped)
        if not indexed and not plan.new:
            log.info("workspace %s has no memory files yet", self.spec.workspace)
        return report

    def _write(self, target: SyncTarget, cache_source: SyncTarget, batch: list[Prepared], removes: list[str],
               touches: list[FileRecord], report: IndexReport) -> None:
        if not (batch or removes or touches):
            return
        vectors: dict[str, np.ndarray] = {}
        errors: dict[str, str] = {}
        if self.vectors is not None:
            vectors, errors = self.vectors.for_rows([r for p in batch for r in p.rows], target, cache_source, report,
                                                    salvaging=self._salvaging, without=self._no_vectors)
        writes = []
        for p in batch:
            vecs = [vectors.get(r.hash) for r in p.rows]
            if self._no_vectors is not None:
                report.vectors_pending += sum(v is None for v in vecs)  # keyword-only until the provider works
            elif self.provider is not None and any(v is None for v in vecs):
                why = next((errors[r.hash] for r in p.rows if r.hash in errors), "embedding failed")
                report.failed.append((p.file.path, why))
                self.failed[p.file.path] = (p.file.mtime_ns, p.file.size)
                continue  # what the index had for this file stays
            writes.append(FileWrite(p.record, p.rows, vecs))
        target.apply(writes, removes, touches)


def _named(kept: list[str], indexed: dict[str, FileRecord]) -> list[tuple[str, str]]:
    """The kept memory files with the host whose copy is indexed. Transcripts are left out: each
    host's are its own (they live in its state dir), so another host's are no surprise."""
    return [(p, indexed[p].hosts[0]) for p in kept if indexed[p].source != "sessions"]


def _diff_fingerprints(old_text: str, new_text: str) -> str:
    try:
        old, new = json.loads(old_text), json.loads(new_text)
    except ValueError:
        return "unknown"
    changed = [k for k in new if old.get(k) != new.get(k)]
    return ", ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in changed) or "format"
