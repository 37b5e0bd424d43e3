"""The configuration's schema: every key with its default, its bounds and what it does.

``MEMORY_SEARCH`` is a search block (OpenClaw's ``memorySearch``/``memory.search``), ``MEMORY`` the
rest of ``memory``; ``merge_validated`` checks a block against one of them and lays it over the
values so far, naming an unknown key (with a suggestion) or a bad value (with what is allowed).
"""

from __future__ import annotations

import copy
import difflib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..backends import BACKENDS
from ..embeddings.base import available_providers
from ..errors import ConfigError
from ..search.relevance import DEFAULT_MIN_SCORE
from ..store import DRIVERS as STORE_DRIVERS

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
        "tokens": F(400, "int", lo=8, hi=100_000, doc="a chunk's budget (a CJK character counts as a token); a "
                    "conversation's log is chunked by message, a long one split between paragraphs"),
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
                              doc="a fixed vector weight (null: adapted per query, and at least 0.7 over "
                                  "single messages of a conversation)"),
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
    # `mnemoclaw promote` (docs/promote.md); OpenClaw's plugins.entries.memory-core.config.dreaming is read too
    "dreaming": {
        "enabled": F(False, "bool", doc="run promote --apply at frequency in a running watch, mcp or ui"),
        "frequency": F("0 3 * * *", "str", doc="when, as a five-field cron schedule in local time"),
        "model": F(None, "str", nullable=True, doc="a chat model (at llm.baseUrl) merges what one run promotes "
                   "that says one thing; an llm block does too; neither: extractive"),
        "timeoutSeconds": F(120.0, "float", lo=1, hi=3600, doc="how long the model step may take before the "
                            "entries are promoted as written"),
        "diary": F(False, "bool", doc="each run's diary in the workspace's DREAMS.md (else the state directory)"),
        "minScore": F(0.8, "float", lo=0.0, hi=1.0, doc="the weighted score an entry needs (--min-score)"),
        "minRecallCount": F(3, "int", lo=1, hi=1000, doc="recalls an entry needs (--min-recall-count)"),
        "minUniqueQueries": F(3, "int", lo=1, hi=1000,
                              doc="different questions that recalled it (--min-unique-queries)"),
        "limit": F(10, "int", lo=1, hi=1000, doc="entries promoted a run at most (--limit)"),
        "phases": {
            "deep": {
                "maxPromotedSnippetTokens": F(160, "int", lo=8, hi=4000,
                                              doc="an entry longer than this is not promoted (never cut)"),
                "maxPriorEntryLossFraction": F(0.25, "float", lo=0.0, hi=1.0,
                                               doc="the share of MEMORY.md's entries a run may remove"),
            },
        },
    },
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


def defaults(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, spec in schema.items():
        out[key] = defaults(spec) if isinstance(spec, dict) else copy.deepcopy(spec.default)
    return out


def suggest(key: str, options: list[str]) -> str:
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
                warn(f"unknown config key {where}{suggest(key, list(schema))}; ignored")
            continue
        if isinstance(spec, dict):
            out[key] = merge_validated(spec, out.get(key) or defaults(spec), value, where, warn)
        else:
            out[key] = check_leaf(where, spec, value)
    return out
