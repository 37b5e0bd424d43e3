"""The scheduled promotion of a long-running process: at the configured minute, once per minute
across processes, never for an OpenClaw agent, and a failure is one line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime

from mnemoclaw.api import Memory
from mnemoclaw.config import load_settings
from mnemoclaw.promote.schedule import Nightly, start_nightly

from conftest import write

CONFIG = {"memory": {"dreaming": {"enabled": True, "frequency": "0 3 * * *", "minScore": 0, "minRecallCount": 2,
                                  "minUniqueQueries": 2}}}


def setup(workspace, tmp_path, embedder):
    write(workspace / "MEMORY.md", "# Memory\n")
    write(workspace / "memory" / "2026-11-03.md", "# 2026-11-03\n\n- The staging server is staging-2.internal, "
                                                  "reached over the VPN.\n")
    settings = load_settings(workspace=workspace, state_dir=tmp_path / "state", config=CONFIG, env={})
    with Memory(settings, provider=embedder) as mem:
        mem.sync()
        for q in ("what is the staging server", "how do I reach staging over the vpn", "staging host"):
            mem.tools.memory_search(q)
    return settings


def test_one_run_a_scheduled_minute_whichever_process_comes_first(workspace, tmp_path, embedder):
    settings = setup(workspace, tmp_path, embedder)
    opened = lambda: Memory(settings, provider=embedder, background=False)  # noqa: E731
    a, b = Nightly(settings, opened), Nightly(settings, opened)
    slot = datetime(2026, 12, 8, 3, 0)
    first = a.run_slot(slot)
    assert first and first["promoted"] == 1 and "staging-2.internal" in (workspace / "MEMORY.md").read_text()
    assert b.run_slot(slot) is None  # the other process sees the minute was run
    # while another process holds the run, this one leaves it
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from mnemoclaw.locks import file_lock
        with file_lock({str(a.folder / 'nightly.lock')!r}):
            print("held", flush=True)
            time.sleep(30)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert b.run_slot(datetime(2026, 12, 9, 3, 0)) is None
    finally:
        holder.kill()
        holder.wait()
    assert b.run_slot(datetime(2026, 12, 9, 3, 0)) == {**b.last}  # free again: it runs


def test_the_thread_waits_for_the_minute_the_schedule_names(workspace, tmp_path, embedder):
    settings = setup(workspace, tmp_path, embedder)
    now = datetime(2026, 12, 7, 2, 58, 30).timestamp()
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        job._stop.set()  # one turn of the loop

    job = Nightly(settings, lambda: Memory(settings, provider=embedder, background=False), clock=lambda: now,
                  sleep=sleep)
    job._loop()
    assert slept == [90.0]


def test_not_enabled_or_an_openclaw_agent_starts_nothing(workspace, tmp_path, caplog):
    off = load_settings(workspace=workspace, state_dir=tmp_path / "s1", config={}, env={})
    assert start_nightly(off, lambda: None) is None
    on = load_settings(workspace=workspace, state_dir=tmp_path / "s2", config=CONFIG, env={})
    object.__setattr__(on, "openclaw_dir", tmp_path / "openclaw")
    with caplog.at_level("WARNING"):
        assert start_nightly(on, lambda: None) is None
    assert "never writes its MEMORY.md" in caplog.text


def test_a_failed_run_is_one_line_and_the_next_minute_tries_again(workspace, tmp_path, caplog):
    settings = load_settings(workspace=workspace, state_dir=tmp_path / "state", config=CONFIG, env={})

    def broken():
        raise OSError("disk full")

    job = Nightly(settings, broken)
    with caplog.at_level("WARNING"):
        got = job.run_slot(datetime(2026, 12, 8, 3, 0))
    assert got["error"] == "disk full"
    assert "the scheduled promotion did not run: disk full" in caplog.text
