"""The index in PostgreSQL with pgvector, for agents on several hosts (``store.driver: "postgres"``).

One database holds every agent's index, each in its own namespace; a store writes its own
namespace and reads it plus the shared ones it names. Keyword search runs on an inverted index
of mnemoclaw's own analysed terms (text/tokenize.py's output: term -> chunk, frequency, length),
so Chinese of any length, stems and identifiers match exactly as on SQLite on a plain Postgres
with no extension but ``vector``; the candidates are the top of FTS5's own bm25() over it, and
the BM25 above the store ranks them from exact per-namespace statistics, so both stores rank
alike. Vectors are pgvector columns with
an HNSW cosine index per dimension. One embedding cache serves every namespace and host.

Writers take a per-namespace advisory lock (a session lock on a connection of its own, with the
holder's host and pid recorded for messages); each batch is one transaction; readers never wait
(MVCC). Every write bumps the namespace's generation, which is what caches and the dirty check of
other hosts compare. A rebuild is written under a build namespace and swapped in by one
transaction.
"""

from __future__ import annotations

import logging
import math
import os
import re
import socket
import threading
import time
import weakref
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ..errors import ConfigError, LockTimeoutError, ReadOnlyError, StoreError, StoreUnavailableError
from ..markdown.annotations import searchable
from ..markdown.chunker import text_hash
from ..text.secrets import redact_url
from ..text.tokenize import KeywordQuery, fts_document
from ..types import ChunkRow, FileRecord, KeywordCandidates, StoredChunk, VectorReference
from ..vectors import pair_spread, unit_rows
from .base import CacheKey, FileWrite, Store

log = logging.getLogger(__name__)

REFERENCE_SAMPLE = 256
REFERENCE_MIN = 50
BUILD = "\x1fbuild-"  # a namespace being rebuilt: <ns><BUILD><pid>-<n>
# FTS5 bm25()'s parameters: the SQLite store chooses its candidates with them
FTS_K1 = 1.2
FTS_K1_PLUS_1 = FTS_K1 + 1.0
FTS_B = 0.75
POSTINGS_PER_TERM = 5000  # the most of one term's postings a search reads (its best)
# The HNSW graph: links a node keeps (m) and candidates kept while linking (ef_construction),
# and the candidates a search's walk keeps (ef_search). pgvector's defaults (16, 64, 40) gave
# recall@10 0.675 at a million chunks and 0.841 with ef_search 200; these give 0.9575
# (benchmarks/postgres_scale.py, docs/postgres.md).
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 128
HNSW_EF_SEARCH = 160
# Below this many chunks in the namespaces searched, the walk keeps fewer candidates: recall@10
# is 1.0 at 10 000 chunks with 80 already, and pgvector's planner prices a 160-wide walk above
# reading every vector, so a 10 000-chunk namespace was searched exactly from TOAST (hybrid p50
# 56.6 ms against 11.1 ms with 80; benchmarks/postgres_scale.py --sections compare, docs/postgres.md)
NARROW_WALK_BELOW = 100_000
HNSW_EF_SEARCH_NARROW = 80
CHANNEL = "mnemoclaw_generation"  # NOTIFY payload: the namespace written
SHARED = "shared/"  # a shared namespace's file as results show it: shared/<namespace>/<path>
# Named, ordered migrations. Never edit one that has shipped: add the next.
MIGRATIONS: list[tuple[str, str]] = [
    ("0001_base", """
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE mc_ns (ns text PRIMARY KEY, generation bigint NOT NULL DEFAULT 0);
        CREATE TABLE mc_meta (ns text NOT NULL, key text NOT NULL, value text NOT NULL, PRIMARY KEY (ns, key));
        CREATE TABLE mc_files (
            ns text NOT NULL, path text NOT NULL, source text NOT NULL, hash text NOT NULL,
            mtime_ns bigint NOT NULL, size bigint NOT NULL, indexed_at double precision NOT NULL,
            PRIMARY KEY (ns, path));
        CREATE TABLE mc_chunks (
            id bigserial PRIMARY KEY, ns text NOT NULL, cid text NOT NULL, path text NOT NULL,
            source text NOT NULL, start_line integer NOT NULL, end_line integer NOT NULL, hash text NOT NULL,
            model text NOT NULL, text text NOT NULL, meta text NOT NULL DEFAULT '',
            terms text NOT NULL, ntok integer NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', terms)) STORED,
            dims integer, embedding vector, updated_at double precision NOT NULL,
            UNIQUE (ns, cid));
        CREATE INDEX mc_chunks_path ON mc_chunks (ns, path);
        CREATE INDEX mc_chunks_hash ON mc_chunks (hash);
        CREATE INDEX mc_chunks_tsv ON mc_chunks USING gin (tsv);
        CREATE INDEX mc_chunks_annotated ON mc_chunks (ns) WHERE meta <> '';
        CREATE TABLE mc_cache (
            provider text NOT NULL, model text NOT NULL, provider_key text NOT NULL, hash text NOT NULL,
            embedding bytea NOT NULL, dims integer NOT NULL, updated_at double precision NOT NULL,
            PRIMARY KEY (provider, model, provider_key, hash));
        CREATE INDEX mc_cache_updated ON mc_cache (updated_at);
        CREATE TABLE mc_locks (ns text PRIMARY KEY, host text NOT NULL, pid integer NOT NULL,
                               since double precision NOT NULL);
    """),
    ("0002_document_frequencies", """
        -- each term's document frequency per namespace, kept by every write: BM25's IDF without
        -- counting matches at search time
        CREATE TABLE mc_df (ns text NOT NULL, term text NOT NULL, df integer NOT NULL, PRIMARY KEY (ns, term));
        INSERT INTO mc_df (ns, term, df)
            SELECT c.ns, u.lexeme, count(*) FROM mc_chunks c, unnest(c.tsv) u GROUP BY c.ns, u.lexeme;
    """),
    ("0003_lexemes_only", """
        -- lexemes without positions: small enough to stay in the row (a toasted tsvector was read
        -- again for every test of it); BM25 reads positions from the terms column, not from here
        DROP INDEX mc_chunks_tsv;
        ALTER TABLE mc_chunks DROP COLUMN tsv;
        ALTER TABLE mc_chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (strip(to_tsvector('simple', terms))) STORED;
        CREATE INDEX mc_chunks_tsv ON mc_chunks USING gin (tsv);
    """),
    ("0004_postings", """
        -- an inverted index of term -> (chunk, term frequency, chunk length), each term's list in
        -- the order of the BM25 weight it gives a chunk (its impact), so a search reads the best
        -- postings of a common term and stops, where a tsvector match visited every matching row
        -- each namespace's chunk count and total length, kept by every write: BM25's corpus
        -- statistics without counting a million rows after each write
        ALTER TABLE mc_ns ADD COLUMN chunks bigint NOT NULL DEFAULT 0, ADD COLUMN tokens bigint NOT NULL DEFAULT 0;
        UPDATE mc_ns n SET chunks = s.chunks, tokens = s.tokens FROM (SELECT ns, count(*) AS chunks,
            sum(ntok) AS tokens FROM mc_chunks GROUP BY ns) s WHERE n.ns = s.ns;
        ALTER TABLE mc_chunks ADD COLUMN ref_dl integer NOT NULL DEFAULT 1;
        UPDATE mc_chunks c SET ref_dl = s.ref FROM (SELECT ns, greatest(round(avg(ntok)), 1)::int AS ref
            FROM mc_chunks GROUP BY ns) s WHERE c.ns = s.ns;
        CREATE TABLE mc_postings (ns text NOT NULL, term text NOT NULL, id bigint NOT NULL, imp smallint NOT NULL,
                                  tf smallint NOT NULL, dl integer NOT NULL);
        -- the impact in integers, so that this and a write's Python compute the same number
        -- (PostgresStore._impact)
        INSERT INTO mc_postings (ns, term, id, imp, tf, dl)
            SELECT ns, term, id, (327670 * tf * ref_dl / (10 * tf * ref_dl + 3 * ref_dl + 9 * ntok))::smallint,
                   tf, ntok
            FROM (SELECT c.ns, t.term, c.id, least(count(*), 32767)::bigint AS tf, c.ntok::bigint AS ntok,
                         c.ref_dl::bigint AS ref_dl
                  FROM mc_chunks c, unnest(string_to_array(replace(c.terms, E'\\n', ' '), ' ')) t(term)
                  WHERE t.term <> '' GROUP BY c.ns, t.term, c.id, c.ntok, c.ref_dl) x;
        CREATE UNIQUE INDEX mc_postings_key ON mc_postings (ns, term, imp DESC, id) INCLUDE (tf, dl);
        -- document frequencies from the same split of the terms the BM25 above the store uses
        DELETE FROM mc_df;
        INSERT INTO mc_df (ns, term, df) SELECT ns, term, count(*) FROM mc_postings GROUP BY ns, term;
        DROP INDEX mc_chunks_tsv;
        ALTER TABLE mc_chunks DROP COLUMN tsv;
    """),
    ("0005_file_hosts", """
        -- the hosts ("host:workspace") that have had each file, the one whose copy is indexed
        -- first: a sync removes a file missing from its workspace only if its host has had it
        ALTER TABLE mc_files ADD COLUMN hosts text[] NOT NULL DEFAULT '{}';
        -- the host that wrote a namespace last had each of its files when it did (that sync removed
        -- the others); a namespace no lock names keeps '{}', which any host that lacks a file removes
        UPDATE mc_files f SET hosts = ARRAY[l.host] FROM mc_locks l WHERE l.ns = f.ns;
    """),
    ("0006_own_meta", """
        -- the store's own bookkeeping in its own namespace: meta() shows only what was indexed
        UPDATE mc_meta SET key = 'store:' || key WHERE key = 'damaged';
    """),
    ("0007_file_seen", """
        -- each host's stat of its copy of a file ({"host:workspace": [mtime_ns, size]}), which a
        -- write of new content resets to the writer's: file sync gives each copy its own mtime,
        -- and the row's one stat made every file look changed to one host after each sync of the
        -- other. Rows from before record none: each host compares the row's stat, as before, and
        -- records its own at its next touch (index/planning.py stat_here)
        ALTER TABLE mc_files ADD COLUMN seen jsonb NOT NULL DEFAULT '{}';
    """),
]
OWN = "store:"  # the prefix of the store's own metadata keys (kept apart from the indexer's)
DAMAGED = OWN + "damaged"
# as migration 0004 made it; bulk_load() drops it while it loads an empty database
POSTINGS_INDEX = ("CREATE UNIQUE INDEX IF NOT EXISTS mc_postings_key ON mc_postings (ns, term, imp DESC, id) "
                  "INCLUDE (tf, dl)")
