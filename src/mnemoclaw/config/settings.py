"""``Settings``: the resolved configuration of one agent, and what follows from it (where its
index, state and transcripts are, the options the store, the indexer and the searcher take, the
settings that are accepted and do not take effect)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backends.qmd import qmd_roots
from ..errors import ConfigError, ReadOnlyError
from ..index.indexer import IndexSpec
from ..search.searcher import QueryOptions
from ..sessions.openclaw import Layout
from ..store.base import StoreOptions
from .openclaw import EXCLUDE_SESSION_KEYS, openclaw_transcripts

log = logging.getLogger(__name__)


def expand_path(p: str | os.PathLike[str], cwd: str | None = None) -> Path:
    """``p`` with ``~`` expanded, relative to ``cwd`` (default: this process's working directory)."""
    return (Path(cwd or os.getcwd()) / os.path.expanduser(str(p))).absolute()


@dataclass
class Settings:
    """Resolved configuration for one agent."""

    agent_id: str
    workspace: Path
    state_dir: Path
    config_path: Path | None
    memory_search: dict[str, Any]
    memory: dict[str, Any]
    raw: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    transcripts_dir: Path | None = None  # where session transcripts live, if not under state_dir
    env_pg_url: str | None = None  # MNEMOCLAW_PG_URL: the Postgres store's server when the config names none
    host: str | None = None  # MNEMOCLAW_HOST: this host's name in a Postgres namespace's rows (None: the hostname)
    # Set when the agent is OpenClaw's: its workspace and transcripts are OpenClaw's files,
    # read and never written; mnemoclaw's index and state stay under ``state_dir``.
    openclaw_dir: Path | None = None
    # where that agent's transcripts were found (files, or a copy of OpenClaw's database)
    openclaw_layout: Layout | None = None
    # OpenClaw keys accepted from the config but not applied, each with what runs instead
    not_applied: list[str] = field(default_factory=list)

    def refresh_transcripts(self) -> None:
        """Bring the copy of an OpenClaw agent's transcripts up to date when OpenClaw keeps
        them in its database (a no-op when the database did not change, or for files)."""
        if self.openclaw_dir is not None and self.openclaw_layout is not None \
                and self.openclaw_layout.kind == "sqlite":
            self.openclaw_layout = openclaw_transcripts(self.openclaw_dir, self.agent_id, self.state_dir,
                                                        self.openclaw_layout.version)
            for note in self.openclaw_layout.notes:
                log.warning("%s", note)

    def check_writable(self, what: str) -> None:
        """Refuse ``what`` (a write into the workspace or the transcripts) for an OpenClaw agent."""
        if self.openclaw_dir is not None:
            raise ReadOnlyError(
                f"{what} would write into OpenClaw's files ({self.openclaw_dir}); mnemoclaw serves an OpenClaw "
                "agent's memory read-only. Write through OpenClaw, or give mnemoclaw a workspace of its own "
                "(`mnemoclaw init --workspace DIR`)"
            )

    @property
    def index_path(self) -> Path:
        configured = self.memory_search["store"]["path"]
        if configured:
            p = configured.replace("{agentId}", self.agent_id)
            return Path(os.path.expanduser(p)).resolve()
        return self.state_dir / "memory" / f"{self.agent_id}.sqlite"

    @property
    def index_state_dir(self) -> Path:
        """What belongs to this agent's index but is not the index: the write lock, the
        provider fallback state, the damage marker (one folder per index file)."""
        key = hashlib.sha256(str(self.index_path).encode()).hexdigest()[:12]
        return self.state_dir / "agents" / self.agent_id / "index" / key

    def store_options(self) -> StoreOptions:
        store = self.memory_search["store"]
        url = store.get("url") or self.env_pg_url
        return StoreOptions(driver=store["driver"], path=str(self.index_path), state_dir=str(self.index_state_dir),
                            vector_enabled=store["vector"]["enabled"], extension_path=store["vector"]["extensionPath"],
                            url=url, namespace=str(store["namespace"]).replace("{agentId}", self.agent_id),
                            shared=tuple(store.get("shared") or ()), host=self.host, workspace=str(self.workspace))

    def index_spec(self) -> IndexSpec:
        """Everything that decides what the index holds (a change means a full rebuild)."""
        ms = self.memory_search
        sources = self.index_sources()
        return IndexSpec(
            workspace=str(self.workspace),
            extra_paths=tuple(str(p) for p in self.extra_paths()),
            sources=sources,
            chunk_tokens=ms["chunking"]["tokens"],
            chunk_overlap=ms["chunking"]["overlap"],
            cache_enabled=ms["cache"]["enabled"],
            cache_max_entries=ms["cache"]["maxEntries"],
            sessions_dir=str(self.sessions_dir) if "sessions" in sources else None,
            session_delta_bytes=ms["sync"]["sessions"]["deltaBytes"],
            session_delta_messages=ms["sync"]["sessions"]["deltaMessages"],
            state_dir=str(self.state_dir),
            exclude_sessions=tuple(sorted(self.exclude_sessions().items())),
        )

    def query_options(self) -> QueryOptions:
        return QueryOptions.from_config(self.memory_search["query"])

    @property
    def sessions_dir(self) -> Path:
        if self.transcripts_dir is not None:
            return self.transcripts_dir
        return self.state_dir / "agents" / self.agent_id / "sessions"

    def index_sources(self) -> tuple[str, ...]:
        """The sources actually indexed: transcripts need ``experimental.sessionMemory`` too."""
        sources = self.memory_search["sources"]
        if "sessions" in sources and not self.memory_search["experimental"]["sessionMemory"]:
            sources = [s for s in sources if s != "sessions"]
        return tuple(dict.fromkeys(sources)) or ("memory",)

    def ignored(self) -> list[str]:
        """Settings that are accepted but do not take effect, each by name, with why.

        Checked when asked (an extra path may appear or vanish while a process runs).
        """
        out = []
        for raw, p in zip(self.memory_search["extraPaths"], self.extra_paths(), strict=False):
            where = f"memorySearch.extraPaths entry {raw!r}"
            try:
                st = p.lstat()
            except OSError:
                out.append(f"{where} does not exist ({p}); nothing is indexed from it")
                continue
            if stat.S_ISLNK(st.st_mode):
                out.append(f"{where} is a symbolic link; links are never followed, so nothing is indexed from it "
                           f"(give the real path {os.path.realpath(p)})")
            elif stat.S_ISREG(st.st_mode) and not p.name.lower().endswith(".md"):
                out.append(f"{where} is not a Markdown file (.md); only Markdown is indexed")
            elif not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
                out.append(f"{where} is neither a file nor a folder; nothing is indexed from it")
        qmd = (self.raw.get("memory") or {}).get("qmd") if isinstance(self.raw.get("memory"), dict) else None
        qmd_keys = ", ".join(f"memory.qmd.{k}" for k in qmd) if isinstance(qmd, dict) and qmd else ""
        if self.memory["backend"] == "qmd" and isinstance(qmd, dict):
            for key, names in (("update", ("waitForBootSync", "embedInterval")),
                               ("limits", ("maxSnippetChars", "maxInjectedChars"))):
                group = qmd.get(key)
                for name in names:
                    if isinstance(group, dict) and name in group:
                        out.append(f"memory.qmd.{key}.{name}: not used by this version (snippets are capped at "
                                   "700 characters a result for every backend)" if key == "limits" else
                                   f"memory.qmd.{key}.{name}: not used by this version")
        if self.memory["backend"] != "qmd" and qmd_keys:
            out.append(f"{qmd_keys} set, but memory.backend is \"builtin\": not used")
        return out + self.not_applied

    @property
    def model_cache_dir(self) -> Path | None:
        """Where the bundled model's parsed form is kept between processes (``None``: off)."""
        raw = self.memory_search["local"].get("modelCacheDir")
        if raw is not None and raw.strip().lower() in ("off", "none", "false", ""):
            return None
        return expand_path(raw) if raw else self.state_dir / "cache"

    def exclude_sessions(self) -> dict[str, tuple[str, ...]]:
        """OpenClaw's admission policy, ``plugins.entries.memory-core.config.memoryPolicy.excludeSessions``:
        ``channels``, ``chatTypes`` and ``hookExternalContentSources``, each a list of exact,
        case-sensitive names; a session matching any of them is never written to memory nor
        indexed ({} when the config sets none)."""
        node: Any = self.raw
        where = "plugins.entries.memory-core.config.memoryPolicy.excludeSessions"
        for part in where.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return {}
        if not isinstance(node, dict):
            raise ConfigError(f"{where} must be an object with channels, chatTypes or hookExternalContentSources "
                              f"(lists of names); got {json.dumps(node)}")
        out: dict[str, tuple[str, ...]] = {}
        for key, value in node.items():
            if key not in EXCLUDE_SESSION_KEYS:
                raise ConfigError(f"{where}.{key} is not a setting; the settings are "
                                  f"{', '.join(EXCLUDE_SESSION_KEYS)}")
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise ConfigError(f"{where}.{key} must be a list of names (for example [\"whatsapp\"]); "
                                  f"got {json.dumps(value)}")
            if value:
                out[key] = tuple(value)
        return out

    def extra_paths(self) -> list[Path]:
        """memorySearch.extraPaths, and with the QMD backend the folders of memory.qmd.paths (the
        builtin index holds them too: it answers whenever qmd cannot)."""
        out = []
        for raw in self.memory_search["extraPaths"]:
            p = Path(os.path.expanduser(raw))
            out.append(p if p.is_absolute() else self.workspace / p)
        if self.memory["backend"] == "qmd":
            out.extend(p for p in qmd_roots(self.qmd_config, self.qmd_home) if p not in out)
        return out

    @property
    def qmd_config(self) -> Any:
        memory = self.raw.get("memory")
        return memory.get("qmd") if isinstance(memory, dict) else None

    @property
    def qmd_home(self) -> Path:
        """The agent's own qmd: config, cache and index folders (never the user's ~/.config/qmd)."""
        return self.state_dir / "agents" / self.agent_id / "qmd"
