"""The state directory in real conditions: read-only, full, and the model cache inside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import REPO, write

ENV = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
ENV.pop("MNEMOCLAW_CONFIG", None)


def _cli(ws: Path, state: Path, *args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir", str(state),
                           *args], capture_output=True, text=True, env=env or ENV, timeout=180, **kw)


def _tree(root: Path) -> dict[str, tuple[str, int]]:
    return {str(p.relative_to(root)): (p.read_bytes().hex() if p.is_file() else "dir", p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*"))}


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
        assert status["readOnly"] is True and status["dirty"] is True
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