_TABLES = ("mc_chunks", "mc_files", "mc_meta", "mc_df", "mc_postings")  # what a namespace holds
_RETRYABLE = {"40001", "40P01", "55P03"}  # serialization failure, deadlock, lock not available
_GONE = {"57P01", "57P02", "57P03"}  # the server shut down, crashed, or is starting: no statement's fault
PROBE_EVERY = 2.0  # seconds: after the server was lost, how often a call may try to reach it again


def fts_idf(n_docs: int, df: int) -> float:
    """FTS5's bm25() IDF, which is never below 1e-6. ``df`` may exceed ``n_docs`` for a moment (the
    two are read at different times while another host writes), which FTS5 never sees."""
    ratio = (n_docs - df + 0.5) / (df + 0.5)
    return math.log(ratio) if ratio > 1.000001 else 1e-6


def walk_width(chunks: int) -> int:
    """How many candidates the HNSW walk keeps (``hnsw.ef_search``) for namespaces of this size."""
    return HNSW_EF_SEARCH_NARROW if chunks < NARROW_WALK_BELOW else HNSW_EF_SEARCH


def _vec_text(v: np.ndarray) -> str:
    return "[" + ",".join(map(str, np.asarray(v, dtype=np.float32).tolist())) + "]"


def _vec_parse(text: str) -> np.ndarray:
    return np.array(text[1:-1].split(","), dtype=np.float32) if len(text) > 2 else np.zeros(0, np.float32)


def _lock_key(ns: str) -> str:
    return f"mnemoclaw:write:{ns}"


