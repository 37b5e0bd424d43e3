import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from mnemoclaw.errors import ProviderError, WorkspaceError

from conftest import REPO, HashEmbedder, write


def test_first_sync_then_incremental(workspace, make_memory, embedder):
    write(workspace / "MEMORY.md", "# Memory\n\n- prefers tea")
    write(workspace / "memory" / "2026-01-01.md", "- met Alice about billing")
    mem = make_memory(workspace)
    r = mem.sync()
    assert (r.added, r.changed, r.unchanged, r.removed, r.failed) == (2, 0, 0, 0, [])
    assert r.chunks_total == 2 and r.chunks_embedded == 2 and r.chunks_reused == 0

    r = mem.sync()
    assert (r.added, r.changed, r.unchanged, r.removed) == (0, 0, 2, 0)
    assert r.chunks_embedded == 0

    write(workspace / "memory" / "2026-01-01.md", "- met Alice about billing\n- and Bob")
    write(workspace / "memory" / "2026-01-02.md", "- new day")
    (workspace / "MEMORY.md").unlink()
    r = mem.sync()
    assert (r.added, r.changed, r.unchanged, r.removed) == (1, 1, 0, 1)
    assert r.chunks_total == 2


def test_touched_but_identical_file_is_not_reembedded(workspace, make_memory, embedder):
    path = write(workspace / "MEMORY.md", "same text")
    mem = make_memory(workspace)
    mem.sync()
    before = embedder.embedded
    os.utime(path, (time.time() + 100, time.time() + 100))
    r = mem.sync()
    assert r.unchanged == 1 and r.changed == 0 and embedder.embedded == before
    assert mem.sync().unchanged == 1  # the new mtime was recorded


def test_only_new_chunk_texts_are_embedded(workspace, make_memory, embedder):
    paragraphs = [f"paragraph {i} " + "lorem ipsum dolor " * 30 for i in range(6)]
    path = write(workspace / "MEMORY.md", "\n".join(paragraphs))
    mem = make_memory(workspace, overrides={"chunking": {"tokens": 150, "overlap": 0}})
    first = mem.sync()
    assert first.chunks_total >= 6
    path.write_text("\n".join(paragraphs + ["a brand new paragraph at the end"]), "utf-8")
    r = mem.sync()
    assert r.changed == 1
    assert r.chunks_embedded == 1, "only the new last chunk needs a vector"
    assert r.chunks_reused == r.chunks_total - 1


