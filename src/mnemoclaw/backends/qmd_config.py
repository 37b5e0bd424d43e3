"""``memory.qmd`` as written in OpenClaw's config: read, checked (each mistake named with its
fix) and turned into the collections qmd should hold."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .qmd_client import TIMEOUTS, Collection

SEARCH_MODES = ("search", "vsearch", "query")
DEFAULT_COLLECTIONS = ("memory-root", "memory-alt", "memory-dir")


@dataclass(frozen=True, slots=True)
class QmdConfig:
    command: str = "qmd"
    search_mode: str = "search"
    include_default: bool = True
    paths: tuple[Collection, ...] = ()
    sessions: bool = False
    retention_days: float = 30.0
    update_interval: float = 300.0
    timeout: float = TIMEOUTS["search"]
    merge_builtin: bool = True
    debounce: float = 15.0
    on_boot: bool = True
    timeouts: tuple[tuple[str, float], ...] = ()  # collection / update / embed, from update.*TimeoutMs
    max_results: int | None = None
    export_dir: Path | None = None
    scope: tuple[str, tuple[tuple[str, dict[str, str]], ...]] | None = None  # (default, ((action, match), ...))

    @classmethod
    def parse(cls, raw: Any) -> QmdConfig:
        """``memory.qmd`` as written in the config; each mistake named with its fix."""
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise ConfigError("memory.qmd must be an object, e.g. {command: \"qmd\", searchMode: \"search\"}")
        known = {"command", "searchMode", "includeDefaultMemory", "paths", "sessions", "update", "limits",
                 "mergeBuiltin", "scope"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ConfigError(f"memory.qmd.{unknown[0]} is not a setting of the QMD backend; known: "
                              f"{', '.join(sorted(known))}")
        mode = raw.get("searchMode", "search")
        if mode not in SEARCH_MODES:
            raise ConfigError(f"memory.qmd.searchMode {mode!r} is not one of {', '.join(SEARCH_MODES)} "
                              "(\"search\" is BM25 and needs no model)")
        command = raw.get("command", "qmd")
        if not isinstance(command, str) or not command.strip():
            raise ConfigError("memory.qmd.command must be the qmd executable: a name on PATH or a path")
        paths = []
        entries = raw.get("paths") or []
        if not isinstance(entries, list):
            raise ConfigError("memory.qmd.paths must be a list of {name?, path, pattern?}")
        names: set[str] = {*DEFAULT_COLLECTIONS, "sessions"}
        for i, entry in enumerate(entries):
            where = f"memory.qmd.paths[{i}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not entry["path"].strip():
                raise ConfigError(f"{where} needs a path, e.g. {{name: \"notes\", path: \"~/notes\"}}")
            path = Path(os.path.expanduser(entry["path"])).absolute()
            name = str(entry.get("name") or _slug(path.name) or f"path-{i}")
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
                raise ConfigError(f"{where}.name {name!r}: use letters, digits, '.', '_' and '-' only")
            if name in names:
                raise ConfigError(f"{where}.name {name!r} is used twice (or is a name the workspace's own "
                                  f"collections use: {', '.join(DEFAULT_COLLECTIONS)}); give it another name")
            names.add(name)
            pattern = str(entry.get("pattern") or "**/*.md")
            paths.append(Collection(name, path, pattern))
        update = raw.get("update") or {}
        limits = raw.get("limits") or {}
        sessions = raw.get("sessions") or {}
        ms = {"commandTimeoutMs": "collection", "updateTimeoutMs": "update", "embedTimeoutMs": "embed"}
        timeouts = tuple((what, float(update[key]) / 1000.0) for key, what in ms.items() if key in update)
        export = sessions.get("exportDir") if isinstance(sessions, dict) else None
        return cls(command=command.strip(), search_mode=mode,
                   debounce=float(update.get("debounceMs", 15000)) / 1000.0, on_boot=bool(update.get("onBoot", True)),
                   timeouts=timeouts, max_results=int(limits["maxResults"]) if limits.get("maxResults") else None,
                   export_dir=Path(os.path.expanduser(str(export))).absolute() if export else None,
                   scope=_scope(raw.get("scope")),
                   include_default=bool(raw.get("includeDefaultMemory", True)),
                   paths=tuple(paths), sessions=bool(sessions.get("enabled")) if isinstance(sessions, dict) else False,
                   retention_days=float(sessions.get("retentionDays", 30)) if isinstance(sessions, dict) else 30.0,
                   update_interval=_seconds(update.get("interval", "5m"), "memory.qmd.update.interval"),
                   timeout=float(limits.get("timeoutMs", TIMEOUTS["search"] * 1000)) / 1000.0,
                   merge_builtin=bool(raw.get("mergeBuiltin", True)))

    def session_collection(self, home: Path) -> Collection | None:
        """Where transcripts are exported as Markdown for qmd (under the agent's qmd folder)."""
        return Collection("sessions", self.export_dir or Path(home) / "sessions", "**/*.md") if self.sessions else None

    def scope_denies(self, chat_type: str, channel: str | None = None, key: str = "") -> str | None:
        """Why ``memory.qmd.scope`` refuses a search from this chat (None: allowed). The rules
        are session.sendPolicy's: the first whose match fits decides, else the default."""
        if self.scope is None:
            return None
        default, rules = self.scope
        seen = {"chatType": chat_type, "channel": channel or "", "keyPrefix": key}
        for action, match in rules:
            if all((seen["keyPrefix"].startswith(v) if k == "keyPrefix" else seen[k] == v) for k, v in match.items()):
                return None if action == "allow" else f"a rule of memory.qmd.scope denies {chat_type} chats"
        return None if default == "allow" else f"memory.qmd.scope denies {chat_type} chats by default"

    def check_paths(self) -> None:
        for i, c in enumerate(self.paths):
            if not c.path.is_dir():
                raise ConfigError(f"memory.qmd.paths[{i}].path {str(c.path)!r} is not a folder that exists: "
                                  "create it or remove the entry")

    def collections(self, workspace: Path) -> list[Collection]:
        """What qmd should hold now: the workspace's memory files that exist, and the paths."""
        out = []
        if self.include_default:
            ws = Path(workspace).absolute()
            root, alt = ws / "MEMORY.md", ws / "memory.md"
            if root.is_file():
                out.append(Collection("memory-root", ws, "MEMORY.md", True))
            # on a case-insensitive disk both names are one file: once
            if alt.is_file() and not (root.is_file() and os.path.samefile(root, alt)):
                out.append(Collection("memory-alt", ws, "memory.md", True))
            if (ws / "memory").is_dir():
                out.append(Collection("memory-dir", ws / "memory", "**/*.md", True))
        return out + [c for c in self.paths if c.path.is_dir()]


def _scope(raw: Any) -> tuple[str, tuple[tuple[str, dict[str, str]], ...]] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("default", "deny") not in ("allow", "deny"):
        raise ConfigError("memory.qmd.scope must be {default: \"deny\" or \"allow\", rules: [{action, match}]}")
    rules = []
    for i, rule in enumerate(raw.get("rules") or []):
        where = f"memory.qmd.scope.rules[{i}]"
        if not isinstance(rule, dict) or rule.get("action") not in ("allow", "deny"):
            raise ConfigError(f"{where} needs action \"allow\" or \"deny\"")
        match = rule.get("match") or {}
        unknown = set(match) - {"chatType", "channel", "keyPrefix"} if isinstance(match, dict) else {"?"}
        if unknown:
            raise ConfigError(f"{where}.match may name chatType, channel or keyPrefix, not {sorted(unknown)[0]}")
        rules.append((str(rule["action"]), {str(k): str(v) for k, v in match.items()}))
    return str(raw.get("default", "deny")), tuple(rules)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.").lower()


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, int | float):
        return float(value)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", str(value))
    if not m:
        raise ConfigError(f"{where} {value!r} is not a duration: write e.g. \"5m\", \"30s\" or a number of seconds")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]
