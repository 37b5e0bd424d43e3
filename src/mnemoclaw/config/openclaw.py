"""OpenClaw's config, as mnemoclaw reads it: the sections OpenClaw alone owns (accepted
silently), its two shapes of search block (``agents.defaults.memorySearch`` and, since
2026-07-22, ``memory.search``) brought to mnemoclaw's schema, and the settings mnemoclaw reads
and does not apply, each named with what runs instead (shown by ``status``, listed in
docs/config.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..sessions.openclaw import Layout, locate

DEFAULT_OPENCLAW_DIR = "~/.openclaw"
# A config file of this name is OpenClaw's own: it is served the way `--openclaw` serves it.
OPENCLAW_CONFIG_NAME = "openclaw.json"

# Sections of an OpenClaw config that other parts of mnemoclaw (or OpenClaw alone) own:
# accepted silently so pointing mnemoclaw at openclaw.json does not flood warnings.
PASSTHROUGH_AGENT_KEYS = {
    "model", "models", "compaction", "contextPruning", "bootstrapMaxChars", "bootstrapTotalMaxChars",
    "heartbeat", "sandbox", "tools", "timeoutSeconds", "thinkingDefault", "verboseDefault",
    "userTimezone", "timeFormat", "contextTokens", "maxConcurrent", "subagents", "blockStreamingDefault",
    "typingMode", "humanDelay", "skipBootstrap", "repoRoot", "elevatedDefault", "imageModel", "cliBackends",
    "envelopeTimezone", "envelopeTimestamp", "envelopeElapsed", "mediaMaxMb", "session",
}
PASSTHROUGH_AGENT_ENTRY_KEYS = PASSTHROUGH_AGENT_KEYS | {
    "name", "identity", "groupChat", "agentDir", "subagents", "params",
}
PASSTHROUGH_MEMORY_KEYS = {"qmd", "git"}
PASSTHROUGH_TOP = {
    "models", "channels", "gateway", "auth", "wizard", "meta", "logging", "messages", "commands", "session",
    "cron", "hooks", "skills", "plugins", "browser", "ui", "tools", "bindings", "broadcast", "audio",
    "talk", "env", "diagnostics", "update", "discovery", "canvasHost", "web", "approvals", "nodeHost",
    "llm", "mcp", "acp", "secrets", "$schema",
}


# Keys of OpenClaw's current memory search settings (memory.search, since 2026-07-22) that
# mnemoclaw accepts and does not apply: what runs instead, shown by `status`.
OPENCLAW_SEARCH_NOT_APPLIED = {
    "inputType": "the provider's own input types (Voyage: query and document; the others: none)",
    "queryInputType": "the provider's own input types (Voyage: query and document; the others: none)",
    "documentInputType": "the provider's own input types (Voyage: query and document; the others: none)",
    "outputDimensionality": "vectors keep the model's own size",
    "multimodal": "only Markdown is indexed (images and audio are not)",
    "rememberAcrossConversations": "what is indexed is set by sources and experimental.sessionMemory",
}
OPENCLAW_FTS_NOT_APPLIED = ("mnemoclaw's own analyzer runs for every language (words stemmed; Chinese, Japanese and "
                    "Korean as characters and pairs), which finds what unicode61 and trigram find")


def openclaw_search_block(block: Any, where: str, notes: list[str]) -> Any:
    """A search block in either OpenClaw shape, as mnemoclaw's memorySearch schema reads it:
    ``extraPaths`` entries given as ``{path, pattern}`` become their path (the pattern is named
    in ``notes``), and the keys OpenClaw accepts that mnemoclaw does not apply are taken out and
    named in ``notes`` with what runs instead."""
    if not isinstance(block, dict):
        return block  # merge_validated names the type error
    out = dict(block)
    for key, instead in OPENCLAW_SEARCH_NOT_APPLIED.items():
        if key in out:
            notes.append(f"{where}.{key} = {json.dumps(out.pop(key))}: not applied; {instead}")
    store = out.get("store")
    if isinstance(store, dict) and "fts" in store:
        store = dict(store)
        fts = store.pop("fts")
        out["store"] = store
        notes.append(f"{where}.store.fts = {json.dumps(fts)}: not applied; {OPENCLAW_FTS_NOT_APPLIED}")
    paths = out.get("extraPaths")
    if isinstance(paths, str):
        paths = [paths]
    if isinstance(paths, list):
        flat = []
        for i, entry in enumerate(paths):
            if isinstance(entry, dict):
                if not isinstance(entry.get("path"), str) or not entry["path"].strip():
                    raise ConfigError(f"{where}.extraPaths[{i}] must be a path or {{path, pattern}} with a path, "
                                      f"got {entry!r}")
                unknown = sorted(set(entry) - {"path", "pattern"})
                if unknown:
                    raise ConfigError(f"{where}.extraPaths[{i}] has unknown key {unknown[0]!r} (keys: path, pattern)")
                if entry.get("pattern") not in (None, ""):
                    notes.append(f"{where}.extraPaths[{i}].pattern = {json.dumps(entry['pattern'])}: not applied; "
                                 f"every Markdown file under {entry['path']} is indexed")
                flat.append(entry["path"])
            else:
                flat.append(entry)
        out["extraPaths"] = flat
    return out


def _leaves(block: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(block, dict):
        return {prefix: block} if prefix else {}
    out: dict[str, Any] = {}
    for key, value in block.items():
        out.update(_leaves(value, f"{prefix}.{key}" if prefix else key) if isinstance(value, dict)
                   else {f"{prefix}.{key}" if prefix else key: value})
    return out


def shapes_disagree(old: Any, old_where: str, new: Any, new_where: str, warn: Callable[[str], None]) -> None:
    """One line for each setting both config shapes give, differently, at the same level."""
    theirs, ours = _leaves(old), _leaves(new)
    for key in sorted(set(theirs) & set(ours)):
        if theirs[key] != ours[key]:
            warn(f"{new_where}.{key} ({json.dumps(ours[key])}) and {old_where}.{key} ({json.dumps(theirs[key])}) "
                 f"are both set: {new_where} (OpenClaw's current shape) wins; remove one of them")


EXCLUDE_SESSION_KEYS = ("channels", "chatTypes", "hookExternalContentSources")

# OpenClaw settings outside its search block that mnemoclaw reads and does not apply: what runs
# instead ("not applied yet" when a later version means to)
OPENCLAW_NOT_APPLIED = {
    "plugins.slots.memory": ("not applied", "mnemoclaw serves the workspace's Markdown memory as memory-core does "
                             "(named only when the slot is not \"memory-core\")"),
    "session.dmScope": ("not applied", "transcripts are read per file, whatever scope made them"),
}


# OpenClaw settings outside its search block that mnemoclaw reads and applies, and how
OPENCLAW_APPLIED = {
    "plugins.entries.memory-core.config.dreaming": "mnemoclaw promote: enabled runs it at frequency (cron, local "
                                                   "time) in a running watch, mcp or ui; phases.deep."
                                                   "maxPromotedSnippetTokens and maxPriorEntryLossFraction bound it; "
                                                   "docs/promote.md",
    "tools.sessions.visibility": "sessions_search: \"all\" searches every agent's transcripts, any other value this "
                                 "agent's own; memory_search indexes this agent's own",
}


def openclaw_notes(raw: dict[str, Any]) -> list[str]:
    """The keys of ``OPENCLAW_NOT_APPLIED`` the config sets, each with what runs instead."""
    notes: list[str] = []
    for key, (state, instead) in OPENCLAW_NOT_APPLIED.items():
        node: Any = raw
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None or (key == "plugins.slots.memory" and node == "memory-core"):
            continue
        shown = "{…}" if isinstance(node, dict) else json.dumps(node)
        notes.append(f"{key} = {shown}: {state}; {instead}")
    return notes


def openclaw_transcripts(root: Path, agent_id: str, state_dir: Path, version: str | None) -> Layout:
    """Where OpenClaw keeps ``agent_id``'s transcripts: its files, or (2026.7.2 on) a JSONL copy
    of its database under mnemoclaw's state dir, made afresh when the database changed."""
    return locate(root, agent_id, state_dir / "openclaw" / agent_id / "sessions", version=version)
