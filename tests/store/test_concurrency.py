"""Many processes, one index: readers during a big sync, writers killed at random
points, a second writer, a full disk, and leftover rebuild databases."""

from __future__ import annotations

import glob
import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mnemoclaw.errors import StoreError
from mnemoclaw.index.preparing import read_markdown
from mnemoclaw.markdown.chunker import chunk_markdown
from mnemoclaw.store.sqlite import SQLiteStore

from conftest import REPO, write

PRELUDE = textwrap.dedent("""
    import json, os, sys, time
    sys.path.insert(0, {tests!r})
    from conftest import HashEmbedder
    from mnemoclaw.api import Memory
    from mnemoclaw.config import load_settings

    class Slow(HashEmbedder):
        def embed(self, texts, *, query=False):
            time.sleep({delay} * len(texts))
            return super().embed(texts, query=query)

    args = json.loads(sys.argv[1])
    settings = load_settings(workspace=args["ws"], state_dir=args["state"], config={{}}, env={{}},
                             overrides=args.get("overrides"))
    mem = Memory(settings, provider=Slow(), background=False)
""")

WRITER = """
print("start", flush=True)
report = mem.sync()
print(json.dumps(report.as_dict()), flush=True)
"""

READER = """
stop = args["stop"]
conn = mem.backend.store.conn
stats = {"reads": 0, "errors": [], "inconsistent": [], "saw": set()}
while not os.path.exists(stop) or stats["reads"] < 5:
    try:
        conn.execute("BEGIN")
        try:
            files = conn.one("SELECT count(*) FROM files")[0]
            chunks = conn.one("SELECT count(*) FROM chunks")[0]
            fts = conn.one("SELECT count(*) FROM chunks_fts")[0]
            vecs = conn.one("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL")[0]
            mixed = conn.one("SELECT count(*) FROM (SELECT path FROM chunks GROUP BY path "
                             "HAVING min(text LIKE '%vertwo%') != max(text LIKE '%vertwo%'))")[0]
            new = conn.one("SELECT count(*) FROM chunks WHERE text LIKE '%vertwo%'")[0]
        finally:
            conn.execute("COMMIT")
        state = (files, chunks, fts, vecs, mixed)
        if state != (args["files"], args["chunks"], args["chunks"], args["chunks"], 0):
            stats["inconsistent"].append(state)
        stats["saw"].add("new" if new == chunks else "old" if new == 0 else "between")
        hits = mem.search("vertwo item seven", sync=False)
        if not hits:
            stats["errors"].append("no hits")
    except Exception as exc:
        stats["errors"].append(repr(exc))
    stats["reads"] += 1
stats["saw"] = sorted(stats["saw"])
print(json.dumps(stats), flush=True)
"""


