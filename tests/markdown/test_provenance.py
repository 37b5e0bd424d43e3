"""Where each result came from: the owner's files, what an agent wrote (annotated in the
Markdown, so a rebuild keeps it), imports, transcripts (their session, channel and chat type);
shown, filtered by, and never put before a reply when imported or untrusted."""

from __future__ import annotations

import json
from contextlib import contextmanager

from click.testing import CliRunner

from mnemoclaw.api import Memory
from mnemoclaw.cli import cli
from mnemoclaw.config import load_settings
from mnemoclaw.markdown import provenance
from mnemoclaw.markdown.annotations import parse_value
from mnemoclaw.runtime.agent import AgentSession
from mnemoclaw.runtime.llm import ChatClient, RetryPolicy
from mnemoclaw.runtime.settings import runtime_settings
from mnemoclaw.tools.recall import recall
from mnemoclaw.tools.services import Caller

from chat_server import ChatServer
from conftest import write


def _line(role: str, text: str) -> str:
    return json.dumps({"type": "message", "message": {"role": role, "content": text}})


def test_the_origin_of_a_chunk_follows_from_where_it_is_and_what_it_says():
    assert provenance.of("MEMORY.md", "memory", {}) == {"origin": "owner"}
    assert provenance.of("memory/2026-03-01.md", "memory", {"origin": "agent", "session": "s-1"}) == \
        {"origin": "agent", "session": "s-1"}
    assert provenance.of("memory/imports/chatgpt/trip.md", "memory", {"origin": "agent"}) == \
        {"origin": "imported", "importedFrom": "chatgpt"}  # the folder decides, whatever the text claims
    assert provenance.of("sessions/5c9e.jsonl", "sessions", {}, {"5c9e": {"channel": "telegram", "chatType": "group"}}) \
        == {"origin": "transcript", "session": "5c9e", "channel": "telegram", "chat": "group"}
    # OpenClaw keys sessions.json by session key, the chat runtime by id: both give the id
    assert provenance.sessions_by_id({"agent:main:telegram:1": {"sessionId": "5c9e", "channel": "telegram"},
                                      "20261204-1": {"chatType": "direct"}, "bad": 3}) == \
        {"5c9e": {"channel": "telegram"}, "20261204-1": {"chatType": "direct"}}
    assert provenance.sessions_by_id([1, 2]) == {}
    # an origin a person mistypes is refused (and the annotation ignored), an id keeps its case
    assert parse_value("origin", "Agent") == ("agent", None)
    assert parse_value("origin", "robot")[1] == "origin 'robot' is not one of owner, agent, untrusted, promoted"
    assert parse_value("from", "memory/2026-11-03.md#L4-L6") == ("memory/2026-11-03.md#L4-L6", None)
    assert parse_value("from", "rm -rf /")[1].startswith("from 'rm -rf /' is not a citation")
    assert parse_value("session", "Ab12-CD") == ("Ab12-CD", None)
    assert provenance.without_provenance("## 14:05 <!-- importance: 8; origin: agent; session: s1 -->\n\nx") == \
        "## 14:05 <!-- importance: 8 -->\n\nx"
    assert provenance.without_provenance("## 14:05 <!-- origin: agent | session: s1 -->") == "## 14:05"
    assert provenance.without_provenance("- a <!-- trigger: a, b -->") == "- a <!-- trigger: a, b -->"


