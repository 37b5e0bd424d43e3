"""The MCP server: in process, as a stdio subprocess and over HTTP, with a real MCP client."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest

from conftest import REPO, write
from secret_phrases import NOTE, assert_no_secret

pytest.importorskip("mcp")
import httpx2  # noqa: E402  (the MCP SDK's HTTP client)
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from mnemoclaw.api import Memory  # noqa: E402
from mnemoclaw.config import load_settings  # noqa: E402
from mnemoclaw.serve.mcp import MemoryService, build_server  # noqa: E402

ENV = {"PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none", "HOME": os.environ.get("HOME", "/tmp")}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mnemoclaw.cli", *args]


async def _session(client: Client, *, writable: bool = True) -> dict:
    """The same conversation over every transport."""
    names = sorted(t.name for t in (await client.list_tools()).tools)
    out = {"tools": names}
    r = await client.call_tool("memory_search", {"query": "spare key flowerpot"})
    assert not r.is_error, r.content
    out["search"] = r.structured_content
    r = await client.call_tool("memory_get", {"path": "MEMORY.md", "from": 1, "lines": 1})
    out["get"] = r.structured_content
    if writable:
        r = await client.call_tool("memory_append", {"text": "- the plumber comes on Friday at 9"})
        out["append"] = r.structured_content
        r = await client.call_tool("memory_search", {"query": "plumber Friday", "maxResults": 3})
        out["after_append"] = r.structured_content
    r = await client.call_tool("memory_status", {})
    out["status"] = r.structured_content
    r = await client.call_tool("sessions_search", {"query": "数据库"})
    out["sessions"] = r.structured_content
    out["prompts"] = sorted(p.name for p in (await client.list_prompts()).prompts)
    got = await client.get_prompt("recall", {"message": "where is the spare key?"})
    out["recall"] = got.messages[0].content.text
    got = await client.get_prompt("recall", {"message": "thanks, lovely"})
    out["recall_nothing"] = got.messages[0].content.text
    return out


def _check(out: dict) -> None:
    assert out["tools"] == ["memory_append", "memory_get", "memory_search", "memory_status", "sessions_search"]
    assert out["sessions"]["results"] == [] and out["sessions"]["sessionsSearched"] == 0
    assert out["prompts"] == ["recall"]
    assert out["recall"].startswith("# Recalled from memory") and "[MEMORY.md#L1-L1]" in out["recall"]
    assert out["recall_nothing"].startswith("Memory has nothing that clearly bears on this message")
    hit = out["search"]["results"][0]
    assert hit["path"] == "MEMORY.md" and hit["citation"] == "MEMORY.md#L1-L1"
    assert set(out["search"]) >= {"results", "provider", "model", "fallback", "mode"}
    assert out["get"] == {"path": "MEMORY.md", "text": "- the spare key is under the blue flowerpot"}
    assert out["append"]["ok"] and re.fullmatch(r"memory/\d{4}-\d\d-\d\d\.md", out["append"]["path"])
    assert out["after_append"]["results"][0]["path"] == out["append"]["path"]  # found on the next call
    # written by the agent, in this server's session over MCP: found by origin, forgotten by session
    said = out["after_append"]["results"][0]
    assert said["origin"] == "agent" and said["channel"] == "mcp" and re.fullmatch(r"mcp-\d{8}-\d{6}-[0-9a-f]{6}",
                                                                                   said["session"]), said
    assert out["status"]["files"] >= 1 and out["status"]["readOnly"] is False


@pytest.fixture
def ws(tmp_path):
    w = tmp_path / "ws"
    write(w / "MEMORY.md", "- the spare key is under the blue flowerpot")
    write(w / "memory" / "2026-01-05.md", "- 周五下午和李雷讨论了数据库迁移")
    return w


def test_in_process(ws, tmp_path):
    s = load_settings(workspace=ws, state_dir=tmp_path / "state", config={}, env={}, overrides={"provider": "none"})
    service = MemoryService(lambda: Memory(s))
    server = build_server(service)

    async def main():
        async with Client(server) as c:
            out = await _session(c)
            bad = await c.call_tool("memory_get", {"path": "../secrets.md"})
            return out, bad.structured_content

    try:
        out, bad = anyio.run(main)
    finally:
        service.close()
    _check(out)
    assert bad["text"] == "" and "climbs out of the workspace" in bad["error"]


def test_stdio_subprocess(ws, tmp_path):
    params = StdioServerParameters(command=sys.executable, env=ENV,
                                   args=_cli("--workspace", str(ws), "--state-dir", str(tmp_path / "state"), "mcp")[1:])

    async def main():
        async with Client(params, read_timeout_seconds=60) as c:
            return await _session(c)

    _check(anyio.run(main))


def test_stdio_round_trip_while_the_servers_own_sync_is_slow(ws, tmp_path):
    """Each embedding request takes 0.4 s here (a remote provider; a loaded machine slows the
    built-in model the same way), so the server's background sync holds the index's lock longer
    than a search waited for it (0.2 s). The first search used to answer from the empty index
    while the session-start sync was indexing, and a note appended while the watcher's sync ran
    was not found by the next search."""
    from provider_server import KEY, ProviderServer

    with ProviderServer("openai") as srv:
        srv.delay = 0.4
        config = tmp_path / "mnemoclaw.json"
        config.write_text(json.dumps({
            "models": {"providers": {"openai": {"baseUrl": srv.base_url, "apiKey": KEY}}},
            "agents": {"defaults": {"memorySearch": {"provider": "openai", "sync": {"watchDebounceMs": 100}}}}}))
        env = {k: v for k, v in ENV.items() if k != "MNEMOCLAW_PROVIDER"}
        params = StdioServerParameters(command=sys.executable, env=env, args=_cli(
            "--config", str(config), "--workspace", str(ws), "--state-dir", str(tmp_path / "state"), "mcp")[1:])

        async def embedding() -> None:  # until the server's background sync is waiting on the provider
            with anyio.fail_after(20):
                while srv.in_flight == 0:
                    await anyio.sleep(0.005)

        async def paths(c: Client, query: str) -> list[tuple[str, str]]:
            r = await c.call_tool("memory_search", {"query": query, "maxResults": 3})
            return [(h["path"], h["snippet"]) for h in r.structured_content["results"]]

        async def main():
            async with Client(params, read_timeout_seconds=60) as c:
                await embedding()  # the session-start sync
                first = await paths(c, "spare key flowerpot")
                plumber = (await c.call_tool("memory_append", {"text": "- the plumber comes on Friday at 9"}))
                await embedding()  # the watcher's sync of that note
                electrician = await c.call_tool("memory_append", {"text": "- the electrician comes on Monday"})
                after = await paths(c, "electrician Monday")
                return first, plumber.structured_content, electrician.structured_content, after

        first, plumber, electrician, after = anyio.run(main)
    assert first and first[0][0] == "MEMORY.md", first
    assert plumber["path"] == electrician["path"]
    assert after and after[0][0] == electrician["path"] and "electrician" in after[0][1], after


def test_stdout_carries_only_protocol_frames(ws, tmp_path):
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory_search",
                                                                       "arguments": {"query": "数据库"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "memory_append",
                                                                       "arguments": {"text": "- debug run"}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "memory_status", "arguments": {}}},
    ]
    errlog = open(tmp_path / "stderr.log", "w+b")  # a file: debug output must not fill a pipe and stall the server
    proc = subprocess.Popen(_cli("-vv", "--workspace", str(ws), "--state-dir", str(tmp_path / "state"), "mcp"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, env=ENV)
    answers: dict[int, dict] = {}
    raw = b""
    for m in msgs:
        proc.stdin.write(json.dumps(m).encode() + b"\n")
        proc.stdin.flush()
        if "id" in m:  # wait for this answer before the next request
            while m["id"] not in answers:
                line = proc.stdout.readline()
                assert line, (tmp_path / "stderr.log").read_text()
                raw += line
                frame = json.loads(line)
                if "id" in frame:
                    answers[frame["id"]] = frame
    proc.stdin.close()
    raw += proc.stdout.read()
    assert proc.wait(30) == 0
    err = (tmp_path / "stderr.log").read_bytes()
    frames = [json.loads(line) for line in raw.splitlines() if line.strip()]  # every byte parses
    assert all(f.get("jsonrpc") == "2.0" for f in frames)
    assert not raw.strip(b"\n").split(b"\n")[-1].startswith(b"mnemoclaw")
    assert b"DEBUG" in err or b"mnemoclaw:" in err  # debug logging was on, and went to stderr
    search = answers[3]["result"]["structuredContent"]
    assert search["results"][0]["path"] == "memory/2026-01-05.md"


def _start_http(ws, tmp_path, *extra: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(_cli("--workspace", str(ws), "--state-dir", str(tmp_path / "state"), "mcp",
                                 "--http", "127.0.0.1:0", *extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        m = re.search(r"at (http://\S+/mcp)", line)
        if m:
            return proc, m.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("the HTTP server did not start: " + proc.stderr.read())


def _post(url: str, headers: dict[str, str]) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_http_with_a_token(ws, tmp_path):
    proc, url = _start_http(ws, tmp_path, "--token", "s3cret-token")
    try:
        assert _post(url, {}) == 401
        assert _post(url, {"Authorization": "Bearer wrong"}) == 401

        async def main():
            http = httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}, timeout=60)
            async with http, Client(streamable_http_client(url, http_client=http)) as c:
                return await _session(c)

        _check(anyio.run(main))
    finally:
        proc.terminate()
        proc.wait(20)


def test_http_on_loopback_without_a_token(ws, tmp_path):
    proc, url = _start_http(ws, tmp_path)
    try:
        async def main():
            async with Client(url) as c:
                return await _session(c)

        _check(anyio.run(main))
    finally:
        proc.terminate()
        proc.wait(20)


def test_a_public_bind_without_a_token_refuses_to_start(ws, tmp_path):
    r = subprocess.run(_cli("--workspace", str(ws), "--state-dir", str(tmp_path / "state"), "mcp",
                            "--http", "0.0.0.0:0"), capture_output=True, text=True, env=ENV, timeout=60)
    assert r.returncode != 0 and "refusing" in r.stderr and "--token" in r.stderr


# -- memory_append cannot write anywhere else ---------------------------------------------------
@pytest.mark.parametrize("target", ["../outside.md", "/etc/passwd", "memory/../../x.md", "memory/notes.md",
                                    "MEMORY.md/../../x", "", "long_term/../x", "~/.bashrc"])
def test_append_targets_are_a_choice_not_a_path(ws, tmp_path, target):
    s = load_settings(workspace=ws, state_dir=tmp_path / "state", config={}, env={}, overrides={"provider": "none"})
    with Memory(s, background=False) as mem:
        before = _tree(tmp_path)
        out = mem.tools.memory_append("- sneaky", target)
        if target == "":  # empty means "today's log", the default
            assert out["ok"] and out["path"].startswith("memory/")
            return
        assert not out["ok"] and "not allowed" in out["error"]
        assert _tree(tmp_path) == before


def test_append_never_follows_symlinks(ws, tmp_path):
    s = load_settings(workspace=ws, state_dir=tmp_path / "state", config={}, env={}, overrides={"provider": "none"})
    outside = tmp_path / "outside.md"
    outside.write_text("untouched\n")
    with Memory(s, background=False) as mem:
        today = mem.tools.memory_append("- first")["path"]
        (ws / today).unlink()
        (ws / today).symlink_to(outside)
        out = mem.tools.memory_append("- through a link")
        assert not out["ok"] and "symbolic link" in out["error"]
        (ws / "MEMORY.md").unlink()
        (ws / "MEMORY.md").symlink_to(outside)
        out = mem.tools.memory_append("- through a link", "long_term")
        assert not out["ok"] and "symbolic link" in out["error"]
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (ws / today).unlink()
        os.rename(ws / "memory", tmp_path / "memory-moved")
        (ws / "memory").symlink_to(elsewhere, target_is_directory=True)
        out = mem.tools.memory_append("- through a linked folder")
        assert not out["ok"] and "symbolic link" in out["error"]
    assert outside.read_text() == "untouched\n" and list(elsewhere.iterdir()) == []


# -- OpenClaw ---------------------------------------------------------------------------------------
OPENCLAW_JSON = """\
// OpenClaw's own config: JSON5, comments and trailing commas
{
  agents: {
    defaults: {
      workspace: "__WS__",
      model: { primary: "anthropic/claude-sonnet-4" },   // not ours: accepted silently
      memorySearch: {
        provider: "none",
        store: { path: "__OC__/memory/{agentId}.sqlite" },   // OpenClaw's index: never touched
        query: { maxResults: 4, },
      },
    },
    list: [ { id: "main", default: true, }, ],
  },
  channels: { telegram: { enabled: false } },
}
"""


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*")) if not p.is_symlink()}


def test_an_openclaw_state_dir_is_served_read_only(tmp_path):
    oc = tmp_path / "openclaw"
    ws = oc / "workspace"
    write(ws / "MEMORY.md", "- 用户喜欢喝乌龙茶\n- the deploy key lives in the vault")
    write(ws / "memory" / "2026-03-02.md", "- 和王芳确认了周会改到周四")
    write(ws / "AGENTS.md", "# AGENTS\n")
    write(oc / "agents" / "main" / "sessions" / "abc.jsonl",
          json.dumps({"type": "message", "message": {"role": "user", "content": "hello"}}) + "\n")
    write(oc / "openclaw.json", OPENCLAW_JSON.replace("__WS__", str(ws)).replace("__OC__", str(oc)))
    before = _tree(oc)
    mnemo = tmp_path / "mnemo-state"
    params = StdioServerParameters(command=sys.executable, env=ENV,
                                   args=_cli("--state-dir", str(mnemo), "mcp", "--openclaw", str(oc))[1:])

    async def main():
        async with Client(params, read_timeout_seconds=60) as c:
            tools = sorted(t.name for t in (await c.list_tools()).tools)
            tea = (await c.call_tool("memory_search", {"query": "乌龙"})).structured_content  # 2 CJK characters
            meeting = (await c.call_tool("memory_search", {"query": "周会"})).structured_content
            got = (await c.call_tool("memory_get", {"path": "memory/2026-03-02.md"})).structured_content
            st = (await c.call_tool("memory_status", {})).structured_content
            return tools, tea, meeting, got, st

    tools, tea, meeting, got, st = anyio.run(main)
    assert tools == ["memory_get", "memory_search", "memory_status", "sessions_search"]  # nothing that writes
    assert tea["results"][0]["path"] == "MEMORY.md"
    assert meeting["results"][0]["path"] == "memory/2026-03-02.md"
    assert "周四" in got["text"]
    assert st["readOnly"] is True and st["workspace"] == str(ws)
    assert st["index"].startswith(str(mnemo))
    assert _tree(oc) == before  # byte-identical, and no new files


# -- no secret in memory --------------------------------------------------------------------------
def test_secrets_written_as_prose_reach_neither_the_file_nor_the_index(ws, tmp_path):
    """memory_append as an agent calls it: through tools.call, and through the MCP server."""
    s = load_settings(workspace=ws, state_dir=tmp_path / "state", config={}, env={}, overrides={"provider": "none"})
    with Memory(s, background=False) as mem:
        out = mem.tools.call("memory_append", {"text": NOTE})
        assert out["ok"] and out["redacted"] == 5, out
        long_term = mem.tools.call("memory_append", {"text": NOTE, "target": "long_term"})
        assert long_term["ok"] and long_term["redacted"] == 5, long_term
    service = MemoryService(lambda: Memory(s))
    server = build_server(service)

    async def main():
        async with Client(server) as c:
            r = await c.call_tool("memory_append", {"text": "over MCP:\n" + NOTE})
            assert not r.is_error and r.structured_content["redacted"] == 5, r.content
            return r.structured_content["path"]

    try:
        path = anyio.run(main)
    finally:
        service.close()
    daily = (ws / path).read_text("utf-8")
    assert "my bank PIN is [REDACTED]" in daily and "over MCP:" in daily and "验证码：[REDACTED]" in daily
    with Memory(s, background=False) as mem:
        mem.sync()
        assert_no_secret(mem, ws)


# -- bounds ---------------------------------------------------------------------------------------
def test_a_huge_query_is_refused_at_once_and_unknown_append_arguments_are_refused(ws, tmp_path):
    s = load_settings(workspace=ws, state_dir=tmp_path / "state", config={}, env={}, overrides={"provider": "none"})
    service = MemoryService(lambda: Memory(s))
    server = build_server(service)
    huge = "数据库 migration " * 600_000  # about 9 MB

    async def main():
        async with Client(server) as c:
            t = time.monotonic()
            big = await c.call_tool("memory_search", {"query": huge})
            took = time.monotonic() - t
            extra = await c.call_tool("memory_append", {"text": "- a note", "path": "notes/elsewhere.md"})
            schema = next(t for t in (await c.list_tools()).tools if t.name == "memory_append").input_schema
            return big, took, extra, schema

    before = _tree(ws)
    try:
        big, took, extra, schema = anyio.run(main)
    finally:
        service.close()
    assert big.is_error and "4000" in big.content[0].text and took < 10
    assert extra.is_error and "path" in extra.content[0].text
    assert schema.get("additionalProperties") is False
    assert _tree(ws) == before  # nothing was written anywhere
    with Memory(s, background=False) as mem:  # the library refuses it too, with a reason
        t = time.monotonic()
        out = mem.tools.memory_search(huge)
        assert time.monotonic() - t < 2 and out["results"] == [] and "at most 4000" in out["error"]


def test_the_bearer_scheme_is_case_insensitive():
    from mnemoclaw.serve.mcp import BearerAuth

    seen = []

    async def app(scope, receive, send):
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    guard = BearerAuth(app, "s3cret-token")

    async def call(header: bytes | None) -> int:
        sent = []

        async def send(msg):
            sent.append(msg)

        headers = [(b"authorization", header)] if header is not None else []
        await guard({"type": "http", "path": "/mcp", "headers": headers}, None, send)
        return sent[0]["status"]

    async def main():
        return [await call(h) for h in (b"Bearer s3cret-token", b"bearer s3cret-token", b"BEARER  s3cret-token",
                                        b"Bearer wrong", b"Basic s3cret-token", b"s3cret-token", None)]

    assert anyio.run(main) == [200, 200, 200, 401, 401, 401, 401]


def test_no_writer_goes_through_a_hard_link(ws, tmp_path):
    from mnemoclaw.notes.write import create_note
    from mnemoclaw.runtime.hygiene import Proposal, apply

    s = load_settings(workspace=ws, state_dir=tmp_path / "state", config={}, env={}, overrides={"provider": "none"})
    outside = tmp_path / "outside.md"
    outside.write_text("not the workspace's\n")
    with Memory(s, background=False) as mem:
        today = ws / mem.tools.memory_append("- first")["path"]
        today.unlink()
        os.link(outside, today)  # the daily log is now the same file as one outside the workspace
        out = mem.tools.memory_append("- through a hard link")
        assert not out["ok"] and "hard links" in out["error"]
        (ws / "MEMORY.md").unlink()
        os.link(outside, ws / "MEMORY.md")
        out = mem.tools.memory_append("- long term", "long_term")
        assert not out["ok"] and "hard links" in out["error"]
    current = (ws / "MEMORY.md").read_text()
    with pytest.raises(Exception, match="hard links"):
        apply(ws, Proposal(["- x"], "", [], current + "- x\n", current))
    assert outside.read_text() == "not the workspace's\n"
    assert create_note(ws, "2026-01-05-fresh", "- a new file is never a hard link\n") == "memory/2026-01-05-fresh.md"


def test_environment_wins_over_the_config_for_the_chat_model(tmp_path, monkeypatch):
    from mnemoclaw.runtime.settings import runtime_settings

    cfg = {"llm": {"baseUrl": "http://config.example/v1", "model": "from-config", "apiKey": "config-key"}}
    s = load_settings(workspace=tmp_path, state_dir=tmp_path / "st", config=cfg, env={})
    assert runtime_settings(s).llm_model == "from-config"
    monkeypatch.setenv("MNEMOCLAW_LLM_BASE_URL", "http://env.example/v1")
    monkeypatch.setenv("MNEMOCLAW_LLM_MODEL", "from-env")
    monkeypatch.setenv("MNEMOCLAW_LLM_API_KEY", "env-key")
    rs = runtime_settings(s)
    assert (rs.llm_base_url, rs.llm_model, rs.llm_api_key) == ("http://env.example/v1", "from-env", "env-key")


def test_errors_never_show_the_workspace_path_to_a_client(ws, tmp_path):
    s = load_settings(workspace=ws, state_dir=tmp_path / "state", config={}, env={}, overrides={"provider": "none"})
    service = MemoryService(lambda: Memory(s))
    server = build_server(service)
    paths = ["memory/" + "a" * 5000 + ".md", "a" * 300 + ".md", "memory/" * 800 + "x.md", "memory/missing/../../../x.md",
             "memory/2026-01-05.md/x.md"]

    async def main():
        async with Client(server) as c:
            return [(await c.call_tool("memory_get", {"path": p})).structured_content for p in paths]

    try:
        answers = anyio.run(main)
    finally:
        service.close()
    for answer in answers:
        assert answer["text"] == "" and answer["error"], answer
        assert str(tmp_path) not in json.dumps(answer) and len(json.dumps(answer)) < 1200
    assert "too long" in answers[0]["error"]
    run = subprocess.run(_cli("--workspace", str(ws), "--state-dir", str(tmp_path / "state"), "get", paths[0]),
                         capture_output=True, text=True, env=ENV, timeout=60)
    assert run.returncode == 1 and "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1


def test_memory_forget_is_offered_only_when_enabled_and_needs_the_previews_id(ws, tmp_path):
    s = load_settings(workspace=ws, state_dir=tmp_path / "state", config={"memory": {"forget": {"tool": True}}},
                      env={}, overrides={"provider": "none"})
    assert s.memory["forget"]["tool"] is True
    service = MemoryService(lambda: Memory(s), forget_tool=True)
    server = build_server(service)

    async def main():
        async with Client(server) as c:
            names = sorted(t.name for t in (await c.list_tools()).tools)
            preview = (await c.call_tool("memory_forget", {"target": "flowerpot"})).structured_content
            wrong = (await c.call_tool("memory_forget", {"target": "flowerpot", "confirm": "0" * 16})).structured_content
            done = (await c.call_tool("memory_forget", {"target": "flowerpot", "confirm": preview["id"]}))
            after = (await c.call_tool("memory_search", {"query": "spare key flowerpot"})).structured_content
            return names, preview, wrong, done.structured_content, after

    try:
        names, preview, wrong, done, after = anyio.run(main)
    finally:
        service.close()
    assert "memory_forget" in names
    assert preview["applied"] is False and preview["removals"][0]["lines"] == [
        "- the spare key is under the blue flowerpot"] and "nothing was removed" in preview["note"]
    assert wrong["applied"] is False and "does not match" in wrong["error"]
    assert done["applied"] and done["verified"]
    assert "flowerpot" not in (ws / "MEMORY.md").read_text() and after["results"] == []


def test_memory_forget_by_session_over_mcp_previews_then_removes_and_fences(ws, tmp_path):
    s = load_settings(workspace=ws, state_dir=tmp_path / "state", config={"memory": {"forget": {"tool": True}}},
                      env={}, overrides={"provider": "none"})
    (ws / "memory" / "2026-12-01.md").write_text(
        "# 2026-12-01\n\n## 09:00 <!-- origin: agent; session: s-9 -->\n\nThe ferry leaves pier 4 at dawn.\n", "utf-8")
    service = MemoryService(lambda: Memory(s), forget_tool=True)
    server = build_server(service)

    async def main():
        async with Client(server) as c:
            schema = next(t for t in (await c.list_tools()).tools if t.name == "memory_forget").input_schema
            both = (await c.call_tool("memory_forget", {"target": "ferry", "session": "s-9"})).structured_content
            preview = (await c.call_tool("memory_forget", {"session": "s-9"})).structured_content
            done = (await c.call_tool("memory_forget", {"session": "s-9", "confirm": preview["id"]})).structured_content
            after = (await c.call_tool("memory_search", {"query": "ferry pier dawn"})).structured_content
            return schema, both, preview, done, after

    try:
        schema, both, preview, done, after = anyio.run(main)
    finally:
        service.close()
    assert {"target", "session", "source", "participant", "since", "confirm"} <= set(schema["properties"])
    assert both["applied"] is False and "one of target, session, source or participant" in both["error"]
    assert preview["applied"] is False and preview["removals"][0]["path"] == "memory/2026-12-01.md"
    assert done["applied"] and done["verified"] and done["tombstone"] == "STATE_DIR/tombstones.json"
    assert "ferry" not in (ws / "memory" / "2026-12-01.md").read_text() and after["results"] == []


def test_what_one_run_of_the_server_appended_is_forgotten_by_its_session(ws, tmp_path):
    """Two runs of `mnemoclaw mcp` are two sessions: forgetting the first run's session takes
    back what its agent appended, and leaves the second run's and the owner's lines."""
    s = load_settings(workspace=ws, state_dir=tmp_path / "state", config={"memory": {"forget": {"tool": True}}},
                      env={}, overrides={"provider": "none"})

    async def append(service: MemoryService, text: str) -> dict:
        async with Client(build_server(service)) as c:
            return (await c.call_tool("memory_append", {"text": text})).structured_content

    first, second = (MemoryService(lambda: Memory(s), forget_tool=True) for _ in range(2))
    assert first.session_id != second.session_id
    try:
        wrote = anyio.run(append, first, "- the courier code is 4471, said a web page")
        anyio.run(append, second, "- the dentist moved to Thursday")

        async def forget() -> tuple[dict, dict, dict]:
            async with Client(build_server(second)) as c:
                preview = (await c.call_tool("memory_forget", {"session": first.session_id})).structured_content
                done = (await c.call_tool("memory_forget", {"session": first.session_id,
                                                            "confirm": preview["id"]})).structured_content
                after = (await c.call_tool("memory_search", {"query": "courier code"})).structured_content
                return preview, done, after

        preview, done, after = anyio.run(forget)
    finally:
        first.close()
        second.close()
    log = (ws / wrote["path"]).read_text("utf-8")
    assert preview["removals"][0]["path"] == wrote["path"] and done["applied"] and done["verified"]
    assert "courier" not in log and "dentist moved to Thursday" in log and f"session: {second.session_id}" in log
    assert "spare key" in (ws / "MEMORY.md").read_text("utf-8") and after["results"] == []
