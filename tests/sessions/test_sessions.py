"""Session transcripts: parsing, redaction, indexing as the "sessions" source."""

from __future__ import annotations

import json
import os
import time

import pytest

from mnemoclaw.config import load_settings
from mnemoclaw.sessions.transcript import REDACTED, parse_transcript, redact

from conftest import write
from secret_phrases import NOTE, assert_no_secret

SECRETS = {
    "openai": "sk-proj-Q8aZ3kLm9PqR2sT5uV7wX0yB4cD6eF1gH",
    "anthropic": "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "github": "ghp_1234567890abcdefghijABCDEFGHIJ123456",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-123456789012-abcdefghijkl",
    "google": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "stripe": "sk_live_51HxYzAbCdEfGhIjKlMnOp",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_known_key_formats_are_redacted(kind):
    out = redact(f"here is my key {SECRETS[kind]} please keep it")
    assert SECRETS[kind] not in out and REDACTED in out
    assert out.startswith("here is my key") and out.endswith("please keep it")


@pytest.mark.parametrize("text, secret", [
    ("my password is hunter2hunter2", "hunter2hunter2"),
    ("password: correct-horse-battery", "correct-horse-battery"),
    ('{"api_key": "abcd1234efgh5678"}', "abcd1234efgh5678"),
    ("export GITHUB_TOKEN=abcdef123456", "abcdef123456"),
    ("Authorization: Bearer abc.def-ghi_jkl012345", "abc.def-ghi_jkl012345"),
    ("postgres://admin:s3cretPass@db.internal:5432/app", "s3cretPass"),
    ("服务器密码是 Tr0ub4dor&3 记住", "Tr0ub4dor&3"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA7"),
])
def test_named_secrets_are_redacted(text, secret):
    out = redact(text)
    assert secret not in out and REDACTED in out


def test_ordinary_text_is_left_alone():
    text = "We chose Postgres over MySQL; the token bucket limits 50 requests. 密码学课程在周三。"
    assert redact(text) == text


def _line(role, content, **extra):
    return json.dumps({"type": "message", "message": {"role": role, "content": content}, **extra})


def test_parse_keeps_user_and_assistant_text_only():
    lines = [
        json.dumps({"type": "session", "id": "s1", "cwd": "/x"}),
        _line("user", "  What did we   decide\n about the\tdatabase?  "),
        _line("assistant", [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Postgres."},
                            {"type": "toolCall", "name": "memory_search", "arguments": {"query": "db"}}]),
        _line("toolResult", [{"type": "text", "text": "tool output must not be indexed"}]),
        json.dumps({"type": "compaction", "summary": "not a message"}),
        _line("assistant", [{"type": "text", "text": ""}]),
        _line("user", "and the key is sk-proj-Q8aZ3kLm9PqR2sT5uV7wX0yB4cD6eF1gH"),
        '{"type": "message", "message": {"role": "user", "content": "torn',  # a torn last line
    ]
    t = parse_transcript("\n".join(lines))
    assert t.text.splitlines() == [
        "User: What did we decide about the database?",
        "Assistant: Postgres.",
        f"User: and the key is {REDACTED}",
    ]
    assert t.source_lines == [2, 3, 7]


def _transcript(path, turns):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        for role, text in turns:
            fh.write(_line(role, text) + "\n")


@pytest.fixture
def sessions_memory(workspace, make_memory):
    def open_(**sync):
        return make_memory(workspace, overrides={"sources": ["memory", "sessions"],
                                                 "experimental": {"sessionMemory": True},
                                                 **({"sync": {"sessions": sync}} if sync else {})})
    return open_


def test_transcripts_are_indexed_and_searchable(workspace, sessions_memory):
    write(workspace / "MEMORY.md", "- the user likes green tea")
    mem = sessions_memory()
    sessions = mem.settings.sessions_dir
    _transcript(sessions / "abc.jsonl", [("user", "hello")] * 3 + [
        ("user", "Please remember: the staging database lives on host orca-7, password is Walrus!Gate99"),
        ("assistant", "Noted: staging database on orca-7."),
    ])
    mem.sync()
    # memory_search reads the Markdown unless asked for the transcripts (OpenClaw's default corpus)
    assert all(r["source"] == "memory" for r in mem.tools.memory_search("staging database host orca-7")["results"])
    out = mem.tools.memory_search("staging database host orca-7", corpus="sessions")
    assert out["results"] and out["corpus"] == "sessions", out
    assert mem.tools.memory_search("staging database host orca-7", corpus="all")["results"][0]["path"] == "sessions/abc.jsonl"
    top = out["results"][0]
    assert top["source"] == "sessions" and top["path"] == "sessions/abc.jsonl"
    assert (top["startLine"], top["endLine"]) == (1, 5)  # JSONL line numbers
    # the secret is nowhere: not in results, not in any chunk, not in the keyword index
    assert "Walrus!Gate99" not in json.dumps(out)
    by_secret = mem.tools.memory_search("Walrus!Gate99", min_score=0, corpus="all")
    assert all("Walrus" not in r["snippet"] for r in by_secret["results"])
    texts = " ".join(r[0] for r in mem.backend.store.conn.execute("SELECT text FROM chunks"))
    fts = " ".join(r[0] for r in mem.backend.store.conn.execute("SELECT text FROM chunks_fts"))
    assert "Walrus" not in texts and "walrus" not in fts.lower()
    assert "orca-7" in texts
    # memory_get stays limited to memory files
    got = mem.tools.memory_get("sessions/abc.jsonl")
    assert got["text"] == "" and "error" in got
    assert mem.tools.memory_search("green tea")["results"][0]["source"] == "memory"


def test_secrets_said_as_prose_in_a_transcript_are_not_indexed(workspace, sessions_memory):
    write(workspace / "MEMORY.md", "- the user likes green tea")
    mem = sessions_memory()
    _transcript(mem.settings.sessions_dir / "abc.jsonl", [("user", f"Keep these for me:\n{NOTE}"),
                                                          ("assistant", "Noted, the heron budget too.")])
    mem.sync()
    assert mem.tools.memory_search("heron budget", corpus="sessions")["results"][0]["source"] == "sessions"
    texts = " ".join(r[0] for r in mem.backend.store.conn.execute("SELECT text FROM chunks"))
    assert "my bank PIN is [REDACTED]" in texts and "银行卡密码是 [REDACTED]" in texts
    assert_no_secret(mem, workspace)


def test_a_corpus_that_is_not_indexed_or_not_known_is_named(workspace, make_memory):
    write(workspace / "MEMORY.md", "- the user likes green tea")
    mem = make_memory(workspace)  # transcripts not indexed
    out = mem.tools.memory_search("green tea", corpus="sessions")
    assert out["results"] == [] and "not indexed" in out["error"] and "sessions_search" in out["action"]
    assert mem.tools.memory_search("green tea", corpus="all")["results"][0]["source"] == "memory"
    bad = mem.tools.memory_search("green tea", corpus="wiki")
    assert bad["results"] == [] and "corpus must be one of memory, sessions, all; got 'wiki'" in bad["error"]


def test_all_corpora_answer_ten_results_unless_asked(workspace, sessions_memory):
    for day in range(1, 15):
        write(workspace / "memory" / f"2026-01-{day:02d}.md", f"- heron sighting number {day} at the lake")
    mem = sessions_memory()
    mem.sync()
    assert len(mem.tools.memory_search("heron sighting lake", min_score=0)["results"]) == 6
    assert len(mem.tools.memory_search("heron sighting lake", min_score=0, corpus="all")["results"]) == 10
    assert len(mem.tools.memory_search("heron sighting lake", min_score=0, corpus="all", max_results=3)["results"]) == 3


def test_transcripts_need_the_experimental_flag(workspace, tmp_path):
    s = load_settings(workspace=workspace, state_dir=tmp_path / "s", config={}, env={},
                      overrides={"sources": ["memory", "sessions"]})
    assert s.index_sources() == ("memory",)
    assert any("sessionMemory" in w for w in s.warnings)


def test_transcript_growth_waits_for_the_delta_thresholds(workspace, sessions_memory):
    mem = sessions_memory(deltaBytes=100_000, deltaMessages=5)
    path = mem.settings.sessions_dir / "live.jsonl"
    _transcript(path, [("user", "first message about kayaks")])
    mem.sync()
    assert not mem.backend.dirty_sources(("sessions",))
    _transcript(path, [("assistant", "a reply about canoes")] * 3)  # 3 lines < 5
    assert not mem.backend.dirty_sources(("sessions",))
    _transcript(path, [("user", "more about rafts")] * 2)  # now 5 lines since the last index
    assert mem.backend.dirty_sources(("sessions",))
    mem.sync()
    assert mem.search("rafts", sync=False, mode="keyword")


def test_a_quiet_transcript_is_indexed_even_below_the_thresholds(workspace, sessions_memory):
    mem = sessions_memory()
    path = mem.settings.sessions_dir / "quiet.jsonl"
    _transcript(path, [("user", "first")])
    mem.sync()
    _transcript(path, [("assistant", "the last words were about lanterns")])
    assert not mem.backend.dirty_sources(("sessions",))
    old = time.time() - 3600
    os.utime(path, (old, old))
    assert mem.backend.dirty_sources(("sessions",))


def test_a_search_indexes_transcripts_in_the_background(workspace, sessions_memory):
    write(workspace / "MEMORY.md", "- nothing yet")
    mem = sessions_memory()
    mem.sync()
    _transcript(mem.settings.sessions_dir / "new.jsonl", [("user", "the pelican migration starts in May")])
    mem.search("pelican")  # sees the transcript is new, hands it to the background writer
    assert mem.freshness.background.wait_idle(10)
    assert mem.search("pelican migration", sync=False)[0].source == "sessions"


def test_forget_takes_the_lines_out_of_transcripts_too(workspace, sessions_memory):
    write(workspace / "MEMORY.md", "- the user likes green tea\n- the boat is called sea-otter-5\n")
    mem = sessions_memory()
    path = mem.settings.sessions_dir / "abc.jsonl"
    _transcript(path, [("user", "hello")] * 3 + [("user", "my boat is sea-otter-5, moored at pier 9"),
                                                 ("assistant", "Noted the boat.")])
    mem.sync()
    assert any(r["source"] == "sessions" for r in mem.tools.memory_search("sea-otter-5 boat", min_score=0, corpus="all")["results"])
    plan = mem.notes.forget_plan("sea-otter-5")
    assert [(r.path, r.source, r.start) for r in plan.removals] == [("MEMORY.md", "memory", 2),
                                                                   ("sessions/abc.jsonl", "sessions", 4)]
    done = mem.notes.forget(plan)
    assert done["verified"], done
    assert "sea-otter" not in path.read_text()
    assert path.read_text().splitlines()[3] == "" and len(path.read_text().splitlines()) == 5  # blanked: lines keep numbers
    assert not any("otter" in r["snippet"] for r in mem.tools.memory_search("sea-otter-5 boat", min_score=0, corpus="all")["results"])
    texts = " ".join(r[0] for r in mem.backend.store.conn.execute("SELECT text FROM chunks"))
    assert "otter" not in texts and "Noted the boat" in texts


def test_a_transcript_line_nested_past_the_parsers_depth_is_skipped(workspace, sessions_memory):
    write(workspace / "MEMORY.md", "- a note")
    mem = sessions_memory()
    path = mem.settings.sessions_dir / "deep.jsonl"
    _transcript(path, [("user", "the heron nests by the weir")])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("[" * 100_000 + "]" * 100_000 + "\n")
    report = mem.sync()
    assert not report.failed
    assert mem.tools.memory_search("heron weir", corpus="sessions")["results"][0]["path"] == "sessions/deep.jsonl"
