"""The recall-event store: what it keeps of a recall, bounded without losing the most recalled,
shared by processes, set aside when damaged, reached by forget."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from mnemoclaw.promote import events as ev
from mnemoclaw.promote.events import Recalled, RecallEvents


def one(i: int, score: float = 0.9, keys: tuple[str, ...] = ()) -> Recalled:
    return Recalled(f"id{i:05d}", f"memory/2026-11-{1 + i % 28:02d}.md", "memory", 3, 4, score, keys)


def test_a_recall_is_counted_with_its_questions_days_and_sessions(tmp_path):
    clock = [1_700_000_000.0]
    store = RecallEvents(tmp_path, clock=lambda: clock[0])
    store.record("main", "Which database does billing use?", [one(1)], via="tool", session="s1")
    store.record("main", "which DATABASE does billing use?", [one(1, 0.7)], via="recall", session="s1")
    clock[0] += 2 * 86400
    store.record("main", "why did we leave sqlite", [one(1, 0.5)], via="cli", session="s2")
    store.record("other-agent", "why did we leave sqlite", [one(2)], via="cli")
    [e] = store.entries("main")
    assert e.recalls == 3 and e.mean_score == pytest.approx(0.7) and e.score_max == 0.9
    assert len(e.queries) == 2  # the same question in other case is one question
    assert len(e.days) == 2 and e.sessions == ["s1", "s2"]
    assert e.words["database"] == 2 and e.words["sqlite"] == 1
    assert store.counts() == {"entries": 2, "events": 4}
    with pytest.raises(ValueError, match="via must be one of"):
        store.record("main", "q", [one(1)], via="ui")
    assert (tmp_path / ev.FILE).stat().st_mode & 0o777 == 0o600


def test_a_question_s_secret_is_never_kept(tmp_path):
    store = RecallEvents(tmp_path)
    store.record("main", "does the key sk-abcdef1234567890abcdef1234567890 still work for billing", [one(1)],
                 via="tool")
    store.close()
    raw = (tmp_path / ev.FILE).read_bytes()
    assert b"sk-abcdef1234567890" not in raw
    [e] = RecallEvents(tmp_path).entries("main")
    assert "billing" in e.words and not any("abcdef" in w for w in e.words)


def test_the_store_is_bounded_and_never_evicts_the_most_recalled(tmp_path, monkeypatch):
    monkeypatch.setattr(ev, "MAX_ENTRIES", 50)
    monkeypatch.setattr(ev, "MAX_EVENTS", 120)
    monkeypatch.setattr(ev, "BOUND_EVERY", 1)
    clock = [1_700_000_000.0]
    store = RecallEvents(tmp_path, clock=lambda: clock[0])
    for q in range(6):  # recalled six times, long ago
        store.record("main", f"question {q}", [one(0)], via="tool")
    for i in range(1, 400):  # then a flood of entries recalled once each
        clock[0] += 60
        store.record("main", f"flood {i}", [one(i)], via="tool")
    kept = {e.id: e for e in store.entries("main")}
    assert len(kept) == 50
    assert kept["id00000"].recalls == 6  # the most recalled, and the oldest, stays
    assert "id00399" in kept and "id00001" not in kept  # of the once-recalled, the newest stay
    assert store.counts()["events"] <= 120


def test_a_damaged_store_is_set_aside_with_one_line_and_recording_goes_on(tmp_path, caplog):
    (tmp_path / ev.FILE).write_bytes(b"this is not a database" * 100)
    store = RecallEvents(tmp_path)
    with caplog.at_level("WARNING"):
        store.record("main", "which database", [one(1)], via="tool")
    said = [r.getMessage() for r in caplog.records if "recall-event store" in r.getMessage()]
    assert len(said) == 1 and "set aside as" in said[0]
    assert store.set_aside and open(store.set_aside, "rb").read().startswith(b"this is not a database")
    assert store.counts() == {"entries": 1, "events": 1}


def test_forget_takes_the_entries_holding_a_forgotten_line_and_a_forgotten_session(tmp_path):
    store = RecallEvents(tmp_path)
    store.record("main", "billing db", [one(1, keys=("k-billing",)), one(2, keys=("k-staging",))], via="tool")
    store.record("main", "what did we say", [Recalled("t1", "sessions/s9.jsonl", "sessions", 1, 1, 0.8, ())],
                 via="tool")
    assert store.forget(["k-billing", "k-unknown"], lambda path: path == "sessions/s9.jsonl") == 2
    assert [e.id for e in store.entries("main")] == ["id00002"]
    with sqlite3.connect(tmp_path / ev.FILE) as db:
        assert db.execute("SELECT count(*) FROM events WHERE entry IN ('id00001', 't1')").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM line_keys WHERE entry = 'id00001'").fetchone()[0] == 0
    assert store.clear("main") == 1 and store.entries("main") == []


def test_processes_recording_at_once_lose_no_recall(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        from mnemoclaw.promote.events import RecallEvents, Recalled
        store = RecallEvents({str(tmp_path)!r})
        for i in range(60):
            store.record("main", f"q{{sys.argv[1]}} {{i}}", [Recalled("shared", "memory/2026-11-03.md", "memory",
                         1, 1, 0.5)], via="tool")
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(n)]) for n in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    [e] = RecallEvents(tmp_path).entries("main")
    assert e.recalls == 180
    assert len(e.queries) == ev.MAX_QUERIES  # distinct questions are kept up to a bound, the count in full
    assert json.loads(json.dumps(e.words))  # plain data
