"""`mnemoclaw reset`: the derived index and its embedding cache go, the Markdown and the
transcripts stay byte for byte, and the next sync rebuilds."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import run


def digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def agent(tmp_path):
    ws, state = tmp_path / "ws", tmp_path / "state"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- the lighthouse keeper is called Ansel\n", "utf-8")
    (ws / "memory" / "2026-11-02.md").write_text("# 2026-11-02\n\n- 数据库迁移定在周五\n", "utf-8")
    sessions = state / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "s1.jsonl").write_text(json.dumps({"type": "message", "message": {"role": "user",
                                                   "content": "hello"}}) + "\n", "utf-8")
    flags = ["--workspace", str(ws), "--state-dir", str(state)]
    assert run(*flags, "index").exit_code == 0
    return flags, ws, state, sessions


def test_reset_removes_the_index_and_nothing_else_and_the_next_sync_rebuilds(agent):
    flags, ws, state, sessions = agent
    index = state / "memory" / "main.sqlite"
    assert index.is_file()
    before_ws, before_sessions = digests(ws), digests(sessions)
    preview = json.loads(run(*flags, "reset", "--dry-run", "--json").output)
    assert preview["dryRun"] and str(index) in {r["path"] for r in preview["removed"]} and index.is_file()
    r = run(*flags, "reset")
    assert r.exit_code == 0, r.output
    assert "removed" in r.output and str(index) in r.output and "No Markdown file or transcript" in r.output
    assert not index.exists() and not Path(f"{index}-wal").exists()
    assert not (state / "agents" / "main" / "index").exists()
    assert digests(ws) == before_ws and digests(sessions) == before_sessions
    found = run(*flags, "search", "lighthouse keeper", "--json")
    assert json.loads(found.output)["results"][0]["path"] == "MEMORY.md"  # rebuilt by the search's sync
    assert index.is_file()
    again = run(*flags, "reset", "--dry-run")
    assert "would remove" in again.output


def test_reset_is_refused_while_another_process_writes_the_index(agent, tmp_path):
    flags, ws, state, _ = agent
    lock_dirs = list((state / "agents" / "main" / "index").iterdir())
    assert len(lock_dirs) == 1
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(lock_dirs[0] / 'write.lock')!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, str(os.getpid()).encode()); print('held', flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        r = run(*flags, "reset")
        assert r.exit_code == 1
        assert "reset removed nothing" in r.output and "watch, mcp, ui or chat" in r.output, r.output
        assert "Traceback" not in r.output
        assert (state / "memory" / "main.sqlite").is_file()
    finally:
        holder.kill()
        holder.wait()


def test_reset_refuses_a_postgres_store_with_the_way_to_rebuild_it(tmp_path):
    cfg = tmp_path / "config.json5"
    cfg.write_text('{agents: {defaults: {memorySearch: {store: {driver: "postgres", url: "postgresql://x@/y"}}}}}')
    r = run("--state-dir", str(tmp_path / "st"), "--config", str(cfg), "--workspace", str(tmp_path / "ws"), "reset")
    assert r.exit_code == 1 and "mnemoclaw index --full" in r.output, r.output


def test_reset_with_nothing_indexed_says_so(tmp_path):
    r = run("--workspace", str(tmp_path / "ws"), "--state-dir", str(tmp_path / "st"), "reset")
    assert r.exit_code == 0 and "Nothing to reset" in r.output, r.output
