"""Configuration: one JSON5 file with OpenClaw's key names, environment overrides, validation.

This is the only module that reads configuration. Everything below it receives plain
values. Unknown keys produce a warning that names them (with a suggestion); bad
values raise ``ConfigError`` naming the key and what is allowed.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import logging
import math
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .atomic import write_atomic
from .backends import BACKENDS
from .backends.qmd import qmd_roots
from .embeddings.base import available_providers
from .errors import ConfigError, ReadOnlyError
from .index.indexer import IndexSpec
from .search.relevance import DEFAULT_MIN_SCORE
from .search.searcher import QueryOptions
from .sessions.openclaw import Layout, config_version, locate
from .store import DRIVERS as STORE_DRIVERS
from .store.base import StoreOptions
from .text import parse

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
DEFAULT_OPENCLAW_DIR = "~/.openclaw"
# A config file of this name is OpenClaw's own: it is served the way `--openclaw` serves it.
OPENCLAW_CONFIG_NAME = "openclaw.json"
DEFAULT_CONFIG_NAME = "config.json5"  # in the state directory, when no --config names one
FUSIONS = ("zscore", "minmax", "rrf", "weighted")
# The default fusion was chosen by measurement (docs/quality.md): z-score fusion is
# never worse than the better single signal on any evaluation set, the 0.7/0.3
# weighted merge loses to keyword-only search on conversational data.
DEFAULT_FUSION = "zscore"


@dataclass(frozen=True)
class F:
    """A leaf of the schema: a default and a validator."""

    default: Any
    kind: str  # "bool" | "int" | "float" | "str" | "choice" | "provider" | "list[str]" | "dict[str,str]" | "any"
    choices: tuple[str, ...] = ()
    lo: float | None = None
    hi: float | None = None
    nullable: bool = False
    doc: str = ""  # what the key does, for the configuration reference (docs/config.md)


MEMORY_SEARCH: dict[str, Any] = {
    "enabled": F(True, "bool", doc="search memory at all (false: memory_search says it is disabled)"),
    "sources": F(["memory"], "list[str]", choices=("memory", "sessions"),
                 doc="what is indexed: the memory files, and with experimental.sessionMemory the transcripts"),
    "extraPaths": F([], "list[str]", doc="more Markdown files or folders to index (absolute, workspace-relative or ~)"),
    "provider": F("auto", "provider", doc="where vectors come from: auto, local, openai, gemini, voyage, mistral, "
                  "ollama, a registered provider, or none (keyword-only); docs/providers.md"),
    "model": F(None, "str", nullable=True, doc="the provider's model (null: its default)"),
    "fallback": F("none", "provider", doc="a provider to switch to when this one keeps failing"),
    "local": {
        "modelPath": F(None, "str", nullable=True, doc="a GGUF embedding model file of your own (llama.cpp)"),
        "modelCacheDir": F(None, "str", nullable=True,
                           doc="where the bundled model keeps its parsed form (default STATE_DIR/cache; "
                               "\"off\" turns it off)"),
        "threads": F(None, "int", lo=1, hi=256, nullable=True, doc="threads the local model uses (null: one)"),
    },
    "remote": {
        "baseUrl": F(None, "str", nullable=True, doc="a remote provider's endpoint (any OpenAI-compatible "
                     "server with openai)"),
        "apiKey": F(None, "str", nullable=True, doc="its key (else the provider's environment variable)"),
        "headers": F({}, "dict[str,str]", doc="extra request headers (the non-secret ones identify the vector space)"),
        "batch": {
            "enabled": F(False, "bool", doc="embed a sync through the provider's batch API (OpenAI, Gemini, Voyage)"),
            "wait": F(True, "bool", doc="wait for a batch job to finish"),
            "concurrency": F(2, "int", lo=1, hi=64, doc="batch jobs at once"),
            "pollIntervalMs": F(2000, "int", lo=10, doc="how often a batch job is polled"),
            "timeoutMinutes": F(60, "int", lo=1, doc="how long a batch job may take before inline embedding"),
        },
    },
    "store": {
        "driver": F("sqlite", "choice", STORE_DRIVERS, doc="sqlite (one file per agent) or postgres (one server "
                    "for many hosts; docs/postgres.md)"),
        "path": F(None, "str", nullable=True, doc="the index file (default STATE_DIR/memory/{agentId}.sqlite)"),
        # postgres: the server (or env MNEMOCLAW_PG_URL; a password from the env or ~/.pgpass),
        # the namespace this agent writes ("{agentId}" by default) and the ones it also reads
        "url": F(None, "str", nullable=True, doc="postgres: the server (or env MNEMOCLAW_PG_URL)"),
        "namespace": F("{agentId}", "str", doc="postgres: the namespace this agent writes"),
        "shared": F([], "list[str]", doc="postgres: namespaces this agent also searches (read-only)"),
        "vector": {
            "enabled": F(True, "bool", doc="keep a vector index (false: vectors searched from memory only)"),
            "extensionPath": F(None, "str", nullable=True, doc="a sqlite-vec build of your own"),
        },
    },
    "chunking": {
        "tokens": F(400, "int", lo=8, hi=100_000, doc="a chunk's budget (a CJK character counts as a token)"),
        "overlap": F(80, "int", lo=0, hi=100_000, doc="tokens a chunk repeats of the one before (whole lines)"),
    },
    "query": {
        # daily logs `mnemoclaw cleanup` moved to memory/archive/: searched, ranked below live notes
        "archive": F(True, "bool", doc="search memory/archive/ too (ranked below live notes)"),
        "maxResults": F(6, "int", lo=1, hi=1000, doc="results a search returns"),
        "minScore": F(DEFAULT_MIN_SCORE, "float", lo=0.0, hi=1.0,
                      doc="results less likely than this to be about the query are left out (a calibrated "
                          "chance; docs/quality.md)"),
        "hybrid": {
            "enabled": F(True, "bool", doc="keyword and vector search together (false: vector only)"),
            "fusion": F(DEFAULT_FUSION, "choice", FUSIONS,
                        doc="zscore (the default, the measured best), weighted (OpenClaw's merge); minmax and rrf "
                            "are experimental: kept for benchmarks, measured below zscore"),
            # null: the fusion's own measured weights (0.7/0.3 for "weighted")
            "vectorWeight": F(None, "float", lo=0.0, hi=1.0, nullable=True,
                              doc="a fixed vector weight (null: adapted per query)"),
            "textWeight": F(None, "float", lo=0.0, hi=1.0, nullable=True, doc="a fixed keyword weight"),
            "candidateMultiplier": F(4, "int", lo=1, hi=100,
                                     doc="candidates per side for weighted and rrf fusion, times maxResults"),
            "mmr": {
                "enabled": F(False, "bool", doc="diversify the results (maximal marginal relevance)"),
                "lambda": F(0.7, "float", lo=0.0, hi=1.0, doc="relevance against diversity (1: relevance only)"),
            },
            "temporalDecay": {
                "enabled": F(False, "bool", doc="older daily logs rank lower (MEMORY.md never decays)"),
                "halfLifeDays": F(30, "float", lo=0.001, doc="the age at which a note's score is halved"),
            },
            # a query naming a day, month or year ranks notes dated then higher
            "dateMatch": {"enabled": F(True, "bool", doc="a query naming a day, month or year ranks notes dated "
                                       "then higher")},
        },
    },
    "sync": {
        "onSessionStart": F(True, "bool", doc="sync in the background when a session starts"),
        "onSearch": F(True, "bool", doc="a search first indexes the files changed since the last sync"),
        "watch": F(True, "bool", doc="long-running processes watch the files and sync after a burst of changes"),
        "watchDebounceMs": F(1500, "int", lo=0, doc="the quiet moment a burst of changes waits for"),
        "intervalMinutes": F(0, "float", lo=0, doc="sync every N minutes as well (0: off)"),
        "sessions": {
            "deltaBytes": F(100_000, "int", lo=0, doc="a transcript is re-indexed after growing this many bytes"),
            "deltaMessages": F(50, "int", lo=0, doc="or this many lines"),
        },
    },
    "cache": {
        "enabled": F(True, "bool", doc="keep every embedding by text hash: nothing is embedded twice"),
        "maxEntries": F(None, "int", lo=1, nullable=True, doc="prune the oldest cached vectors beyond this"),
    },
    "experimental": {
        "sessionMemory": F(False, "bool", doc="index session transcripts (with sources: [\"memory\", \"sessions\"])"),
    },
}

# The score an entry needs to be recalled unasked: chosen on half of the LoCoMo conversations
# replayed turn by turn, reported on the other half (benchmarks/recall.py, docs/quality.md).
RECALL_MIN_SCORE = 0.9

MEMORY: dict[str, Any] = {
    "backend": F("builtin", "choice", BACKENDS, doc="builtin (mnemoclaw's index) or qmd (qmd finds, mnemoclaw "
                 "ranks; docs/qmd.md)"),
    "citations": F("auto", "choice", ("auto", "on", "off"), doc="append Source: path#Lx-Ly to snippets"),
    "forget": {
        "tool": F(False, "bool", doc="offer memory_forget over MCP (a preview, then a confirmed removal)"),
    },
    # `mnemoclaw mcp --http`: a client that initializes and never sends DELETE left its session
    # open (~40 KB each); these bound what such clients can hold (docs/mcp.md)
    "mcp": {
        "sessionIdleMinutes": F(30, "float", lo=0.01, hi=7 * 24 * 60,
                                doc="an MCP HTTP session with no request for this long is closed (its id then "
                                    "answers 404 and the client initializes again); --session-idle"),
        "maxSessions": F(256, "int", lo=1, hi=100_000,
                         doc="MCP HTTP sessions open at once; one more closes the least recently used idle one; "
                             "--max-sessions"),
    },
    "recall": {
        "enabled": F(True, "bool", doc="search memory with each message before the model answers and put what "
                     "scores minScore or more in its context (chat, `mnemoclaw recall`); no model call"),
        "maxEntries": F(3, "int", lo=1, hi=10, doc="at most this many entries a message"),
        "maxChars": F(1200, "int", lo=100, hi=20000, doc="at most this many characters of entries a message"),
        "minScore": F(RECALL_MIN_SCORE, "float", lo=0.0, hi=1.0,
                      doc="the score an entry needs to come unasked (measured: benchmarks/recall.py)"),
        "sources": F(["curated"], "list[str]", choices=("curated", "daily", "sessions"),
                     doc="what may come unasked: curated (MEMORY.md, USER.md, extra paths), daily (memory/ "
                     "logs), sessions (indexed transcripts); imported memory never"),
    },
}

# Sections of an OpenClaw config that other parts of mnemoclaw (or OpenClaw alone) own:
# accepted silently so pointing mnemoclaw at openclaw.json does not flood warnings.
_PASSTHROUGH_AGENT_KEYS = {
    "model", "models", "compaction", "contextPruning", "bootstrapMaxChars", "bootstrapTotalMaxChars",
    "heartbeat", "sandbox", "tools", "timeoutSeconds", "thinkingDefault", "verboseDefault",
    "userTimezone", "timeFormat", "contextTokens", "maxConcurrent", "subagents", "blockStreamingDefault",
    "typingMode", "humanDelay", "skipBootstrap", "repoRoot", "elevatedDefault", "imageModel", "cliBackends",
    "envelopeTimezone", "envelopeTimestamp", "envelopeElapsed", "mediaMaxMb", "session",
}
_PASSTHROUGH_AGENT_ENTRY_KEYS = _PASSTHROUGH_AGENT_KEYS | {
    "name", "identity", "groupChat", "agentDir", "subagents", "params",
}
_PASSTHROUGH_MEMORY_KEYS = {"qmd", "git"}
_PASSTHROUGH_TOP = {
    "models", "channels", "gateway", "auth", "wizard", "meta", "logging", "messages", "commands", "session",
    "cron", "hooks", "skills", "plugins", "browser", "ui", "tools", "bindings", "broadcast", "audio",
    "talk", "env", "diagnostics", "update", "discovery", "canvasHost", "web", "approvals", "nodeHost",
    "llm", "mcp", "acp", "secrets", "$schema",
}


def defaults(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, spec in schema.items():
        out[key] = defaults(spec) if isinstance(spec, dict) else copy.deepcopy(spec.default)
    return out


def _suggest(key: str, options: list[str]) -> str:
    near = difflib.get_close_matches(key, options, n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


def check_leaf(path: str, spec: F, value: Any) -> Any:
    if value is None:
        if spec.nullable:
            return None
        raise ConfigError(f"{path} must not be null (default: {spec.default!r})")
    kind = spec.kind
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{path} must be true or false, got {value!r}")
        return value
    if kind in ("int", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{path} must be a finite number, got {value!r}")
        if kind == "int" and float(value) != int(value):
            raise ConfigError(f"{path} must be a whole number, got {value!r}")
        if (spec.lo is not None and value < spec.lo) or (spec.hi is not None and value > spec.hi):
            lo = "" if spec.lo is None else f">= {spec.lo}"
            hi = "" if spec.hi is None else f"<= {spec.hi}"
            raise ConfigError(f"{path} must be {' and '.join(x for x in (lo, hi) if x)}, got {value!r}")
        return int(value) if kind == "int" else float(value)
    if kind == "str":
        if not isinstance(value, str):
            raise ConfigError(f"{path} must be a string, got {value!r}")
        return value
    if kind == "provider":  # every registered provider (plugins included), auto and none
        names = ("auto", *available_providers(), "none")
        if value not in names:
            raise ConfigError(f"{path} must be one of {', '.join(names)}; got {value!r} (a provider of another "
                              "package is registered with register_provider or the mnemoclaw.providers entry point)")
        return value
    if kind == "choice":
        if value not in spec.choices:
            raise ConfigError(f"{path} must be one of {', '.join(spec.choices)}; got {value!r}")
        return value
    if kind == "list[str]":
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise ConfigError(f"{path} must be a list of non-empty strings, got {value!r}")
        if spec.choices:
            bad = [v for v in value if v not in spec.choices]
            if bad:
                raise ConfigError(f"{path}: {bad[0]!r} is not one of {', '.join(spec.choices)}")
        return list(value)
    if kind == "dict[str,str]":
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ConfigError(f"{path} must be an object of string values, got {value!r}")
        return dict(value)
    return value


def merge_validated(
    schema: dict[str, Any], base: dict[str, Any], override: Any, path: str, warn: Callable[[str], None],
    passthrough: set[str] = frozenset(),  # type: ignore[assignment]
) -> dict[str, Any]:
    """Validate ``override`` against ``schema`` and merge it over ``base``."""
    if override is None:
        return base
    if not isinstance(override, dict):
        raise ConfigError(f"{path} must be an object, got {override!r}")
    out = copy.deepcopy(base)
    for key, value in override.items():
        spec = schema.get(key)
        where = f"{path}.{key}"
        if spec is None:
            if key not in passthrough:
                warn(f"unknown config key {where}{_suggest(key, list(schema))}; ignored")
            continue
        if isinstance(spec, dict):
            out[key] = merge_validated(spec, out.get(key) or defaults(spec), value, where, warn)
        else:
            out[key] = check_leaf(where, spec, value)
    return out


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
    import json5  # imported here: only needed when a config file exists

    try:
        data = parse.loads(text, json5.loads)
    except ValueError as exc:
        raise ConfigError(f"config file {path} is not valid JSON5: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold an object at the top level")
    if len(_PARSED) >= 16:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[text] = copy.deepcopy(data)
    return data


# config texts already parsed, by their text (the JSON5 parser takes ~20 ms on the template)
_PARSED: dict[str, dict[str, Any]] = {}


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
        return _expand(raw) if raw else self.state_dir / "cache"

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


def _expand(p: str | os.PathLike[str], cwd: str | None = None) -> Path:
    """``p`` with ``~`` expanded, relative to ``cwd`` (default: this process's working directory)."""
    return (Path(cwd or os.getcwd()) / os.path.expanduser(str(p))).absolute()


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


def _openclaw_search_block(block: Any, where: str, notes: list[str]) -> Any:
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


def _shapes_disagree(old: Any, old_where: str, new: Any, new_where: str, warn: Callable[[str], None]) -> None:
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
    "plugins.entries.memory-core.config.dreaming": ("not applied", "mnemoclaw never promotes or rewrites entries "
                                                    "on a schedule (the flush and memory_append write what is kept)"),
    "session.dmScope": ("not applied", "transcripts are read per file, whatever scope made them"),
}