def test_bad_files_are_skipped_with_reasons_and_the_rest_indexed(workspace, make_memory):
    write(workspace / "memory" / "good.md", "good note about tea")
    (workspace / "memory" / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (workspace / "memory" / "latin1.md").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    locked = write(workspace / "memory" / "locked.md", "secret")
    locked.chmod(0)
    mem = make_memory(workspace)
    r = mem.sync()
    reasons = dict(r.failed)
    assert "binary" in reasons["memory/binary.md"]
    assert "UTF-8" in reasons["memory/latin1.md"]
    if os.geteuid() != 0:  # root can read anything
        assert "memory/locked.md" in reasons
    assert r.added >= 1
    assert mem.tools.memory_search("tea")["results"][0]["path"] == "memory/good.md"


def test_missing_and_empty_workspace(tmp_path, make_memory):
    mem = make_memory(tmp_path / "nope")
    with pytest.raises(WorkspaceError, match="mnemoclaw init"):
        mem.sync()
    out = mem.tools.memory_search("anything")
    assert out["disabled"] and out["results"] == [] and "init" in out["action"]
    (tmp_path / "empty").mkdir()
    r = make_memory(tmp_path / "empty").sync()
    assert r.chunks_total == 0 and r.failed == []


def test_settings_change_triggers_a_full_rebuild(workspace, make_memory, embedder):
    write(workspace / "MEMORY.md", "\n".join(f"line {i} about topic {i}" for i in range(100)))
    mem = make_memory(workspace)
    mem.sync()
    fp = mem.status()["fingerprint"]
    mem.close()
    mem2 = make_memory(workspace, overrides={"chunking": {"tokens": 64, "overlap": 8}})
    assert "chunking" in mem2.status()["rebuildReason"]
    r = mem2.sync()
    assert r.full_rebuild and "chunking" in r.reason
    st = mem2.status()
    assert st["fingerprint"] != fp and st["dirty"] is False
    assert not [p for p in os.listdir(mem2.backend.store.path.rsplit("/", 1)[0]) if ".rebuild-" in p]


def test_failed_rebuild_leaves_the_old_index_serving(workspace, make_memory):
    write(workspace / "MEMORY.md", "- the deploy key rotates every 90 days")
    for i in range(20):
        write(workspace / "memory" / f"2026-01-{i + 1:02d}.md", f"- note {i} about subject {i}")
    mem = make_memory(workspace)
    mem.sync()
    mem.close()
    flaky = HashEmbedder()
    flaky.fail_after = 5
    flaky.model = "hash-64-b"  # a different model: the index must be rebuilt
    mem2 = make_memory(workspace, provider=flaky)
    with pytest.raises(ProviderError):
        mem2.sync()
    # the old index still answers, from the old model's vectors
    hits = mem2.search("deploy key rotation", mode="keyword", sync=False)
    assert hits and hits[0].path == "MEMORY.md"
    assert mem2.backend.store.counts()["files"] == 21
    assert not [p for p in os.listdir(os.path.dirname(mem2.backend.store.path)) if ".rebuild-" in p]


def test_full_rebuild_reuses_cached_vectors(workspace, make_memory, embedder):
    for i in range(5):
        write(workspace / "memory" / f"n{i}.md", f"note {i}")
    mem = make_memory(workspace)
    mem.sync()
    n = embedder.embedded
    r = mem.sync(full=True)
    assert r.full_rebuild and r.chunks_embedded == 0 and r.chunks_reused == 5
    assert embedder.embedded == n


KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {tests!r})
    from conftest import HashEmbedder
    from mnemoclaw.api import Memory
    from mnemoclaw.config import load_settings

    class Slow(HashEmbedder):
        def embed(self, texts, *, query=False):
            time.sleep(0.003 * len(texts))
            return super().embed(texts, query=query)

    s = load_settings(workspace={ws!r}, state_dir={state!r}, config={{}}, env={{}},
                      overrides={{"chunking": {{"tokens": {tokens}, "overlap": 0}}}})
    mem = Memory(s, provider=Slow())
    print("start", flush=True)
    mem.sync()
    print("done", flush=True)
