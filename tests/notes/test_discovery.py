import os
import time
from datetime import date

import pytest

from mnemoclaw.backends.qmd import export_sessions
from mnemoclaw.errors import PathDeniedError
from mnemoclaw.notes.discovery import discover
from mnemoclaw.runtime.hygiene import propose

from conftest import write


def paths(files):
    return sorted(f.path for f in files)


def test_memory_files_are_found_and_others_ignored(workspace):
    write(workspace / "MEMORY.md", "m")
    write(workspace / "memory" / "2026-01-01.md", "d")
    write(workspace / "memory" / "deep" / "nested" / "x.md", "x")
    write(workspace / "memory" / "notes.txt", "not markdown")
    write(workspace / "AGENTS.md", "bootstrap, not memory")
    write(workspace / "other" / "y.md", "outside memory/")
    for ignored in (".git", "node_modules", ".venv", "venv", "__pycache__"):
        write(workspace / "memory" / ignored / "z.md", "ignored")
    assert paths(discover(workspace)) == ["MEMORY.md", "memory/2026-01-01.md", "memory/deep/nested/x.md"]


def test_both_memory_md_spellings_on_a_case_sensitive_disk(workspace):
    write(workspace / "memory.md", "lower")
    assert paths(discover(workspace)) == ["memory.md"]


def test_symlinks_are_ignored_files_and_directories(workspace, tmp_path):
    outside = write(tmp_path / "secret" / "s.md", "secret")
    os.symlink(outside, workspace / "memory" / "link.md")
    os.symlink(outside.parent, workspace / "memory" / "linkdir")
    os.symlink(outside, workspace / "MEMORY.md")
    assert paths(discover(workspace)) == []


def test_extra_paths_absolute_relative_home_file_and_missing(workspace, tmp_path, monkeypatch):
    ext = write(tmp_path / "ext" / "a.md", "a")
    write(tmp_path / "ext" / "sub" / "b.md", "b")
    single = write(tmp_path / "single.md", "s")
    write(workspace / "docs" / "c.md", "c")
    monkeypatch.setenv("HOME", str(tmp_path))
    files = discover(workspace, [ext.parent, workspace / "docs", tmp_path / "single.md", tmp_path / "missing"])
    assert paths(files) == sorted([str(ext), str(tmp_path / "ext" / "sub" / "b.md"), "docs/c.md", str(single)])


def test_overlapping_extra_paths_are_deduplicated_by_real_path(workspace, tmp_path):
    write(workspace / "memory" / "a.md", "a")
    files = discover(workspace, [workspace / "memory", workspace / "memory" / "a.md"])
    assert paths(files) == ["memory/a.md"]


def test_extra_path_that_is_a_link_is_ignored(workspace, tmp_path):
    write(tmp_path / "real" / "r.md", "r")
    os.symlink(tmp_path / "real", tmp_path / "linked")
    assert paths(discover(workspace, [tmp_path / "linked"])) == []


def test_every_reader_of_a_users_folders_skips_links(workspace, tmp_path):
    """The indexer's rule holds for the other readers: qmd's transcript export and hygiene."""
    outside = write(tmp_path / "elsewhere" / "x.jsonl", '{"type":"message","message":{"role":"user","content":"wombat"}}\n')
    sessions = tmp_path / "sessions"
    write(sessions / "real.jsonl", '{"type":"message","message":{"role":"user","content":"otter"}}\n')
    (sessions / "linked.jsonl").symlink_to(outside)
    dest = tmp_path / "export"
    export_sessions(sessions, dest, retention_days=30, now=time.time())
    assert sorted(p.name for p in dest.iterdir()) == ["real.md"]

    (workspace / "MEMORY.md").symlink_to(write(tmp_path / "elsewhere" / "MEMORY.md", "- private\n"))
    write(workspace / "memory" / "2026-03-01.md", "- a note\n")
    with pytest.raises(PathDeniedError, match="MEMORY.md is a symbolic link"):
        propose(workspace, chat=None, today=date(2026, 3, 1))
