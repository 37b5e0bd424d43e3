"""Reading the configuration: one JSON5 file with OpenClaw's key names (either of its shapes),
the environment's overrides, the agent chosen from its entries; the result is a ``Settings``."""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..sessions.openclaw import config_version
from ..text import parse
from .openclaw import (
    DEFAULT_OPENCLAW_DIR,
    OPENCLAW_CONFIG_NAME,
    PASSTHROUGH_AGENT_ENTRY_KEYS,
    PASSTHROUGH_AGENT_KEYS,
    PASSTHROUGH_MEMORY_KEYS,
    PASSTHROUGH_TOP,
    openclaw_notes,
    openclaw_search_block,
    openclaw_transcripts,
    shapes_disagree,
)
from .schema import MEMORY, MEMORY_SEARCH, defaults, merge_validated, suggest
from .settings import Settings, expand_path

log = logging.getLogger(__name__)

ENV_STATE_DIR = "MNEMOCLAW_STATE_DIR"
ENV_PG_URL = "MNEMOCLAW_PG_URL"
ENV_HOST = "MNEMOCLAW_HOST"  # this host's name in a shared Postgres namespace (default: the hostname)
ENV_CONFIG = "MNEMOCLAW_CONFIG"
ENV_WORKSPACE = "MNEMOCLAW_WORKSPACE"
ENV_AGENT = "MNEMOCLAW_AGENT"
ENV_PROVIDER = "MNEMOCLAW_PROVIDER"
ENV_MODEL_CACHE = "MNEMOCLAW_MODEL_CACHE"  # a directory for the parsed local model, or "off"

DEFAULT_AGENT = "main"
DEFAULT_STATE_DIR = "~/.mnemoclaw"
DEFAULT_CONFIG_NAME = "config.json5"  # in the state directory, when no --config names one


def parse_object(text: str, path: str | Path) -> dict[str, Any]:
    """A config file's text as the object it must hold, or ConfigError naming the file."""
    import json5  # imported here: only needed when a config file exists

    try:
        data = parse.loads(text, json5.loads)
    except ValueError as exc:
        raise ConfigError(f"config file {path} is not valid JSON5: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold an object at the top level")
    return data


