"""The session runtime end to end, against a scripted chat model on a real local HTTP server."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from mnemoclaw.api import Memory
from mnemoclaw.config import load_settings
from mnemoclaw.embeddings.http import RetryPolicy
from mnemoclaw.runtime.agent import AgentSession
from mnemoclaw.runtime.llm import ChatClient
from mnemoclaw.runtime.settings import runtime_settings

from chat_server import ChatServer
from conftest import REPO, write
from secret_phrases import NOTE, NOTE_SECRETS

RULE = "do nothing until I say so"


def _kind(body) -> str:
    system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
    if system.startswith("You compact a conversation"):
        return "summary"
    if system.startswith("Merge these partial summaries"):
        return "merge"
    if "1-2 word lowercase slug" in system:
        return "slug"
    if system.startswith("Pre-compaction memory flush"):
        return "flush"
    return "turn"


def _all_text(body) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def assistant_brain(body):
    """A small scripted model: does tool-heavy steps, keeps rules in summaries, flushes them to memory."""
    kind = _kind(body)
    msgs = body["messages"]
    last = msgs[-1]
    text = _all_text(body)
    if kind in ("summary", "merge"):
        rules = sorted({m.group(0) for m in re.finditer(r"[Dd]o nothing until I say so", text)})
        steps = re.findall(r"step (\d+)", text)
        return {"content": "## Decisions\n- worked through the steps\n## Open TODOs\n- continue at step "
                           f"{int(steps[-1]) + 1 if steps else 1}\n## Constraints/Rules\n"
                           + ("\n".join(f"- User rule: {RULE}" for _ in rules[:1]) or "- none")
                           + "\n## Pending user asks\n- none\n## Exact identifiers\n- none"}
    if kind == "slug":
        return {"content": "mail-cleanup"}
    if kind == "flush":
        if last["role"] == "user":
            date = re.search(r"memory/(\d{4}-\d\d-\d\d)\.md", last["content"]).group(1)
            return {"tool_calls": [("read", {"path": f"memory/{date}.md"})]}
        result = json.loads(last["content"]) if last["role"] == "tool" else {}
        if "text" in result:  # what today's log already holds
            already = RULE in result["text"]
            if RULE.lower() in text.lower() and not already:
                return {"tool_calls": [("memory_append", {"text": f"- User rule (given in this session): {RULE}"})]}
        return {"content": "NO_REPLY"}
    # a normal turn
    if last["role"] == "user":
        content = last["content"]
        if "acting on my own" in content:
            return {"tool_calls": [("memory_search", {"query": "until I say so"})]}
        m = re.search(r"step (\d+)", content)
        if m:
            return {"tool_calls": [("read", {"path": f"data/part-{int(m.group(1)) % 5}.txt"})]}
        return {"content": "Understood."}
    if last["role"] == "tool":
        if '"results"' in last["content"]:
            found = json.loads(last["content"])["results"]
            where = found[0]["citation"] if found else "nothing"
            return {"content": f"You told me to {RULE} (memory: {where})."}
        return {"content": "Step done."}
    return {"content": "OK"}


def _session(workspace, tmp_path, server, *, context=8_000, floor=2_000, soft=1_000, keep=1_500, extra=None, **kw):
    defaults = {"contextTokens": context,
                "compaction": {"reserveTokensFloor": floor, "keepRecentTokens": keep,
                               "memoryFlush": {"softThresholdTokens": soft}},
                "memorySearch": {"provider": "none"}}
    defaults.update(extra or {})
    cfg = {"agents": {"defaults": defaults}, "llm": {"baseUrl": server.base_url, "model": "scripted"}}
    settings = load_settings(workspace=workspace, state_dir=tmp_path / "state", config=cfg, env={})
    memory = Memory(settings, background=False)
    chat = ChatClient(server.base_url, "scripted", retry=RetryPolicy(base_s=0.01, cap_s=0.02))
    return AgentSession(memory, runtime=runtime_settings(settings), chat=chat, **kw)


@pytest.fixture
def ws(tmp_path):
    w = tmp_path / "ws"
    write(w / "AGENTS.md", "# AGENTS\n\n## Red lines\n\n- Never delete anything without explicit confirmation.\n")
    write(w / "MEMORY.md", "# Memory\n")
    for i in range(5):
        write(w / "data" / f"part-{i}.txt", f"part {i}: " + ("log line with details " * 60 + "\n") * 8)
    return w


def _transcript(agent) -> list[dict]:
    return [json.loads(line) for line in agent.store.path(agent.session_id).read_text().splitlines()]


def test_a_rule_survives_200_tool_heavy_turns(ws, tmp_path):
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv)
        agent.send(f"We will clean up my mailbox. Important: {RULE}.")
        for i in range(1, 201):
            agent.send(f"Now do step {i}: read the next data file.")
        assert agent.meta["compactionCount"] >= 2
        today = datetime.now().strftime("%Y-%m-%d")
        log = (ws / "memory" / f"{today}.md").read_text()
        assert RULE in log and log.count(RULE) == 1  # flushed once, appended, never rewritten
        assert "## Constraints/Rules" in agent.summary and RULE in agent.summary.split("## Constraints/Rules")[1]
        reply = agent.send("What did I tell you about acting on my own?")
        assert RULE in reply.text and f"memory/{today}.md" in reply.text
        assert reply.tool_calls[0]["name"] == "memory_search"
        flushes = [e for e in _transcript(agent) if e.get("type") == "memory_flush"]
        assert len(flushes) <= agent.meta["compactionCount"] + 1  # at most once per compaction cycle
        # AGENTS.md's red lines are in front of the model again after compaction
        assert "Re-read after compaction" in srv.requests[-1]["messages"][0]["content"]


def test_one_huge_tool_result_still_flushes_first(ws, tmp_path):
    write(ws / "data" / "huge.txt", "x" * 40_000)

    def brain(body):
        kind = _kind(body)
        last = body["messages"][-1]
        if kind == "turn" and last["role"] == "user":
            return {"tool_calls": [("read", {"path": "data/huge.txt"})]}
        if kind == "flush":
            if last["role"] == "user":
                return {"tool_calls": [("memory_append", {"text": f"- rule: {RULE}"})]}
            return {"content": "NO_REPLY"}
        return assistant_brain(body)

    with ChatServer(brain) as srv:
        agent = _session(ws, tmp_path, srv, context=16_000, floor=3_000, soft=1_000)
        agent.send(f"Remember: {RULE}.")
        kinds_before = len(srv.requests)
        reply = agent.send("Read data/huge.txt please.")
        kinds = [_kind(b) for b in srv.requests[kinds_before:]]
        assert kinds.index("flush") < kinds.index("summary")  # flush, then compaction, then the answer
        assert kinds[-1] == "turn" and reply.flushed and reply.compacted
        assert reply.text == "Step done."  # NO_REPLY never reaches the user


def test_context_overflow_flushes_compacts_and_retries(ws, tmp_path):
    with ChatServer(assistant_brain, max_context=6_000) as srv:
        # the runtime believes the window is large; the server knows better
        agent = _session(ws, tmp_path, srv, context=200_000, floor=20_000, soft=4_000, keep=1_500)
        agent.send(f"Start. {RULE}.")
        replies = [agent.send(f"Now do step {i}") for i in range(1, 12)]
        assert all(r.text == "Step done." for r in replies)
        assert any(r.compacted for r in replies) and any(r.flushed for r in replies)
        errors = [b for b in srv.requests if srv.max_context and len(json.dumps(b["messages"])) // 4 > 6_000]
        assert errors  # the overflow really happened
        entries = _transcript(agent)  # every line is valid JSON
        users = [e for e in entries if e.get("type") == "message" and e["message"]["role"] == "user"]
        assert len(users) == 12  # nothing lost from the transcript
        assert any(e.get("type") == "compaction" and e["reason"] == "overflow" for e in entries)


def test_read_only_workspace_never_flushes(ws, tmp_path):
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv, extra={"sandbox": {"workspaceAccess": "ro"}})
        agent.send(f"{RULE}.")
        for i in range(1, 30):
            agent.send(f"step {i}")
        assert not any(_kind(b) == "flush" for b in srv.requests)
        status = agent.send("/status").text
        assert "read-only" in status and "memory flush skipped" in status
        assert "memory_append" not in json.dumps(srv.requests[-1].get("tools"))
    after = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    assert after == before


def test_status_says_when_memory_was_last_flushed_in_words(ws, tmp_path):
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv)
        status = agent.send("/status").text
        assert "no memory flush yet" in status and "None" not in status and "never" not in status
        agent.send(f"{RULE}.")
        for i in range(1, 80):
            if agent.meta.get("memoryFlushAt"):
                break
            agent.send(f"Now do step {i}: read the next data file.")
        assert agent.meta.get("memoryFlushAt")
        status = agent.send("/status").text
        assert re.search(r"last memory flush \d{4}-\d\d-\d\d \d\d:\d\d \(before compaction 1\)", status), status


def test_a_window_smaller_than_the_reserve_is_named_not_flushed_every_turn_silently(ws, tmp_path, caplog):
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv, context=8_000, floor=8_000, soft=1_000)
        said = [n for n in agent.notes if "contextTokens (8000) is not above compaction.reserveTokensFloor (8000)" in n]
        assert said and "every request would flush memory and compact" in said[0]
        assert said[0] in agent.send("/status").text
        assert any("contextTokens (8000)" in r.getMessage() for r in caplog.records)
        fine = _session(ws, tmp_path / "other", srv)
        assert not any("contextTokens" in n for n in fine.notes)


def test_new_writes_the_session_memory_file(ws, tmp_path):
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv)
        for i in range(20):
            agent.send(f"Message number {i} about the mailbox")
        agent.send("/verbose")
        first = agent.session_id
        reply = agent.send("/new")
        assert agent.session_id != first
        today = datetime.now().strftime("%Y-%m-%d")
        path = ws / "memory" / f"{today}-mail-cleanup.md"
        body = path.read_text()
        assert path.name in reply.text
        bullets = [line for line in body.splitlines() if line.startswith("- **")]
        assert len(bullets) == 15 and "Message number 19" in body and "/verbose" not in body
        # with the model down, the slug is the time
        for i in range(3):
            agent.send(f"another message {i}")
        srv.down = True
        agent.send("/reset")
        assert list((ws / "memory").glob(f"{today}-[0-9][0-9][0-9][0-9].md"))


def test_pruning_never_touches_the_transcript(ws, tmp_path):
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv, context=100_000, extra={
            "contextPruning": {"mode": "cache-ttl", "ttl": "0s", "keepLastAssistants": 1}})
        for i in range(1, 6):
            agent.send(f"step {i}")
        path = agent.store.path(agent.session_id)
        before = path.read_bytes()
        digest = hashlib.sha256(before).hexdigest()
        agent.send("step 6")
        after = path.read_bytes()
        assert hashlib.sha256(after[: len(before)]).hexdigest() == digest  # only appended to
        sent = srv.requests[-1]["messages"]
        tools = [m["content"] for m in sent if m["role"] == "tool"]
        assert any("characters of an old tool result trimmed" in t for t in tools)
        assert all(len(json.loads(line)["message"].get("content") or "") != 0 for line in after.splitlines()
                   if json.loads(line).get("type") == "message" and json.loads(line)["message"]["role"] == "tool")
        on_disk = [json.loads(line)["message"]["content"] for line in after.splitlines()
                   if json.loads(line).get("type") == "message" and json.loads(line)["message"]["role"] == "tool"]
        assert all("trimmed" not in c for c in on_disk)
        user_texts = [m["content"] for m in sent if m["role"] == "user"]
        assert user_texts == [f"step {i}" for i in range(1, 7)]  # user text untouched


def test_a_huge_tools_md_is_truncated_visibly(ws, tmp_path):
    write(ws / "TOOLS.md", "# Tools\n" + "tool notes line\n" * 4_000)  # ~64 000 chars
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv, context=100_000)
        report = agent.send("/context list").text
        assert re.search(r"TRUNCATED\s+TOOLS\.md\s+raw\s+6\d{4} chars", report)
        assert "WARNING: TOOLS.md TRUNCATED" in report
        assert re.search(r"MISSING\s+SOUL\.md", report) and re.search(r"OK\s+AGENTS\.md", report)
        agent.send("hello")
        system = srv.requests[-1]["messages"][0]["content"]
        assert "[... TRUNCATED" in system and f"[MISSING] Expected at: {ws / 'SOUL.md'}" in system
        detail = agent.send("/context detail").text
        assert "History by role" in detail and "tool memory_search" in detail


def test_a_torn_last_line_is_repaired(ws, tmp_path):
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv)
        agent.send("hello")
        sid = agent.session_id
        path = agent.store.path(sid)
        with open(path, "ab") as fh:
            fh.write(b'{"type": "message", "message": {"role": "user", "content": "half a li')
        again = _session(ws, tmp_path, srv, session_id=sid)
        assert [m["content"] for m in again.history if m["role"] == "user"] == ["hello"]
        assert all(json.loads(line) for line in path.read_text().splitlines())
        assert list(path.parent.glob(f"{sid}.torn-*"))
        again.send("still works")


def test_sessions_json_keeps_the_counters(ws, tmp_path):
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv)
        agent.send("hello")
        agent.send("how are you")
        assert agent.send("/compact keep the greeting").text == "Compacted."
        meta = json.loads((Path(agent.store.dir) / "sessions.json").read_text())[agent.session_id]
        assert meta["compactionCount"] == 1 and meta["inputTokens"] > 0 and meta["outputTokens"] > 0
        assert {"updatedAt", "memoryFlushCompactionCount", "memoryFlushAt", "totalTokens"} <= set(meta)


def test_daily_reset_after_the_reset_hour(ws, tmp_path):
    now = [datetime(2026, 3, 2, 23, 0).timestamp()]
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv, clock=lambda: now[0])
        agent.send("late evening")
        first = agent.session_id
        now[0] = datetime(2026, 3, 3, 3, 30).timestamp()  # before 04:00: same session
        agent.send("still up")
        assert agent.session_id == first
        now[0] = datetime(2026, 3, 3, 4, 30).timestamp()
        agent.send("good morning")
        assert agent.session_id != first and [m["content"] for m in agent.history if m["role"] == "user"] == ["good morning"]


def _cli(ws: Path, tmp_path: Path, config: dict) -> tuple[list[str], dict[str, str]]:
    """The `mnemoclaw` command line for ``ws`` with ``config`` written to a file, and its environment."""
    cfg = tmp_path / "config.json5"
    cfg.write_text(json.dumps(config))
    base = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir", str(tmp_path / "state"),
            "--config", str(cfg)]
    return base, dict(os.environ, PYTHONPATH=str(REPO / "src"))


def _keyword_only(srv: ChatServer) -> dict:
    return {"agents": {"defaults": {"memorySearch": {"provider": "none"}}},
            "llm": {"baseUrl": srv.base_url, "model": "scripted"}}


def test_chat_cli_end_to_end(ws, tmp_path):
    with ChatServer(assistant_brain) as srv:
        base, env = _cli(ws, tmp_path, _keyword_only(srv))
        r = subprocess.run(base + ["chat"],
                           input=f"{RULE}, please.\nstep 3\n/status\n/context list\n", capture_output=True,
                           text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Understood." in r.stdout and "Step done." in r.stdout
    assert "Session " in r.stdout and "Bootstrap files" in r.stdout
    sessions = list((tmp_path / "state" / "agents" / "main" / "sessions").glob("*.jsonl"))
    assert len(sessions) == 1


def test_hygiene_proposes_a_diff_and_appends_only_on_apply(ws, tmp_path):
    today = datetime.now().strftime("%Y-%m-%d")
    write(ws / "memory" / f"{today}.md", "- decided: staging runs on Postgres 16\n- lunch was nice")

    def brain(body):
        return {"content": "- Staging runs on Postgres 16 (decided " + today + ")\n- The user's name is Lin"}

    before = (ws / "MEMORY.md").read_text()
    with ChatServer(brain) as srv:
        base, env = _cli(ws, tmp_path, {"llm": {"baseUrl": srv.base_url, "model": "scripted"},
                                        "memory": {"git": {"autoCommit": True}}})
        base += ["hygiene", "--days", "3"]
        dry = subprocess.run(base, capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
        assert dry.returncode == 0, dry.stderr
        assert "+- Staging runs on Postgres 16" in dry.stdout and "--- MEMORY.md" in dry.stdout
        assert (ws / "MEMORY.md").read_text() == before  # not applied without consent
        done = subprocess.run(base + ["--apply"], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
    after = (ws / "MEMORY.md").read_text()
    assert after.startswith(before) and "- The user's name is Lin" in after
    log = subprocess.run(["git", "log", "--oneline"], cwd=ws, capture_output=True, text=True)
    assert "memory: hygiene" in log.stdout


def test_git_autocommit_after_memory_writes(ws, tmp_path):
    def brain(body):
        last = body["messages"][-1]
        if _kind(body) == "turn" and last["role"] == "user":
            return {"tool_calls": [("memory_append", {"text": "- the router password hint is in the blue binder"})]}
        return {"content": "Saved."}

    with ChatServer(brain) as srv:
        agent = _session(ws, tmp_path, srv, extra={})
        agent.rs.git_autocommit = True
        assert agent.send("remember where the router hint is").text == "Saved."
    log = subprocess.run(["git", "log", "--oneline"], cwd=ws, capture_output=True, text=True)
    assert "memory: memory/" in log.stdout


def test_idle_reset(ws, tmp_path):
    now = [datetime(2026, 3, 2, 10, 0).timestamp()]
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv, clock=lambda: now[0])
        agent.rs.reset_mode, agent.rs.idle_minutes = "idle", 30
        agent.send("first")
        first = agent.session_id
        now[0] += 20 * 60
        agent.send("second")
        assert agent.session_id == first
        now[0] += 31 * 60
        agent.send("third")
        assert agent.session_id != first


def test_token_estimates_count_cjk_per_character_and_prefer_api_usage(ws, tmp_path):
    from mnemoclaw.text.tokenize import estimate_tokens

    assert estimate_tokens("记忆系统") == 4 and estimate_tokens("abcdefgh") == 2
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv, context=100_000)
        agent.send("你好，请记住我喜欢乌龙茶")
        reported = srv.requests[-1]
        assert agent._usage_anchor is not None  # the API's prompt_tokens anchors the count
        assert agent.session_tokens() >= len(json.dumps(reported["messages"], ensure_ascii=False)) // 4


def test_sessions_context_and_compact_commands(ws, tmp_path):
    with ChatServer(assistant_brain) as srv:
        base, env = _cli(ws, tmp_path, _keyword_only(srv))
        none = subprocess.run(base + ["context"], capture_output=True, text=True, env=env, timeout=60)
        assert none.returncode == 1 and "mnemoclaw chat" in none.stderr
        subprocess.run(base + ["chat"], input="hello\nstep 1\nstep 2\n", capture_output=True, text=True, env=env,
                       timeout=60, check=True)
        listed = subprocess.run(base + ["sessions", "--json"], capture_output=True, text=True, env=env, timeout=60)
        rows = json.loads(listed.stdout)
        assert len(rows) == 1 and rows[0]["compactionCount"] == 0
        ctx = subprocess.run(base + ["context", "detail"], capture_output=True, text=True, env=env, timeout=60)
        assert "Bootstrap files" in ctx.stdout and "History by role" in ctx.stdout
        comp = subprocess.run(base + ["compact", "keep the steps"], capture_output=True, text=True, env=env, timeout=60)
        assert comp.returncode == 0 and "Compacted session" in comp.stdout, comp.stderr
        rows = json.loads(subprocess.run(base + ["sessions", "--json"], capture_output=True, text=True, env=env,
                                         timeout=60).stdout)
        assert rows[0]["compactionCount"] == 1


TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_no_secret_typed_in_chat_reaches_a_memory_file(ws, tmp_path):
    """The session-memory hook, the memory flush and hygiene all write memory files the
    index serves to every later search: none may carry a secret the transcript
    indexer would have redacted."""
    def brain(body):
        kind, last = _kind(body), body["messages"][-1]
        if body["messages"][0]["content"].startswith("You maintain an assistant's long-term memory"):
            return {"content": f"- The deploy token is {TOKEN}"}  # hygiene's distillation
        if kind == "slug":
            return {"content": "deploy"}
        if kind == "flush":
            if last["role"] == "user":
                return {"tool_calls": [("memory_append", {"text": f"- deploy token: {TOKEN}\n{NOTE}"})]}
            return {"content": "NO_REPLY"}
        if kind == "turn" and last["role"] == "user" and "step" in last["content"]:
            return {"tool_calls": [("read", {"path": "data/part-1.txt"})]}
        return {"content": "OK"}

    today = datetime.now().strftime("%Y-%m-%d")
    with ChatServer(brain) as srv:
        agent = _session(ws, tmp_path, srv)
        agent.send(f"Use my GitHub token {TOKEN} for the deploy; the db password is hunter2hunter2. {NOTE}")
        for i in range(12):  # long enough to flush before compaction
            agent.send(f"step {i}")
        assert agent.meta.get("memoryFlushAt"), "the flush ran"
        agent.send(f"and again, the token is {TOKEN}. {NOTE}")  # within the last 15, for /new
        agent.send("/new")
        write(ws / "memory" / f"{today}.md", (ws / "memory" / f"{today}.md").read_text()
              + f"\n- token for CI: {TOKEN}\n")
        base, env = _cli(ws, tmp_path, {"llm": {"baseUrl": srv.base_url, "model": "scripted"},
                                        "agents": {"defaults": {"memorySearch": {"provider": "none"}}}})
        done = subprocess.run(base + ["hygiene", "--apply"], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        assert TOKEN not in done.stdout, done.stdout  # the proposal shown is redacted too
    written = {p.name: p.read_text() for p in [*(ws / "memory").glob("*.md"), ws / "MEMORY.md"]}
    assert f"{today}-deploy.md" in written and "[REDACTED]" in written[f"{today}-deploy.md"]
    assert "[REDACTED]" in written["MEMORY.md"]
    for name, text in written.items():
        assert not [s for _, s in NOTE_SECRETS if s in text], (name, text)
        if name != f"{today}.md":  # the line this test wrote by hand stays the user's
            assert TOKEN not in text and "hunter2hunter2" not in text, name
    assert "my bank PIN is [REDACTED]" in written[f"{today}-deploy.md"]  # the session summary
    assert "- deploy token: [REDACTED]\n- my bank PIN is [REDACTED]" in written[f"{today}.md"]  # the flush
    hits = Memory(load_settings(workspace=ws, state_dir=tmp_path / "s2", config={}, env={}), provider=None,
                  background=False).tools.memory_search("deploy token")
    assert hits["results"] and all(TOKEN not in h["snippet"] for h in hits["results"]
                                   if not h["path"].endswith(f"{today}.md"))


def test_new_after_a_compaction_saves_the_last_15_real_messages(ws, tmp_path):
    with ChatServer(assistant_brain) as srv:
        agent = _session(ws, tmp_path, srv)
        for i in range(8):
            agent.send(f"Exchange {i} about the mailbox")
        assert agent.compact(reason="command")  # the history in memory is now a summary and little else
        agent.send("Exchange 8 about the mailbox")
        agent.send("/new")
    today = datetime.now().strftime("%Y-%m-%d")
    body = (ws / "memory" / f"{today}-mail-cleanup.md").read_text()
    bullets = [line for line in body.splitlines() if line.startswith("- **")]
    assert len(bullets) == 15
    assert [n for n in range(9) if f"Exchange {n} " in body] == list(range(2, 9))  # users' last 7 (+8 replies)


def test_session_commands_speak_json_and_get_says_when_a_file_is_missing(ws, tmp_path):
    today = datetime.now().strftime("%Y-%m-%d")
    write(ws / "memory" / f"{today}.md", "- decided: staging runs on Postgres 16\n")

    def brain(body):
        if body["messages"][0]["content"].startswith("You maintain an assistant's long-term memory"):
            return {"content": "- Staging runs on Postgres 16"}
        return {"content": "## Decisions\n- none" if _kind(body) == "summary" else "Noted."}

    with ChatServer(brain) as srv:
        agent = _session(ws, tmp_path, srv)
        for i in range(6):
            agent.send(f"message {i} " + "padding " * 200)
        base, env = _cli(ws, tmp_path, {"llm": {"baseUrl": srv.base_url, "model": "scripted"},
                                        "agents": {"defaults": {"memorySearch": {"provider": "none"}}}})

        def run(*args):
            r = subprocess.run(base + list(args), capture_output=True, text=True, env=env, timeout=60,
                               stdin=subprocess.DEVNULL)
            assert r.returncode == 0, r.stderr
            return r

        ctx = json.loads(run("context", "detail", "--json").stdout)
        assert ctx["session"] == agent.session_id and ctx["history"]["messages"] == 12
        assert {f["name"] for f in ctx["files"]} >= {"AGENTS.md", "MEMORY.md"} and "historyByRole" in ctx
        done = json.loads(run("compact", "--json").stdout)
        assert done["compacted"] is True and done["tokensAfter"] < done["tokensBefore"]
        hy = json.loads(run("hygiene", "--json").stdout)
        assert hy["additions"] == ["- Staging runs on Postgres 16"] and hy["applied"] is False
        assert json.loads(run("sessions", "--json").stdout)[0]["sessionId"] == agent.session_id
    missing = run("get", "memory/2001-01-01.md")
    assert missing.stdout == "" and "memory/2001-01-01.md does not exist" in missing.stderr


def test_hygiene_without_a_chat_model_says_what_it_needs(ws, tmp_path):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    write(ws / "memory" / f"{datetime.now():%Y-%m-%d}.md", "- a decision\n")
    base, env = _cli(ws, tmp_path, {"llm": {"baseUrl": f"http://127.0.0.1:{port}/v1", "model": "m"},
                                    "agents": {"defaults": {"memorySearch": {"provider": "none"}}}})
    r = subprocess.run(base + ["hygiene"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "hygiene needs a chat model" in r.stderr and "llm.baseUrl" in r.stderr and "llm.model" in r.stderr
    assert "memorySearch.fallback" not in r.stderr
