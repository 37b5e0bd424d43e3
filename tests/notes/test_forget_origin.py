"""Forget by origin: a session, an import source or a participant leaves the Markdown, the
transcripts and every byte of the index, and a tombstone keeps it out of every later index,
rebuild and re-import."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from test_forget import index_bytes

from mnemoclaw.cli import cli
from mnemoclaw.notes import tombstones
from mnemoclaw.notes.tombstones import TombstoneError
from mnemoclaw.tools.services import Caller

from conftest import _env, _tree, write

SESSIONS = {"sources": ["memory", "sessions"], "experimental": {"sessionMemory": True}}


def said(role: str, text: str, at: str = "2026-12-01T10:00:00Z", **extra) -> str:
    return json.dumps({"type": "message", "at": at, "message": {"role": role, "content": text, **extra}})


def everywhere(mem, words: str, *, files: bool = True) -> list[str]:
    """Where ``words`` can still be found: search (every corpus), memory_get of each file, the index."""
    found = [f"search {r['path']}" for r in mem.tools.memory_search(words, corpus="all", min_score=0)["results"]
             if words.split()[0].lower() in r["snippet"].lower()]
    for f in mem.notes.index.files(["memory"]) if files else ():
        if words.split()[0].lower() in mem.tools.memory_get(f.path)["text"].lower():
            found.append(f"memory_get {f.path}")
    if words.split()[0].encode() in index_bytes(mem).lower():
        found.append("index bytes")
    return found


def test_forget_a_session_removes_its_notes_and_transcript_and_keeps_them_out(workspace, make_memory):
    write(workspace / "MEMORY.md", "# Memory\n\n- the owner's own line about the quokka shelter\n")
    mem = make_memory(workspace, overrides=SESSIONS)
    gone = mem.tools.said_by(Caller(session="s-forget", channel="cli", chat="direct")).memory_append("The quokka shelter door code is zebrafinch-4471.")
    kept = mem.tools.said_by(Caller(session="s-keep")).memory_append("The quokka shelter opens at nine.")
    write(mem.settings.sessions_dir / "s-forget.jsonl",
          said("user", "my cousin Ilse keeps the zebrafinch spare key") + "\n"
          + said("assistant", "Noted: Ilse has the zebrafinch spare key.") + "\n")
    write(mem.settings.sessions_dir / "s-keep.jsonl", said("user", "the quokka shelter opens at nine") + "\n")
    mem.sync()
    assert everywhere(mem, "zebrafinch") and everywhere(mem, "Ilse")

    plan = mem.notes.forget_origin_plan("session", "s-forget")
    assert {r.path for r in plan.lines.removals} == {gone["path"], "sessions/s-forget.jsonl"}
    assert not plan.fenced and not plan.deletions
    done = mem.notes.forget_origin(plan)
    assert done["verified"], done
    assert everywhere(mem, "zebrafinch") == [] and everywhere(mem, "Ilse") == []
    log = (workspace / gone["path"]).read_text("utf-8")
    assert "opens at nine" in log and "session: s-keep" in log and "s-forget" not in log  # only that session's note
    assert kept["path"] == gone["path"]
    assert mem.tools.memory_search("quokka shelter opens", min_score=0)["results"]  # the rest answers as before
    assert mem.tools.memory_search("quokka shelter owner", min_score=0)["results"][0]["path"] == "MEMORY.md"
    raw = (mem.settings.state_dir / tombstones.FILE).read_text("utf-8")
    recorded = json.loads(raw)
    assert [t["kind"] for t in recorded["tombstones"]] == ["session"] and recorded["pending"] == []
    assert "s-forget" not in raw  # a keyed hash names no session

    # the same lines come back (a git revert, a backup restored): a rebuild still leaves them out
    with open(workspace / gone["path"], "a", encoding="utf-8") as fh:
        fh.write("\n## 10:00 <!-- origin: agent; session: s-forget -->\n\nThe zebrafinch code again.\n")
    write(mem.settings.sessions_dir / "s-forget.jsonl", said("user", "Ilse has the zebrafinch spare key") + "\n")
    mem.sync()
    assert everywhere(mem, "zebrafinch", files=False) == [] and everywhere(mem, "Ilse", files=False) == []
    mem.sync(full=True)
    assert everywhere(mem, "zebrafinch", files=False) == [] and everywhere(mem, "Ilse", files=False) == []
    assert mem.tools.memory_search("quokka shelter opens", min_score=0)["results"]


def test_forget_a_source_deletes_its_files_and_a_reimport_adds_nothing_back(workspace, make_memory, tmp_path):
    export = tmp_path / "conversations.json"
    convo = [{"uuid": f"c-{i}", "name": title, "created_at": f"2026-0{i + 1}-01T09:00:00Z", "chat_messages": [
        {"sender": "human", "text": text, "created_at": f"2026-0{i + 1}-01T09:00:00Z"},
        {"sender": "assistant", "text": "Noted.", "created_at": f"2026-0{i + 1}-01T09:01:00Z"}]}
        for i, (title, text) in enumerate([("Heron permits", "the heron permit number is marshwren-2291"),
                                            ("Kiln", "the kiln fires at 1230 degrees on Tuesdays")])]
    export.write_text(json.dumps(convo), "utf-8")
    mem = make_memory(workspace)
    planned, preview = mem.notes.import_preview("claude", export)
    mem.notes.import_files(planned, preview)
    mem.sync()
    assert everywhere(mem, "marshwren")

    later = mem.notes.forget_origin_plan("source", "claude", since="2026-02-01")  # only the newer one
    assert [d.path for d in later.deletions] == [p.rel for p in planned if "kiln" in p.rel]
    plan = mem.notes.forget_origin_plan("source", "claude")
    assert sorted(d.path for d in plan.deletions) == sorted(p.rel for p in planned)
    done = mem.notes.forget_origin(plan)
    assert done["verified"] and not list((workspace / "memory" / "imports" / "claude").glob("*.md")), done
    assert everywhere(mem, "marshwren") == [] and everywhere(mem, "kiln") == []

    planned, preview = mem.notes.import_preview("claude", export)  # the same export again
    assert preview.forgotten == 2 and not preview.added and not preview.updated
    report = mem.notes.import_files(planned, preview)
    assert report.added == [] and report.forgotten == 2
    mem.sync(full=True)
    assert everywhere(mem, "marshwren") == []


def test_forget_a_participant_takes_their_lines_and_names_what_it_cannot(workspace, make_memory):
    mem = make_memory(workspace, overrides=SESSIONS)
    write(mem.settings.sessions_dir / "group-1.jsonl", "\n".join([
        said("user", "Bram here: my bike lock combination is tangerine-0815", sender="Bram"),
        said("user", "Cleo here: the picnic is at the old quarry", sender="Cleo"),
        said("assistant", "Got it, both of you."),
    ]) + "\n")
    mem.tools.memory_append("Bram and Cleo planned the picnic at the old quarry.")
    mem.sync()
    assert not mem.notes.forget_origin_plan("participant", "Bra").untargetable  # a whole name, not a part of one
    plan = mem.notes.forget_origin_plan("participant", "bram")  # names match in any case
    assert [(r.path, r.start, r.end) for r in plan.lines.removals] == [("sessions/group-1.jsonl", 1, 1)]
    assert [u["path"] for u in plan.untargetable] == [mem.notes.index.files(["memory"])[0].path]  # a mixed note
    assert "mixed" in plan.untargetable[0]["why"]
    done = mem.notes.forget_origin(plan)
    assert done["verified"] and everywhere(mem, "tangerine") == []
    assert mem.tools.memory_search("picnic quarry", corpus="sessions", min_score=0)["results"]  # Cleo's line stays
    lines = (mem.settings.sessions_dir / "group-1.jsonl").read_text("utf-8").split("\n")
    assert lines[0] == "" and "Cleo" in lines[1]  # blanked, so every other line keeps its number (its citations)


def test_a_damaged_tombstone_file_is_named_never_rewritten_and_indexing_goes_on(workspace, make_memory):
    write(workspace / "MEMORY.md", "# Memory\n\n- the lighthouse keeper is called Oona\n")
    mem = make_memory(workspace, overrides=SESSIONS)
    broken = mem.settings.state_dir / tombstones.FILE
    write(broken, '[{"kind": "session", "value": ')  # cut off mid-write by something else
    report = mem.sync(full=True)
    assert any(tombstones.FILE in path and "damaged" in why for path, why in report.warnings), report.warnings
    assert mem.tools.memory_search("lighthouse keeper")["results"][0]["path"] == "MEMORY.md"
    with pytest.raises(TombstoneError, match="is damaged .*fix the JSON or move the file aside"):
        mem.notes.forget_origin_plan("session", "anything")
    assert broken.read_text("utf-8") == '[{"kind": "session", "value": '  # left as it was
    for bad in ('{"kind": "session"}', '[{"kind": "planet", "value": "x", "at": "now"}]',
                '[{"kind": "session", "value": "x", "at": "now", "since": "last week"}]'):
        write(broken, bad)
        assert tombstones.load(mem.settings.state_dir).damaged


def test_the_cli_previews_by_origin_and_refuses_what_does_not_fit(workspace, tmp_path):
    env = {"MNEMOCLAW_STATE_DIR": str(tmp_path / "cli-state"), "MNEMOCLAW_PROVIDER": "none",
           "MNEMOCLAW_NEARBY": "off"}
    base = ["--workspace", str(workspace)]
    write(workspace / "memory" / "2026-12-01.md",
          "# 2026-12-01\n\n## 09:00 <!-- origin: agent; session: s-9 -->\n\nThe ferry leaves pier 4 at dawn.\n")
    runner = CliRunner()
    assert runner.invoke(cli, [*base, "index"], env=env).exit_code == 0
    dry = runner.invoke(cli, [*base, "forget", "--session", "s-9", "--dry-run", "--json"], env=env)
    data = json.loads(dry.stdout)
    assert data["applied"] is False and data["plan"]["removals"][0]["path"] == "memory/2026-12-01.md"
    assert "ferry" in (workspace / "memory" / "2026-12-01.md").read_text("utf-8")
    human = runner.invoke(cli, [*base, "forget", "--session", "s-9"], env=env)
    assert "forget session s-9: 4 line(s) in 1 file(s)" in human.stdout and "Nothing removed" in human.stderr
    done = runner.invoke(cli, [*base, "forget", "--session", "s-9", "--yes"], env=env)
    assert done.exit_code == 0 and "tombstone" in done.stdout and "no longer holds" in done.stdout, done.output
    assert "ferry" not in (workspace / "memory" / "2026-12-01.md").read_text("utf-8")
    nothing = runner.invoke(cli, [*base, "forget", "--session", "s-404"], env=env)
    assert nothing.exit_code == 0 and "Nothing in memory came from session s-404" in nothing.stderr
    for args, says in ((["--session", "a", "--source", "claude"], "give one of"),
                       (["ferry", "--session", "a"], "give one of"),
                       (["ferry", "--since", "2026-01-01"], "--since goes with"),
                       ([], "say what to forget")):
        r = runner.invoke(cli, [*base, "forget", *args], env=env)
        assert r.exit_code == 2 and says in r.stderr, (args, r.output)
    bad = runner.invoke(cli, [*base, "forget", "--session", "a", "--since", "yesterday"], env=env)
    assert bad.exit_code == 1 and "'yesterday' is not a date" in bad.output
    bad = runner.invoke(cli, [*base, "forget", "--source", "myspace"], env=env)
    assert bad.exit_code == 1 and "is not an import source" in bad.output


def test_an_openclaw_transcript_is_left_in_place_and_kept_out_of_the_index(openclaw):  # noqa: F811
    home, oc, _ = openclaw
    before = _tree(oc)
    runner = CliRunner()
    way = ["--openclaw", str(oc)]
    assert runner.invoke(cli, [*way, "index"], env=_env(home)).exit_code == 0
    hits = json.loads(runner.invoke(cli, [*way, "search", "walrus protocol", "--corpus", "all", "--json"],
                                    env=_env(home)).stdout)["results"]
    assert hits[0]["path"] == "sessions/3f2a.jsonl" and hits[0]["origin"] == "transcript"
    done = runner.invoke(cli, [*way, "forget", "--session", "agent:main:main", "--yes"], env=_env(home))  # by its key
    assert done.exit_code == 0 and "kept out of the index" in done.stdout, done.output
    for args in (["index"], ["index", "--full"]):
        assert runner.invoke(cli, [*way, *args], env=_env(home)).exit_code == 0
        found = json.loads(runner.invoke(cli, [*way, "search", "walrus protocol", "--corpus", "all", "--min-score", "0",
                                               "--json"], env=_env(home)).stdout)["results"]
        assert all(r["source"] != "sessions" for r in found), found
    assert _tree(oc) == before  # OpenClaw's folder byte-identical: the fence is in mnemoclaw's state


def test_a_file_that_cannot_be_rewritten_refuses_before_anything_is_recorded(workspace, make_memory, tmp_path):
    import os

    from mnemoclaw.errors import PathDeniedError

    mem = make_memory(workspace)
    wrote = mem.tools.said_by(Caller(session="s-9")).memory_append("The ferry leaves pier 4 at dawn.")
    mem.sync()
    plan = mem.notes.forget_origin_plan("session", "s-9")
    os.link(workspace / wrote["path"], tmp_path / "elsewhere.md")  # a hard link: changing it changes another file
    with pytest.raises(PathDeniedError, match="hard links"):
        mem.notes.forget_origin(plan)
    assert not (mem.settings.state_dir / tombstones.FILE).exists()  # no tombstone for a forget that did not happen
    assert "ferry" in (workspace / wrote["path"]).read_text("utf-8")
    assert mem.tools.memory_search("ferry pier dawn")["results"]  # and nothing is fenced


def test_since_keeps_what_is_older_and_names_what_carries_no_time(workspace, make_memory):
    mem = make_memory(workspace, overrides=SESSIONS)
    write(mem.settings.sessions_dir / "s-5.jsonl", "\n".join([
        said("user", "the old quince jam recipe uses lemon", at="2026-10-01T09:00:00Z"),
        said("user", "the new quince jam recipe uses ginger", at="2026-12-02T09:00:00Z"),
        json.dumps({"type": "message", "message": {"role": "user", "content": "a quince note without a time"}}),
    ]) + "\n")
    mem.sync()
    plan = mem.notes.forget_origin_plan("session", "s-5", since="2026-11-01")
    assert [(r.start, r.end) for r in plan.lines.removals] == [(2, 2)]
    assert [(u["startLine"], "no time" in u["why"]) for u in plan.untargetable] == [(3, True)]
    assert mem.notes.forget_origin(plan)["verified"]
    mem.sync(full=True)
    found = " ".join(r["snippet"] for r in mem.tools.memory_search("quince", corpus="sessions", min_score=0)["results"])
    assert "ginger" not in found and "lemon" in found and "without a time" in found  # the older and undated stay


def test_a_forget_by_query_fences_openclaws_files_and_changes_none_of_them(openclaw):  # noqa: F811
    """An OpenClaw agent's files are read-only here: a forget by query leaves them byte-identical
    and keeps what matched out of the index, sessions_search and memory_get, rebuild included."""
    home, oc, _ = openclaw
    before = _tree(oc)
    runner = CliRunner()
    way = ["--openclaw", str(oc)]

    def run(*args: str) -> str:
        got = runner.invoke(cli, [*way, *args], env=_env(home))
        assert got.exit_code == 0, (args, got.output)
        return got.stdout

    run("index")
    assert json.loads(run("sessions", "search", "walrus", "--json"))["results"]
    done = run("forget", "walrus protocol", "--yes")
    assert "sessions/3f2a.jsonl#L1" in done and "left in place" in done and "no longer holds" in done, done
    done = run("forget", "pelican migration", "--yes")
    assert "memory/2026-03-02.md#L4" in done, done
    for args in (["index"], ["index", "--full"]):
        run(*args)
        assert json.loads(run("sessions", "search", "walrus", "--json"))["results"] == []
        hits = json.loads(run("search", "walrus protocol pelican migration", "--corpus", "all", "--min-score", "0",
                              "--json"))["results"]
        assert not any("walrus" in h["snippet"] or "pelican" in h["snippet"] for h in hits), hits
    got = json.loads(run("get", "memory/2026-03-02.md", "--json"))["text"]
    assert "pelican" not in got and "王芳" in got and got.count("\n") == 4  # blanked: the lines keep their numbers
    assert _tree(oc) == before  # OpenClaw's folder byte-identical: the fence is in mnemoclaw's state