# OpenClaw settings outside its search block that mnemoclaw reads and applies, and how
OPENCLAW_APPLIED = {
    "tools.sessions.visibility": "sessions_search: \"all\" searches every agent's transcripts, any other value this "
                                 "agent's own; memory_search indexes this agent's own",
}


def _openclaw_notes(raw: dict[str, Any]) -> list[str]:
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

    state = _expand(state_dir or env.get(ENV_STATE_DIR) or DEFAULT_STATE_DIR, cwd)
    config_path: Path | None = None
    if isinstance(config, dict):
        raw = config
    else:
        chosen = config or env.get(ENV_CONFIG)
        if chosen:
            config_path = _expand(chosen, cwd)
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
        if key not in ("agents", "memory") and key not in _PASSTHROUGH_TOP:
            warn(f"unknown config key {key}{_suggest(key, ['agents', 'memory'])}; ignored")

    agents = raw.get("agents") or {}
    if not isinstance(agents, dict):
        raise ConfigError(f"agents must be an object, got {agents!r}")
    for key in agents:
        if key not in ("defaults", "list", "entries"):
            warn(f"unknown config key agents.{key}{_suggest(key, ['defaults', 'list', 'entries'])}; ignored")
    agent_defaults = agents.get("defaults") or {}
    if not isinstance(agent_defaults, dict):
        raise ConfigError("agents.defaults must be an object")
    for key in agent_defaults:
        if key not in ("workspace", "memorySearch") and key not in _PASSTHROUGH_AGENT_KEYS:
            warn(f"unknown config key agents.defaults.{key}{_suggest(key, ['workspace', 'memorySearch'])}; ignored")
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
        if key not in ("id", "default", "workspace", "memorySearch") and key not in _PASSTHROUGH_AGENT_ENTRY_KEYS:
            warn(f"unknown config key agents.list[{chosen_id}].{key}; ignored")
    for key in keyed_entry:
        if key not in ("default", "workspace", "memory") and key not in _PASSTHROUGH_AGENT_ENTRY_KEYS:
            warn(f"unknown config key agents.entries.{chosen_id}.{key}; ignored")
    agent_memory = keyed_entry.get("memory") or {}
    if not isinstance(agent_memory, dict):
        raise ConfigError(f"agents.entries.{chosen_id}.memory must be an object, got {agent_memory!r}")
    for key in agent_memory:
        if key != "search":
            warn(f"unknown config key agents.entries.{chosen_id}.memory.{key}{_suggest(key, ['search'])}; ignored")

    # Both shapes in one file: the more specific level wins (an agent over every agent), and at
    # one level OpenClaw's current shape wins over the older one (docs/openclaw.md).
    notes: list[str] = []
    layers = (
        (agent_defaults.get("memorySearch"), "agents.defaults.memorySearch"),
        (memory_raw.get("search"), "memory.search"),
        (entry.get("memorySearch"), f"agents.list[{chosen_id}].memorySearch"),
        (agent_memory.get("search"), f"agents.entries.{chosen_id}.memory.search"),
    )
    blocks = [(_openclaw_search_block(block, where, notes), where) for block, where in layers]
    for (old, old_where), (new, new_where) in ((blocks[0], blocks[1]), (blocks[2], blocks[3])):
        if old is not None and new is not None:
            _shapes_disagree(old, old_where, new, new_where, warn)
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
                          "memory", warn, _PASSTHROUGH_MEMORY_KEYS)
    notes += _openclaw_notes(raw)

    ws_raw = (workspace or env.get(ENV_WORKSPACE) or keyed_entry.get("workspace") or entry.get("workspace")
              or agent_defaults.get("workspace"))
    if ws_raw is not None and not isinstance(ws_raw, (str, os.PathLike)):
        raise ConfigError(f"agents.defaults.workspace must be a path string, got {ws_raw!r}")
    if ws_raw:
        ws = _expand(ws_raw, cwd)
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
    root = _expand(openclaw_dir, cwd)
    cfg = root / OPENCLAW_CONFIG_NAME
    if not cfg.is_file():
        raise ConfigError(f"no {OPENCLAW_CONFIG_NAME} in {root}; pass the OpenClaw state directory "
                          f"(default {DEFAULT_OPENCLAW_DIR})")
    state = _expand(state_dir or env.get(ENV_STATE_DIR) or DEFAULT_STATE_DIR, cwd)
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