def test_results_say_where_they_came_from_and_search_filters_by_it(workspace, make_memory):
    write(workspace / "MEMORY.md", "# Memory\n\n- The heron survey is at the Wexford marsh every March.\n")
    write(workspace / "memory" / "imports" / "chatgpt" / "birds.md",
          "# Birds\n\n- A heron survey at Wexford needs a permit from the county.\n")
    mem = make_memory(workspace, overrides={"sources": ["memory", "sessions"], "experimental": {"sessionMemory": True}})
    sessions = mem.settings.sessions_dir
    write(sessions / "5c9e.jsonl", _line("user", "the heron survey at Wexford moved to April this year") + "\n")
    write(sessions / "sessions.json", json.dumps({"agent:main:telegram:42": {"sessionId": "5c9e",
                                                                             "channel": "telegram",
                                                                             "chatType": "group"}}))
    wrote = mem.tools.said_by(Caller(session="s-77", channel="cli", chat="direct")).memory_append("Heron survey at Wexford: bring the long lens.")
    assert wrote["ok"] and "annotations" not in wrote  # provenance is not an annotation someone asked for
    text = (workspace / wrote["path"]).read_text("utf-8")
    assert "<!-- origin: agent; session: s-77; channel: cli; chat: direct -->" in text
    mem.sync()
    found = mem.tools.memory_search("heron survey Wexford", corpus="all", min_score=0)["results"]
    by_path = {r["path"]: r for r in found}
    assert by_path["MEMORY.md"]["origin"] == "owner"
    assert {k: by_path[wrote["path"]][k] for k in ("origin", "session", "channel", "chat")} == \
        {"origin": "agent", "session": "s-77", "channel": "cli", "chat": "direct"}
    assert "long lens" in by_path[wrote["path"]]["snippet"]  # the fields say where it came from, the snippet
    assert "origin:" not in by_path[wrote["path"]]["snippet"]  # holds what matched, not the bookkeeping
    assert (by_path["memory/imports/chatgpt/birds.md"]["origin"],
            by_path["memory/imports/chatgpt/birds.md"]["importedFrom"]) == ("imported", "chatgpt")
    told = by_path["sessions/5c9e.jsonl"]
    assert (told["origin"], told["session"], told["channel"], told["chat"]) == ("transcript", "5c9e", "telegram", "group")
    for origin, paths in (("agent", {wrote["path"]}), ("owner", {"MEMORY.md"}),
                          ("imported", {"memory/imports/chatgpt/birds.md"}), ("transcript", {"sessions/5c9e.jsonl"})):
        got = mem.tools.memory_search("heron survey Wexford", min_score=0, origin=origin)
        assert {r["path"] for r in got["results"]} == paths, (origin, got)
    refused = mem.tools.memory_search("heron", origin="robot")
    assert refused["results"] == [] and "origin" in refused["error"]
    # a rebuild keeps it: the origin is in the Markdown
    mem.sync(full=True)
    assert mem.tools.memory_search("long lens", origin="agent")["results"][0]["session"] == "s-77"


def test_the_command_line_shows_and_filters_by_origin(workspace, tmp_path):
    write(workspace / "MEMORY.md", "# Memory\n\n- The pelican feeder is on the east pier.\n")
    write(workspace / "memory" / "imports" / "codex" / "notes.md", "- The pelican feeder key is under the mat.\n")
    env = {"MNEMOCLAW_STATE_DIR": str(tmp_path / "cli-state"), "MNEMOCLAW_PROVIDER": "none", "MNEMOCLAW_NEARBY": "off"}
    base = ["--workspace", str(workspace)]
    runner = CliRunner()
    assert runner.invoke(cli, [*base, "index"], env=env).exit_code == 0
    out = runner.invoke(cli, [*base, "search", "pelican feeder", "--min-score", "0"], env=env)
    assert "[memory, imported from codex]" in out.stdout and "[memory]" in out.stdout, out.stdout
    only = runner.invoke(cli, [*base, "search", "pelican feeder", "--min-score", "0", "--origin", "owner"], env=env)
    assert "MEMORY.md" in only.stdout and "imports" not in only.stdout, only.stdout
    bad = runner.invoke(cli, [*base, "search", "pelican", "--origin", "robot"], env=env)
    assert bad.exit_code == 2 and "'robot' is not one of" in bad.stderr


def test_untrusted_and_imported_entries_never_come_unasked(workspace, make_memory):
    write(workspace / "MEMORY.md", "# Memory\n\n<!-- origin: untrusted -->\n"
          "- The wiki page says the staging database runs on host orca-7 behind jump.internal.\n")
    write(workspace / "memory" / "imports" / "codex" / "db.md",
          "- The staging database runs on host orca-7 behind jump.internal.\n")
    for i in range(12):
        write(workspace / "memory" / f"2026-01-{i + 1:02d}.md", f"- routine day {i}: answered email, wrote code.\n")
    mem = make_memory(workspace, provider=None)
    mem.sync()
    message = "which host does the staging database run on again?"
    asked = mem.tools.memory_search(message)["results"]
    assert {r["origin"] for r in asked} >= {"untrusted", "imported"}  # searched for, they are found
    got = recall(mem.tools.services, message, options={"sources": ["curated", "daily"]})
    assert got.entries == [], got.wire()  # unasked, never
    write(workspace / "MEMORY.md", "# Memory\n\n- The staging database runs on host orca-7 behind jump.internal.\n")
    mem.sync()
    assert [e.path for e in recall(mem.tools.services, message).entries] == ["MEMORY.md"]


