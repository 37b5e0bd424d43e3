"""A watching process searches without a stat of every file, and still finds a note written
a moment before: the kernel's file events (inotify), and the walk when they cannot be trusted."""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

import pytest

import mnemoclaw.freshness.journal as journal_mod
from mnemoclaw.freshness.journal import IN_Q_OVERFLOW, ChangeJournal

from conftest import write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="file events are read on Linux only")


def _found(mem, query):
    """The files a search answers with (what else it found, marked weak, left out)."""
    return [r["path"] for r in mem.tools.memory_search(query)["results"] if not r.get("weak")]


def _check(mem):
    return mem.status()["background"]["searchCheck"]


def _watching(make_memory, workspace, **kw):
    mem = make_memory(workspace, **kw)
    mem.sync()
    mem.freshness.watch(debounce_ms=60_000)  # the watcher's own sync never comes in time: the search must index
    return mem


def test_searches_with_nothing_changed_make_no_walk(workspace, make_memory):
    write(workspace / "memory" / "old.md", "- the lighthouse keeper counts gulls")
    mem = _watching(make_memory, workspace)
    assert _check(mem)["mode"] == "events", _check(mem)
    for _ in range(10):
        assert _found(mem, "lighthouse keeper gulls") == ["memory/old.md"]
    check = _check(mem)
    assert check["walks"] == 1 and check["walksSpared"] == 9, check


def test_a_note_written_a_moment_before_is_found_every_time(workspace, make_memory):
    write(workspace / "MEMORY.md", "# Memory\n")
    mem = _watching(make_memory, workspace)
    _found(mem, "anything")
    for i in range(25):
        # no pause between the write and the search; each kind of change the index reads
        if i % 5 == 0:
            write(workspace / "memory" / f"2026-03-{i + 1:02d}.md", f"- parcel code ZK{i}Q is new")
        elif i % 5 == 1:
            with open(workspace / "memory" / f"2026-03-{i:02d}.md", "a", encoding="utf-8") as fh:
                fh.write(f"\n- parcel code ZK{i}Q was appended\n")
        elif i % 5 == 2:
            os.makedirs(workspace / "memory" / f"deep{i}" / "er")
            write(workspace / "memory" / f"deep{i}" / "er" / "n.md", f"- parcel code ZK{i}Q sits deep")
        elif i % 5 == 3:
            write(workspace / "MEMORY.md", f"# Memory\n\n- parcel code ZK{i}Q is durable\n")
        else:
            src = workspace / f"draft{i}.md"
            write(src, f"- parcel code ZK{i}Q was moved in")
            os.rename(src, workspace / "memory" / f"moved{i}.md")
        assert _found(mem, f"parcel code ZK{i}Q"), f"change {i} was not found"
    # and a note taken away is gone at once
    os.unlink(workspace / "memory" / "moved24.md")
    assert "memory/moved24.md" not in _found(mem, "parcel code ZK24Q")
    assert _check(mem)["mode"] == "events"


def test_a_note_in_a_folder_made_after_the_watch_started_is_found(tmp_path, make_memory):
    ws = tmp_path / "ws"
    ws.mkdir()  # no memory/ yet, and an extra folder that does not exist yet
    extra = tmp_path / "notes" / "team"
    mem = make_memory(ws, config={"agents": {"defaults": {"memorySearch": {"extraPaths": [str(extra)]}}}})
    mem.sync()
    mem.freshness.watch(debounce_ms=60_000)
    assert _check(mem)["mode"] == "events"
    _found(mem, "x")
    write(ws / "memory" / "2026-04-01.md", "- the orchard gate code is 4471")
    assert _found(mem, "orchard gate code") == ["memory/2026-04-01.md"]
    write(extra / "plan.md", "- the team offsite is in Lisbon")
    assert _found(mem, "team offsite Lisbon"), "a note in an extra folder that came later was missed"


