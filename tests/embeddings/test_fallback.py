"""memorySearch.fallback: the primary provider fails, mnemoclaw switches once, rebuilds
safely, says so, and goes back to the primary when asked and it works again."""

from __future__ import annotations

import os
import time

import pytest

from mnemoclaw.api import Memory
from mnemoclaw.config import load_settings

from conftest import write
from provider_server import KEY, ProviderServer


@pytest.fixture
def servers():
    with ProviderServer("openai") as primary, ProviderServer("ollama") as backup:
        yield primary, backup


def _settings(workspace, tmp_path, primary, backup, fallback="ollama"):
    cfg = {
        "models": {"providers": {"openai": {"baseUrl": primary.base_url, "apiKey": KEY},
                                 "ollama": {"baseUrl": backup.base_url}}},
        "agents": {"defaults": {"memorySearch": {"provider": "openai", "fallback": fallback}}},
    }
    return load_settings(workspace=workspace, state_dir=tmp_path / "state", config=cfg, env={})


def test_a_failing_primary_switches_to_the_fallback_once(workspace, tmp_path, servers):
    primary, backup = servers
    write(workspace / "MEMORY.md", "- the spare key is under the blue flowerpot")
    s = _settings(workspace, tmp_path, primary, backup)
    with Memory(s, background=False) as mem:
        assert mem.sync().failed == []
        assert mem.tools.memory_search("spare key")["fallback"] is False
        primary.script = ["500"] * 20  # the primary goes down for good
        write(workspace / "memory" / "2026-06-01.md", "- the plumber comes on Friday")
        r = mem.sync()
        assert r.full_rebuild and r.failed == []  # rebuilt with the fallback, in a new database
        assert mem.provider.id == "ollama"
        out = mem.tools.memory_search("plumber Friday")
        assert out["fallback"] is True and out["provider"] == "ollama"
        assert out["results"][0]["path"] == "memory/2026-06-01.md"
        st = mem.status()
        assert st["fallback"]["from"] == "openai" and st["fallback"]["to"] == "ollama"
        assert "HTTP 500" in st["fallback"]["reason"] and st["mode"] == "hybrid"
        assert backup.embedding_requests()

    # another process: starts on the fallback without knocking on the primary again
    asked = len(primary.embedding_requests())
    with Memory(s, background=False) as mem:
        assert mem.provider.id == "ollama" and mem.providers.fallback is not None
        assert os.path.exists(mem.providers.state_file)  # remembered for the next process
        assert mem.tools.memory_search("plumber")["results"]
        assert not mem.backend.dirty_sources()
    assert len(primary.embedding_requests()) == asked

    # the primary is back: an explicit index goes back to it
    primary.script = []
    with Memory(s, background=False) as mem:
        r = mem.sync(retry=True)  # what `mnemoclaw index` asks
        assert r.full_rebuild and mem.provider.id == "openai"
        assert r.notes[0] == "the primary provider openai works again: the index is rebuilt with it"
        assert mem.tools.memory_search("plumber")["fallback"] is False
    assert not os.path.exists(mem.providers.state_file)  # the switch back is remembered too


def test_a_search_while_the_primary_is_down_still_answers(workspace, tmp_path, servers):
    primary, backup = servers
    write(workspace / "MEMORY.md", "- the spare key is under the blue flowerpot")
    s = _settings(workspace, tmp_path, primary, backup)
    with Memory(s) as mem:
        mem.sync()
        primary.script = ["503"] * 20
        out = mem.tools.memory_search("where is the spare key")  # the query cannot be embedded by the primary
        assert out["results"][0]["path"] == "MEMORY.md"  # answered by keyword meanwhile
        assert out["fallback"] is True
        assert mem.freshness.background.wait_idle(30)
        assert mem.backend.vectors_usable() and mem.backend.store.meta()["model"] == "nomic-embed-text"
        # the servers' vectors are hashes, not meanings: which side answered, so no floor
        assert mem.search("spare key", mode="vector", sync=False, min_score=0.0)[0].path == "MEMORY.md"


def test_without_a_fallback_the_error_is_reported_and_the_index_kept(workspace, tmp_path, servers):
    primary, backup = servers
    write(workspace / "MEMORY.md", "- the spare key is under the blue flowerpot")
    s = _settings(workspace, tmp_path, primary, backup, fallback="none")
    with Memory(s, background=False) as mem:
        mem.sync()
        primary.script = ["500"] * 20
        write(workspace / "memory" / "n.md", "- new")
        report = mem.sync()  # reported, and the new note indexed for keyword search meanwhile
        assert "failed 3 times" in report.vectors_error and report.vectors_pending == 1
        out = mem.tools.memory_search("spare key")
        assert out["results"][0]["path"] == "MEMORY.md" and out["fallback"] is False
        assert "keyword only" in out["warning"]
        assert mem.tools.memory_search("new", mode="keyword")["results"][0]["path"] == "memory/n.md"


def test_a_long_running_process_switches_in_its_background_writer(workspace, tmp_path, servers):
    """The writer thread meets the dead primary first: the owner's one decision switches to
    the fallback, and a new writer rebuilds with it (the writer does not go keyword-only)."""
    primary, backup = servers
    write(workspace / "MEMORY.md", "- the spare key is under the blue flowerpot")
    s = _settings(workspace, tmp_path, primary, backup)
    with Memory(s) as mem:
        assert mem.sync().failed == []
        primary.script = ["500"] * 40
        write(workspace / "memory" / "2026-06-01.md", "- the plumber comes on Friday")
        mem.freshness.request("watch")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (mem.providers.fallback and mem.freshness.background.wait_idle(0.2)):
            time.sleep(0.1)
        assert mem.freshness.background.wait_idle(60)
        assert mem.provider.id == "ollama" and mem.status(check_dirty=False)["vectorsError"] is None
        out = mem.tools.memory_search("plumber Friday", mode="vector", min_score=0.0)  # hashed vectors: no floor
        assert out["fallback"] is True and out["results"][0]["path"] == "memory/2026-06-01.md"
        assert mem.status()["vectorsPending"] == 0
