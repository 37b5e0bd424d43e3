import json
import logging
import os
from pathlib import Path

import pytest

from mnemoclaw.config import load_settings
from mnemoclaw.errors import ConfigError
from mnemoclaw.search.relevance import DEFAULT_MIN_SCORE


def test_defaults_follow_openclaw(tmp_path):
    s = load_settings(state_dir=tmp_path, config={}, env={})
    ms = s.memory_search
    assert ms["chunking"] == {"tokens": 400, "overlap": 80}
    assert ms["query"]["maxResults"] == 6
    # the one default that is ours: a score is a calibrated chance here (docs/quality.md)
    assert ms["query"]["minScore"] == DEFAULT_MIN_SCORE
    assert ms["query"]["hybrid"]["candidateMultiplier"] == 4
    assert ms["query"]["hybrid"]["mmr"] == {"enabled": False, "lambda": 0.7}
    assert ms["query"]["hybrid"]["temporalDecay"] == {"enabled": False, "halfLifeDays": 30}
    assert ms["sources"] == ["memory"]
    assert s.agent_id == "main"
    assert s.workspace == tmp_path / "workspace"
    assert s.index_path == tmp_path / "memory" / "main.sqlite"


def test_json5_file_with_comments_and_trailing_commas(tmp_path):
    cfg = tmp_path / "config.json5"
    cfg.write_text("""// comment
    {
      agents: {
        defaults: {
          workspace: "~/notes",
          memorySearch: { chunking: { tokens: 200, overlap: 20, }, },  // trailing commas
        },
      },
    }""")
    s = load_settings(state_dir=tmp_path, config=str(cfg), env={})
    assert s.memory_search["chunking"] == {"tokens": 200, "overlap": 20}
    assert s.workspace == Path("~/notes").expanduser()
    assert s.config_path == cfg