@contextmanager
def _agent(workspace, tmp_path, srv, extra):
    """A chat session on ``workspace`` whose model is ``srv``, keyword-only memory, config ``extra``."""
    cfg = {"agents": {"defaults": {"memorySearch": {"provider": "none"}}},
           "llm": {"baseUrl": srv.base_url, "model": "scripted"}, **extra}
    settings = load_settings(workspace=workspace, state_dir=tmp_path / "agent-state", config=cfg, env={})
    with Memory(settings, background=False) as memory:
        chat = ChatClient(srv.base_url, "scripted", retry=RetryPolicy(base_s=0.01, cap_s=0.02))
        yield AgentSession(memory, runtime=runtime_settings(settings), chat=chat)


def test_what_the_chat_agent_writes_carries_its_session(workspace, tmp_path):
    write(workspace / "MEMORY.md", "# Memory\n")

    def brain(body):
        said = [m for m in body["messages"] if m["role"] == "tool"]
        if not said:
            return {"tool_calls": [("memory_append", {"text": "The user's cat is called Miso."})]}
        return {"content": "Noted."}

    with ChatServer(brain) as srv, _agent(workspace, tmp_path, srv, {}) as agent:
        memory = agent.memory
        agent.send("my cat is called Miso, remember that")
        sid = agent.session_id
        assert agent.store.meta(sid)["channel"] == "cli" and agent.store.meta(sid)["chatType"] == "direct"
        hit = memory.tools.memory_search("cat Miso", origin="agent")["results"][0]
        assert (hit["origin"], hit["session"], hit["channel"], hit["chat"]) == ("agent", sid, "cli", "direct")
        saved = agent.end_session()  # the session hook: its note is the agent's, from this session
        assert saved and f"<!-- origin: agent; session: {sid}; channel: cli; chat: direct -->" in \
            (workspace / saved).read_text("utf-8")
        memory.sync()
        assert {r["path"] for r in memory.tools.memory_search("Miso", origin="agent", min_score=0)["results"]} >= {saved}


def _policy(**exclude):
    return {"plugins": {"entries": {"memory-core": {"config": {"memoryPolicy": {"excludeSessions": exclude}}}}}}


def test_excluded_sessions_are_not_indexed(workspace, make_memory):
    cfg = {**_policy(channels=["telegram"], chatTypes=["group"], hookExternalContentSources=["gmail"]),
           "agents": {"defaults": {"memorySearch": {"sources": ["memory", "sessions"],
                                                    "experimental": {"sessionMemory": True}}}}}
    mem = make_memory(workspace, config=cfg)
    sessions = mem.settings.sessions_dir
    for sid in ("tg", "grp", "mail", "dm", "Telegram"):
        write(sessions / f"{sid}.jsonl", _line("user", f"the walrus password rotation is due, says {sid}") + "\n")
    write(sessions / "sessions.json", json.dumps({
        "agent:main:telegram:1": {"sessionId": "tg", "channel": "telegram", "chatType": "direct"},
        "agent:main:signal:g": {"sessionId": "grp", "channel": "signal", "chatType": "group"},
        "agent:main:hook:gmail:77": {"sessionId": "mail", "channel": "webhook"},
        "agent:main:main": {"sessionId": "dm", "channel": "signal", "chatType": "direct"},
        "agent:main:x": {"sessionId": "Telegram", "channel": "Telegram"}}))  # exact, case-sensitive names
    mem.sync()
    found = {r["session"] for r in mem.tools.memory_search("walrus password rotation", corpus="sessions",
                                                      min_score=0)["results"]}
    assert found == {"dm", "Telegram"}, found


def test_a_bad_admission_policy_is_named_with_the_fix(workspace, make_memory):
    import pytest

    from mnemoclaw.errors import ConfigError

    for exclude, says in (({"channels": "telegram"}, r"excludeSessions.channels must be a list of names"),
                          ({"chanels": ["x"]}, r"excludeSessions.chanels is not a setting; the settings are "
                                               r"channels, chatTypes, hookExternalContentSources")):
        with pytest.raises(ConfigError, match=says):
            make_memory(workspace, config=_policy(**exclude)).sync()


def test_an_excluded_chat_session_writes_nothing_to_memory(workspace, tmp_path):
    write(workspace / "MEMORY.md", "# Memory\n")
    with ChatServer(lambda body: {"content": "Noted."}) as srv, \
            _agent(workspace, tmp_path, srv, _policy(chatTypes=["direct"])) as agent:
        agent.send("my cat is called Miso")
        assert "chat type 'direct'" in agent.excluded()
        asked = len(srv.requests)
        assert agent.flush(reason="manual") is False and len(srv.requests) == asked  # not even asked
        reply = agent.send("/new").text
        assert "not saved: it is excluded from memory" in reply, reply
    assert sorted(p.name for p in (workspace / "memory").glob("*.md")) == []
