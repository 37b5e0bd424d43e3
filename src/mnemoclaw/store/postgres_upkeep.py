"""Upkeep of a Postgres namespace: one writer at a time (an advisory lock per namespace, its
holder's host and pid recorded for messages), rebuilds written under a build namespace and
swapped in by one transaction, the damage a sync found (a server keeps its own pages sound),
and the vacuum that leaves nothing forgotten readable.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Self

from ..errors import LockTimeoutError, ReadOnlyError
from ..markdown.chunker import text_hash
from .base import Store
from .postgres_index import PostgresIndex
from .postgres_schema import BUILD, DAMAGED, TABLES

log = logging.getLogger(__name__)


def _lock_key(ns: str) -> str:
    return f"mnemoclaw:write:{ns}"


class PostgresUpkeep(PostgresIndex):
    """The write lock, rebuilds, damage and scrubbing of one namespace."""

    # -- one writer at a time per namespace -------------------------------------------------
    @contextmanager
    def write_lock(self, timeout: float | None = None) -> Iterator[None]:
        if self.read_only:
            raise ReadOnlyError(f"the Postgres index at {self.path} cannot be written: {self.read_only_why}; "
                                "it is searched as others index it")
        pool = self._pool_now()  # a server lost a moment ago: say so at once
        try:
            conn = self._psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except self._psycopg.Error as exc:
            raise self._failed(exc, pool) from None
        try:
            deadline = None if timeout is None else time.monotonic() + timeout
            key = _lock_key(self.ns.split(BUILD)[0])
            try:
                while not self._try_lock(conn, key):
                    if deadline is not None and time.monotonic() >= deadline:
                        who = self._holder_text()
                        rows = self._rows("SELECT host, pid FROM mc_locks WHERE ns = %s", (self.ns,))
                        holder = "another process"
                        if rows:
                            host, pid = rows[0]
                            holder = f"process {pid}" + (f" on host {host}" if host != socket.gethostname() else "")
                        raise LockTimeoutError(f"another mnemoclaw is writing namespace {self.ns!r} of {self.path}"
                                               f"{who}; waited {timeout:.0f}s. Try again when it finishes.",
                                               holder=holder, index=self.path)
                    time.sleep(0.05)
                conn.execute("INSERT INTO mc_locks VALUES (%s, %s, %s, %s) ON CONFLICT (ns) DO UPDATE SET "
                             "host = excluded.host, pid = excluded.pid, since = excluded.since",
                             (self.ns, self.host, os.getpid(), time.time()))
            except self._psycopg.Error as exc:
                raise self._failed(exc, pool) from None
            self._lock_conn = conn
            try:
                yield
            finally:
                self._lock_conn = None
                try:
                    # released now (a closed session releases it too, but only once its backend exits)
                    conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
                except self._psycopg.Error as exc:
                    # the session is gone and its lock with it; what ended the sync is what to report
                    log.debug("unlocking %s: %s", self.path, self._clean(exc))
        finally:
            conn.close()

    @staticmethod
    def _try_lock(conn: Any, key: str) -> bool:
        row = conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)).fetchone()
        return bool(row and row[0])

    def _holder_text(self) -> str:
        rows = self._rows("SELECT host, pid, since FROM mc_locks WHERE ns = %s", (self.ns,))
        if not rows:
            return ""
        host, pid, since = rows[0]
        return f" (host {host}, pid {pid}, since {time.strftime('%H:%M:%S', time.localtime(since))})"

    def lock_holder(self) -> int | None:
        rows = self._rows("SELECT pid FROM mc_locks WHERE ns = %s", (self.ns,))
        return int(rows[0][0]) if rows else None

    def lock_busy(self) -> bool:
        if self._lock_conn is not None:
            return True
        key = _lock_key(self.ns.split(BUILD)[0])
        with self._conn() as c:
            got = c.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)).fetchone()[0]
            if got:
                c.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
        return not got

    # -- rebuilds, built aside ---------------------------------------------------------------
    def begin_rebuild(self) -> Self:
        self._builds += 1
        build = f"{self.ns}{BUILD}{os.getpid()}-{self._builds}"
        store = type(self)(self.url, build, host=self.host, workspace=self.workspace, _build_of=self.ns)
        store._wipe()
        return store

    def _wipe(self) -> None:
        with self._tx() as c:
            for table in TABLES:
                c.execute(f"DELETE FROM {table} WHERE ns = %s", (self.ns,))
            c.execute("UPDATE mc_ns SET chunks = 0, tokens = 0 WHERE ns = %s", (self.ns,))

    def commit_rebuild(self, build: Store, *, repair: bool = False) -> None:
        assert isinstance(build, PostgresUpkeep) and build._build_of == self.ns
        with self._tx() as c:
            for table in TABLES:
                c.execute(f"DELETE FROM {table} WHERE ns = %s", (self.ns,))
                c.execute(f"UPDATE {table} SET ns = %s WHERE ns = %s", (self.ns, build.ns))
            c.execute("UPDATE mc_ns t SET chunks = b.chunks, tokens = b.tokens FROM mc_ns b WHERE t.ns = %s "
                      "AND b.ns = %s", (self.ns, build.ns))
            c.execute("DELETE FROM mc_ns WHERE ns = %s", (build.ns,))
        build.close()
        self._caches = {k: v for k, v in self._caches.items() if k.startswith("hnsw")}

    def discard_rebuild(self, build: Store) -> None:
        assert isinstance(build, PostgresUpkeep)
        build._wipe()
        with self._conn() as c:
            c.execute("DELETE FROM mc_ns WHERE ns = %s", (build.ns,))
        build.close()

    def remove_stale_builds(self) -> None:
        """Builds a crashed process left (the caller holds the write lock, so none is live)."""
        prefix = re.sub(r"([%_\\])", r"\\\1", self.ns + BUILD) + "%"
        with self._tx() as c:
            for table in (*TABLES, "mc_ns"):
                c.execute(f"DELETE FROM {table} WHERE ns LIKE %s", (prefix,))

    # -- damage (a server keeps its own pages sound; the marker is for what a sync found) ----
    def mark_damaged(self, why: str) -> None:
        if self.damaged() is None:
            log.warning("index %s is damaged (%s): the next sync rebuilds it", self.path, why)
            self.set_meta({DAMAGED: why})

    def damaged(self) -> str | None:
        return self._all_meta().get(DAMAGED)

    def clear_damaged(self) -> None:
        if DAMAGED in self._all_meta():
            self.delete_meta([DAMAGED])

    def check(self, *, deep: bool = False) -> list[str]:
        bad = sum(text_hash(t) != h for t, h in self._rows("SELECT text, hash FROM mc_chunks WHERE ns = %s",
                                                           (self.ns,))) if deep else 0
        return [f"{bad} chunk texts do not match their hashes"] if bad else []

    def recover(self, why: str) -> None:
        log.warning("clearing namespace %s of %s (%s); the next sync rebuilds it", self.ns, self.path, why)
        self._wipe()
        self._recovered = f"namespace {self.ns} cleared"

    def take_recovery(self) -> str | None:
        done, self._recovered = self._recovered, None
        return done

    # -- leaving nothing forgotten readable -------------------------------------------------
    def scrub(self) -> None:
        # dead row versions keep deleted text until vacuumed (VACUUM cannot run in a transaction)
        with self._conn() as c:
            for table in ("mc_chunks", "mc_cache", "mc_files"):
                c.execute(f"VACUUM {table}")

    def holds(self, texts: Sequence[str]) -> list[str]:
        """Which of ``texts`` a chunk of this namespace still holds (the server's data files
        cannot be read from here; VACUUM has made the dead rows' space free)."""
        if not texts:
            return []
        rows = self._rows("SELECT t FROM unnest(%s::text[]) AS t WHERE EXISTS (SELECT 1 FROM mc_chunks "
                          "WHERE ns = %s AND strpos(text, t) > 0)", (list(texts), self.ns))
        return [r[0] for r in rows]