def test_an_overflowed_queue_costs_one_walk_and_keeps_the_events(workspace, make_memory):
    mem = _watching(make_memory, workspace)
    _found(mem, "x")
    j = mem.freshness._journal
    # the kernel says it dropped events: a real read of a queue holding an overflow record
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.write(w, struct.pack("iIII", -1, IN_Q_OVERFLOW, 0, 0))
    os.close(w)
    os.close(j._fd)
    j._fd = r
    write(workspace / "memory" / "lost.md", "- the event for this note was lost")  # its event went to a closed fd
    before = _check(mem)["walks"]
    assert _found(mem, "event for this note was lost") == ["memory/lost.md"]
    check = _check(mem)
    assert check["overflows"] == 1 and check["walks"] == before + 1 and check["mode"] == "events", check
    write(workspace / "memory" / "after.md", "- written after the overflow")
    assert _found(mem, "written after the overflow") == ["memory/after.md"]


def test_a_network_filesystem_means_the_walk(workspace, make_memory, monkeypatch):
    real = os.path.realpath(workspace)
    monkeypatch.setattr(journal_mod, "_mounts", lambda: [(real, "nfs4"), ("/", "ext4")])
    mem = _watching(make_memory, workspace)
    check = _check(mem)
    assert check["mode"] == "walk" and "nfs4" in check["why"] and real in check["why"], check
    write(workspace / "memory" / "n.md", "- written on another machine")
    assert _found(mem, "written on another machine") == ["memory/n.md"]
    assert _check(mem)["walksSpared"] == 0


def test_the_watch_limit_means_the_walk_and_names_the_fix(workspace, make_memory, monkeypatch):
    class Limited:
        def __init__(self, libc):
            self.inotify_init1 = libc.inotify_init1

        @staticmethod
        def inotify_add_watch(fd, path, mask):
            ctypes.set_errno(errno.ENOSPC)
            return -1

    limited = Limited(journal_mod._libc())
    monkeypatch.setattr(journal_mod, "_libc", lambda: limited)
    mem = _watching(make_memory, workspace)
    check = _check(mem)
    assert check["mode"] == "walk" and "max_user_watches" in check["why"], check
    write(workspace / "memory" / "n.md", "- a note past the watch limit")
    assert _found(mem, "past the watch limit") == ["memory/n.md"]


def test_a_polling_watcher_and_no_watcher_mean_the_walk(workspace, make_memory):
    mem = make_memory(workspace)
    mem.sync()
    assert _check(mem) == {"mode": "walk", "why": "this process does not watch the files", "walks": 0,
                           "walksSpared": 0}
    mem.freshness.watch(debounce_ms=60_000, polling=True)
    check = _check(mem)
    assert check["mode"] == "walk" and "polling" in check["why"], check
    write(workspace / "memory" / "p.md", "- found by the walk")
    assert _found(mem, "found by the walk") == ["memory/p.md"]


def test_events_the_index_does_not_read_spare_the_walk(workspace, make_memory):
    mem = _watching(make_memory, workspace)
    _found(mem, "x")
    write(workspace / "memory" / ".draft.md.swp", "binary")
    write(workspace / "notes.txt", "not memory")
    write(workspace / "memory" / "node_modules" / "pkg" / "README.md", "- not memory either")
    write(workspace / "other" / "x.md", "- outside memory/")
    walks = _check(mem)["walks"]
    _found(mem, "x")
    # node_modules/ itself coming is a folder under a tree, which is one walk; the rest is not
    assert _check(mem)["walks"] <= walks + 1
    walks = _check(mem)["walks"]
    write(workspace / "memory" / "node_modules" / "pkg" / "CHANGES.md", "- still not memory")
    _found(mem, "x")
    assert _check(mem)["walks"] == walks


def test_a_closed_journal_says_so(workspace):
    j = ChangeJournal(str(workspace), []).start()
    assert j.trusted and j.take() == set()
    write(workspace / "memory" / "a.md", "- a")
    assert j.take() == {"memory"}
    assert j.take() == set()
    j.close()
    assert not j.trusted and j.take() is None
