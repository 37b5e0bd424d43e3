"""OpenClaw 2026.9's layout: transcripts in the agent's SQLite database (WAL mode, its gateway
writing), read through a copy; OpenClaw's folder byte-identical afterwards."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from mnemoclaw.cli import cli
from mnemoclaw.sessions.openclaw import parse_version

from conftest import _env, _tree, write

CONFIG = """\
// openclaw.json as OpenClaw 2026.9 leaves it
{
  meta: { lastTouchedVersion: "2026.9.1", lastTouchedAt: "2026-09-20T08:00:00.000Z" },
  memory: {
    search: {
      provider: "none",
      sources: ["memory", "sessions"],
      experimental: { sessionMemory: true },
    },
  },
  tools: { sessions: { visibility: "__VIS__" } },
}
"""

SCHEMA = """
CREATE TABLE sessions (session_id TEXT PRIMARY KEY, session_key TEXT NOT NULL, updated_at INTEGER,
                       entry_json TEXT);
CREATE TABLE session_entries (session_id TEXT, entry_id TEXT, parent_id TEXT);
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
                                created_at INTEGER, PRIMARY KEY (session_id, seq));
"""


def _event(role: str, text: str, ts: str) -> str:
    return json.dumps({"type": "message", "id": ts, "timestamp": ts,
                       "message": {"role": role, "content": [{"type": "text", "text": text}]}}, ensure_ascii=False)


class Gateway:
    """OpenClaw's gateway holding the agent database open in WAL mode, as it runs."""

    def __init__(self, db: Path):
        db.parent.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(db, isolation_level=None)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("PRAGMA wal_autocheckpoint=0")  # what it writes stays in the -wal file
        self.con.executescript(SCHEMA)
        self.seq: dict[str, int] = {}

    def session(self, sid: str, key: str, turns: list[tuple[str, str]], day: str = "2026-09-18") -> None:
        self.con.execute("INSERT INTO sessions VALUES (?, ?, ?, ?)",
                         (sid, key, 1758182400000, json.dumps({"chatType": "direct", "channel": "telegram"})))
        self.event(sid, json.dumps({"type": "session", "id": sid, "timestamp": f"{day}T09:00:00Z"}))
        for i, (role, text) in enumerate(turns):
            self.event(sid, _event(role, text, f"{day}T09:{i + 1:02d}:00Z"))

    def event(self, sid: str, line: str) -> None:
        self.seq[sid] = self.seq.get(sid, 0) + 1
        self.con.execute("INSERT INTO transcript_events VALUES (?, ?, ?, ?)", (sid, self.seq[sid], line, 0))


@pytest.fixture
def openclaw_2026_9(tmp_path: Path):
    home = tmp_path / "home"
    oc = home / ".openclaw"
    ws = oc / "workspace"
    write(ws / "MEMORY.md", "- 用户喜欢喝乌龙茶\n- the deploy key lives in the vault\n")
    write(oc / "openclaw.json", CONFIG.replace("__VIS__", "self"))
    write(oc / "state" / "openclaw.sqlite", "")  # the shared gateway state: never opened
    # what the 2026.8 migration left of the files it imported
    write(oc / "agents" / "main" / "sessions" / "0a1b.jsonl.deleted.1758000000", _event("user", "old kestrel", "x"))
    main = Gateway(oc / "agents" / "main" / AGENT_DB_PATH)
    main.session("5c9e", "agent:main:main", [("user", "remember the walrus protocol for the Thursday launch"),
                                             ("assistant", "Noted: walrus protocol, Thursday."),
                                             ("user", "明天去图书馆还书"), ("assistant", "好的，记下了。")])
    work = Gateway(oc / "agents" / "work" / AGENT_DB_PATH)
    work.session("77aa", "agent:work:main", [("user", "the heron budget is due in October")])
    yield home, oc, main
    main.con.close()
    work.con.close()


AGENT_DB_PATH = Path("agent") / "openclaw-agent.sqlite"


def _run(home: Path, oc: Path, *args: str):
    result = CliRunner().invoke(cli, ["--openclaw", str(oc), *args], env=_env(home), catch_exceptions=False)
    return result


def test_transcripts_in_openclaws_database_are_found_and_its_folder_is_left_byte_identical(openclaw_2026_9):
    home, oc, gateway = openclaw_2026_9
    wal = oc / "agents" / "main" / AGENT_DB_PATH.parent / "openclaw-agent.sqlite-wal"
    assert wal.stat().st_size > 0  # the sessions are in the WAL, not yet in the database file
    before = _tree(oc)
    status = json.loads(_run(home, oc, "status", "--json").output)
    assert status["openclaw"]["layout"] == "sqlite" and status["openclaw"]["version"] == "2026.9.1"
    assert status["openclaw"]["database"].endswith("agents/main/agent/openclaw-agent.sqlite")
    assert _run(home, oc, "index").exit_code == 0
    found = json.loads(_run(home, oc, "search", "walrus protocol Thursday", "--corpus", "sessions", "--json").output)
    assert found["results"] and found["results"][0]["path"] == "sessions/5c9e.jsonl", found
    memory_only = json.loads(_run(home, oc, "search", "walrus protocol", "--json").output)["results"]
    assert all(r["source"] == "memory" for r in memory_only)
    exact = json.loads(_run(home, oc, "sessions", "search", "图书馆", "--json").output)
    assert [h["session"] for h in exact["results"]] == ["5c9e"] and "图书馆" in exact["results"][0]["excerpt"]
    assert exact["results"][0]["role"] == "user"
    one_char = json.loads(_run(home, oc, "sessions", "search", "书", "--json").output)
    assert one_char["results"] and one_char["results"][0]["session"] == "5c9e"
    listed = json.loads(_run(home, oc, "sessions", "--json").output)
    assert [(s["sessionId"], s["channel"]) for s in listed] == [("5c9e", "telegram")]
    # the migration's leftovers and other agents' sessions are not this agent's transcripts
    assert json.loads(_run(home, oc, "sessions", "search", "kestrel", "--json").output)["results"] == []
    assert json.loads(_run(home, oc, "sessions", "search", "heron", "--json").output)["results"] == []
    assert _tree(oc) == before