def _spawn(body: str, delay: float, **args) -> subprocess.Popen:
    code = PRELUDE.format(tests=str(REPO / "tests"), delay=delay) + textwrap.dedent(body)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return subprocess.Popen([sys.executable, "-c", code, json.dumps(args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, text=True)


CHUNKING = {"chunking": {"tokens": 64, "overlap": 0}}


def _note(i: int, version: str) -> str:
    # three lines of ~30 tokens: three chunks per file in either version
    return "\n".join(f"- {version} item {i}.{j} " + " ".join(["seven", "walrus", "harbour"] * 9) for j in range(3))


def test_readers_never_see_a_half_written_sync(workspace, tmp_path, make_memory):
    n = 2000
    for i in range(n):
        write(workspace / "memory" / f"n{i:04d}.md", _note(i, "verone"))
    state = tmp_path / "state"
    mem = make_memory(workspace, overrides=CHUNKING)
    mem.sync()
    expected_chunks = mem.backend.store.counts()["chunks"]
    assert expected_chunks == 3 * n
    for i in range(n):
        write(workspace / "memory" / f"n{i:04d}.md", _note(i, "vertwo"))
    stop = tmp_path / "stop"
    common = dict(ws=str(workspace), state=str(state), overrides=CHUNKING)
    readers = [_spawn(READER, 0, stop=str(stop), files=n, chunks=expected_chunks, **common) for _ in range(4)]
    time.sleep(1.0)  # readers are up and reading the old state
    results = sync_beside(readers, _spawn(WRITER, 0.0003, **common), stop, changed=n)
    for stats in results:
        assert stats["errors"] == [] and stats["inconsistent"] == []
        assert stats["reads"] > 5
    seen = {s for stats in results for s in stats["saw"]}
    assert {"old", "new"} <= seen, f"readers did not overlap the sync: {seen}"


def sync_beside(readers: list[subprocess.Popen], writer: subprocess.Popen, stop: Path, changed: int) -> list[dict]:
    """Let ``writer`` (spawned just now) sync ``changed`` files while ``readers`` read, then stop
    the readers; what each reader reported."""
    out, err = writer.communicate(timeout=300)
    assert writer.returncode == 0, err
    report = json.loads(out.splitlines()[-1])
    assert report["changed"] == changed and report["failed"] == []
    time.sleep(0.5)
    stop.touch()
    results = []
    for r in readers:
        out, err = r.communicate(timeout=60)
        assert r.returncode == 0, err
        results.append(json.loads(out.splitlines()[-1]))
    return results


def _check_consistent(index_path: str) -> None:
    store = SQLiteStore(index_path)
    try:
        assert store.conn.one("PRAGMA integrity_check")[0] == "ok"
        assert store.conn.one("SELECT count(*) - count(DISTINCT id) FROM chunks")[0] == 0
        files = {r[0] for r in store.conn.execute("SELECT path FROM files")}
        chunk_paths = {r[0] for r in store.conn.execute("SELECT DISTINCT path FROM chunks")}
        assert chunk_paths <= files  # no chunks of a file the index does not know
        assert store.conn.one("SELECT count(*) FROM chunks_fts")[0] == store.counts()["chunks"]
    finally:
        store.close()


def _check_matches_disk(mem, ws: Path, tokens: int) -> None:
    disk = {str(p.relative_to(ws)): p for p in (ws / "memory").rglob("*.md")}
    rows = mem.backend.store.conn.execute("SELECT path, start_line, end_line, text FROM chunks ORDER BY path, start_line")
    indexed: dict[str, list[tuple[int, int, str]]] = {}
    for path, a, b, text in rows:
        indexed.setdefault(path, []).append((a, b, text))
    assert set(indexed) == set(disk)
    for path, p in disk.items():
        text = read_markdown(str(p), p.stat().st_size)
        want = [(c.start_line, c.end_line, c.text) for c in chunk_markdown(text, tokens, 0)]
        assert indexed[path] == want, path
    assert mem.backend.store.counts()["vectors"] == mem.backend.store.counts()["chunks"]


def test_sigkill_at_random_points_never_breaks_the_index(workspace, tmp_path, make_memory):
    """20 seeded trials; every other one changes the chunking, so the kill hits a full rebuild."""
    rng = random.Random(20261129)
    state = tmp_path / "state"
    files = 120
    for i in range(files):
        write(workspace / "memory" / f"n{i:03d}.md", _note(i, "verone"))
    tokens = 64
    make_memory(workspace, overrides={"chunking": {"tokens": tokens, "overlap": 0}}).sync()
    outcomes = {"killed": 0, "finished": 0}
    for trial in range(20):
        for i in rng.sample(range(files), 30):  # edit, create and delete some notes
            write(workspace / "memory" / f"n{i:03d}.md", _note(i, f"ver{trial}x"))
        for _ in range(3):
            write(workspace / "memory" / f"extra{trial}-{rng.randrange(10**6)}.md", _note(trial, "added"))
        extras = sorted((workspace / "memory").glob("extra*.md"))
        if len(extras) > 6:
            rng.choice(extras).unlink()
        tokens = 64 if trial % 2 == 0 else 110  # odd trials: new settings, a full rebuild
        overrides = {"chunking": {"tokens": tokens, "overlap": 0}}
        writer = _spawn(WRITER, 0.005, ws=str(workspace), state=str(state), overrides=overrides)
        assert writer.stdout.readline().strip() == "start"
        time.sleep(rng.uniform(0.0, 0.6))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        finished = bool(writer.stdout.read().strip())
        outcomes["finished" if finished else "killed"] += 1
        index = str(state / "memory" / "main.sqlite")
        _check_consistent(index)
        mem = make_memory(workspace, overrides=overrides)
        r = mem.sync()
        assert r.failed == []
        _check_matches_disk(mem, workspace, tokens)
        mem.close()
        assert glob.glob(index + ".rebuild-*") == []  # no build database left behind
    assert outcomes["killed"] >= 12, outcomes


def test_a_second_writer_waits_or_skips_with_a_message(workspace, tmp_path):
    for i in range(200):
        write(workspace / "memory" / f"n{i:03d}.md", _note(i, "verone"))
    state = tmp_path / "state"
    writer = _spawn(WRITER, 0.01, ws=str(workspace), state=str(state), overrides=CHUNKING)
    assert writer.stdout.readline().strip() == "start"
    time.sleep(0.3)
    cli = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir", str(state)]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), MNEMOCLAW_PROVIDER="none")
    skip = subprocess.run(cli + ["index", "--no-wait"], capture_output=True, text=True, env=env, timeout=60)
    assert skip.returncode == 0, skip.stderr
    assert f"Skipped: process {writer.pid} is updating the index" in skip.stderr
    began = time.monotonic()
    wait = subprocess.run(cli + ["index"], capture_output=True, text=True, env=env, timeout=120)
    wall = time.monotonic() - began
    assert f"Waiting for process {writer.pid}" in wait.stderr
    assert writer.wait(60) == 0
    # the waiting writer ran after the first one: with another provider it rebuilt the index
    assert wait.returncode == 0 and "Rebuilt" in wait.stdout, wait.stdout + wait.stderr
    # its time is its own work; the wait is said apart
    took = re.search(r"in (\d+\.\d+)s \(after waiting (\d+\.\d+)s for another process's sync\)", wait.stdout)
    assert took, wait.stdout
    assert float(took[1]) + float(took[2]) <= wall


def test_a_full_disk_is_reported_and_the_last_good_index_serves(workspace, make_memory, monkeypatch):
    write(workspace / "MEMORY.md", "- the boat is called Saltmarsh")
    mem = make_memory(workspace)
    mem.sync()
    pages = mem.backend.store.conn.one("PRAGMA page_count")[0]
    mem.backend.store.conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # the disk fills up now
    for i in range(300):
        write(workspace / "memory" / f"n{i:03d}.md", _note(i, "verone"))
    with pytest.raises(StoreError, match="disk full"):
        mem.sync()
    # a search still answers from the last good index, and says the index is behind
    out = mem.tools.memory_search("boat Saltmarsh")
    assert out["results"][0]["path"] == "MEMORY.md"
    assert "could not be updated" in out["warning"] and "disk full" in out["warning"]
    assert mem.backend.store.conn.one("PRAGMA integrity_check")[0] == "ok"
    mem.backend.store.conn.execute("PRAGMA max_page_count = 1073741823")  # space freed
    r = mem.sync()
    assert r.failed == [] and mem.backend.store.counts()["files"] == 301
    assert "warning" not in mem.tools.memory_search("boat Saltmarsh")


def test_a_full_disk_during_a_rebuild_keeps_the_old_index(workspace, make_memory, monkeypatch):
    for i in range(100):
        write(workspace / "memory" / f"n{i:03d}.md", _note(i, "verone"))
    make_memory(workspace).sync()
    real_open = SQLiteStore._open

    def tiny_disk(self, durable):
        real_open(self, durable)
        if ".rebuild-" in self.path:
            self.conn.execute("PRAGMA max_page_count = 40")

    monkeypatch.setattr(SQLiteStore, "_open", tiny_disk)
    mem = make_memory(workspace, overrides={"chunking": {"tokens": 64, "overlap": 0}})
    with pytest.raises(StoreError, match="disk full"):
        mem.sync()
    assert glob.glob(mem.backend.store.path + ".rebuild-*") == []
    assert mem.backend.store.counts()["files"] == 100  # the old index, whole
    assert mem.search("walrus harbour", sync=False)


def test_leftover_rebuild_databases_are_removed_on_open(workspace, make_memory, tmp_path):
    write(workspace / "MEMORY.md", "- x")
    mem = make_memory(workspace)
    mem.sync()
    index = mem.backend.store.path
    mem.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}.rebuild-99999.tmp{suffix}").write_bytes(b"left by a crash")
    make_memory(workspace)
    assert glob.glob(index + ".rebuild-*") == []
