"""Freshness in one process: the watcher, the background writer, search-side syncs."""

from __future__ import annotations

import os
import threading
import time

import pytest

from mnemoclaw.api import INLINE_SYNC_FILES

from conftest import HashEmbedder, write


def _wait(cond, timeout=15.0, step=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return False


def _paths(mem, query):
    return [h.path for h in mem.search(query, sync=False, mode="keyword")]


def test_a_note_written_then_searched_at_once_is_found(workspace, make_memory):
    write(workspace / "memory" / "old.md", "- nothing to see")
    mem = make_memory(workspace)
    mem.sync()
    mem.freshness.watch(debounce_ms=60_000)  # the watcher will not sync in time: the search must
    write(workspace / "memory" / "2026-03-01.md", "- the courier code is QX-5521")
    out = mem.tools.memory_search("courier code QX-5521")
    assert out["results"] and out["results"][0]["path"] == "memory/2026-03-01.md"


def test_the_watcher_syncs_after_the_debounce(workspace, make_memory):
    mem = make_memory(workspace)
    mem.sync()
    watcher = mem.freshness.watch(debounce_ms=200)
    time.sleep(0.2)
    write(workspace / "memory" / "2026-03-02.md", "- the zebra prefers apples")
    assert _wait(lambda: _paths(mem, "zebra")), "the watcher never synced the new note"
    assert mem.freshness.background.wait_idle(10)
    assert watcher.flushes >= 1 and mem.freshness.background.syncs >= 1

    (workspace / "memory" / "2026-03-02.md").rename(workspace / "memory" / "renamed.md")
    assert _wait(lambda: _paths(mem, "zebra") == ["memory/renamed.md"])
    (workspace / "memory" / "renamed.md").unlink()
    assert _wait(lambda: _paths(mem, "zebra") == [])


def test_a_burst_of_1000_writes_makes_a_bounded_number_of_syncs(workspace, make_memory):
    """Bound: one flush per quiet period, and at most one per max-wait (4 x debounce) of
    uninterrupted writing; a 1 000-file burst written in well under the max wait gives
    at most 2 flushes (the burst, plus one if events straddle a flush) and so at most 2 syncs."""
    mem = make_memory(workspace, provider=None)
    mem.sync()
    watcher = mem.freshness.watch(debounce_ms=500)
    time.sleep(0.2)
    started = time.monotonic()
    for i in range(1000):
        write(workspace / "memory" / f"b{i:04d}.md", f"- burst note {i}")
    burst = time.monotonic() - started
    assert burst < 2.0, f"writing the burst took {burst:.1f}s; the bound below assumes less than the max wait"
    assert _wait(lambda: mem.backend.store.counts()["files"] == 1000, timeout=30)
    time.sleep(0.8)  # anything still pending would flush within one debounce
    assert mem.freshness.background.wait_idle(30)
    assert 1 <= watcher.flushes <= 2, watcher.flushes
    assert 1 <= mem.freshness.background.syncs <= 2, mem.freshness.background.syncs


def test_the_watcher_ignores_what_is_not_memory(workspace, make_memory):
    mem = make_memory(workspace)
    mem.sync()
    watcher = mem.freshness.watch(debounce_ms=100)
    time.sleep(0.2)
    write(workspace / "memory" / "data.json", "{}")
    write(workspace / "memory" / ".2026-03-01.md.swp", "editor swap file")
    write(workspace / "memory" / "node_modules" / "pkg" / "README.md", "- not a note")
    write(workspace / "memory" / ".git" / "HEAD.md", "ref")
    write(workspace / "notes.md", "- outside the memory paths")
    time.sleep(0.8)
    assert watcher.flushes == 0 and watcher.events == 0


def test_folders_created_after_the_watch_started_are_watched(tmp_path, make_memory):
    ws = tmp_path / "fresh"
    ws.mkdir()
    extra = tmp_path / "later-notes"
    mem = make_memory(ws, overrides={"extraPaths": [str(extra)]})
    mem.freshness.watch(debounce_ms=100)
    time.sleep(0.2)
    write(ws / "memory" / "deep" / "er" / "n.md", "- the heron nests by the lake")
    assert _wait(lambda: _paths(mem, "heron") == ["memory/deep/er/n.md"])
    write(extra / "x.md", "- the otter lives upstream")
    assert _wait(lambda: _paths(mem, "otter") == [str(extra.resolve() / "x.md")])
    write(ws / "MEMORY.md", "- the kestrel hovers")
    assert _wait(lambda: _paths(mem, "kestrel") == ["MEMORY.md"])


def test_polling_mode(workspace, make_memory):
    mem = make_memory(workspace)
    mem.sync()
    watcher = mem.freshness.watch(debounce_ms=100, polling=True)
    assert watcher.mode == "polling"
    time.sleep(0.7)
    write(workspace / "memory" / "p.md", "- the polled pelican")
    assert _wait(lambda: _paths(mem, "pelican"), timeout=10)


def test_a_large_change_does_not_stall_a_search(workspace, make_memory):
    n = INLINE_SYNC_FILES * 3
    mem = make_memory(workspace)
    write(workspace / "memory" / "a.md", "- seed")
    mem.sync()
    for i in range(n):
        write(workspace / "memory" / f"bulk{i:03d}.md", f"- bulk note {i} about walruses")
    newest = write(workspace / "memory" / "newest.md", "- the walrus password hint is seaweed")
    os.utime(newest, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    hits = mem.search("walrus password hint seaweed", mode="keyword")
    assert hits and hits[0].path == "memory/newest.md"  # the newest change was done inline
    assert mem.backend.store.counts()["files"] < n + 2  # ... and not everything
    assert mem.freshness.background.wait_idle(30)
    assert mem.backend.store.counts()["files"] == n + 2  # the rest was done in the background


def test_a_settings_change_rebuilds_in_the_background_while_search_serves(workspace, tmp_path, make_memory):
    for i in range(50):
        write(workspace / "memory" / f"n{i:02d}.md", f"- note {i} mentions the lighthouse keeper")
    make_memory(workspace).sync()

    class Slow(HashEmbedder):
        def embed(self, texts, *, query=False):
            if not query:
                time.sleep(0.5)
            return super().embed(texts, query=query)

    slow = Slow()
    slow.model = "hash-64-v2"  # a new model: the index must be rebuilt
    mem = make_memory(workspace, provider=slow)
    started = time.monotonic()
    hits = mem.search("lighthouse keeper", mode="keyword")
    assert time.monotonic() - started < 0.4, "the search waited for the rebuild"
    assert len(hits) == 6  # served from the old index
    assert mem.freshness.background.wait_idle(30)
    assert mem.backend.needs_rebuild() == ""
    assert mem.backend.store.conn.execute("SELECT DISTINCT model FROM chunks") == [("hash-64-v2",)]


def test_session_start_and_interval_sync_in_the_background(workspace, make_memory):
    mem = make_memory(workspace, overrides={"sync": {"intervalMinutes": 0.005}})  # 0.3 s
    write(workspace / "memory" / "a.md", "- the first badger")
    mem.start_background(watch=False)
    assert _wait(lambda: _paths(mem, "badger"))
    write(workspace / "memory" / "b.md", "- the second wombat")
    assert _wait(lambda: _paths(mem, "wombat"), timeout=5)  # no watcher: the interval did it
    assert mem.status()["background"]["syncs"] >= 2


def test_search_while_the_background_writer_works_has_no_errors(workspace, make_memory):
    mem = make_memory(workspace)
    for i in range(300):
        write(workspace / "memory" / f"n{i:03d}.md", f"- note {i} on the migration of cranes")
    mem.freshness.request("test")
    errors = []

    def searcher():
        for _ in range(50):
            try:
                mem.search("migration cranes", sync=False)
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

    t = threading.Thread(target=searcher)
    t.start()
    t.join()
    assert mem.freshness.background.wait_idle(30)
    assert errors == [] and mem.backend.store.counts()["files"] == 300


def test_no_background_thread_in_short_lived_mode(workspace, make_memory):
    mem = make_memory(workspace, background=False)
    for i in range(INLINE_SYNC_FILES + 5):
        write(workspace / "memory" / f"n{i:03d}.md", f"- note {i}")
    mem.search("note")
    assert mem.freshness._background is None
    assert mem.backend.store.counts()["files"] == INLINE_SYNC_FILES
    mem.search("note")  # the next search takes the next slice
    assert mem.backend.store.counts()["files"] == INLINE_SYNC_FILES + 5


def test_files_with_a_new_mtime_and_the_same_content_take_no_place_of_a_searchs_changed_files(workspace,
                                                                                                make_memory):
    """A search indexes INLINE_SYNC_FILES changed files; a file whose stat changed but whose
    content did not (another host's copy, a restore from a backup) costs a read and a hash, and
    is not one of them: the search indexes the real change and says nothing of partial indexing."""
    mem = make_memory(workspace, background=False)
    paths = [write(workspace / "memory" / f"n{i:03d}.md", f"- note {i} on the otters") for i in range(2 * INLINE_SYNC_FILES)]
    mem.sync()
    later = time.time_ns() + 10**9  # newer than the real change below: looked at first
    for path in paths:
        os.utime(path, ns=(later, later))
    write(workspace / "memory" / "edited.md", "- the otter holt is under the alder roots")
    out = mem.tools.memory_search("otter holt alder roots")
    assert out["results"][0]["path"] == "memory/edited.md"
    assert out.get("indexing") is None and "warning" not in out, out
    assert mem.status(check_integrity=False)["dirty"] is False


@pytest.mark.parametrize("debounce", [0])
def test_zero_debounce_still_works(workspace, make_memory, debounce):
    mem = make_memory(workspace)
    mem.freshness.watch(debounce_ms=debounce)
    time.sleep(0.2)
    write(workspace / "memory" / "z.md", "- zero debounce zebra")
    assert _wait(lambda: _paths(mem, "zebra"))


class SlowEmbedder(HashEmbedder):
    """The hash embedder at the pace of a real model on a busy laptop."""

    def embed(self, texts, *, query: bool = False):
        if not query:
            time.sleep(0.002 * len(texts))
        return super().embed(texts, query=query)


def test_a_search_during_the_first_index_says_it_is_partial(workspace, make_memory):
    """The first MCP search on a fresh state used to return [] with only a log line blaming
    "another process": the agent then reported that memory held nothing."""
    for i in range(600):
        write(workspace / "memory" / f"2026-01-{i % 28 + 1:02d}-n{i:03d}.md", f"- note {i}: the walrus {i} sings\n")
    mem = make_memory(workspace, provider=SlowEmbedder())
    mem.start_background()  # the session-start sync of a long-running server
    deadline = time.monotonic() + 20
    out = mem.tools.memory_search("walrus")
    while "indexing" not in out and time.monotonic() < deadline:
        out = mem.tools.memory_search("walrus")
    assert "indexing" in out, out
    state = out["indexing"]
    assert state["by"] == "this process" and 0 <= state["filesDone"] < state["filesTotal"] <= 600
    assert "still being indexed" in out["warning"] and "not that nothing is there" in out["warning"]
    assert mem.freshness.background.wait_idle(60)
    out = mem.tools.memory_search("walrus 599")
    assert "indexing" not in out and "warning" not in out and out["results"]
    assert mem.status()["indexing"] is None


def test_another_process_building_the_index_is_named_with_its_progress(workspace, tmp_path):
    import subprocess
    import sys

    from mnemoclaw.api import Memory
    from mnemoclaw.config import load_settings

    from conftest import REPO

    for i in range(6000):
        write(workspace / "memory" / f"n{i:05d}.md", f"- note {i} about the harbour\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
    proc = subprocess.Popen([sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir",
                             str(tmp_path / "state"), "index"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    seen = None
    settings = load_settings(workspace=workspace, state_dir=tmp_path / "state", config={}, env={},
                             overrides={"provider": "none"})
    try:
        deadline = time.monotonic() + 60
        while seen is None and proc.poll() is None and time.monotonic() < deadline:
            if (tmp_path / "state" / "memory" / "main.sqlite").exists():
                with Memory(settings, background=False) as mem:
                    seen = mem.status(check_dirty=False)["indexing"]
            time.sleep(0.02)
    finally:
        proc.wait(60)
    assert seen is not None and seen["by"] == f"process {proc.pid}" and seen["filesTotal"] == 6000, (seen, proc.pid)
    with Memory(settings, background=False) as mem:
        assert mem.status(check_dirty=False)["indexing"] is None  # finished: nothing is announced any more


class PacedEmbedder(HashEmbedder):
    """The hash embedder at the pace of a remote provider (or a loaded machine): each batch
    of notes takes ``pace`` seconds, longer than a search waits for the write lock."""

    def __init__(self, pace: float):
        super().__init__()
        self.pace = pace
        self.embedding = threading.Event()  # set while a batch of notes is being embedded

    def embed(self, texts, *, query: bool = False):
        if not query:
            self.embedding.set()
            time.sleep(self.pace)
            self.embedding.clear()
        return super().embed(texts, query=query)


def test_the_first_search_waits_for_the_session_start_sync_of_a_few_notes(workspace, make_memory):
    """A server's first search used to give up on the lock after 0.2 s while its own
    session-start sync was indexing the notes, and answered from the empty index."""
    write(workspace / "MEMORY.md", "- the spare key is under the blue flowerpot")
    embedder = PacedEmbedder(0.5)
    mem = make_memory(workspace, provider=embedder)
    mem.start_background(watch=False)
    assert embedder.embedding.wait(10)  # the session-start sync holds the lock, embedding
    out = mem.tools.memory_search("spare key flowerpot")
    assert [r["path"] for r in out["results"]] == ["MEMORY.md"], out


def test_a_note_appended_while_the_writer_syncs_is_found_by_the_next_search(workspace, make_memory):
    write(workspace / "MEMORY.md", "- the spare key is under the blue flowerpot")
    embedder = PacedEmbedder(0.5)
    mem = make_memory(workspace, provider=embedder)
    mem.sync()
    first = mem.tools.memory_append("- the plumber comes on Friday at 9")["path"]
    mem.freshness.request("watch")  # what the watcher asks for after the append
    assert embedder.embedding.wait(10)  # the background sync is embedding the note, holding the lock
    second = mem.tools.memory_append("- the electrician comes on Monday")["path"]  # after that sync looked
    out = mem.tools.memory_search("electrician Monday")
    assert first == second and out["results"] and out["results"][0]["path"] == second, out
    assert "electrician" in out["results"][0]["snippet"]
    assert mem.tools.memory_search("plumber Friday")["results"][0]["path"] == first


def test_a_search_does_not_wait_long_for_its_writer(workspace, make_memory, monkeypatch):
    import mnemoclaw.freshness as freshness

    monkeypatch.setattr(freshness, "SEARCH_WRITER_WAIT", 0.3)
    write(workspace / "MEMORY.md", "- the spare key is under the blue flowerpot")
    embedder = PacedEmbedder(2.0)  # a provider that hangs
    mem = make_memory(workspace, provider=embedder)
    mem.start_background(watch=False)
    assert embedder.embedding.wait(10)
    started = time.monotonic()
    out = mem.tools.memory_search("spare key flowerpot", mode="keyword")
    assert time.monotonic() - started < 1.2  # the bound, then an answer from the last commit
    assert out["results"] == []