""")


def _spawn(ws, state, tokens):
    code = KILL_SCRIPT.format(tests=str(REPO / "tests"), ws=str(ws), state=str(state), tokens=tokens)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env)


@pytest.mark.parametrize("tokens", [400, 64])  # 64: settings changed, so the kill hits a full rebuild
def test_killed_mid_index_leaves_a_consistent_index(workspace, tmp_path, tokens, make_memory):
    for i in range(300):
        write(workspace / "memory" / f"2026-02-{i:03d}.md", "\n".join(f"- entry {i}.{j}: " + "word " * 40 for j in range(8)))
    state = tmp_path / "state"
    if tokens != 400:  # build a complete index first, under the default settings
        proc = _spawn(workspace, state, 400)
        assert proc.wait(120) == 0
    proc = _spawn(workspace, state, tokens)
    assert proc.stdout.readline().strip() == b"start"
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.stdout.read() == b"", "the sync finished before the kill: the test proved nothing"
    mem = make_memory(workspace, overrides={"chunking": {"tokens": tokens, "overlap": 0}})
    counts = mem.backend.store.counts()
    # every indexed file has its chunks, none twice
    rows = mem.backend.store.conn.execute("SELECT path, count(*) FROM chunks GROUP BY path")
    assert len(rows) == counts["files"]
    if tokens != 400:
        assert counts["files"] == 300  # the old index is still whole
    r = mem.sync()
    assert r.failed == [] and mem.backend.store.counts()["files"] == 300
    dup = mem.backend.store.conn.one("SELECT count(*) - count(DISTINCT id) FROM chunks")[0]
    assert dup == 0


def test_a_long_repeated_line_does_not_break_indexing(workspace, make_memory):
    write(workspace / "memory" / "rule.md", "-" * 8000 + "\n" + "哈" * 5000 + "\n- a real note about tea")
    write(workspace / "memory" / "other.md", "- another note")
    mem = make_memory(workspace)
    r = mem.sync()
    assert r.failed == [] and r.added == 2
    assert mem.status()["dirty"] is False
    assert mem.tools.memory_search("tea")["results"][0]["path"] == "memory/rule.md"


def test_an_unreadable_file_does_not_make_every_search_resync(workspace, make_memory):
    write(workspace / "memory" / "ok.md", "- fine")
    (workspace / "memory" / "bad.md").write_bytes(b"\xff\xfe bad bytes")
    mem = make_memory(workspace)
    assert len(mem.sync().failed) == 1
    assert not mem.backend.dirty_sources()
    (workspace / "memory" / "bad.md").write_text("- fixed now", "utf-8")
    assert mem.backend.dirty_sources()


def test_an_interrupted_first_sync_then_a_new_model_rebuilds(workspace, make_memory):
    for i in range(300):
        write(workspace / "memory" / f"n{i:03d}.md", f"- note {i}")
    flaky = HashEmbedder()
    flaky.fail_after = 256  # the first batch lands, the second fails
    first_mem = make_memory(workspace, provider=flaky)
    first = first_mem.sync()  # the batches after the failure are indexed for keyword search only
    assert 0 < first.vectors_pending < 300 and "went away" in first.vectors_error
    assert first_mem.backend.store.counts()["files"] == 300
    other = HashEmbedder()
    other.model = "hash-64-other"
    mem = make_memory(workspace, provider=other)
    r = mem.sync()
    assert r.full_rebuild
    models = mem.backend.store.conn.execute("SELECT DISTINCT model FROM chunks")
    assert models == [("hash-64-other",)]


def test_a_rebuild_keeps_what_it_cannot_read(workspace, make_memory):
    write(workspace / "MEMORY.md", "- the spare key is under the blue flowerpot")
    write(workspace / "memory" / "other.md", "- unrelated")
    mem = make_memory(workspace)
    mem.sync()
    mem.close()
    (workspace / "MEMORY.md").write_bytes(b"\xff\xfe now not UTF-8")  # damaged on disk
    rebuilt = make_memory(workspace, overrides={"chunking": {"tokens": 200, "overlap": 20}})
    r = rebuilt.sync()
    assert r.full_rebuild and [p for p, _ in r.failed] == ["MEMORY.md"]
    hits = rebuilt.search("spare key flowerpot", sync=False)
    assert hits and hits[0].path == "MEMORY.md"


@pytest.mark.parametrize("when", ["mid-sync", "between syncs"])
def test_an_index_file_deleted_under_a_sync_is_filled_again_not_reported_as_done(workspace, make_memory, when):
    import sqlite3

    for i in range(300):
        write(workspace / "memory" / f"n{i:03d}.md", f"- note {i} about the heron\n")
    mem = make_memory(workspace)
    path = mem.backend.store.path

    def gone() -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(path + suffix)
            except FileNotFoundError:
                pass

    if when == "between syncs":
        mem.sync()
        gone()
        write(workspace / "memory" / "late.md", "- a late note about the egret\n")
        report = mem.sync()
    else:
        deleted = []

        def progress(done, total):
            if not deleted and done:
                gone()
                deleted.append(done)

        report = mem.sync(progress=progress)
        assert deleted
    assert os.path.exists(path)
    con = sqlite3.connect(path)
    try:
        on_disk = con.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        con.close()
    assert on_disk == report.chunks_total == (301 if when == "between syncs" else 300)
    assert mem.tools.memory_search("note 7 heron")["results"]


def test_a_file_name_with_a_line_break_is_refused_by_name_and_its_citation_never_split(workspace, make_memory):
    write(workspace / "memory" / "a\nb.md", "- the kestrel hunts at noon\n")
    write(workspace / "memory" / "会议\u3000记录.md", "- the kestrel roosts in the barn\n")  # an ideographic space is fine
    mem = make_memory(workspace)
    report = mem.sync()
    assert [p for p, _ in report.failed] == ["memory/a\nb.md"] and "line break" in report.failed[0][1]
    out = mem.tools.memory_search("kestrel", min_score=0)
    assert [r["path"] for r in out["results"]] == ["memory/会议\u3000记录.md"]
    assert all("\n" not in r["citation"] for r in out["results"])


def test_a_file_missing_here_is_removed_only_if_this_host_has_had_it():
    """The removal decision where several hosts write one namespace (index/planning.py); a store
    that records no hosts (SQLite) plans as before: everything missing is removed."""
    from mnemoclaw.index.planning import plan_sync
    from mnemoclaw.types import FileRecord, SourceFile

    def rec(path, *hosts):
        return FileRecord(path, "memory", "h", 1, 1, hosts)

    indexed = {r.path: r for r in (
        rec("mine.md", "b:/other", "a:/ws"),  # this host and workspace had it: deleted here
        rec("theirs.md", "b:/other"),  # only another host had it: kept
        rec("old.md", "a"),  # named by host alone (migrated from before workspaces): this host's
        rec("unknown.md"),  # named by nobody (a row from before hosts): removed, as before
        rec("here.md", "b:/other"),  # here too, unchanged: this host is added to its record
        rec("claimed.md", "a:/ws"),
    )}
    indexed["migrated.md"] = rec("migrated.md", "a")  # here, and named by this host alone: nothing to write
    disk = [SourceFile(p, f"/ws/{p}", "memory", 1, 1) for p in ("here.md", "claimed.md", "migrated.md")]
    plan = plan_sync(disk, indexed, origin="a:/ws")
    assert plan.removed == ["mine.md", "old.md", "unknown.md"] and plan.kept == ["theirs.md"]
    assert plan.claimed == ["here.md"]
    one_host = plan_sync(disk, indexed)
    assert one_host.removed == ["mine.md", "old.md", "theirs.md", "unknown.md"] and one_host.kept == []
    assert one_host.claimed == []


def test_a_file_is_compared_with_the_stat_this_host_saw_not_with_another_hosts():
    """index/planning.py: each host's copy has its own mtime; a record's stat for this host
    (``seen``) decides, else the row's (its writer's): such a copy is read and hashed, once."""
    from mnemoclaw.index.planning import plan_sync, stat_here
    from mnemoclaw.types import FileRecord, SourceFile

    both = FileRecord("both.md", "memory", "h", 200, 9, ("b:/ws", "a:/ws"), (("a:/ws", 100, 9), ("b:/ws", 200, 9)))
    new_to_a = FileRecord("new.md", "memory", "h", 200, 9, ("b:/ws",), (("b:/ws", 200, 9),))
    edited_by_b = FileRecord("edited.md", "memory", "h2", 300, 9, ("b:/ws", "a:/ws"), (("b:/ws", 300, 9),))
    assert stat_here(both, "a:/ws") == (100, 9) and stat_here(both, "c:/ws") == (200, 9)
    assert stat_here(both, None) == (200, 9)  # a store written by one host: the row's stat
    disk = [SourceFile(p, f"/ws/{p}", "memory", 100, 9) for p in ("both.md", "new.md", "edited.md")]
    indexed = {r.path: r for r in (both, new_to_a, edited_by_b)}
    plan = plan_sync(disk, indexed, origin="a:/ws")
    assert [f.path for f in plan.unchanged] == ["both.md"]  # b's sync changed nothing for a
    assert [f.path for f in plan.suspect] == ["new.md", "edited.md"]  # read and hashed
    # where no host's stat is recorded (SQLite, rows from before): the row's, as before
    assert [f.path for f in plan_sync(disk, indexed).suspect] == ["both.md", "new.md", "edited.md"]


def test_the_sqlite_store_records_no_hosts_and_a_sync_removes_what_is_gone(workspace, make_memory):
    mem = make_memory(workspace)
    write(workspace / "memory" / "2026-01-01.md", "- a note that goes\n")
    mem.sync()
    assert mem.backend.indexer.origin is None and all(r.hosts == () for r in mem.backend.store.file_records().values())
    (workspace / "memory" / "2026-01-01.md").unlink()
    report = mem.sync()
    assert report.removed == 1 and report.kept == [] and report.notes == []
