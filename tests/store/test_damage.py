"""Damage anywhere in a real index: searches keep answering, status says so, the next sync repairs.

Each trial copies a real index (sqlite-vec, FTS5, vectors, embedding cache), overwrites
random pages of it (random bytes or zeros, the header page included now and then), and
then uses it as a user would: search, status, sync. Seeded, so a failure replays.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mnemoclaw.api import Memory
from mnemoclaw.config import load_settings
from mnemoclaw.markdown.chunker import text_hash

from conftest import REPO, HashEmbedder, read_back, write

NOTES = 120
PAGE = 4096
WORDS = "alpha beta gamma delta server database deploy key meeting tea coffee 数据库 迁移 周会 乌龙茶 项目".split()


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    rnd = random.Random(1)
    for i in range(NOTES):
        lines = [f"# note {i}", f"- the marker word for this note is zq{i}x"]
        lines += [f"- {' '.join(rnd.choice(WORDS) for _ in range(12))} item{i}x{j}" for j in range(30)]
        write(ws / "memory" / f"2026-01-{i % 28 + 1:02d}-n{i}.md", "\n".join(lines) + "\n")
    write(ws / "MEMORY.md", "- the deploy key lives in the vault\n- 用户喜欢喝乌龙茶\n")
    return ws


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A workspace and its index, built once; every trial damages a copy."""
    root = tmp_path_factory.mktemp("pristine")
    ws = _workspace(root)
    settings = load_settings(workspace=ws, state_dir=root / "state", config={}, env={})
    with Memory(settings, provider=HashEmbedder(), background=False) as mem:
        mem.sync()
        assert mem.backend.store.vec_loaded or mem.backend.store.driver.name == "sqlite3"
    return root


def _copy(pristine: Path, dest: Path) -> tuple[Path, Path]:
    shutil.copytree(pristine, dest)
    return dest / "ws", dest / "state" / "memory" / "main.sqlite"


def _damage(db: Path, rnd: random.Random) -> list[int]:
    pages = db.stat().st_size // PAGE
    hit = sorted({0 if rnd.random() < 0.08 else rnd.randrange(1, pages) for _ in range(rnd.randint(1, 4))})
    with open(db, "r+b") as fh:
        for p in hit:
            fh.seek(p * PAGE)
            fh.write(bytes(PAGE) if rnd.random() < 0.3 else rnd.randbytes(PAGE))
    return hit


def _quick_check(db: Path) -> bool:
    """An independent look, with the standard library's SQLite: is the file sound?"""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return con.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return False


# Every trial's workspace is a copy of the same notes, and chunking and the hash embedder are
# pure functions of the text: what a sound index must hold is worked out once per distinct text,
# not again in each of the 238 trials (it was half of a trial's time).
_CHUNKS: dict[str, list[tuple[int, int, str]]] = {}
_VECTORS: dict[tuple[str, int, str], np.ndarray] = {}


def _expected(ws: Path) -> set[tuple[str, int, int, str]]:
    """What a fresh index of the workspace holds: (path, start, end, hash) of every chunk."""
    from mnemoclaw.markdown.chunker import chunk_markdown
    from mnemoclaw.notes.discovery import discover

    out = set()
    for f in discover(ws):
        text = Path(f.abspath).read_text("utf-8")
        if text not in _CHUNKS:
            _CHUNKS[text] = [(c.start_line, c.end_line, c.hash) for c in chunk_markdown(text, 400, 80)]
        out.update((f.path, start, end, h) for start, end, h in _CHUNKS[text])
    return out


def _vectors(embedder: HashEmbedder, texts: list[str]) -> list[np.ndarray]:
    """The embedder's vector for each text, each text embedded once for all trials."""
    keys = [(embedder.provider_key, embedder.dims, t) for t in texts]
    missing = list(dict.fromkeys(k for k in keys if k not in _VECTORS))
    if missing:
        _VECTORS.update(zip(missing, embedder.embed([k[2] for k in missing]), strict=True))
    return [_VECTORS[k] for k in keys]


def _assert_sound(mem: Memory, ws: Path, embedder: HashEmbedder) -> None:
    conn = mem.backend.store.conn
    assert conn.execute("PRAGMA integrity_check") == [("ok",)]
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")  # raises if the FTS is off
    rows = conn.execute("SELECT path, start_line, end_line, hash, text, embedding FROM chunks")
    expected = _expected(ws)
    assert {(r[0], r[1], r[2], r[3]) for r in rows} == expected
    assert len(rows) == len(expected)  # no duplicates
    for (path, _, _, h, text, blob), want in zip(rows, _vectors(embedder, [r[4] for r in rows]), strict=True):
        assert text_hash(text) == h
        assert np.allclose(np.frombuffer(blob, dtype=np.float32), want, atol=1e-6), path
    if mem.backend.store.vec_loaded:
        assert conn.one("SELECT count(*) FROM chunks_vec")[0] == len(rows)
    st = mem.status(check_integrity=True, deep=True)
    assert st["damaged"] is None and st["dirty"] is False


