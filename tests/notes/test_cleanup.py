"""Clean-up: expired and unimportant entries removed, old daily logs archived and ranked below live notes."""

import os
import subprocess
import sys
from datetime import date, timedelta

import pytest

from mnemoclaw.errors import ConfigError
from mnemoclaw.notes.cleanup import parse_age

from conftest import REPO, write

TODAY = date.today()
OLD = (TODAY - timedelta(days=400)).isoformat()
RECENT = (TODAY - timedelta(days=3)).isoformat()


def memory(workspace):
    write(workspace / "MEMORY.md", "# Memory\n\n- the gate code is 4512 <!-- expires: 2020-06-30 -->\n"
          "- a passing thought about kites <!-- importance: 2 -->\n- the user is vegetarian <!-- importance: 9 -->\n"
          "- renew the lease before 2999 <!-- expires: 2999-01-01 -->\n")
    write(workspace / "memory" / f"{OLD}.md", f"# {OLD}\n\n- the heron project kicked off in the old office\n")
    write(workspace / "memory" / f"{RECENT}.md", f"# {RECENT}\n\n- the heron project moved to the new office\n")


def test_age_parsing():
    assert [parse_age(x) for x in ("180d", "26w", "6m", "1y", "45")] == [180, 182, 180, 365, 45]
    with pytest.raises(ConfigError, match="is not an age"):
        parse_age("six months")


def test_cleanup_proposes_then_removes_and_archives(workspace, make_memory):
    memory(workspace)
    mem = make_memory(workspace)
    mem.sync()
    plan = mem.notes.cleanup_plan(older_than_days=180, below_importance=3)
    shown = plan.as_dict()
    assert [(r["startLine"], r["why"]) for r in shown["remove"]] == [(3, "expired 2020-06-30"),
                                                                    (4, "importance 2 < 3")]
    assert shown["archive"] == [{"path": f"memory/{OLD}.md", "to": f"memory/archive/{OLD}.md", "date": OLD}]
    assert "gate code" in (workspace / "MEMORY.md").read_text()  # a plan changes nothing

    done = mem.notes.cleanup(plan)
    assert done["forget"]["verified"] and done["archived"] == [f"memory/{OLD}.md"]
    text = (workspace / "MEMORY.md").read_text()
    assert "gate code" not in text and "kites" not in text and "vegetarian" in text and "lease" in text
    assert (workspace / "memory" / "archive" / f"{OLD}.md").exists()
    assert not (workspace / "memory" / f"{OLD}.md").exists()
    # the archive is still searched, below live notes
    hits = mem.tools.memory_search("heron project office")["results"]
    assert [h["path"] for h in hits[:2]] == [f"memory/{RECENT}.md", f"memory/archive/{OLD}.md"]
    assert mem.notes.cleanup_plan(below_importance=3).empty  # nothing left to do


def test_the_archive_can_be_left_out_of_search(workspace, make_memory):
    memory(workspace)
    (workspace / "memory" / "archive").mkdir()
    os.rename(workspace / "memory" / f"{OLD}.md", workspace / "memory" / "archive" / f"{OLD}.md")
    mem = make_memory(workspace, overrides={"query": {"archive": False}})
    mem.sync()
    paths = [h["path"] for h in mem.tools.memory_search("heron project old office", min_score=0.0)["results"]]
    assert paths and not any(p.startswith("memory/archive/") for p in paths)


def test_the_cli_is_a_dry_run_until_apply(workspace, tmp_path):
    memory(workspace)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
    base = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir", str(tmp_path / "st")]
    dry = subprocess.run([*base, "cleanup"], capture_output=True, text=True, env=env, timeout=120)
    assert dry.returncode == 0, dry.stderr
    assert "remove MEMORY.md#L3-L3 (expired 2020-06-30)" in dry.stdout and "kites" not in dry.stdout
    assert f"archive memory/{OLD}.md -> memory/archive/{OLD}.md" in dry.stdout and "dry run" in dry.stderr
    assert (workspace / "memory" / f"{OLD}.md").exists()
    done = subprocess.run([*base, "cleanup", "--apply", "--older-than", "1y"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Removed 1 line(s); the index no longer holds them." in done.stdout and "Archived 1 daily log" in done.stdout
    assert not (workspace / "memory" / f"{OLD}.md").exists()


def test_archiving_in_a_git_workspace_is_committed(workspace, make_memory):
    memory(workspace)
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    mem = make_memory(workspace)
    mem.sync()
    done = mem.notes.cleanup(mem.notes.cleanup_plan(expired=False))
    assert done["archived"] == [f"memory/{OLD}.md"] and done["gitCommit"]
    log = subprocess.run(["git", "log", "--format=%s"], cwd=workspace, capture_output=True, text=True).stdout
    assert log.splitlines() == ["mnemoclaw: archive 1 daily log(s)", "mnemoclaw: before archiving"]
    tracked = subprocess.run(["git", "ls-files"], cwd=workspace, capture_output=True, text=True).stdout
    assert f"memory/archive/{OLD}.md" in tracked and f"memory/{OLD}.md\n" not in tracked
