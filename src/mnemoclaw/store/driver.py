"""One face over the SQLite modules Python can use, so sqlite-vec loads wherever it can.

The stdlib ``sqlite3`` of many Python builds (pyenv, macOS system Python) is compiled
without ``enable_load_extension``; ``pysqlite3`` (``pysqlite3-binary``) and ``apsw``
bring their own SQLite that can load extensions. All three are driven through the
same small interface here: explicit transactions, rows as tuples, and errors
classified as busy, corrupt, or full.
"""

from __future__ import annotations

import importlib
import logging
import os
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

# Tried in this order; the first that can load sqlite-vec wins. An explicit choice
# comes from MNEMOCLAW_SQLITE_DRIVER (sqlite3 | pysqlite3 | apsw).
DRIVER_NAMES = ("sqlite3", "pysqlite3", "apsw")


class Connection:
    """A connection with autocommit semantics: transactions only where BEGIN says so.

    ``translate``, when set, turns every error of the SQLite module into the caller's own
    (a full disk, a damaged page, a busy database): no statement anywhere lets a raw one out.
    """

    def __init__(self, driver: Driver, raw: Any):
        self.driver = driver
        self.raw = raw
        self.translate: Callable[[BaseException], BaseException] | None = None

    def _failed(self, exc: BaseException) -> BaseException:
        return self.translate(exc) if self.translate is not None else exc

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        try:
            return self.raw.execute(sql, params).fetchall()
        except self.driver.error as exc:
            raise self._failed(exc) from exc

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        rows = self.execute(sql, params)
        return rows[0] if rows else None

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row of a query that always has one (count(*), a pragma)."""
        row = self.one(sql, params)
        if row is None:
            raise ValueError(f"no row from {sql!r}")
        return row[0]

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> None:
        try:
            self.raw.executemany(sql, seq)
        except self.driver.error as exc:
            raise self._failed(exc) from exc

    @property
    def in_transaction(self) -> bool:
        return bool(self.raw.in_transaction)

    def close(self) -> None:
        self.raw.close()


@dataclass
class Driver:
    name: str
    module: Any
    sqlite_version: str
    can_load_extensions: bool

    def connect(self, path: str, *, busy_timeout_ms: int = 30_000, readonly: bool = False,
                immutable: bool = False) -> Connection:
        """``readonly``: never write (the file or its directory is read-only); ``immutable``
        too: the file is promised not to change, so no lock or ``-shm`` file is needed
        (a read-only directory without one)."""
        uri = None
        if readonly or immutable:
            uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + ("?immutable=1" if immutable else "?mode=ro")
        if self.name == "apsw":
            flags = self.module.SQLITE_OPEN_READONLY if uri else (
                self.module.SQLITE_OPEN_READWRITE | self.module.SQLITE_OPEN_CREATE
            )
            if uri:
                flags |= self.module.SQLITE_OPEN_URI
            raw = self.module.Connection(uri or path, flags=flags)
            raw.set_busy_timeout(busy_timeout_ms)
        else:
            raw = self.module.connect(
                uri or path,
                timeout=busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
                uri=uri is not None,
            )
        return Connection(self, raw)

    def backup(self, source: Connection, target: Connection) -> None:
        """Copy every page of ``source`` over ``target`` (SQLite's online backup), in one
        transaction on the target: its readers keep their snapshot until it commits, and
        pages of the target are overwritten, never read, so damaged ones do no harm."""
        if self.name == "apsw":
            with target.raw.backup("main", source.raw, "main") as job:
                while not job.done:
                    job.step(-1)
        else:
            source.raw.backup(target.raw)

    def load_extension(self, conn: Connection, path: str) -> None:
        raw = conn.raw
        raw.enable_load_extension(True)
        try:
            raw.load_extension(path)
        finally:
            raw.enable_load_extension(False)

    # -- error classification -------------------------------------------------
    def is_busy(self, exc: BaseException) -> bool:
        if self.name == "apsw":
            return isinstance(exc, (self.module.BusyError, self.module.LockedError))
        return isinstance(exc, self.module.OperationalError) and "locked" in str(exc)

    def is_corrupt(self, exc: BaseException) -> bool:
        if self.name == "apsw":
            return isinstance(exc, (self.module.CorruptError, self.module.NotADBError))
        msg = str(exc).lower()
        return isinstance(exc, self.module.DatabaseError) and (
            "malformed" in msg or "not a database" in msg or "corrupt" in msg
        )

    def is_full(self, exc: BaseException) -> bool:
        if self.name == "apsw":
            return isinstance(exc, self.module.FullError)
        return "database or disk is full" in str(exc).lower()

    def is_io(self, exc: BaseException) -> bool:
        if self.name == "apsw":
            return isinstance(exc, self.module.IOError)
        return "disk i/o error" in str(exc).lower()

    @property
    def error(self) -> type[BaseException]:
        return self.module.Error


def _load_driver(name: str) -> Driver | None:
    try:
        if name == "sqlite3":
            mod = importlib.import_module("sqlite3")
            can = hasattr(mod.Connection, "enable_load_extension")
            return Driver("sqlite3", mod, mod.sqlite_version, can)
        if name == "pysqlite3":
            mod = importlib.import_module("pysqlite3.dbapi2")
            return Driver("pysqlite3", mod, mod.sqlite_version, True)
        if name == "apsw":
            mod = importlib.import_module("apsw")
            return Driver("apsw", mod, mod.sqlite_lib_version(), True)
    except ImportError:
        return None
    raise ValueError(f"Unknown SQLite driver {name!r}. Available: {', '.join(DRIVER_NAMES)}")


def sqlite_vec_path() -> str | None:
    try:
        import sqlite_vec
    except ImportError:
        return None
    return sqlite_vec.loadable_path()


@dataclass
class DriverChoice:
    driver: Driver
    vec_path: str | None  # loadable sqlite-vec, or None when vectors fall back to numpy
    note: str  # why this choice, for `status`


def choose_driver(vector_enabled: bool = True, extension_path: str | None = None) -> DriverChoice:
    """Pick the SQLite module: the first that can load sqlite-vec, else stdlib with numpy vectors."""
    forced = os.environ.get("MNEMOCLAW_SQLITE_DRIVER")
    names = (forced,) if forced else DRIVER_NAMES
    vec = extension_path or (sqlite_vec_path() if vector_enabled else None)
    fallback: Driver | None = None
    reasons: list[str] = []
    for name in names:
        drv = _load_driver(name)
        if drv is None:
            reasons.append(f"{name} not installed")
            continue
        fallback = fallback or drv
        if not vector_enabled:
            return DriverChoice(drv, None, "vector search disabled by config")
        if vec is None:
            return DriverChoice(drv, None, "sqlite-vec not installed")
        if not drv.can_load_extensions:
            reasons.append(f"{name} cannot load extensions")
            continue
        conn = None
        try:
            conn = drv.connect(":memory:")
            drv.load_extension(conn, vec)
        except Exception as exc:  # any failure here just means: try the next module
            reasons.append(f"{name}: {exc}")
            continue
        finally:
            if conn is not None:
                conn.close()
        return DriverChoice(drv, vec, f"sqlite-vec via {name}")
    if fallback is None:
        raise RuntimeError(f"No usable SQLite module ({'; '.join(reasons)})")
    note = "; ".join(reasons)
    log.info("sqlite-vec unavailable (%s); vector search uses numpy brute force", note)
    return DriverChoice(fallback, None, note)
