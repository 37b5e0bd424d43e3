"""The server behind a Postgres index and this process's connections to it.

A pool of connections (each read takes one, so the keyword and the vector side of a search run
at once), a connection that LISTENs for other processes' writes, a server that went away told
apart from a statement it refused (and tried again at most every ``PROBE_EVERY`` seconds),
transactions that bump the namespace's generation, the named migrations applied once under an
advisory lock, and the indexes built beside the tables. The parts above it
(``postgres_index.py``, ``postgres_vectors.py``, ``postgres_upkeep.py``, ``postgres.py``) are
the same object over the same pool.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from ..errors import ConfigError, StoreError, StoreUnavailableError
from ..text.secrets import redact_url
from .postgres_schema import BUILD, HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH, HNSW_M, MIGRATIONS, POSTINGS_INDEX

log = logging.getLogger(__name__)

CHANNEL = "mnemoclaw_generation"  # NOTIFY payload: the namespace written
_RETRYABLE = {"40001", "40P01", "55P03"}  # serialization failure, deadlock, lock not available
_GONE = {"57P01", "57P02", "57P03"}  # the server shut down, crashed, or is starting: no statement's fault
PROBE_EVERY = 2.0  # seconds: after the server was lost, how often a call may try to reach it again


class PostgresConnection:
    """One namespace's connections to the server (store/postgres.py is the ``Store``)."""

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
        self._recovered: str | None = None  # what recover() did (take_recovery)
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

    # -- what caches compare: the generations of the namespaces read ---------------------
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

    # -- the schema -----------------------------------------------------------------------
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