def openclaw_transcripts(root: Path, agent_id: str, state_dir: Path, version: str | None) -> Layout:
    """Where OpenClaw keeps ``agent_id``'s transcripts: its files, or (2026.7.2 on) a JSONL copy
    of its database under mnemoclaw's state dir, made afresh when the database changed."""
    return locate(root, agent_id, state_dir / "openclaw" / agent_id / "sessions", version=version)


# -- writing a config file (the one writer of config files) -------------------------------------
# `workspace: "..."` in JSON5, the key quoted or not, the value in either quote
_WORKSPACE_VALUE = re.compile(
    r"""(?P<key>["']?\bworkspace["']?\s*:\s*)(?P<q>["'])(?P<value>(?:\\.|(?!(?P=q)).)*)(?P=q)""")


def set_workspace_value(config: Path, old: Path, new: Path) -> None:
    """Replace the one ``workspace`` value that names ``old`` by ``new``, as text: the file's
    comments and layout stay as the user wrote them."""
    text = config.read_text("utf-8")
    hits = [m for m in _WORKSPACE_VALUE.finditer(text)
            if Path(os.path.expanduser(m.group("value"))).absolute() == old]
    if len(hits) != 1:
        raise ConfigError(
            f"{config} does not name workspace {old} in exactly one place; set agents.defaults.workspace "
            f"to {str(new)!r} there by hand"
        )
    m = hits[0]
    value = str(new).replace("\\", "/")
    write_atomic(config, text[: m.start("value")] + value + text[m.end("value"):])

def rewrite_file(path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """Apply ``change`` to the config file at ``path`` (parsed, changed, written back as JSON in
    one rename); the old file is kept as ``<file>.bak``, which is returned. Comments are not
    kept (JSON5 has no round trip): ``set_workspace_value`` edits one value as text instead."""
    import json

    import json5

    raw = path.read_text(encoding="utf-8")
    try:
        doc = parse.loads(raw, json5.loads)
    except ValueError as exc:
        raise ConfigError(f"config file {path} is not valid JSON5: {exc}") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"config file {path} must hold an object at the top level")
    change(doc)
    backup = Path(str(path) + ".bak")
    write_atomic(backup, raw)
    write_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return backup
