"""OpenClaw's config in both shapes: the current one (memory.search, agents.entries.<id>; since
2026-07-22) and the older one (agents.defaults.memorySearch, agents.list[]), from fixtures
written after OpenClaw's configuration reference (tests/fixtures/openclaw)."""

import logging
import shutil
from pathlib import Path

import pytest

from mnemoclaw.api import Memory
from mnemoclaw.config import load_settings, openclaw_settings
from mnemoclaw.errors import ConfigError

from conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "openclaw"


def load(name, tmp_path, **kw):
    return load_settings(state_dir=tmp_path / "state", config=str(FIXTURES / name), env={}, **kw)


def test_the_current_shape_is_read_not_dropped(tmp_path):
    s = load("current.json5", tmp_path)
    ms = s.memory_search
    assert not [w for w in s.warnings if "unknown config key" in w], s.warnings
    assert s.agent_id == "main"
    assert ms["provider"] == "none"
    assert ms["query"]["maxResults"] == 4  # agents.entries.main over memory.search
    assert ms["query"]["minScore"] == 0.5
    assert ms["extraPaths"] == ["notes", "projects"]
    assert s.extra_paths() == [s.workspace / "notes", s.workspace / "projects"]
    assert s.index_sources() == ("memory", "sessions")
    assert s.memory["citations"] == "on"
    coder = load("current.json5", tmp_path, agent_id="coder")
    assert coder.memory_search["provider"] == "local" and coder.memory_search["query"]["maxResults"] == 3
    assert coder.workspace == Path("~/.openclaw/workspace-coder").expanduser()


def test_what_the_current_shape_sets_and_mnemoclaw_does_not_apply_is_named_with_what_runs_instead(tmp_path):
    s = load("current.json5", tmp_path)
    named = s.ignored()
    for key in ("memory.search.inputType", "memory.search.queryInputType", "memory.search.documentInputType",
                "memory.search.outputDimensionality", "memory.search.multimodal", "memory.search.store.fts",
                "memory.search.extraPaths[1].pattern", "session.dmScope"):
        lines = [n for n in named if n.startswith(key)]
        assert len(lines) == 1, (key, named)
        assert "not applied" in lines[0] and ";" in lines[0], lines[0]  # and what runs instead
    assert not any("visibility" in n for n in named)  # applied (sessions_search), so not "not in effect"
    assert not any("dreaming" in n for n in named)  # applied (mnemoclaw promote); it sets no model
    assert not any(n.startswith("plugins.slots") for n in named)  # memory-core: what mnemoclaw serves
    assert not any("memoryPolicy" in n for n in named)  # applied: excluded sessions are not memory
    assert s.exclude_sessions() == {"channels": ("whatsapp",), "chatTypes": ("group",)}
    assert any("every Markdown file under projects is indexed" in n for n in named)


def test_status_names_them_and_opening_says_so_once(tmp_path, caplog):
    s = load("current.json5", tmp_path, workspace=tmp_path / "workspace")
    s.workspace.mkdir()
    with caplog.at_level(logging.WARNING):
        mem = Memory(s, provider=None)
    try:
        st = mem.status(check_dirty=False)
    finally:
        mem.close()
    assert set(s.not_applied) <= set(st["ignoredSettings"])
    summary = [r.getMessage() for r in caplog.records if "read but not applied" in r.getMessage()]
    assert len(summary) == 1 and "`mnemoclaw status`" in summary[0], summary
    assert not [r for r in caplog.records if "inputType" in r.getMessage()]  # not one line per key


def test_the_older_shape_keeps_working(tmp_path):
    s = load("legacy.json5", tmp_path)
    ms = s.memory_search
    assert not s.warnings and not s.not_applied, (s.warnings, s.not_applied)
    assert (s.agent_id, ms["provider"], ms["query"]["maxResults"], ms["query"]["minScore"]) == ("main", "none", 4, 0.5)
    assert ms["query"]["hybrid"]["vectorWeight"] == 0.6 and ms["chunking"] == {"tokens": 300, "overlap": 60}
    assert ms["extraPaths"] == ["notes"] and s.memory["citations"] == "off"
    coder = load("legacy.json5", tmp_path, agent_id="coder")
    assert coder.memory_search["query"]["maxResults"] == 3
    assert coder.workspace == Path("~/.openclaw/workspace-coder").expanduser()


def test_both_shapes_in_one_file_the_agent_over_all_and_the_current_shape_over_the_older(tmp_path):
    s = load("mixed.json5", tmp_path)
    ms = s.memory_search
    # global: memory.search's 3 over agents.defaults.memorySearch's 8; the agent's list entry (5)
    # is more specific than either; its entries.main sets the provider
    assert ms["query"]["maxResults"] == 5
    assert ms["query"]["minScore"] == 0.2  # only the older shape sets it: kept
    assert ms["chunking"]["tokens"] == 300 and ms["extraPaths"] == ["notes"] and ms["provider"] == "none"
    clash = [w for w in s.warnings if "both set" in w]
    assert clash == ["memory.search.query.maxResults (3) and agents.defaults.memorySearch.query.maxResults (8) are "
                     "both set: memory.search (OpenClaw's current shape) wins; remove one of them"], s.warnings


def test_an_openclaw_folder_in_the_current_shape(tmp_path):
    root = tmp_path / "openclaw"
    root.mkdir()
    shutil.copy(FIXTURES / "current.json5", root / "openclaw.json")
    before = (root / "openclaw.json").read_bytes()
    s = openclaw_settings(root, state_dir=tmp_path / "state", env={})
    assert (s.memory_search["provider"], s.memory_search["query"]["maxResults"]) == ("none", 4)
    assert s.index_path.is_relative_to(tmp_path / "state")  # OpenClaw's folder is never written
    assert (root / "openclaw.json").read_bytes() == before and sorted(p.name for p in root.iterdir()) == ["openclaw.json"]


@pytest.mark.parametrize("config,message", [
    ({"agents": {"entries": [{"id": "main"}]}}, "agents.entries must be an object of agents by id"),
    ({"memory": {"search": {"extraPaths": [{"pattern": "*.md"}]}}}, "memory.search.extraPaths[0] must be a path"),
    ({"memory": {"search": {"extraPaths": [{"path": "a", "glob": "*.md"}]}}}, "unknown key 'glob'"),
    ({"memory": {"search": {"query": {"maxResults": "three"}}}}, "memory.search.query.maxResults must be"),
    ({"memory": "on"}, "memory must be an object"),
])
def test_a_bad_current_shape_value_is_one_clear_error(tmp_path, config, message):
    with pytest.raises(ConfigError) as err:
        load_settings(state_dir=tmp_path, config=config, env={})
    assert message in str(err.value)


def test_an_agent_in_neither_shape_is_refused_with_the_ids_there_are(tmp_path):
    with pytest.raises(ConfigError) as err:
        load("current.json5", tmp_path, agent_id="ghost")
    assert "agent 'ghost' is not in agents.entries; configured agents: main, coder" in str(err.value)
