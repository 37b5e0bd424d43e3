"""The agent tools' handlers and their dispatch, against a fake ``ToolServices``: no Memory, no
index, no model. What each handler asks of memory and what it answers on the wire."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from mnemoclaw.config import load_settings
from mnemoclaw.errors import PathDeniedError
from mnemoclaw.tools import APPEND, FORGET, SEARCH, STATUS
from mnemoclaw.tools.dispatch import HANDLERS, Tools, call
from mnemoclaw.tools.services import AGENT, PERSON, Caller, ToolServices, Transcript
from mnemoclaw.tools.wire import Situation
from mnemoclaw.types import Hit


class FakeNotes:
    def __init__(self) -> None:
        self.appended: list[tuple[str, str | None, dict[str, Any]]] = []
        self.forgotten: list[str] = []

    def append(self, text: str, target: str | None = None, **annotations: Any) -> dict[str, Any]:
        self.appended.append((text, target, annotations))
        return {"path": "memory/2026-12-06.md", "startLine": 3, "endLine": 3}

    def forget_plan(self, target: str) -> Any:
        class Plan:
            def as_dict(self) -> dict[str, Any]:
                return {"target": target, "lines": 1, "id": "abc123"}

            def digest(self) -> str:
                return "abc123"

        plan = Plan()
        plan.target = target  # type: ignore[attr-defined]
        return plan

    def forget(self, plan: Any) -> dict[str, Any]:
        self.forgotten.append(plan.target)
        return {"removed": {}, "verified": True}


class FakeServices:
    """``ToolServices`` with canned answers, recording what the handlers asked."""

    def __init__(self, settings: Any, hits: Sequence[Hit] = (), *, refusal: str | None = None,
                 transcripts: Sequence[Transcript] = (), read_error: Exception | None = None):
        self._settings = settings
        self._notes = FakeNotes()
        self.hits = list(hits)
        self.refusal = refusal
        self._transcripts = list(transcripts)
        self.read_error = read_error
        self.searched: list[tuple[str, dict[str, Any]]] = []
        self.recalls: list[tuple[str, list[Any], str, Any]] = []

    @property
    def settings(self) -> Any:
        return self._settings

    @property
    def notes(self) -> Any:
        return self._notes

    def search(self, query: str, **options: Any) -> list[Hit]:
        self.searched.append((query, options))
        return list(self.hits)

    def read(self, path: str, from_line: int | None = None, lines: int | None = None) -> tuple[str, str | None]:
        if self.read_error is not None:
            raise self.read_error
        text = "line one\nline two\nline three"
        chosen = text.split("\n")[(from_line or 1) - 1:]
        return path, "\n".join(chosen[:lines] if lines is not None else chosen)

    def status(self, *, check_dirty: bool = True) -> dict[str, Any]:
        return {"chunks": 3, "checkedDirty": check_dirty}

    def transcripts(self) -> Iterator[Transcript]:
        yield from self._transcripts

    def situation(self, hits: Sequence[Hit] = ()) -> Situation:
        return Situation(provider="test", model="m1", mode="hybrid", refusal=self.refusal,
                         indexing={"kind": "sync", "filesDone": 1, "filesTotal": 4, "by": "this process"})

    def corpus_size(self) -> int:
        return 10

    def recalled(self, query: str, found: Sequence[Any], *, via: str, caller: Any) -> None:
        self.recalls.append((query, list(found), via, caller))


@pytest.fixture
def settings(tmp_path: Path) -> Any:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    return load_settings(workspace=ws, state_dir=tmp_path / "state", config={}, env={})


def hit(path: str = "MEMORY.md", text: str = "- The staging database runs on orca-7.", score: float = 0.93) -> Hit:
    return Hit(path, 3, 3, score, text, "memory")


def test_the_fake_is_a_tool_services(settings):
    services: ToolServices = FakeServices(settings)  # what mypy would check: the protocol's members
    assert {"settings", "notes", "search", "read", "status", "transcripts", "situation", "corpus_size"} <= set(
        dir(services))


def test_memory_search_answers_the_hits_on_the_wire_with_what_the_situation_says(settings):
    services = FakeServices(settings, [hit()])
    out = Tools(services).memory_search("which host runs staging?", max_results=3)
    assert services.searched == [("which host runs staging?", {
        "max_results": 3, "min_score": None, "mode": None, "kind": None, "history": False, "corpus": "memory",
        "project": None, "origin": None})]
    (result,) = out["results"]
    assert result["path"] == "MEMORY.md" and result["citation"] == "MEMORY.md#L3-L3" and result["origin"] == "owner"
    assert out["provider"] == "test" and out["model"] == "m1" and out["mode"] == "hybrid"
    # the situation words the answer for its reader: an agent is told to search again, a person what to run
    assert "search again shortly" in out["warning"]
    person = Tools(services).for_person().memory_search("which host runs staging?")
    assert "run `mnemoclaw index`" in person["warning"]


def test_memory_search_refuses_before_searching(settings):
    services = FakeServices(settings, [hit()], refusal="memory.qmd.scope denies direct chats")
    out = Tools(services).memory_search("anything")
    assert out["results"] == [] and "off in this chat" in out["note"] and services.searched == []
    assert Tools(services).memory_search("   ")["error"] == "the query is empty"
    long = Tools(services).memory_search("x" * 5000)
    assert "5000 characters long" in long["error"] and services.searched == []
    assert "not indexed" in Tools(FakeServices(settings)).memory_search("x", corpus="sessions")["error"]


def test_memory_get_reads_and_hides_where_the_workspace_is_from_an_agent(settings):
    assert Tools(FakeServices(settings)).memory_get("MEMORY.md", 2, 1) == {"path": "MEMORY.md", "text": "line two"}
    where = Path(settings.workspace) / "secret" / "x.md"
    services = FakeServices(settings, read_error=PathDeniedError(f"{where} is not a memory file"))
    agent = Tools(services).memory_get("secret/x.md")
    assert agent["text"] == "" and str(settings.workspace) not in agent["error"] and "secret/x.md" in agent["error"]
    person = Tools(services).for_person().memory_get("secret/x.md")
    assert str(where) in person["error"]


def test_memory_append_writes_as_the_agent_in_its_callers_session(settings):
    services = FakeServices(settings)
    caller = Caller(AGENT, session="s-1", channel="telegram", chat="group")
    out = Tools(services).said_by(caller).memory_append("- the plumber comes Friday", importance=8)
    assert out == {"ok": True, "path": "memory/2026-12-06.md", "startLine": 3, "endLine": 3}
    ((text, target, written),) = services.notes.appended
    assert text == "- the plumber comes Friday" and target is None
    assert written == {"importance": 8, "kind": None, "expires": None, "key": None, "origin": "agent",
                       "session": "s-1", "channel": "telegram", "chat": "group"}
    refused = Tools(services).memory_append("x", importance=42)
    assert refused["ok"] is False and "importance" in refused["error"] and len(services.notes.appended) == 1


def test_sessions_search_reads_the_transcripts_the_services_give(settings):
    line = '{"type": "message", "timestamp": 1764950400000, "message": {"role": "user", "content": "the boiler code"}}'
    services = FakeServices(settings, transcripts=[Transcript("s1", "main", line), Transcript("ops/s2", "ops", line)])
    out = Tools(services).sessions_search("boiler")
    assert sorted((r["session"], r["agent"]) for r in out["results"]) == [("ops/s2", "ops"), ("s1", "main")]
    assert out["sessionsSearched"] == 2 and all(r["timestamp"] for r in out["results"])
    assert "since must be a date" in Tools(services).sessions_search("boiler", since="yesterday")["error"]


def test_memory_forget_previews_then_removes_with_the_id(settings):
    services = FakeServices(settings)
    tools = Tools(services)
    preview = tools.memory_forget("wifi passphrase")
    assert preview["applied"] is False and preview["id"] == "abc123" and services.notes.forgotten == []
    assert "does not match" in tools.memory_forget("wifi passphrase", confirm="other")["error"]
    done = tools.memory_forget("wifi passphrase", confirm="abc123")
    assert done["applied"] is True and services.notes.forgotten == ["wifi passphrase"]
    assert "one of target" in tools.memory_forget()["error"]


def test_one_dispatch_table_for_every_tool(settings):
    assert set(HANDLERS) == {"memory_search", "memory_get", "memory_append", "memory_status", "sessions_search",
                             "memory_forget"}
    services = FakeServices(settings, [hit()])
    caller = Caller(PERSON)
    assert call(services, caller, STATUS.name, {}, read_only=True) == {"chunks": 3, "checkedDirty": True,
                                                                       "readOnly": True}
    assert "unknown tool" in call(services, caller, APPEND.name, {"text": "x"}, read_only=True)["error"]
    assert "unknown tool" in call(services, caller, FORGET.name, {"target": "x"})["error"]  # offered only by spec
    assert call(services, caller, FORGET.name, {"target": "x"}, spec=FORGET)["id"] == "abc123"
    wrong = call(services, caller, SEARCH.name, {"query": "x", "path": "MEMORY.md"})
    assert wrong["disabled"] is True and "does not take path" in wrong["error"]
    assert call(services, caller, SEARCH.name, ["not", "an", "object"])["error"] == \
        "memory_search takes an object of arguments"


def test_recall_asks_the_services_alone(settings):
    services = FakeServices(settings, [hit(score=0.99)])
    got = Tools(services).recall("which host runs the staging database?")
    assert services.searched and services.searched[0][1]["corpus"] == "memory"
    assert got.min_score == settings.memory["recall"]["minScore"]
