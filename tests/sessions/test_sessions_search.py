"""sessions_search: word for word over the transcripts, in English and Chinese (one and two
characters, either script), user and assistant text only, secrets redacted, filtered by role
and day, and only the transcripts tools.sessions.visibility allows."""

import json
from datetime import UTC, datetime

import pytest
from test_cli import run

from mnemoclaw.config import load_settings

SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"


def ms(day: str, hour: int = 12) -> int:
    return int(datetime.fromisoformat(f"{day}T{hour:02d}:00:00").replace(tzinfo=UTC).timestamp() * 1000)


def entry(role: str, text, day: str, hour: int = 12) -> str:
    content = text if isinstance(text, str) else [{"type": "text", "text": t} for t in text]
    return json.dumps({"type": "message", "timestamp": ms(day, hour), "message": {"role": role, "content": content}},
                      ensure_ascii=False)


def transcript(*lines: str) -> str:
    return "\n".join([json.dumps({"type": "session", "id": "x"}), *lines]) + "\n"


@pytest.fixture
def agents(tmp_path):
    state = tmp_path / "state"
    main = state / "agents" / "main" / "sessions"
    other = state / "agents" / "coder" / "sessions"
    main.mkdir(parents=True)
    other.mkdir(parents=True)
    (main / "s-2026-11-01.jsonl").write_text(transcript(
        entry("user", "我们周五要做数据库迁移，记得备份", "2026-11-01", 9),
        entry("assistant", ["好的，我会在周四晚上提醒你备份。"], "2026-11-01", 9),
        json.dumps({"type": "message", "message": {"role": "toolResult", "content": "数据库 tool output"}}),
        entry("user", f"the staging key is {SECRET} keep it safe", "2026-11-01", 10),
    ), "utf-8")
    (main / "s-2026-11-20.jsonl").write_text(transcript(
        entry("user", "圖書館的資料庫什麼時候開放？", "2026-11-20", 15),
        entry("assistant", "The library database opens on Monday at 9.", "2026-11-20", 15),
        entry("user", "Book the dentist for Tuesday", "2026-11-20", 16),
    ), "utf-8")
    (main / "broken.jsonl").write_text("this is not json\nnor this\n", "utf-8")
    (other / "c1.jsonl").write_text(transcript(entry("user", "coder agent: 数据库 schema review", "2026-11-05")),
                                    "utf-8")
    return tmp_path, state


def memory(tmp_path, state, make_memory, visibility=None):
    config = {"tools": {"sessions": {"visibility": visibility}}} if visibility else {}
    return make_memory(tmp_path / "ws", config=config)


@pytest.fixture
def make_memory(agents):
    from mnemoclaw.api import Memory

    opened = []

    def factory(ws, config=None):
        tmp_path, state = agents
        ws.mkdir(exist_ok=True)
        mem = Memory(load_settings(workspace=ws, state_dir=state, config=config or {}, env={}), provider=None)
        opened.append(mem)
        return mem

    yield factory
    for mem in opened:
        mem.close()


def found(result):
    return [(r["session"], r["line"], r["role"]) for r in result["results"]]


def test_one_and_two_character_chinese_words_are_found_in_either_script(agents, make_memory):
    tmp_path, state = agents
    mem = memory(tmp_path, state, make_memory)
    two = mem.tools.sessions_search("数据库")
    assert found(two) == [("s-2026-11-20", 2, "user"), ("s-2026-11-01", 2, "user")]  # newest first
    assert two["results"][0]["excerpt"] == "圖書館的資料庫什麼時候開放？"  # shown as written
    one = mem.tools.sessions_search("备")  # one character
    assert found(one) == [("s-2026-11-01", 3, "assistant"), ("s-2026-11-01", 2, "user")]
    assert found(mem.tools.sessions_search("圖書館")) == found(mem.tools.sessions_search("图书馆")) == [("s-2026-11-20", 2, "user")]
    assert found(mem.tools.sessions_search('"library database" Monday')) == [("s-2026-11-20", 3, "assistant")]
    assert found(mem.tools.sessions_search('"database library"')) == []  # a phrase is matched as written


def test_only_what_was_said_and_never_a_secret(agents, make_memory):
    tmp_path, state = agents
    mem = memory(tmp_path, state, make_memory)
    assert found(mem.tools.sessions_search("tool output")) == []  # tool results are not searched
    assert found(mem.tools.sessions_search(SECRET)) == []  # redacted before matching
    hit = mem.tools.sessions_search("staging key")["results"]
    assert len(hit) == 1 and SECRET not in hit[0]["excerpt"] and "keep it safe" in hit[0]["excerpt"]


def test_role_and_day_filters(agents, make_memory):
    tmp_path, state = agents
    mem = memory(tmp_path, state, make_memory)
    assert found(mem.tools.sessions_search("备份", role="assistant")) == [("s-2026-11-01", 3, "assistant")]
    assert found(mem.tools.sessions_search("数据库", since="2026-11-10")) == [("s-2026-11-20", 2, "user")]
    assert found(mem.tools.sessions_search("数据库", until="2026-11-10")) == [("s-2026-11-01", 2, "user")]
    bad = mem.tools.sessions_search("数据库", since="2026-02-30")
    assert bad["results"] == [] and "since must be a real date" in bad["error"]
    assert "role must be one of user, assistant" in mem.tools.sessions_search("x", role="tool")["error"]


def test_only_this_agents_transcripts_unless_visibility_is_all(agents, make_memory):
    tmp_path, state = agents
    own = memory(tmp_path, state, make_memory).tools.sessions_search("schema review")
    assert own["results"] == [] and own["sessionsSearched"] == 3
    for visibility in ("self", "tree", "agent"):
        assert memory(tmp_path, state, make_memory, visibility).tools.sessions_search("schema review")["results"] == []
    everyone = memory(tmp_path, state, make_memory, "all").tools.sessions_search("schema review")
    assert [(r["agent"], r["session"]) for r in everyone["results"]] == [("coder", "coder/c1")]


def test_a_transcript_that_is_not_jsonl_is_named_and_skipped(agents, make_memory):
    tmp_path, state = agents
    result = memory(tmp_path, state, make_memory).tools.sessions_search("json")
    assert result["results"] == []
    assert result["unreadable"] == [{"session": "broken", "why": "not JSONL: line 1 is not a JSON object"}]


def test_the_tool_call_and_the_command(agents, make_memory):
    tmp_path, state = agents
    mem = memory(tmp_path, state, make_memory)
    assert found(mem.tools.call("sessions_search", {"query": "备", "role": "user", "maxResults": 1})) == [
        ("s-2026-11-01", 2, "user")]
    assert "does not take corpus" in mem.tools.call("sessions_search", {"query": "x", "corpus": "all"})["error"]
    flags = ["--workspace", str(tmp_path / "ws"), "--state-dir", str(state)]
    r = run(*flags, "sessions", "search", "資料庫")
    assert r.exit_code == 0 and "s-2026-11-20:2" in r.output and "user: 圖書館的資料庫什麼時候開放？" in r.output, r.output
    assert "skipped session broken: not JSONL" in r.output
    r = run(*flags, "sessions", "search", "数据库", "--since", "tomorrow")
    assert r.exit_code == 1 and "since must be a date YYYY-MM-DD, got 'tomorrow'" in r.output
    assert json.loads(run(*flags, "sessions", "search", "dentist", "--json").output)["results"][0]["line"] == 4
