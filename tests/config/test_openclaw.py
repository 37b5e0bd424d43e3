"""Serving an OpenClaw agent's memory: every command reads OpenClaw's folder and writes nothing there."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time

from click.testing import CliRunner

from mnemoclaw.cli import cli

from chat_server import ChatServer
from conftest import REPO, _env, _tree


def test_every_command_leaves_openclaws_folder_byte_identical(openclaw, tmp_path):
    home, oc, ws = openclaw
    before = _tree(oc)
    runner = CliRunner()
    with ChatServer(lambda body: {"content": "- the walrus protocol applies on Mondays"}) as chat:
        env = _env(home, MNEMOCLAW_LLM_BASE_URL=chat.base_url, MNEMOCLAW_LLM_MODEL="test-model")
        ways = [["--openclaw", str(oc)], ["--config", str(oc / "openclaw.json")], ["--openclaw"]]
        reads = [["status"], ["status", "--json"], ["index"], ["index", "--full"], ["sync"], ["search", "乌龙"],
                 ["search", "walrus protocol", "--json"], ["get", "memory/2026-03-02.md"], ["sessions"],
                 ["sessions", "--json"], ["context"], ["context", "detail"], ["hygiene"]]
        refused = [["init"], ["chat"], ["compact"], ["hygiene", "--apply"]]
        for way in ways:
            for cmd in reads:
                r = runner.invoke(cli, [*way, *cmd], env=env, input="")
                assert r.exit_code == 0, (way, cmd, r.output)
            for cmd in refused:
                r = runner.invoke(cli, [*way, *cmd], env=env, input="")
                assert r.exit_code == 1 and "read-only" in r.output, (way, cmd, r.output)
        # the option after the command, without a value, before a query
        r = runner.invoke(cli, ["search", "--openclaw", "周会", "--json"], env=env)
        assert json.loads(r.output)["results"][0]["path"] == "memory/2026-03-02.md"
        r = runner.invoke(cli, ["status", "--json", "--openclaw"], env=env)
        st = json.loads(r.output)
    assert st["workspace"] == str(ws)  # OpenClaw's default workspace, not mnemoclaw's
    assert st["index"] == str(home / ".mnemoclaw" / "openclaw" / "main.sqlite")
    assert st["files"] == 3  # MEMORY.md, the daily log and the transcript
    assert _tree(oc) == before  # byte-identical, same times, no new files


def test_search_reads_openclaw_transcripts_and_sessions(openclaw):
    home, oc, _ = openclaw
    runner = CliRunner()
    assert runner.invoke(cli, ["--openclaw", str(oc), "index"], env=_env(home)).exit_code == 0  # transcripts too
    out = json.loads(runner.invoke(cli, ["--openclaw", str(oc), "search", "walrus protocol", "--corpus", "all", "--json"],
                                   env=_env(home)).output)
    assert out["results"][0]["path"] == "sessions/3f2a.jsonl"
    listed = json.loads(runner.invoke(cli, ["--openclaw", str(oc), "sessions", "--json"], env=_env(home)).output)
    assert listed[0]["sessionId"] == "3f2a"
    human = runner.invoke(cli, ["--openclaw", str(oc), "sessions"], env=_env(home)).output
    assert "2025-12-29" in human  # OpenClaw's millisecond timestamps read as such
    ctx = runner.invoke(cli, ["--openclaw", str(oc), "context"], env=_env(home)).output
    assert "History: 1 messages" in ctx


def test_the_library_refuses_to_append_to_openclaw_memory(openclaw):
    from mnemoclaw.api import Memory
    from mnemoclaw.config import load_settings

    home, oc, ws = openclaw
    settings = load_settings(config=str(oc / "openclaw.json"), state_dir=home / ".mnemoclaw", env={})
    with Memory(settings, provider=None) as mem:
        out = mem.tools.memory_append("- written by mistake")
    assert out["ok"] is False and "read-only" in out["error"]
    assert not (ws / "memory" / time.strftime("%Y-%m-%d.md")).exists()


def test_watch_over_openclaw_memory_writes_nothing_there(openclaw):
    home, oc, _ = openclaw
    before = _tree(oc)
    env = {**os.environ, "HOME": str(home), "MNEMOCLAW_STATE_DIR": str(home / ".mnemoclaw"),
           "PYTHONPATH": str(REPO / "src")}
    env.pop("MNEMOCLAW_CONFIG", None)
    proc = subprocess.Popen([sys.executable, "-m", "mnemoclaw.cli", "watch", "--json", "--openclaw"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        events = [json.loads(next_line(proc.stdout, 60)) for _ in range(2)]  # one JSON object a line
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
    assert [e["event"] for e in events] == ["sync", "watching"]
    assert events[0]["added"] == 3
    assert _tree(oc) == before


def next_line(stream, timeout: float) -> str:
    ready, _, _ = select.select([stream], [], [], timeout)
    assert ready, "no output in time"
    return stream.readline()