def test_what_the_gateway_writes_next_is_read_at_the_next_sync(openclaw_2026_9):
    home, oc, gateway = openclaw_2026_9
    assert json.loads(_run(home, oc, "sessions", "search", "pelican", "--json").output)["results"] == []
    gateway.event("5c9e", _event("user", "the pelican count is 41", "2026-09-19T10:00:00Z"))
    before = _tree(oc)
    hits = json.loads(_run(home, oc, "sessions", "search", "pelican", "--json").output)["results"]
    assert [h["excerpt"] for h in hits] == ["the pelican count is 41"]
    assert _run(home, oc, "index").exit_code == 0
    found = json.loads(_run(home, oc, "search", "pelican count", "--corpus", "all", "--json").output)
    assert found["results"][0]["path"] == "sessions/5c9e.jsonl"
    assert _tree(oc) == before


def test_visibility_all_reads_every_agents_database(openclaw_2026_9):
    home, oc, _ = openclaw_2026_9
    write(oc / "openclaw.json", CONFIG.replace("__VIS__", "all"))
    hits = json.loads(_run(home, oc, "sessions", "search", "heron budget", "--json").output)["results"]
    assert [(h["agent"], h["session"]) for h in hits] == [("work", "work/77aa")]


def _installation(tmp_path: Path, version: str, schema: str, memory: str) -> tuple[Path, Path, Path]:
    """An OpenClaw folder of ``version`` whose agent database holds ``schema`` and nothing else."""
    home = tmp_path / "home"
    oc = home / ".openclaw"
    write(oc / "workspace" / "MEMORY.md", memory)
    write(oc / "openclaw.json", CONFIG.replace("__VIS__", "self").replace("2026.9.1", version))
    db = oc / "agents" / "main" / AGENT_DB_PATH
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    con.executescript(schema)
    con.close()
    return home, oc, db


def test_a_database_of_a_layout_not_known_is_named_once_and_memory_still_answers(tmp_path, caplog):
    home, oc, db = _installation(tmp_path, "2027.3.0", "CREATE TABLE sessions (id TEXT); "
                                 "CREATE TABLE transcript_events (sid TEXT, blob BLOB);",
                                 "- the deploy key lives in the vault\n")
    before = _tree(oc)
    result = CliRunner().invoke(cli, ["--openclaw", str(oc), "search", "deploy key"], env=_env(home))
    assert result.exit_code == 0, result.output
    assert "vault" in result.stdout
    lines = [r.getMessage() for r in caplog.records if "transcript_events" in r.getMessage()]
    assert len(lines) == 1, lines
    assert "2027.3.0" in lines[0] and "upgrade mnemoclaw" in lines[0] and str(db) in lines[0]
    status = json.loads(CliRunner().invoke(cli, ["--openclaw", str(oc), "status", "--json"], env=_env(home)).stdout)
    assert status["openclaw"]["layout"] == "none" and "not the session_id and event_json" in status["openclaw"]["problem"]
    assert _tree(oc) == before


def test_before_2026_7_2_the_agent_database_holds_no_sessions_and_the_files_are_read(tmp_path):
    home, oc, _ = _installation(tmp_path, "2026.7.1", "CREATE TABLE auth_state (k TEXT, v TEXT);", "- tea\n")
    write(oc / "agents" / "main" / "sessions" / "3f2a.jsonl", _event("user", "the osprey nests by the dam", "t") + "\n")
    hits = json.loads(CliRunner().invoke(cli, ["--openclaw", str(oc), "sessions", "search", "osprey", "--json"],
                                         env=_env(home)).stdout)["results"]
    assert [h["session"] for h in hits] == ["3f2a"]
    status = json.loads(CliRunner().invoke(cli, ["--openclaw", str(oc), "status", "--json"], env=_env(home)).stdout)
    assert status["openclaw"]["layout"] == "files"


def test_versions_are_read_as_openclaw_writes_them():
    assert parse_version("2026.9.1") == (2026, 9, 1)
    assert parse_version("2026.8.1-beta.3") == (2026, 8, 1)
    assert parse_version("v2026.7") == (2026, 7)
    assert parse_version("latest") is None and parse_version(None) is None


def test_compressed_events_are_named_when_they_cannot_be_read(tmp_path):
    from mnemoclaw.sessions.openclaw import mirror

    db = tmp_path / "oc" / "openclaw-agent.sqlite"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.executescript(SCHEMA.replace("event_json TEXT,", "event_json TEXT, event_zstd BLOB,"))
    con.execute("INSERT INTO transcript_events VALUES ('s1', 1, ?, NULL, 0)", (_event("user", "plain ibis", "t"),))
    con.execute("INSERT INTO transcript_events VALUES ('s1', 2, NULL, ?, 0)", (b"\x28\xb5\x2f\xfd-not-real",))
    con.commit()
    con.close()
    try:
        import zstandard  # noqa: F401
    except ImportError:
        count, problem, notes = mirror(db, tmp_path / "copy" / "sessions")
        assert (count, problem) == (1, None)
        assert notes == ["1 transcript event is zstd-compressed and left out; `pip install zstandard` reads them"]
        assert "plain ibis" in (tmp_path / "copy" / "sessions" / "s1.jsonl").read_text("utf-8")
    else:
        pytest.skip("zstandard is installed here: the compressed row is read")