TRIALS = [*range(24), *[pytest.param(seed, marks=pytest.mark.slow) for seed in range(24, 224)]]


@pytest.mark.parametrize("seed", TRIALS)
def test_random_damage_anywhere_search_answers_status_says_so_sync_repairs(pristine, tmp_path, seed):
    _trial(pristine, tmp_path, seed)


@pytest.mark.parametrize("driver", ["sqlite3", "apsw"])
@pytest.mark.parametrize("seed", range(100, 106))
def test_damage_with_the_other_sqlite_modules(pristine, tmp_path, seed, driver, monkeypatch):
    """The stdlib module (numpy vectors, no sqlite-vec) and apsw repair the same way."""
    pytest.importorskip(driver)
    monkeypatch.setenv("MNEMOCLAW_SQLITE_DRIVER", driver)
    _trial(pristine, tmp_path, seed)


def _trial(pristine: Path, tmp_path: Path, seed: int) -> None:
    ws, db = _copy(pristine, tmp_path / "trial")
    rnd = random.Random(seed)
    _damage(db, rnd)
    sound = _quick_check(db)
    embedder = HashEmbedder()
    settings = load_settings(workspace=ws, state_dir=tmp_path / "trial" / "state", config={}, env={})
    mem = Memory(settings, provider=embedder, background=False)  # opening never fails
    try:
        for query, path in (("zq17x", "memory/2026-01-18-n17.md"), ("vault", "MEMORY.md"),
                            ("zq99x", "memory/2026-01-16-n99.md")):
            out = mem.tools.memory_search(query)
            assert "disabled" not in out, out
            for hit in out["results"]:  # whatever is returned is what the file holds at those lines
                body = hit["snippet"].split("\n\nSource: ")[0].rstrip("…")
                lines = read_back(mem, hit["path"], hit["startLine"], hit["endLine"] - hit["startLine"] + 1)["text"]
                assert body.lstrip("…") in lines, (query, hit)
            if not out["results"] or out["results"][0]["path"] != path:
                assert "damaged" in out or "indexing" in out, (query, out)  # a miss is explained
                if not out["results"]:  # and the agent is not told memory has nothing on it
                    assert "not fully searchable" in out["note"], out
        st = mem.status(check_integrity=True)
        if not sound and mem.backend.store.damaged() is None:
            # only a repair during the searches may have made it sound again
            assert st["damaged"] is None and _quick_check(db)
        elif not sound:
            assert st["damaged"], st
        report = mem.sync()
        assert report.failed == []
        _assert_sound(mem, ws, embedder)
        out = mem.tools.memory_search("zq42x")
        assert out["results"][0]["path"] == "memory/2026-01-15-n42.md" and "warning" not in out
    finally:
        mem.close()


def test_index_full_repairs_a_damaged_index_from_the_command_line(pristine, tmp_path):
    """`mnemoclaw index --full` on a damaged index used to fail with "could not swap … SQL logic error"."""
    ws, db = _copy(pristine, tmp_path / "cli")
    state = tmp_path / "cli" / "state"
    rnd = random.Random(3)
    while _quick_check(db):
        _damage(db, rnd)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
    base = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir", str(state)]
    st = subprocess.run([*base, "status"], capture_output=True, text=True, env=env, timeout=120)
    assert st.returncode == 0 and "DAMAGED" in st.stdout and "Traceback" not in st.stderr, st.stderr
    full = subprocess.run([*base, "index", "--full"], capture_output=True, text=True, env=env, timeout=120)
    assert full.returncode == 0, full.stderr
    after = subprocess.run([*base, "status"], capture_output=True, text=True, env=env, timeout=120)
    assert "state             clean" in after.stdout, after.stdout
    assert _quick_check(db)


def test_a_long_running_process_repairs_in_the_background(pristine, tmp_path):
    ws, db = _copy(pristine, tmp_path / "bg")
    rnd = random.Random(11)
    settings = load_settings(workspace=ws, state_dir=tmp_path / "bg" / "state", config={}, env={})
    embedder = HashEmbedder()
    with Memory(settings, provider=embedder) as mem:
        mem.tools.memory_search("zq5x")  # opened and warm
        while _quick_check(db):
            _damage(db, rnd)
        mem.status(check_integrity=True)  # finds it
        out = mem.tools.memory_search("zq5x")  # answers, and has the writer thread repair it
        assert "disabled" not in out
        assert mem.freshness.background.wait_idle(60)
        assert mem.backend.store.damaged() is None and _quick_check(db)
        out = mem.tools.memory_search("zq5x")
        assert out["results"][0]["path"] == "memory/2026-01-06-n5.md" and "damaged" not in out
        _assert_sound(mem, ws, embedder)