def test_unknown_key_warns_with_a_suggestion(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        s = load_settings(state_dir=tmp_path, env={}, config={
            "agents": {"defaults": {"memorySearch": {"chunkng": {"tokens": 10}}}}})
    assert any("agents.defaults.memorySearch.chunkng" in w and "chunking" in w for w in s.warnings)
    assert "chunkng" in caplog.text


def test_bad_value_names_the_key_and_the_allowed_values(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_settings(state_dir=tmp_path, env={}, config={
            "agents": {"defaults": {"memorySearch": {"provider": "openia"}}}})
    msg = str(err.value)
    assert "agents.defaults.memorySearch.provider" in msg
    assert "openai" in msg and "local" in msg and "'openia'" in msg


@pytest.mark.parametrize("block,fragment", [
    ({"query": {"maxResults": "ten"}}, "query.maxResults must be a finite number"),
    ({"query": {"minScore": float("nan")}}, "query.minScore must be a finite number"),
    ({"chunking": {"tokens": float("inf")}}, "chunking.tokens must be a finite number"),
    ({"extraPaths": [""]}, "extraPaths must be a list of non-empty strings"),
    ({"query": {"minScore": 1.5}}, "query.minScore must be >= 0.0 and <= 1.0"),
    ({"chunking": {"tokens": 100, "overlap": 100}}, "overlap must be smaller"),
    ({"sources": ["memory", "email"]}, "'email' is not one of memory, sessions"),
    ({"query": {"hybrid": {"fusion": "max"}}}, "must be one of zscore, minmax, rrf, weighted"),
    ({"enabled": "yes"}, "enabled must be true or false"),
])
def test_each_bad_value_is_explained(tmp_path, block, fragment):
    with pytest.raises(ConfigError, match=None) as err:
        load_settings(state_dir=tmp_path, env={}, config={"agents": {"defaults": {"memorySearch": block}}})
    assert fragment in str(err.value)


def test_per_agent_override_in_agents_list(tmp_path):
    config = {"agents": {
        "defaults": {"memorySearch": {"query": {"maxResults": 8}}},
        "list": [
            {"id": "main", "default": True},
            {"id": "work", "workspace": str(tmp_path / "work"), "memorySearch": {"query": {"maxResults": 3}}},
        ],
    }}
    main = load_settings(state_dir=tmp_path, config=config, env={})
    work = load_settings(state_dir=tmp_path, config=config, agent_id="work", env={})
    assert main.agent_id == "main" and main.memory_search["query"]["maxResults"] == 8
    assert work.memory_search["query"]["maxResults"] == 3
    assert work.workspace == tmp_path / "work"
    assert work.index_path.name == "work.sqlite"
    with pytest.raises(ConfigError, match="configured agents: main, work"):
        load_settings(state_dir=tmp_path, config=config, agent_id="nobody", env={})


def test_environment_overrides(tmp_path):
    cfg = tmp_path / "c.json5"
    cfg.write_text("{agents: {defaults: {memorySearch: {provider: 'local'}}}}")
    env = {"MNEMOCLAW_STATE_DIR": str(tmp_path / "st"), "MNEMOCLAW_CONFIG": str(cfg),
           "MNEMOCLAW_WORKSPACE": str(tmp_path / "ws"), "MNEMOCLAW_PROVIDER": "none"}
    s = load_settings(env=env)
    assert s.state_dir == tmp_path / "st"
    assert s.workspace == tmp_path / "ws"
    assert s.memory_search["provider"] == "none"
    # explicit arguments beat the environment
    assert load_settings(env=env, workspace=tmp_path / "other").workspace == tmp_path / "other"


def test_openclaw_config_is_read_without_noise(tmp_path):
    cfg = tmp_path / "openclaw.json"
    cfg.write_text("""{
      // an OpenClaw config: sections mnemoclaw does not own are accepted quietly
      gateway: { port: 18789 },
      channels: { telegram: { enabled: true } },
      agents: { defaults: { workspace: "%s", model: { primary: "x" },
                compaction: { reserveTokensFloor: 40000 },
                memorySearch: { provider: "local", store: { path: "~/.openclaw/memory/{agentId}.sqlite" } } } },
      memory: { backend: "builtin", citations: "on", qmd: { searchMode: "search" } },
    }""" % (tmp_path / "ws"))
    s = load_settings(state_dir=tmp_path / "st", config=str(cfg), env={})
    assert s.warnings == []
    assert s.memory["citations"] == "on"
    # OpenClaw's store.path names OpenClaw's own index: mnemoclaw keeps its index in its state dir
    assert s.index_path == tmp_path / "st" / "openclaw" / "main.sqlite"
    assert s.openclaw_dir == tmp_path and s.sessions_dir == tmp_path / "agents" / "main" / "sessions"
    # the same settings in a config file of mnemoclaw's own: store.path is honoured
    mine = tmp_path / "mine.json5"
    mine.write_text(cfg.read_text())
    s = load_settings(state_dir=tmp_path / "st", config=str(mine), env={})
    assert s.index_path == Path("~/.openclaw/memory/main.sqlite").expanduser() and s.openclaw_dir is None


def test_broken_config_file_is_a_clear_error(tmp_path):
    cfg = tmp_path / "bad.json5"
    cfg.write_text("{ agents: { ")
    with pytest.raises(ConfigError, match="not valid JSON5"):
        load_settings(config=str(cfg), env={})
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(config=str(tmp_path / "missing.json5"), env={})


def test_settings_that_do_not_take_effect_are_named_in_status_and_once_on_stderr(tmp_path):
    import subprocess
    import sys

    from conftest import REPO

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("- tea with milk\n")
    real = tmp_path / "notes"
    real.mkdir()
    (real / "a.md").write_text("- the real notes\n")
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "todo.txt").write_text("- not markdown\n")
    cfg = tmp_path / "config.json5"
    cfg.write_text(json.dumps({
        "agents": {"defaults": {"workspace": str(ws), "memorySearch": {
            "provider": "none",
            "extraPaths": [str(tmp_path / "missing"), str(tmp_path / "link"), str(tmp_path / "todo.txt"), str(real)],
            "query": {"hybrid": {"vectorWeight": 0.7, "textWeight": 0.3}}}}},  # copied from OpenClaw's docs
        "memory": {"backend": "qmd", "qmd": {"searchMode": "search", "paths": []}},
    }))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop("MNEMOCLAW_PROVIDER", None)
    base = [sys.executable, "-m", "mnemoclaw.cli", "--config", str(cfg), "--state-dir", str(tmp_path / "st")]
    env["PATH"] = str(tmp_path / "no-qmd-here")  # the qmd backend finds no qmd: it says so and falls back
    for needle in ("'" + str(tmp_path / "missing") + "' does not exist", "is a symbolic link",
                   "is not a Markdown file", "qmd cannot serve memory search (qmd was not found"):
        assert run_count(base, env, needle) == 1, needle
    st = json.loads(subprocess.run([*base, "status", "--json"], capture_output=True, text=True, env=env,
                                   timeout=120).stdout)
    assert len(st["ignoredSettings"]) == 3  # three extra paths; the real folder is fine
    assert st["backend"] == "qmd" and "qmd was not found" in st["qmd"]["fallback"]["reason"]
    assert "fixed weights vector 0.70 / text 0.30" in st["ranking"] and "0.872" in st["ranking"]
    human = subprocess.run([*base, "status"], capture_output=True, text=True, env=env, timeout=120).stdout
    assert human.count("NOT IN EFFECT") == 3 and "ranking" in human and "QMD FALLBACK" in human


def run_count(base: list[str], env: dict[str, str], needle: str) -> int:
    import subprocess

    run = subprocess.run([*base, "search", "tea"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stderr.count(needle)


def test_status_says_what_min_score_means_and_when_it_is_not_the_measured_default(workspace, make_memory):
    st = make_memory(workspace).status()
    assert st["minScore"].startswith(f"{DEFAULT_MIN_SCORE:g}: ") and "the measured default" in st["minScore"]
    copied = make_memory(workspace, overrides={"query": {"minScore": 0.35}}).status()
    assert copied["minScore"].startswith("0.35 (query.minScore)")
    assert f"the measured default is {DEFAULT_MIN_SCORE:g}" in copied["minScore"] and "OpenClaw" in copied["minScore"]
