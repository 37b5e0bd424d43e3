"""Recall before the reply: what comes unasked, from which files, bounded, visible, and off when asked."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mnemoclaw.api import Memory
from mnemoclaw.cli import cli
from mnemoclaw.config import load_settings
from mnemoclaw.runtime.agent import AgentSession
from mnemoclaw.runtime.llm import ChatClient, RetryPolicy
from mnemoclaw.runtime.settings import runtime_settings
from mnemoclaw.tools.recall import Specific, may_inject, recall, said_trigger

from chat_server import ChatServer
from conftest import write

MEMORY = """\
# Memory

- The staging database runs on host orca-7 behind the bastion at jump.internal.
- Lena prefers window seats on long flights and always books the aisle for short hops.
- The quarterly heron survey counts birds at the Wexford marsh every March.

<!-- trigger: deploy, 上线 -->
- Before any deploy, freeze the schema and tell the on-call channel.

- Filler note one about nothing in particular.
- Filler note two about nothing in particular.
- Filler note three about nothing in particular.
- Filler note four about nothing in particular.
"""


@pytest.fixture
def mem(workspace, make_memory):
    write(workspace / "MEMORY.md", MEMORY)
    write(workspace / "memory" / "2026-03-02.md", "# 2026-03-02\n\n- Moved the pelican feeder to the east pier.\n")
    write(workspace / "memory" / "imports" / "codex" / "notes.md", "- The pelican feeder key is under the mat.\n")
    for i in range(12):  # enough memory for a word to be rare in it
        write(workspace / "memory" / f"2026-01-{i + 1:02d}.md", f"- routine day {i}: answered email, wrote code.\n")
    m = make_memory(workspace, provider=None)  # keyword only: the gate for it (the vector side: below)
    m.sync()
    return m


def test_which_files_may_come_unasked():
    assert may_inject("MEMORY.md", "memory", ("curated",)) and may_inject("USER.md", "memory", ("curated",))
    assert may_inject("notes/projects.md", "memory", ("curated",))  # an extra path: the owner's
    assert not may_inject("memory/2026-03-02.md", "memory", ("curated",))
    assert may_inject("memory/2026-03-02.md", "memory", ("curated", "daily"))
    assert not may_inject("memory/imports/codex/notes.md", "memory", ("curated", "daily", "sessions"))
    assert not may_inject("sessions/abc.jsonl", "sessions", ("curated", "daily"))
    assert may_inject("sessions/abc.jsonl", "sessions", ("sessions",))


def test_a_trigger_is_said_as_a_whole_word_in_any_case_or_script():
    assert said_trigger("Can we Deploy today?", ["deploy"]) == "deploy"
    assert said_trigger("the redeployment plan", ["deploy"]) is None
    assert said_trigger("明天上線嗎", ["上线"]) == "上线"  # Traditional says the Simplified trigger
    assert said_trigger("hello", None) is None


def test_a_message_about_a_memory_brings_it_and_small_talk_brings_nothing(mem):
    got = recall(mem.tools.services, "which host does the staging database run on again?")
    assert [e.citation for e in got.entries][:1] == ["MEMORY.md#L1-L5"], got.wire()
    assert "orca-7" in got.block() and "[MEMORY.md#L1-L5]" in got.block()
    for message in ("thanks, that's great!", "ok", "what a lovely morning it is"):
        quiet = recall(mem.tools.services, message)
        assert quiet.entries == [] and quiet.block() == "", (message, quiet.wire())
        assert "scored" in quiet.why_none or "small talk" in quiet.why_none, quiet.why_none
    assert "small talk" in recall(mem.tools.services, "Hi there! Thanks so much.").why_none


def test_small_talk_in_memory_answers_nothing_and_corroborates_nothing():
    from mnemoclaw.tools.recall import says_small_talk
    from mnemoclaw.types import Hit

    def hit(text: str, terms: dict[str, float]) -> Hit:
        return Hit("memory/2026-11-03.md", 1, 3, 0.99, text, "memory", terms=terms)

    greeting = "- **Caroline** (D1:1): Hey Mel! Good to see you! How have you been?\n- **Melanie** (D1:2): Hi Caroline!"
    assert says_small_talk(hit(greeting, {"hei": 1.0, "good": 1.0}))
    news = greeting + "\n- **Caroline** (D1:3): I went to the LGBTQ support group yesterday."
    assert not says_small_talk(hit(news, {"support": 2.0, "group": 1.0}))
    # what the message matched decides: the greeting lines of an entry with news in it too
    assert says_small_talk(hit(news, {"hei": 1.0}))


def test_daily_logs_come_only_when_configured_and_imports_never(mem, workspace):
    message = "where did we move the pelican feeder to?"
    assert recall(mem.tools.services, message).entries == []
    # one entry of what was said, alone, is held back: a record of small talk stands out as often
    lone = recall(mem.tools.services, message, options={"sources": ["curated", "daily"]})
    assert lone.entries == [] and "a second one does too" in lone.why_none, lone.wire()
    # borne out by a second entry, both come
    write(workspace / "memory" / "2026-03-05.md", "# 2026-03-05\n\n- Moved the pelican feeder back to the east pier "
          "after the storm.\n")
    mem.sync()
    daily = recall(mem.tools.services, message, options={"sources": ["curated", "daily"]})
    assert sorted(e.path for e in daily.entries) == ["memory/2026-03-02.md", "memory/2026-03-05.md"], daily.wire()
    assert all("imports" not in e.path for e in daily.entries)


def test_an_entry_of_what_was_said_needs_another_to_stand_out_and_a_curated_one_does_not():
    from mnemoclaw.tools.recall import CORROBORATED_EXCESS, standing_out

    out, loose = Specific(2.5, 3.0, 0.5, 500), Specific(CORROBORATED_EXCESS, 3.0, 0.5, 500)
    none = Specific(1.0, 3.0, 0.5, 500)
    assert standing_out([(out, False)]) == [True]  # curated: alone
    assert standing_out([(out, True)]) == [False]  # a daily log: not alone
    assert standing_out([(out, True), (loose, True)]) == [True, True]  # each bears the other out
    assert standing_out([(out, False), (loose, True)]) == [True, True]
    assert standing_out([(loose, False), (loose, True)]) == [False, True]  # curated still needs 2 spreads
    assert standing_out([(out, True), (none, True)]) == [False, False]


def test_a_trigger_comes_first_and_the_bounds_hold(mem):
    got = recall(mem.tools.services, "we deploy the staging database on orca-7 tonight")
    assert got.entries[0].trigger == "deploy" and got.entries[0].citation == "MEMORY.md#L7-L8", got.wire()
    assert len(recall(mem.tools.services, "we deploy the staging database on orca-7 tonight", options={"maxEntries": 1}).entries) == 1
    tight = recall(mem.tools.services, "we deploy the staging database on orca-7 tonight", options={"maxChars": 100})
    assert sum(len(e.text) for e in tight.entries) <= 100
    off = recall(mem.tools.services, "we deploy the staging database", options={"enabled": False})
    assert off.entries == [] and "off" in off.why_none


def test_the_gate_needs_specific_words_and_a_standing_out_meaning():
    assert Specific(excess=2.5, rarest=3.0, share=0.5, chunks=500).passes()
    assert not Specific(excess=1.0, rarest=3.0, share=0.5, chunks=500).passes()  # not standing out
    assert not Specific(excess=2.5, rarest=1.0, share=0.5, chunks=500).passes()  # only common words
    assert not Specific(excess=2.5, rarest=3.0, share=0.1, chunks=500).passes()  # a sliver of the message
    assert Specific(excess=None, rarest=3.0, share=0.5, chunks=500).passes()  # keyword only: more words
    assert not Specific(excess=None, rarest=3.0, share=0.3, chunks=500).passes()
    assert Specific(excess=2.5, rarest=1.2, share=0.5, chunks=4).passes()  # a tiny memory: as rare as it gets


def _agent(workspace, tmp_path, server):
    cfg = {"agents": {"defaults": {"memorySearch": {"provider": "none"}}},
           "llm": {"baseUrl": server.base_url, "model": "scripted"}}
    settings = load_settings(workspace=workspace, state_dir=tmp_path / "agent-state", config=cfg, env={})
    memory = Memory(settings, background=False)
    memory.sync()
    chat = ChatClient(server.base_url, "scripted", retry=RetryPolicy(base_s=0.01, cap_s=0.02))
    return AgentSession(memory, runtime=runtime_settings(settings), chat=chat)


def test_the_chat_runtime_puts_recall_before_the_reply_and_shows_it(workspace, tmp_path):
    write(workspace / "MEMORY.md", MEMORY)
    for i in range(12):
        write(workspace / "memory" / f"2026-01-{i + 1:02d}.md", f"- routine day {i}: answered email, wrote code.\n")
    with ChatServer(lambda body: {"content": "Noted."}) as srv:
        agent = _agent(workspace, tmp_path, srv)
        reply = agent.send("which host does the staging database run on again?")
        system = srv.requests[-1]["messages"][0]["content"]
        assert "# Recalled from memory for this message" in system and "orca-7" in system
        assert [e["citation"] for e in reply.recalled][:1] == ["MEMORY.md#L1-L5"]
        detail = agent.context_report(detail=True)
        assert "Recalled for the last message: " in detail and "recalled MEMORY.md#L1-L5" in detail
        agent.send("thanks, that's great!")
        assert "# Recalled from memory" not in srv.requests[-1]["messages"][0]["content"]
        assert "nothing" in agent.context_report()
        assert "off" in agent.send("/recall off").text
        agent.send("which host does the staging database run on again?")
        assert "# Recalled from memory" not in srv.requests[-1]["messages"][0]["content"]
        assert "Recall before the reply: off" in agent.context_report()
        assert "/recall takes on or off" in agent.send("/recall maybe").text
        # recall is context, not conversation: the transcript holds what was said, not what was recalled
        transcript = agent.store.path(agent.session_id).read_text("utf-8")
        assert "Recalled from memory" not in transcript
        # what came is noted by citation for the session page (never its text: "orca-7" is not in it)
        noted = [json.loads(line) for line in transcript.splitlines() if '"type": "recall"' in line]
        assert [e["citation"] for n in noted for e in n["entries"]] == ["MEMORY.md#L1-L5"]  # (then recall was off)
        assert all("text" not in e for n in noted for e in n["entries"])
        assert transcript.count("orca-7") == 0


def test_mnemoclaw_recall_prints_the_block_and_serves_a_hook(workspace, tmp_path):
    write(workspace / "MEMORY.md", MEMORY)
    for i in range(12):
        write(workspace / "memory" / f"2026-01-{i + 1:02d}.md", f"- routine day {i}: answered email, wrote code.\n")
    env = {"MNEMOCLAW_STATE_DIR": str(tmp_path / "cli-state"), "MNEMOCLAW_PROVIDER": "none"}
    base = ["--workspace", str(workspace)]
    runner = CliRunner()
    assert runner.invoke(cli, [*base, "index"], env=env).exit_code == 0
    out = runner.invoke(cli, [*base, "recall", "which host does the staging database run on?", "--json"], env=env)
    data = json.loads(out.stdout)
    assert data["entries"][0]["citation"] == "MEMORY.md#L1-L5" and "orca-7" in data["block"]
    quiet = runner.invoke(cli, [*base, "recall", "thanks!"], env=env)
    assert quiet.exit_code == 0 and quiet.stdout == "" and "Nothing recalled" in quiet.stderr
    hook_in = json.dumps({"session_id": "s1", "hook_event_name": "UserPromptSubmit", "cwd": str(workspace),
                          "prompt": "which host does the staging database run on?"})
    hooked = runner.invoke(cli, [*base, "recall", "--hook"], input=hook_in, env=env)
    assert hooked.exit_code == 0 and hooked.stdout.startswith("# Recalled from memory") and "orca-7" in hooked.stdout
    for bad in ("", "{}", '{"prompt": 3}'):
        r = runner.invoke(cli, [*base, "recall", "--hook"], input=bad, env=env)
        assert r.exit_code == 0 and r.stdout == "" and "no prompt" in r.stderr
    broken = runner.invoke(cli, ["--workspace", str(workspace), "--config", str(tmp_path / "missing.json5"),
                                 "recall", "--hook"], input=hook_in, env=env)
    assert broken.exit_code == 0 and broken.stdout == "" and "nothing recalled" in broken.stderr