class PostgresStore:
    """``Store`` over PostgreSQL + pgvector (store/base.py)."""

    parallel_reads = True  # every read takes a connection from the pool

    def __init__(self, url: str, namespace: str = "main", shared: Sequence[str] = (), *, host: str | None = None,
                 workspace: str = "", _build_of: str = ""):
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise ConfigError('store.driver "postgres" needs psycopg: pip install "mnemoclaw[postgres]"') from None
        self._psycopg = psycopg
        self._pool_class = ConnectionPool
        self.url = url
        self.host = host or socket.gethostname()
        self.workspace = workspace
        # what each file's row names (store/base.py HostedFiles); a store opened without a
        # workspace (tools, benchmarks) is the host alone
        self.origin = f"{self.host}:{workspace}" if workspace else self.host
        self.path = redact_url(url) + f"#{namespace.split(BUILD)[0]}"
        self.ns = namespace
        self.shared = tuple(s for s in shared if s != namespace)
        self.read_only = False
        self.read_only_why = ""
        self.recovered: str | None = None
        self._build_of = _build_of
        self._builds = 0
        self._caches: dict[str, tuple[Any, Any]] = {}
        # the walk width each pooled connection was set to (vector_search)
        self._walks: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._lock_conn: Any = None
        self._deferring = False  # in bulk_load(): vector indexes wait for the end
        self._deferred: set[int] = set()
        # set while the server is lost: (why, when a call last tried to reach it); see _pool_now
        self._down: tuple[str, float] | None = None
        self._pool_lock = threading.Lock()
        try:
            self.pool = self._open_pool()
        except Exception as exc:  # noqa: BLE001 - psycopg's and the pool's errors alike
            raise StoreError(f"cannot reach the Postgres index at {redact_url(url)}: "
                             f"{self._clean(exc)}; check memorySearch.store.url (or MNEMOCLAW_PG_URL), that the "
                             "server runs and that the role may log in") from None
        self._migrate()
        # every write notifies; a process looks at its generations again only when told
        self._generations: tuple | None = None
        self._listen: Any = None
        self._start_listening()
        try:
            with self.pool.connection() as c:
                c.execute("INSERT INTO mc_ns (ns) VALUES (%s) ON CONFLICT DO NOTHING", (self.ns,))
            self._ensure_postings_index()
        except psycopg.errors.InsufficientPrivilege as exc:
            # a role that may only read: serve searches from what others indexed
            self.read_only = True
            self.read_only_why = f"the role may not write ({self._clean(exc)})"
        except psycopg.Error as exc:  # the server went away a moment after it answered
            raise self._failed(exc) from None

    # -- plumbing -------------------------------------------------------------------------
    def _open_pool(self) -> Any:
        # one plain connection first: its error says why (refused, password, no database); a
        # pool would only say it gave up
        self._psycopg.connect(self.url, connect_timeout=10).close()
        pool = self._pool_class(self.url, min_size=1, max_size=4, open=True, timeout=15,
                                kwargs={"autocommit": True}, configure=self._configure)
        pool.wait(timeout=15)
        return pool

    def _start_listening(self) -> None:
        try:
            self._listen = self._psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            self._listen.execute(f"LISTEN {CHANNEL}")
        except self._psycopg.Error as exc:
            log.info("no LISTEN connection to %s (%s): every read checks the generations", self.path, self._clean(exc))
            self._listen = None

    def _is_gone(self, exc: BaseException) -> bool:
        """The server went away or cannot be reached, as opposed to refusing a statement (a
        connection failure, a closed or timed-out pool, a server shutting down)."""
        if not isinstance(exc, self._psycopg.OperationalError):
            return False
        state = getattr(exc, "sqlstate", None)
        return state is None or state.startswith("08") or state in _GONE

    def _unreachable(self, why: str) -> StoreUnavailableError:
        return StoreUnavailableError(f"the Postgres index at {self.path} cannot be reached ({why}): start the "
                                     "server, or check memorySearch.store.url (or MNEMOCLAW_PG_URL) and the "
                                     "network; nothing it holds is lost")

    def _failed(self, exc: BaseException, pool: Any = None, what: str = "") -> StoreError:
        """``exc`` as this store's error. A lost server is remembered: the pool is closed (its
        reconnecting in the background would wait out every call and fill the log) and the next
        call tries the server once before it waits on anything (_pool_now)."""
        if not self._is_gone(exc):
            return StoreError(f"{what or f'the Postgres index at {self.path} failed'}: {self._clean(exc)}")
        why = self._clean(exc)
        with self._pool_lock:
            if self._down is None and (pool is None or pool is self.pool):
                self._down = (why, time.monotonic())
                lost = self.pool
                try:
                    lost.close(timeout=1.0)
                except Exception as close_exc:  # noqa: BLE001 - closing a pool whose server is gone
                    log.debug("closing the pool of %s: %s", self.path, close_exc)
            elif self._down is not None:
                why = self._down[0]
        return self._unreachable(why)

    def _pool_now(self) -> Any:
        """The pool; after the server was lost, a new one once the server answers again (tried
        at most every PROBE_EVERY seconds, so a caller's clean-up after a loss fails at once)."""
        if self._down is None:
            return self.pool
        with self._pool_lock:
            if self._down is None:
                return self.pool
            why, tried = self._down
            if time.monotonic() - tried < PROBE_EVERY:
                raise self._unreachable(why)
            try:
                pool = self._open_pool()
            except Exception as exc:  # noqa: BLE001 - psycopg's and the pool's errors alike
                self._down = (self._clean(exc), time.monotonic())
                raise self._unreachable(self._down[0]) from None
            self.pool, self._down = pool, None
            self._generations = None  # what was written meanwhile was not notified here
        if self._listen is not None:
            try:
                self._listen.close()
            except self._psycopg.Error:
                pass
        self._start_listening()
        log.info("the Postgres index at %s answers again", self.path)
        return pool

    def _clean(self, exc: BaseException) -> str:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        parts = urlsplit(self.url) if "://" in self.url else None
        if parts is not None and parts.password:
            text = text.replace(parts.password, "***")
        return text

    @staticmethod
    def _configure(conn: Any) -> None:
        # a filtered HNSW scan keeps going until it has enough rows (pgvector 0.8)
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        conn.execute(f"SET hnsw.ef_search = {int(HNSW_EF_SEARCH)}")

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        pool = self._pool_now()
        try:
            with pool.connection() as conn:
                yield conn
        except self._psycopg.Error as exc:
            raise self._failed(exc, pool) from None

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """One transaction that bumps this namespace's generation (what other hosts' caches and
        dirty checks compare)."""
        pool = self._pool_now()
        try:
            with pool.connection() as conn, conn.transaction():
                yield conn
                conn.execute("UPDATE mc_ns SET generation = generation + 1 WHERE ns = %s", (self.ns,))
                conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, self.ns))  # delivered at commit
            self._generations = None  # this process's own write: seen at once, not when notified
        except self._psycopg.Error as exc:
            err = self._failed(exc, pool, f"could not write the Postgres index at {self.path}")
            # a write's own failure keeps its cause: _retrying reads the SQLSTATE
            raise err from (None if isinstance(err, StoreUnavailableError) else exc)

    def _retrying(self, write: Any) -> None:
        """``write(conn)`` in a transaction, again after a serialization failure or a deadlock."""
        for attempt in range(5):
            try:
                with self._tx() as c:
                    write(c)
                return
            except StoreError as exc:
                code = getattr(exc.__cause__, "sqlstate", None)
                if code not in _RETRYABLE or attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._conn() as c:
            return c.execute(sql, params).fetchall()

    def _migrate(self) -> None:
        known = [n for n, _ in MIGRATIONS]
        with self._conn() as c:
            exists = c.execute("SELECT to_regclass('mc_migrations') IS NOT NULL").fetchone()
            done = {r[0] for r in c.execute("SELECT name FROM mc_migrations").fetchall()} if exists and exists[0] \
                else set()
        if done >= set(known) and not done - set(known):
            return  # up to date: nothing to take a lock for (and a role that only reads gets this far)
        try:
            self._apply_migrations()
        except StoreError as exc:
            if "permission denied" in str(exc):
                raise StoreError(f"{exc}: the role may not create mnemoclaw's tables; run mnemoclaw once as a role "
                                 "with CREATE on the database (its owner), then this role needs SELECT, INSERT, "
                                 "UPDATE, DELETE on the mc_* tables (SELECT alone: search only)") from None
            raise

    def _apply_migrations(self) -> None:
        with self._conn() as c, c.transaction():
            c.execute("SELECT pg_advisory_xact_lock(hashtextextended('mnemoclaw:migrate', 0))")
            c.execute("CREATE TABLE IF NOT EXISTS mc_migrations (name text PRIMARY KEY, "
                      "applied_at timestamptz NOT NULL DEFAULT now())")
            done = {r[0] for r in c.execute("SELECT name FROM mc_migrations").fetchall()}
            unknown = done - {n for n, _ in MIGRATIONS}
            if unknown:
                raise StoreError(f"the Postgres index at {self.path} was made by a newer mnemoclaw (schema "
                                 f"{', '.join(sorted(unknown))}); upgrade mnemoclaw on this host")
            for name, sql in MIGRATIONS:
                if name in done:
                    continue
                try:
                    c.execute(sql)
                except self._psycopg.Error as exc:
                    if "vector" in str(exc) and "extension" in str(exc):
                        raise StoreError(f"the database at {self.path} has no pgvector: run CREATE EXTENSION "
                                         "vector as its owner (managed services list it as 'vector')") from None
                    raise
                c.execute("INSERT INTO mc_migrations (name) VALUES (%s)", (name,))

    @property
    def _read_ns(self) -> list[str]:
        return [self.ns, *self.shared]

    def _version(self) -> tuple:
        """The generations of the namespaces read. Asked of the server only after a write to one
        of them was notified (LISTEN), so a search's many cache checks cost no round trip."""
        if self._listen is not None and self._generations is not None:
            try:
                changed = any(n.payload in self._read_ns for n in self._listen.notifies(timeout=0))
            except self._psycopg.Error:
                self._listen = None  # the listening connection broke: ask every time from now on
                changed = True
            if not changed:
                return self._generations
        rows = self._rows("SELECT ns, generation FROM mc_ns WHERE ns = ANY(%s) ORDER BY ns", (self._read_ns,))
        self._generations = tuple(rows)
        return self._generations

    def _cached(self, name: str, make: Any) -> Any:
        version = self._version()
        hit = self._caches.get(name)
        if hit is None or hit[0] != version:
            hit = (version, make())
            self._caches[name] = hit
        return hit[1]

    # -- metadata ---------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        """The namespace's metadata; the store's own keys (``OWN``) are not part of it."""
        return {k: v for k, v in self._all_meta().items() if not k.startswith(OWN)}

    def _all_meta(self) -> dict[str, str]:
        return dict(self._cached("meta", lambda: dict(self._rows("SELECT key, value FROM mc_meta WHERE ns = %s",
                                                                   (self.ns,)))))

    def set_meta(self, items: dict[str, str]) -> None:
        with self._tx() as c:
            c.cursor().executemany("INSERT INTO mc_meta (ns, key, value) VALUES (%s, %s, %s) ON CONFLICT (ns, key) "
                                   "DO UPDATE SET value = excluded.value", [(self.ns, k, v) for k, v in items.items()])

    def delete_meta(self, keys: Iterable[str]) -> None:
        with self._tx() as c:
            c.execute("DELETE FROM mc_meta WHERE ns = %s AND key = ANY(%s)", (self.ns, list(keys)))

    # -- files and chunks -------------------------------------------------------------------
    def file_records(self) -> dict[str, FileRecord]:
        return self._cached("files", lambda: {
            p: FileRecord(p, source, h, mtime, size, tuple(hosts),
                          tuple(sorted((who, int(stat[0]), int(stat[1])) for who, stat in seen.items())))
            for p, source, h, mtime, size, hosts, seen in self._rows(
                "SELECT path, source, hash, mtime_ns, size, hosts, seen FROM mc_files WHERE ns = %s", (self.ns,))})

    def apply(self, writes: Sequence[FileWrite], removes: Iterable[str] = (),
              touches: Iterable[FileRecord] = ()) -> None:
        removes, touches = list(removes), list(touches)
        if not writes and not removes and not touches:
            return
        now = time.time()
        chunks = [(row, vec) for w in writes for row, vec in zip(w.chunks, w.vectors, strict=False)]
        docs = [fts_document(searchable(row.text, row.meta)) for row, _ in chunks]
        gone = [w.record.path for w in writes] + removes

        def write(c: Any) -> None:
            if gone:  # the old chunks' postings, and their document frequencies with them
                old = c.execute("SELECT id, terms, ntok, ref_dl FROM mc_chunks WHERE ns = %s AND path = ANY(%s)",
                                (self.ns, gone)).fetchall()
                keys: tuple[list[str], list[int], list[int]] = ([], [], [])
                df_gone: Counter[str] = Counter()
                for rid, terms, ntok, ref in old:
                    for term, f in Counter(terms.split()).items():
                        keys[0].append(term)
                        keys[1].append(self._impact(f, ntok, ref))
                        keys[2].append(rid)
                        df_gone[term] += 1
                c.execute("DELETE FROM mc_postings p USING unnest(%s::text[], %s::int[], %s::bigint[]) "
                          "k(term, imp, id) WHERE p.ns = %s AND p.term = k.term AND p.imp = k.imp AND p.id = k.id",
                          (*keys, self.ns))
                c.execute("UPDATE mc_ns SET chunks = chunks - %s, tokens = tokens - %s WHERE ns = %s",
                          (len(old), sum(r[2] for r in old), self.ns))
                if df_gone:
                    c.execute("UPDATE mc_df f SET df = f.df - d.n FROM unnest(%s::text[], %s::int[]) d(term, n) "
                              "WHERE f.ns = %s AND f.term = d.term", (list(df_gone), list(df_gone.values()), self.ns))
                c.execute("DELETE FROM mc_chunks WHERE ns = %s AND path = ANY(%s)", (self.ns, gone))
            if removes:
                c.execute("DELETE FROM mc_files WHERE ns = %s AND path = ANY(%s)", (self.ns, removes))
            if chunks:
                ids = [r[0] for r in c.execute("SELECT nextval(pg_get_serial_sequence('mc_chunks', 'id')) "
                                               "FROM generate_series(1, %s)", (len(chunks),)).fetchall()]
                # the length impacts are measured against: the namespace's mean chunk length now
                have, tokens = c.execute("SELECT chunks, tokens FROM mc_ns WHERE ns = %s", (self.ns,)).fetchone()
                lengths = [len(doc.split()) for doc in docs]
                ref = max(round(tokens / have if have > 0 else sum(lengths) / len(lengths)), 1)
                c.execute("UPDATE mc_ns SET chunks = chunks + %s, tokens = tokens + %s WHERE ns = %s",
                          (len(lengths), sum(lengths), self.ns))
                df: Counter[str] = Counter()
                with c.cursor() as cur:
                    with cur.copy("COPY mc_chunks (id, ns, cid, path, source, start_line, end_line, hash, model, "
                                  "text, meta, terms, ntok, ref_dl, dims, embedding, updated_at) FROM STDIN") as copy:
                        for rid, (row, vec), doc, n in zip(ids, chunks, docs, lengths, strict=True):
                            copy.write_row((rid, self.ns, row.id, row.path, row.source, row.start_line, row.end_line,
                                            row.hash, row.model, row.text, row.meta, doc, n, ref,
                                            None if vec is None else len(vec),
                                            None if vec is None else _vec_text(vec), now))
                    with cur.copy("COPY mc_postings (ns, term, id, imp, tf, dl) FROM STDIN") as copy:
                        for rid, doc, n in zip(ids, docs, lengths, strict=True):
                            tf = Counter(doc.split())
                            df.update(tf.keys())
                            for term, f in tf.items():
                                copy.write_row((self.ns, term, rid, self._impact(f, n, ref), min(f, 32767), n))
                if df:
                    c.execute("INSERT INTO mc_df (ns, term, df) SELECT %s, t, n FROM unnest(%s::text[], %s::int[]) "
                              "u(t, n) ON CONFLICT (ns, term) DO UPDATE SET df = mc_df.df + excluded.df",
                              (self.ns, list(df), list(df.values())))
            # the hosts that have had a file: this one's copy is indexed now (first), and a
            # touch adds it where missing; the others stay named (they had the file too). The
            # stats seen: a write is new content, which the others' copies may not have (their
            # stats go, so they read and hash theirs); a touch adds this host's beside theirs
            hosts = {"write": "array_prepend(%(me)s::text, array_remove(mc_files.hosts, %(me)s::text))",
                     "touch": "CASE WHEN %(me)s::text = ANY(mc_files.hosts) THEN mc_files.hosts "
                              "ELSE array_append(mc_files.hosts, %(me)s::text) END"}
            seen = {"write": "excluded.seen", "touch": "mc_files.seen || excluded.seen"}
            for kind, records in (("write", [w.record for w in writes]), ("touch", touches)):
                if records:
                    c.cursor().executemany(
                        "INSERT INTO mc_files (ns, path, source, hash, mtime_ns, size, indexed_at, hosts, seen) "
                        "VALUES (%(ns)s, %(path)s, %(source)s, %(hash)s, %(mtime)s, %(size)s, %(now)s, "
                        "%(hosts)s::text[], jsonb_build_object(%(me)s::text, jsonb_build_array(%(mtime)s::bigint, "
                        "%(size)s::bigint))) "
                        "ON CONFLICT (ns, path) DO UPDATE SET source = excluded.source, hash = excluded.hash, "
                        "mtime_ns = excluded.mtime_ns, size = excluded.size, indexed_at = excluded.indexed_at, "
                        f"hosts = {hosts[kind]}, seen = {seen[kind]}",
                        [{"ns": self.ns, "path": r.path, "source": r.source, "hash": r.hash, "mtime": r.mtime_ns,
                          "size": r.size, "now": now, "me": self.origin,
                          "hosts": list(dict.fromkeys([self.origin, *r.hosts]))} for r in records])

        self._retrying(write)
        dims = {len(v) for w in writes for v in w.vectors if v is not None}
        for d in dims:
            self._ensure_vector_index(d)

    @staticmethod
    def _impact(tf: int, dl: int, ref: int) -> int:
        """A posting's place in its term's list: FTS5's BM25 weight of the term for the chunk
        (k1 1.2, b 0.75, against the mean length ``ref``) in 0..32767, in integers, as migration
        0004 computes it, so a deletion finds the posting a write made."""
        tf = min(tf, 32767)
        return 327670 * tf * ref // (10 * tf * ref + 3 * ref + 9 * dl)

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """Writes inside go in without the indexes that are built faster from all the rows at
        once: a vector index that does not exist yet, and, into a database with no postings yet,
        the postings index (measured: a million chunks load several times faster). Both are
        built at the end, also when the load fails; a process killed before that leaves the
        postings index to the next store opened on the database (``_ensure_postings_index``)."""
        with self._conn() as c:
            empty = bool(c.execute("SELECT NOT EXISTS (SELECT 1 FROM mc_postings)").fetchone()[0])
            if empty:
                c.execute("DROP INDEX IF EXISTS mc_postings_key")
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
            if empty:
                self._ensure_postings_index()
        for d in self._deferred:
            self._ensure_vector_index(d)
        self._deferred.clear()

    def _ensure_postings_index(self) -> None:
        with self._conn() as c:
            if not c.execute("SELECT to_regclass('mc_postings_key') IS NULL").fetchone()[0]:
                return
        log.info("building the keyword postings index of %s", self.path)
        try:
            with self._conn() as c:
                c.execute(POSTINGS_INDEX)
        except StoreError as exc:  # a role that does not own the tables
            log.warning("%s; keyword search is slow until the tables' owner opens the index", exc)

    def _ensure_vector_index(self, dims: int) -> None:
        if self._caches.get(f"hnsw{dims}") is not None:
            return
        if self._deferring:
            self._deferred.add(dims)
            return
        with self._conn() as c:
            c.execute(f"CREATE INDEX IF NOT EXISTS mc_chunks_hnsw_{dims} ON mc_chunks USING hnsw "
                      f"((embedding::vector({dims})) vector_cosine_ops) "
                      f"WITH (m = {int(HNSW_M)}, ef_construction = {int(HNSW_EF_CONSTRUCTION)}) WHERE dims = {dims}")
        self._caches[f"hnsw{dims}"] = (None, True)

    def file_chunks(self, path: str) -> FileWrite | None:
        rec = self.file_records().get(path)
        if rec is None:
            return None
        rows = self._rows("SELECT cid, path, source, start_line, end_line, hash, model, text, meta, embedding::text "
                          "FROM mc_chunks WHERE ns = %s AND path = %s ORDER BY start_line, id", (self.ns, path))
        rows = [r for r in rows if text_hash(r[7]) == r[5]]
        return FileWrite(rec, [ChunkRow(*r[:9]) for r in rows], [None if r[9] is None else _vec_parse(r[9])
                                                                   for r in rows])

    def vectors_for_hashes(self, hashes: Iterable[str], model: str) -> dict[str, np.ndarray]:
        rows = self._rows("SELECT DISTINCT ON (hash) hash, embedding::text FROM mc_chunks WHERE ns = %s AND "
                          "model = %s AND embedding IS NOT NULL AND hash = ANY(%s)",
                          (self.ns, model, list(dict.fromkeys(hashes))))
        return {h: _vec_parse(v) for h, v in rows}

    def _shown(self, ns: str, path: str) -> str:
        """A path as results show it: a shared namespace's files under shared/<namespace>/."""
        return path if ns == self.ns else f"{SHARED}{ns}/{path}"

    def _located(self, shown: str) -> tuple[str, str]:
        """(namespace, path) of a path as results show it."""
        if shown.startswith(SHARED):
            ns, _, path = shown[len(SHARED):].partition("/")
            if ns in self.shared:
                return ns, path
        return self.ns, shown

    def chunks(self, rowids: Sequence[int]) -> dict[int, StoredChunk]:
        if not rowids:
            return {}
        rows = self._rows("SELECT id, ns, path, source, start_line, end_line, text, hash, meta FROM mc_chunks "
                          "WHERE id = ANY(%s) AND ns = ANY(%s)", (list(rowids), self._read_ns))
        return {r[0]: StoredChunk(r[0], self._shown(r[1], r[2]), *r[3:]) for r in rows if text_hash(r[6]) == r[7]}

    def file_heads(self, paths: Iterable[str]) -> dict[str, str]:
        wanted = {self._located(p): p for p in dict.fromkeys(paths)}
        rows = self._rows("SELECT ns, path, text, hash FROM mc_chunks WHERE ns = ANY(%s) AND start_line = 1 AND "
                          "path = ANY(%s)", (self._read_ns, list({p for _, p in wanted})))
        return {wanted[(ns, p)]: t for ns, p, t, h in rows if (ns, p) in wanted and text_hash(t) == h}

    def shared_file(self, path: str) -> str | None:
        """The text of a shared namespace's file (shared/<namespace>/<path>), put together from
        its chunks: a host that does not have the file can still read it. None if ``path`` is
        not one."""
        ns, rel = self._located(path)
        if ns == self.ns:
            return None
        rows = self._rows("SELECT start_line, end_line, text, hash FROM mc_chunks WHERE ns = %s AND path = %s "
                          "ORDER BY start_line, id", (ns, rel))
        if not rows:
            return None
        lines: dict[int, str] = {}
        for start, end, text, h in rows:
            parts = text.split("\n")
            if text_hash(text) != h or len(parts) != end - start + 1:  # a slice of an over-long line
                continue
            for i, line in enumerate(parts):
                lines.setdefault(start + i, line)
        last = max(lines, default=0)
        return "\n".join(lines.get(i, "") for i in range(1, last + 1))  # lines no chunk holds were blank

    def annotations(self) -> dict[int, tuple[str, int, int, str]]:
        return self._cached("notes", lambda: {r[0]: (self._shown(r[1], r[2]), r[3], r[4], r[5]) for r in self._rows(
            "SELECT id, ns, path, start_line, end_line, meta FROM mc_chunks WHERE ns = ANY(%s) AND meta <> ''",
            (self._read_ns,))})

    def counts(self) -> dict[str, int]:
        (files,), = self._rows("SELECT count(*) FROM mc_files WHERE ns = %s", (self.ns,))
        chunks, vectors = self._rows("SELECT count(*), count(embedding) FROM mc_chunks WHERE ns = %s", (self.ns,))[0]
        (cache,), = self._rows("SELECT count(*) FROM mc_cache")
        return {"files": files, "chunks": chunks, "vectors": vectors, "cacheEntries": cache}

    def vector_dims(self) -> int | None:
        rows = self._rows("SELECT dims FROM mc_chunks WHERE ns = %s AND dims IS NOT NULL LIMIT 1", (self.ns,))
        return int(rows[0][0]) if rows else None

    # -- chunks indexed without vectors -----------------------------------------------------
    def chunks_without_vectors(self, limit: int) -> list[tuple[int, str, str]]:
        return [tuple(r) for r in self._rows(
            "SELECT id, hash, text FROM mc_chunks WHERE ns = %s AND embedding IS NULL ORDER BY id LIMIT %s",
            (self.ns, limit))]

    def count_without_vectors(self) -> int:
        return int(self._rows("SELECT count(*) FROM mc_chunks WHERE ns = %s AND embedding IS NULL", (self.ns,))[0][0])

    def add_vectors(self, items: Sequence[tuple[int, np.ndarray]]) -> None:
        if not items:
            return
        with self._tx() as c:
            c.cursor().executemany("UPDATE mc_chunks SET embedding = %s::vector, dims = %s WHERE id = %s AND ns = %s "
                                   "AND embedding IS NULL", [(_vec_text(v), len(v), rid, self.ns) for rid, v in items])
        self._ensure_vector_index(len(items[0][1]))

    # -- search -----------------------------------------------------------------------------
    def keyword_candidates(self, query: KeywordQuery, depth: int,
                           sources: Sequence[str] | None = None) -> KeywordCandidates:
        if query.empty or depth <= 0:
            return KeywordCandidates()
        n_docs, avgdl = self._corpus_stats()
        df = self._doc_freqs(query.counted)
        # a phrase's words are looked up too (FTS5 matches the phrase as a part of the query);
        # BM25 (search/bm25.py) gives the phrase its bonus from the terms column
        words = list(dict.fromkeys([*query.terms, *(t for p in query.phrases for t in p if t)]))
        extra = self._doc_freqs([w for w in words if w not in df])
        # which ``depth`` candidates are read: FTS5's own bm25() (k1 1.2, b 0.75, its IDF), which
        # is how the SQLite store chooses them, over at most POSTINGS_PER_TERM of each term's
        # postings, its best for this weight: a term in most chunks adds little to any of them
        weights = [FTS_K1_PLUS_1 * fts_idf(n_docs, df.get(w, extra.get(w, 0))) for w in words]
        score = "sum(q.w * p.tf / (p.tf + %s + %s * p.dl))"
        matched = ("FROM unnest(%s::text[], %s::float8[]) q(term, w) CROSS JOIN unnest(%s::text[]) n(ns) "
                   "CROSS JOIN LATERAL (SELECT id, tf, dl FROM mc_postings p WHERE p.ns = n.ns AND p.term = q.term "
                   "ORDER BY p.imp DESC, p.id LIMIT %s) p GROUP BY p.id")
        params: list[Any] = [FTS_K1 * (1 - FTS_B), FTS_K1 * FTS_B / (avgdl or 1.0), words, weights, self._read_ns,
                             POSTINGS_PER_TERM]
        if sources:
            sql = (f"WITH s AS (SELECT p.id, {score} AS score {matched}) SELECT c.id, c.terms FROM s "
                   "JOIN mc_chunks c ON c.id = s.id WHERE c.source = ANY(%s) ORDER BY s.score DESC, s.id LIMIT %s")
            params += [list(sources), depth]
        else:
            sql = (f"WITH s AS (SELECT p.id, {score} AS score {matched} ORDER BY score DESC, p.id LIMIT %s) "
                   "SELECT c.id, c.terms FROM s JOIN mc_chunks c ON c.id = s.id")
            params += [depth]
        rows = self._rows(sql, params)
        lines = {rid: [line.split(" ") for line in terms.split("\n")] for rid, terms in rows}
        return KeywordCandidates(lines, df, n_docs, avgdl)

    def file_candidates(self, query: KeywordQuery, paths: Sequence[str],
                        sources: Sequence[str] | None = None) -> KeywordCandidates:
        if query.empty or not paths:
            return KeywordCandidates()
        n_docs, avgdl = self._corpus_stats()
        df = self._doc_freqs(query.counted)
        wanted = set(query.terms) | {t for p in query.phrases for t in p}
        sql = "SELECT id, terms FROM mc_chunks WHERE ns = %s AND path = ANY(%s)"
        params: list[Any] = [self.ns, list(dict.fromkeys(paths))]
        if sources:
            sql += " AND source = ANY(%s)"
            params.append(list(sources))
        lines = {}
        for rid, terms in self._rows(sql, params):
            split = [line.split(" ") for line in terms.split("\n")]
            if any(t in wanted for line in split for t in line):
                lines[int(rid)] = split
        return KeywordCandidates(lines, df, n_docs, avgdl)

    def corpus_size(self) -> int:
        return self._corpus_stats()[0]

    def _corpus_stats(self) -> tuple[int, float]:
        def make() -> tuple[int, float]:
            n, total = self._rows("SELECT coalesce(sum(chunks), 0)::bigint, coalesce(sum(tokens), 0)::bigint "
                                  "FROM mc_ns WHERE ns = ANY(%s)", (self._read_ns,))[0]
            self._caches["df"] = (None, {})
            return int(n), (float(total) / n if n else 0.0)
        return self._cached("stats", make)

    def _doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        cache: dict[str, int] = self._caches.setdefault("df", (None, {}))[1]
        missing = [t for t in dict.fromkeys(terms) if t not in cache]
        if missing:  # kept by every write (mc_df): one look-up for all of them
            rows = self._rows("SELECT term, sum(df) FROM mc_df WHERE ns = ANY(%s) AND term = ANY(%s) GROUP BY term",
                              (self._read_ns, missing))
            found = {t: int(n) for t, n in rows}
            cache.update({t: max(found.get(t, 0), 0) for t in missing})
        return {t: cache[t] for t in terms}

    def detached_vector_search(self) -> None:
        return None  # parallel_reads: the vector search itself runs beside the keyword side

    def vector_search(self, vector: np.ndarray, limit: int,
                      sources: Sequence[str] | None = None) -> list[tuple[int, float]]:
        if limit <= 0:
            return []
        d = len(vector)
        where = f"dims = {d} AND ns = ANY(%s)"
        params: list[Any] = [self._read_ns]
        if sources:
            where += " AND source = ANY(%s)"
            params.append(list(sources))
        q = _vec_text(vector)
        # the planner chooses: a namespace that is a sliver of the table is read exactly through
        # its own index and sorted, a large one walks the HNSW graph with an iterative scan (both
        # measured at 1 000, 10 000 and 1 000 000 chunks beside a million: full results, recall
        # 1.0 for the small ones; docs/postgres.md)
        width = walk_width(self._corpus_stats()[0])
        with self._conn() as c:
            if self._walks.get(c) != width:  # once per pooled connection, not a round trip per search
                c.execute(f"SET hnsw.ef_search = {width}")
                c.commit()  # a session setting: it outlives this transaction
                self._walks[c] = width
            rows = c.execute(f"SELECT id, (embedding::vector({d}) <=> %s::vector({d})) AS dist FROM mc_chunks "
                             f"WHERE {where} ORDER BY embedding::vector({d}) <=> %s::vector({d}) LIMIT %s",
                             [q, *params, q, limit]).fetchall()
        # relaxed_order may return neighbours slightly out of order
        return sorted(((int(rid), 1.0 - float(dist)) for rid, dist in rows), key=lambda h: (-h[1], h[0]))

    def vector_reference(self, vector: np.ndarray) -> VectorReference | None:
        d = len(vector)

        def make() -> tuple[np.ndarray, float, float]:
            ids = [r[0] for r in self._rows(f"SELECT id FROM mc_chunks WHERE ns = ANY(%s) AND dims = {d} ORDER BY id",
                                            (self._read_ns,))]
            step = max(1, len(ids) // REFERENCE_SAMPLE)
            chosen = ids[::step][:REFERENCE_SAMPLE]
            if len(chosen) < REFERENCE_MIN:
                return np.zeros((0, d), np.float32), 0.0, 1.0
            rows = self._rows("SELECT embedding::text FROM mc_chunks WHERE id = ANY(%s) ORDER BY id", (chosen,))
            sample = unit_rows(np.stack([_vec_parse(r[0]) for r in rows]))
            pm, ps = pair_spread(sample)
            return sample, pm, max(ps, 1e-3)

        sample, pair_mean, pair_sd = self._cached(f"reference{d}", make)
        if len(sample) < REFERENCE_MIN:
            return None
        q = np.asarray(vector, dtype=np.float32)
        sims = sample @ (q / (float(np.linalg.norm(q)) or 1.0))
        return VectorReference(float(sims.mean()), float(max(sims.std(), 1e-3)), pair_mean, pair_sd)

    # -- embedding cache (one for every namespace and host) ---------------------------------
    def cache_get(self, key: CacheKey, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        rows = self._rows("SELECT hash, embedding FROM mc_cache WHERE provider = %s AND model = %s AND "
                          "provider_key = %s AND hash = ANY(%s)",
                          (key.provider, key.model, key.provider_key, list(dict.fromkeys(hashes))))
        return {h: np.frombuffer(bytes(b), dtype=np.float32) for h, b in rows}

    def cache_put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time()
        with self._conn() as c:
            c.cursor().executemany(
                "INSERT INTO mc_cache VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (provider, model, provider_key, "
                "hash) DO UPDATE SET embedding = excluded.embedding, dims = excluded.dims, "
                "updated_at = excluded.updated_at",
                [(key.provider, key.model, key.provider_key, h, np.asarray(v, np.float32).tobytes(), len(v), now)
                 for h, v in items.items()])

    def cache_prune(self, max_entries: int) -> int:
        with self._conn() as c:
            (total,), = c.execute("SELECT count(*) FROM mc_cache").fetchall()
            excess = total - max_entries
            if excess <= 0:
                return 0
            c.execute("DELETE FROM mc_cache WHERE (provider, model, provider_key, hash) IN (SELECT provider, model, "
                      "provider_key, hash FROM mc_cache ORDER BY updated_at LIMIT %s)", (excess,))
        return int(excess)

    def cache_items(self, batch: int = 1000) -> Iterator[tuple[CacheKey, dict[str, np.ndarray]]]:
        keys = self._rows("SELECT DISTINCT provider, model, provider_key FROM mc_cache")
        for provider, model, pkey in keys:
            rows = self._rows("SELECT hash, embedding FROM mc_cache WHERE provider = %s AND model = %s AND "
                              "provider_key = %s ORDER BY hash", (provider, model, pkey))
            for i in range(0, len(rows), batch):
                yield CacheKey(provider, model, pkey), {h: np.frombuffer(bytes(b), dtype=np.float32)
                                                        for h, b in rows[i : i + batch]}

    def cache_delete(self, hashes: Iterable[str]) -> int:
        with self._conn() as c:
            cur = c.execute("DELETE FROM mc_cache WHERE hash = ANY(%s)", (list(dict.fromkeys(hashes)),))
            return int(cur.rowcount or 0)

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
    def begin_rebuild(self) -> Store:
        self._builds += 1
        build = f"{self.ns}{BUILD}{os.getpid()}-{self._builds}"
        store = PostgresStore(self.url, build, host=self.host, workspace=self.workspace, _build_of=self.ns)
        store._wipe()
        return store

    def _wipe(self) -> None:
        with self._tx() as c:
            for table in _TABLES:
                c.execute(f"DELETE FROM {table} WHERE ns = %s", (self.ns,))
            c.execute("UPDATE mc_ns SET chunks = 0, tokens = 0 WHERE ns = %s", (self.ns,))

    def commit_rebuild(self, build: Store, *, repair: bool = False) -> None:
        assert isinstance(build, PostgresStore) and build._build_of == self.ns
        with self._tx() as c:
            for table in _TABLES:
                c.execute(f"DELETE FROM {table} WHERE ns = %s", (self.ns,))
                c.execute(f"UPDATE {table} SET ns = %s WHERE ns = %s", (self.ns, build.ns))
            c.execute("UPDATE mc_ns t SET chunks = b.chunks, tokens = b.tokens FROM mc_ns b WHERE t.ns = %s "
                      "AND b.ns = %s", (self.ns, build.ns))
            c.execute("DELETE FROM mc_ns WHERE ns = %s", (build.ns,))
        build.close()
        self._caches = {k: v for k, v in self._caches.items() if k.startswith("hnsw")}

    def discard_rebuild(self, build: Store) -> None:
        assert isinstance(build, PostgresStore)
        build._wipe()
        with self._conn() as c:
            c.execute("DELETE FROM mc_ns WHERE ns = %s", (build.ns,))
        build.close()

    def remove_stale_builds(self) -> None:
        """Builds a crashed process left (the caller holds the write lock, so none is live)."""
        prefix = re.sub(r"([%_\\])", r"\\\1", self.ns + BUILD) + "%"
        with self._tx() as c:
            for table in (*_TABLES, "mc_ns"):
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
        self.recovered = f"namespace {self.ns} cleared"

    # -- lifecycle --------------------------------------------------------------------------
    def describe(self) -> dict[str, str]:
        (server,), = self._rows("SHOW server_version")
        rows = self._rows("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        shared = f"; shared: {', '.join(self.shared)}" if self.shared else ""
        return {"path": self.path, "driver": f"postgres (PostgreSQL {server})",
                "vector": f"pgvector {rows[0][0] if rows else '?'} HNSW cosine, iterative scan",
                "ftsTokenizer": "postings of mnemoclaw's analysed terms, BM25 in SQL",
                "namespace": self.ns + shared}

    def close(self) -> None:
        if self._listen is not None:
            try:
                self._listen.close()
            except Exception:  # noqa: BLE001 - a dead server
                pass
            self._listen = None
        try:
            self.pool.close()
        except Exception:  # noqa: BLE001 - closing twice, a dead server
            pass