def load_file(path: str) -> dict[str, Any]:
    """Parse a JSON5 config file (comments and trailing commas allowed)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist; create it with `mnemoclaw init`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    if not text.strip():
        return {}
    if text in _PARSED:  # a long-running process resolves settings per request (serve/nearby.py)
        return copy.deepcopy(_PARSED[text])
    data = parse_object(text, path)
    if len(_PARSED) >= 16:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[text] = copy.deepcopy(data)
    return data


# config texts already parsed, by their text (the JSON5 parser takes ~20 ms on the template)
_PARSED: dict[str, dict[str, Any]] = {}


def load_settings(
    *,
    workspace: str | os.PathLike[str] | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | dict[str, Any] | None = None,
    agent_id: str | None = None,
    overrides: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    default_workspace: Callable[[str], Path] | None = None,
    cwd: str | None = None,
) -> Settings:
    """Resolve settings: explicit arguments > environment > config file > defaults.

    ``overrides`` is a memorySearch block merged last (used by tools such as ``eval``). Relative
    paths are relative to ``cwd`` (default: this process's working directory).
    """
    env = dict(os.environ) if env is None else env
    warnings: list[str] = []

    def warn(msg: str) -> None:
        warnings.append(msg)
        log.warning(msg)

    state = expand_path(state_dir or env.get(ENV_STATE_DIR) or DEFAULT_STATE_DIR, cwd)
    config_path: Path | None = None
    if isinstance(config, dict):
        raw = config
    else:
        chosen = config or env.get(ENV_CONFIG)
        if chosen:
            config_path = expand_path(chosen, cwd)
            if config_path.name == OPENCLAW_CONFIG_NAME and default_workspace is None:
                # OpenClaw's own config: its defaults, its files read-only, our index in our state dir
                return openclaw_settings(config_path.parent, state_dir=state, agent_id=agent_id, env=env,
                                         workspace=workspace, overrides=overrides, cwd=cwd)
            raw = load_file(str(config_path))
        else:
            candidate = state / DEFAULT_CONFIG_NAME
            config_path = candidate if candidate.exists() else None
            raw = load_file(str(candidate)) if config_path else {}

    for key in raw:
        if key not in ("agents", "memory") and key not in PASSTHROUGH_TOP:
            warn(f"unknown config key {key}{suggest(key, ['agents', 'memory'])}; ignored")

    agents = raw.get("agents") or {}
    if not isinstance(agents, dict):
        raise ConfigError(f"agents must be an object, got {agents!r}")
    for key in agents:
        if key not in ("defaults", "list", "entries"):
            warn(f"unknown config key agents.{key}{suggest(key, ['defaults', 'list', 'entries'])}; ignored")
    agent_defaults = agents.get("defaults") or {}
    if not isinstance(agent_defaults, dict):
        raise ConfigError("agents.defaults must be an object")
    for key in agent_defaults:
        if key not in ("workspace", "memorySearch") and key not in PASSTHROUGH_AGENT_KEYS:
            warn(f"unknown config key agents.defaults.{key}{suggest(key, ['workspace', 'memorySearch'])}; ignored")
    memory_raw = raw.get("memory") or {}
    if not isinstance(memory_raw, dict):
        raise ConfigError(f"memory must be an object, got {memory_raw!r}")

    # the older shape: agents.list[] of {id, ...}; OpenClaw's current one: agents.entries.<id>
    entries = agents.get("list") or []
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError("agents.list must be a list of objects, each with an id")
    keyed = agents.get("entries") or {}
    if not isinstance(keyed, dict) or not all(isinstance(e, dict) for e in keyed.values()):
        raise ConfigError("agents.entries must be an object of agents by id, e.g. {\"main\": {\"memory\": {...}}}")
    for i, e in enumerate(entries):
        if "id" not in e:
            raise ConfigError(f"agents.list[{i}] has no id")
    chosen_id = agent_id or env.get(ENV_AGENT)
    if not chosen_id:
        marked = [str(e.get("id")) for e in entries if e.get("default")] + [k for k, e in keyed.items()
                                                                         if e.get("default")]
        first = [str(e.get("id")) for e in entries] + list(keyed)
        chosen_id = str((marked or first or [DEFAULT_AGENT])[0] or DEFAULT_AGENT)
    entry: dict[str, Any] = next((e for e in entries if str(e["id"]) == chosen_id), {})
    keyed_entry: dict[str, Any] = keyed.get(chosen_id) or {}
    if (entries or keyed) and not entry and not keyed_entry and (agent_id or env.get(ENV_AGENT)):
        ids = ", ".join(dict.fromkeys([str(e["id"]) for e in entries] + list(keyed)))
        where = " or ".join(w for w, have in (("agents.list", entries), ("agents.entries", keyed)) if have)
        raise ConfigError(f"agent {chosen_id!r} is not in {where}; configured agents: {ids}")
    for key in entry:
        if key not in ("id", "default", "workspace", "memorySearch") and key not in PASSTHROUGH_AGENT_ENTRY_KEYS:
            warn(f"unknown config key agents.list[{chosen_id}].{key}; ignored")
    for key in keyed_entry:
        if key not in ("default", "workspace", "memory") and key not in PASSTHROUGH_AGENT_ENTRY_KEYS:
            warn(f"unknown config key agents.entries.{chosen_id}.{key}; ignored")
    agent_memory = keyed_entry.get("memory") or {}
    if not isinstance(agent_memory, dict):
        raise ConfigError(f"agents.entries.{chosen_id}.memory must be an object, got {agent_memory!r}")
    for key in agent_memory:
        if key != "search":
            warn(f"unknown config key agents.entries.{chosen_id}.memory.{key}{suggest(key, ['search'])}; ignored")

    # Both shapes in one file: the more specific level wins (an agent over every agent), and at
    # one level OpenClaw's current shape wins over the older one (docs/openclaw.md).
    notes: list[str] = []
    layers = (
        (agent_defaults.get("memorySearch"), "agents.defaults.memorySearch"),
        (memory_raw.get("search"), "memory.search"),
        (entry.get("memorySearch"), f"agents.list[{chosen_id}].memorySearch"),
        (agent_memory.get("search"), f"agents.entries.{chosen_id}.memory.search"),
    )
    blocks = [(openclaw_search_block(block, where, notes), where) for block, where in layers]
    for (old, old_where), (new, new_where) in ((blocks[0], blocks[1]), (blocks[2], blocks[3])):
        if old is not None and new is not None:
            shapes_disagree(old, old_where, new, new_where, warn)
    ms = defaults(MEMORY_SEARCH)
    for block, where in blocks:
        ms = merge_validated(MEMORY_SEARCH, ms, block, where, warn)
    if env.get(ENV_PROVIDER):
        ms = merge_validated(MEMORY_SEARCH, ms, {"provider": env[ENV_PROVIDER]}, ENV_PROVIDER, warn)
    if env.get(ENV_MODEL_CACHE):
        ms = merge_validated(MEMORY_SEARCH, ms, {"local": {"modelCacheDir": env[ENV_MODEL_CACHE]}}, ENV_MODEL_CACHE,
                             warn)
    if overrides:
        ms = merge_validated(MEMORY_SEARCH, ms, overrides, "overrides", warn)
    if ms["chunking"]["overlap"] >= ms["chunking"]["tokens"]:
        raise ConfigError(
            "agents.defaults.memorySearch.chunking.overlap must be smaller than chunking.tokens "
            f"(got overlap {ms['chunking']['overlap']}, tokens {ms['chunking']['tokens']})"
        )
    if "sessions" in ms["sources"] and not ms["experimental"]["sessionMemory"]:
        warn("memorySearch.sources lists \"sessions\" but experimental.sessionMemory is false: "
             "transcripts are not indexed until it is set to true")
    mem = merge_validated(MEMORY, defaults(MEMORY), {k: v for k, v in memory_raw.items() if k != "search"},
                          "memory", warn, PASSTHROUGH_MEMORY_KEYS)
    notes += openclaw_notes(raw)

    ws_raw = (workspace or env.get(ENV_WORKSPACE) or keyed_entry.get("workspace") or entry.get("workspace")
              or agent_defaults.get("workspace"))
    if ws_raw is not None and not isinstance(ws_raw, (str, os.PathLike)):
        raise ConfigError(f"agents.defaults.workspace must be a path string, got {ws_raw!r}")
    if ws_raw:
        ws = expand_path(ws_raw, cwd)
    else:
        ws = default_workspace(chosen_id) if default_workspace else state / "workspace"
    if ":" in env.get(ENV_HOST, ""):  # a row names "host:workspace"
        raise ConfigError(f"{ENV_HOST} must not contain ':' (got {env[ENV_HOST]!r})")
    return Settings(
        agent_id=chosen_id,
        workspace=ws,
        state_dir=state,
        config_path=config_path,
        memory_search=ms,
        memory=mem,
        raw=raw,
        warnings=warnings,
        not_applied=notes,
        env_pg_url=env.get(ENV_PG_URL) or None,
        host=env.get(ENV_HOST) or None,
    )


def openclaw_settings(openclaw_dir: str | os.PathLike[str], *, state_dir: str | os.PathLike[str] | None = None,
                      agent_id: str | None = None, env: dict[str, str] | None = None,
                      workspace: str | os.PathLike[str] | None = None,
                      overrides: dict[str, Any] | None = None, cwd: str | None = None) -> Settings:
    """Settings for serving an OpenClaw agent's memory without touching OpenClaw's files.

    ``openclaw.json`` (JSON5) gives the workspace (default ``<dir>/workspace``, or
    ``workspace-<agent>`` for other agents) and the memory settings; the index is
    mnemoclaw's own, under mnemoclaw's state dir (OpenClaw's ``store.path`` names
    OpenClaw's index, which is never opened); transcripts are read from OpenClaw's
    ``agents/<id>/sessions``. Nothing is ever written under ``openclaw_dir``.
    """
    env = dict(os.environ) if env is None else env
    root = expand_path(openclaw_dir, cwd)
    cfg = root / OPENCLAW_CONFIG_NAME
    if not cfg.is_file():
        raise ConfigError(f"no {OPENCLAW_CONFIG_NAME} in {root}; pass the OpenClaw state directory "
                          f"(default {DEFAULT_OPENCLAW_DIR})")
    state = expand_path(state_dir or env.get(ENV_STATE_DIR) or DEFAULT_STATE_DIR, cwd)
    forced = {"store": {"path": str(state / "openclaw" / "{agentId}.sqlite")}}
    merged = dict(overrides or {})
    merged["store"] = {**(merged.get("store") or {}), **forced["store"]}
    settings = load_settings(
        workspace=workspace, state_dir=state, config=str(cfg), agent_id=agent_id,
        env={k: v for k, v in env.items() if k != ENV_WORKSPACE},  # OpenClaw's config says where the workspace is
        overrides=merged,
        default_workspace=lambda agent: root / ("workspace" if agent == DEFAULT_AGENT else f"workspace-{agent}"),
        cwd=cwd,
    )
    layout = openclaw_transcripts(root, settings.agent_id, state, config_version(settings.raw))
    settings.transcripts_dir = layout.sessions_dir
    settings.openclaw_dir = root
    settings.openclaw_layout = layout
    for msg in ([layout.problem] if layout.problem else []) + layout.notes:
        settings.warnings.append(msg)
        log.warning("%s", msg)
    return settings
