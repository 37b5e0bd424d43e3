"""Forget: the lines leave the Markdown, and nothing of them stays in the index."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mnemoclaw.notes.forget import NothingToForget

from conftest import REPO, read_back, write

SECRET = "the locker code is zanzibar-7741"


def index_bytes(mem) -> bytes:
    out = b""
    for suffix in ("", "-wal"):
        try:
            out += Path(mem.backend.store.path + suffix).read_bytes()
        except FileNotFoundError:
            pass
    return out


def notes(workspace):
    write(workspace / "MEMORY.md", "# Memory\n\n- the team meets on Mondays\n- " + SECRET + "\n  (ask Dana first)\n"
          "- lunch is at noon\n")
    write(workspace / "memory" / "2026-03-01.md", "# 2026-03-01\n\nA paragraph that mentions\nzanzibar-7741 "
          "once more.\n\n- bought coffee beans\n")


def test_forget_shows_first_then_removes_the_lines_and_everything_indexed_from_them(workspace, make_memory):
    notes(workspace)
    mem = make_memory(workspace)
    mem.sync()
    assert b"zanzibar" in index_bytes(mem)
    plan = mem.notes.forget_plan("zanzibar-7741")
    assert [(r.path, r.start, r.end) for r in plan.removals] == [("MEMORY.md", 4, 5), ("memory/2026-03-01.md", 3, 4)]
    assert plan.removals[0].lines == ("- " + SECRET, "  (ask Dana first)")
    assert "zanzibar" in (workspace / "MEMORY.md").read_text()  # a plan removes nothing

    done = mem.notes.forget(plan)
    assert done["verified"] and done["chunksReplaced"] >= 2 and done["cachedVectorsDeleted"] >= 2
    assert (workspace / "MEMORY.md").read_text() == "# Memory\n\n- the team meets on Mondays\n- lunch is at noon\n"
    assert (workspace / "memory" / "2026-03-01.md").read_text() == "# 2026-03-01\n\n\n- bought coffee beans\n"
    assert "undoCopy" not in done and "gitHistory" not in done  # no copy, no repository
    state = Path(mem.settings.state_dir)
    assert not (state / "forgotten").exists()
    kept = [p for p in state.rglob("*") if p.is_file() and b"zanzibar" in p.read_bytes()]
    assert kept == []  # no byte of it anywhere under the state directory
    for mode in ("keyword", "hybrid"):
        hits = mem.search("zanzibar 7741 locker code", mode=mode, min_score=0.0)
        assert not any("zanzibar" in h.text for h in hits)
    assert "zanzibar" not in read_back(mem, "MEMORY.md")["text"]
    blob = index_bytes(mem)
    assert b"zanzibar" not in blob and b"locker code" not in blob  # chunks, keyword index, cache, free pages
    assert mem.tools.memory_search("lunch")["results"][0]["path"] == "MEMORY.md"
    # a full rebuild brings nothing back
    mem.sync(full=True)
    assert b"zanzibar" not in index_bytes(mem)


def git(workspace, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=workspace,
                          capture_output=True, text=True, check=True).stdout


def test_in_git_forget_writes_no_new_copy_and_names_the_commits_that_still_hold_the_text(workspace, make_memory):
    notes(workspace)
    git(workspace, "init", "-q")
    git(workspace, "add", "MEMORY.md")
    git(workspace, "commit", "-qm", "notes")  # MEMORY.md is in history; the daily log never was
    first = git(workspace, "rev-parse", "--short", "HEAD").strip()
    mem = make_memory(workspace)
    mem.sync()
    plan = mem.notes.forget_plan("MEMORY.md#L6")
    assert [(r.start, r.end, r.lines) for r in plan.removals] == [(6, 6, ("- lunch is at noon",))]
    done = mem.notes.forget(plan)
    assert done["verified"] and "undoCopy" not in done
    assert done["gitHistory"] == [first]  # history still holds it, and the report says where
    assert "lunch is at noon" not in (workspace / "MEMORY.md").read_text()
    assert "MEMORY.md" not in git(workspace, "status", "--porcelain")  # the removal is committed

    # text that was never committed is not written into history by the forget
    plan = mem.notes.forget_plan("zanzibar-7741")
    done = mem.notes.forget(plan)
    assert done["gitHistory"] == [first]  # MEMORY.md's line was committed; the daily log's never was
    assert git(workspace, "log", "--all", "-S", "once more.", "--format=%h") == ""
    log = git(workspace, "log", "--all", "--format=%B")
    assert "zanzibar" not in log and "lunch" not in log  # no commit message quotes what was forgotten
    blobs = git(workspace, "rev-list", "--all", "--objects")
    assert not any("zanzibar-7741 once more" in git(workspace, "cat-file", "-p", line.split()[0])
                   for line in blobs.splitlines() if line.endswith("2026-03-01.md"))


def test_an_undo_copy_only_when_asked_and_gone_after_its_time(workspace, make_memory):
    notes(workspace)
    now = [1_780_000_000.0]
    mem = make_memory(workspace, clock=lambda: now[0])
    mem.sync()
    done = mem.notes.forget(mem.notes.forget_plan("coffee beans"), keep_copy=True)
    copy = Path(done["undoCopy"])
    assert "coffee beans" in (copy / "memory" / "2026-03-01.md").read_text() and done["undoUntil"]
    now[0] += 6 * 86400
    mem.sync()
    assert copy.exists()  # still within its time
    now[0] += 1 * 86400
    mem.sync()
    assert not copy.exists() and os.listdir(copy.parent) == []


def test_a_forget_that_matches_nothing_says_so_and_a_changed_file_is_refused(workspace, make_memory):
    notes(workspace)
    mem = make_memory(workspace)
    mem.sync()
    with pytest.raises(NothingToForget, match="no line of memory holds all of"):
        mem.notes.forget_plan("walrus pancake")
    with pytest.raises(NothingToForget, match="has 7 lines; lines 40-41 are not in it"):
        mem.notes.forget_plan("MEMORY.md#L40-L41")
    plan = mem.notes.forget_plan("coffee beans")
    write(workspace / "memory" / "2026-03-01.md", "# 2026-03-01\n\nrewritten meanwhile\n- bought coffee beans\n")
    with pytest.raises(Exception, match="changed since the preview"):
        mem.notes.forget(plan)
    assert "coffee beans" in (workspace / "memory" / "2026-03-01.md").read_text()


def test_the_cli_previews_without_yes_and_removes_with_it(workspace, tmp_path):
    notes(workspace)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
    base = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir", str(tmp_path / "st")]
    subprocess.run([*base, "index"], check=True, capture_output=True, env=env, timeout=120)
    dry = subprocess.run([*base, "forget", "zanzibar"], capture_output=True, text=True, env=env, timeout=120)
    assert dry.returncode == 0 and "MEMORY.md#L4-L5" in dry.stdout and "Nothing removed" in dry.stderr
    assert "zanzibar" in (workspace / "MEMORY.md").read_text()
    done = subprocess.run([*base, "forget", "zanzibar", "--yes"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Removed 4 line(s) from 2 file(s)" in done.stdout and "no longer holds" in done.stdout
    assert "copy" not in done.stdout + done.stderr and not (tmp_path / "st" / "forgotten").exists()
    none = subprocess.run([*base, "forget", "zanzibar"], capture_output=True, text=True, env=env, timeout=120)
    assert none.returncode != 0 and "nothing was removed" in none.stderr
    found = subprocess.run([*base, "search", "zanzibar", "--json"], capture_output=True, text=True, env=env,
                           timeout=120)
    assert '"results": []' in found.stdout


def test_forgotten_lines_restored_from_a_backup_stay_out_of_search_and_get(workspace, make_memory):
    """A forget by query records a keyed hash of each line it removed (never the line): a
    backup restored brings the lines back to the file, not to any answer."""
    notes(workspace)
    original = (workspace / "MEMORY.md").read_text()
    mem = make_memory(workspace)
    mem.sync()
    assert mem.notes.forget(mem.notes.forget_plan("zanzibar-7741"))["verified"]
    state = Path(mem.settings.state_dir)
    assert not [p for p in state.rglob("*") if p.is_file() and b"zanzibar" in p.read_bytes()]
    write(workspace / "MEMORY.md", original)  # restored
    mem.sync()
    got = mem.tools.memory_get("MEMORY.md")["text"]
    assert "zanzibar" not in got and "(ask Dana first)" not in got and "lunch is at noon" in got
    assert got.split("\n")[3] == "" and mem.tools.memory_get("MEMORY.md#L6")["text"] == "- lunch is at noon"
    assert not any("zanzibar" in h.text for h in mem.search("zanzibar locker code", min_score=0.0))
    assert b"zanzibar" not in index_bytes(mem)
    # the chat agent: MEMORY.md injected every turn, its read tool
    from mnemoclaw.runtime.agent import AgentSession

    agent = AgentSession(mem)
    assert "zanzibar" not in agent.system_prompt()[0] and "lunch is at noon" in agent.system_prompt()[0]
    read = agent.toolbox.answer({"function": {"name": "read", "arguments": '{"path": "MEMORY.md"}'}})
    assert "zanzibar" not in read["text"] and "lunch is at noon" in read["text"], read
    assert mem.notes.forget_plan("zanzibar")  # the file holds it again: a forget takes it out of the file


def test_a_forget_stopped_after_the_files_changed_is_finished_by_the_next_sync(workspace, make_memory, monkeypatch):
    """Stopped between the rewrite and the purge: what it owes is in the state directory as keyed
    hashes only; status names it; the next sync indexes the files again, deletes the cached
    vectors of the chunks that held the text (found by their keyed hashes) and scrubs."""
    notes(workspace)
    mem = make_memory(workspace)
    mem.sync()
    held = {c.hash for path in ("MEMORY.md", "memory/2026-03-01.md") for c in mem.backend.store.file_chunks(path).chunks
            if "zanzibar" in c.text}
    assert held and held <= {h for _, cached in mem.backend.store.cache_items() for h in cached}

    def stopped(**_: object) -> None:
        raise KeyboardInterrupt  # the process stops here

    plan = mem.notes.forget_plan("zanzibar-7741")
    monkeypatch.setattr(mem.notes.index, "finish", stopped)
    with pytest.raises(KeyboardInterrupt):
        mem.notes.forget(plan)
    monkeypatch.undo()
    assert "zanzibar" not in (workspace / "MEMORY.md").read_text()  # the files changed
    owed = mem.status(check_dirty=False)["forgetUnfinished"]
    assert owed and owed["files"] == 2, owed
    state = Path(mem.settings.state_dir)
    assert not [p.name for p in state.rglob("*") if p.is_file() and p.suffix != ".sqlite" and p.suffix != ".sqlite-wal"
                and b"zanzibar" in p.read_bytes()]

    report = mem.sync()
    assert not report.warnings, report.warnings
    assert mem.status(check_dirty=False)["forgetUnfinished"] is None
    assert not held & {h for _, cached in mem.backend.store.cache_items() for h in cached}  # their vectors are gone
    assert b"zanzibar" not in index_bytes(mem)
