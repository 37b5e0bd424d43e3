"""Session-runtime settings, read from the same config file under OpenClaw's key names
(``REFERENCE`` lists them; docs/config.md is generated from it). Bad values are refused with
the key and what is allowed, like the rest of the config.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..config import F, Settings, check_leaf
from ..errors import ConfigError

# (key, default, what it does): the keys the chat runtime reads, for the configuration reference
REFERENCE: tuple[tuple[str, str, str], ...] = (
    ("agents.defaults.contextTokens", "128000", "the model's context window"),
    ("agents.defaults.bootstrapMaxChars", "20000", "characters of one bootstrap file in the system prompt"),
    ("agents.defaults.bootstrapTotalMaxChars", "150000", "characters of all bootstrap files together"),
    ("agents.defaults.compaction.reserveTokensFloor", "20000",
     "tokens kept free of history (40 000 recommended for long sessions)"),
    ("agents.defaults.compaction.keepRecentTokens", "20000", "recent history kept verbatim through a compaction"),
    ("agents.defaults.compaction.memoryFlush.enabled", "true", "a silent turn writes memory before compaction"),
    ("agents.defaults.compaction.memoryFlush.softThresholdTokens", "4000",
     "how far before compaction the flush runs"),
    ("agents.defaults.compaction.memoryFlush.prompt / .systemPrompt", "built in", "what the flush turn is told"),
    ("agents.defaults.contextPruning.mode", "off", "cache-ttl: trim old tool results once the prompt cache expired"),
    ("agents.defaults.contextPruning.ttl", "5m", "the prompt cache's lifetime"),
    ("agents.defaults.contextPruning.keepLastAssistants", "3", "assistant turns whose tool results are never trimmed"),
    ("agents.defaults.sandbox.workspaceAccess", "rw", "ro or none: no memory writes at all"),
    ("agents.defaults.userTimezone", "the system's", "the IANA time zone of \"today\""),
    ("session.reset.mode", "daily", "daily, idle or off: when a new session starts"),
    ("session.reset.atHour", "4", "the local hour of the daily reset"),
    ("session.reset.idleMinutes", "none", "idle: minutes without a message before a reset"),
    ("llm.baseUrl / .model / .apiKey / .headers / .timeoutSeconds", "http://127.0.0.1:11434/v1",
     "the chat model (any OpenAI-compatible endpoint); env MNEMOCLAW_LLM_* wins"),
    ("memory.git.autoCommit", "false", "commit the memory files after each memory write"),
)

FLUSH_SYSTEM_PROMPT = (
    "Pre-compaction memory flush. The conversation is about to be compacted: older turns will be replaced "
    "by a summary and details may be lost. Store durable memories now."
)
FLUSH_PROMPT = (
    "Write any lasting notes from this conversation to memory/{date}.md with memory_append: decisions, "
    "facts, commitments, open tasks, and every instruction or rule the user gave (for example \"wait\", "
    "\"do nothing until I say so\"). Only append what is not already there. When a note sets the current "
    "value of something that may change (a host, an address, a plan), pass key (a short name such as "
    "\"db-host\") so it replaces the older note with that key; pass importance 8-10 for what must never be "
    "missed, type (fact, preference, task, summary) and expires (YYYY-MM-DD) for what stops holding on a "
    "date; memory_append writes them into the note as <!-- key: db-host --> comments. If there is nothing to "
    "store, reply with NO_REPLY."
)


def _get(d: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)
    return d


def _num(value: Any, key: str, lo: float, hi: float | None = None, default: Any = None, kind: str = "int") -> Any:
    """A number checked like every other config value (config.py), or ``default`` when unset."""
    return default if value is None else check_leaf(key, F(default, kind, lo=lo, hi=hi), value)


def _choice(value: Any, key: str, choices: tuple[str, ...], default: str) -> str:
    return default if value is None else check_leaf(key, F(default, "choice", choices), value)


def parse_duration(value: Any, key: str, default: float) -> float:
    """``"5m"``, ``"30s"``, ``"2h"`` or a number of seconds."""
    if value is None:
        return default
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*", str(value))
    if not m:
        raise ConfigError(f"{key} must be a duration like \"5m\", \"30s\" or \"1h\", got {value!r}")
    n = float(m.group(1))
    return n * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}[m.group(2)]


@dataclass
class RuntimeSettings:
    context_tokens: int = 128_000
    bootstrap_max_chars: int = 20_000
    bootstrap_total_max_chars: int = 150_000
    reserve_tokens_floor: int = 20_000
    keep_recent_tokens: int = 20_000
    flush_enabled: bool = True
    soft_threshold_tokens: int = 4_000
    flush_prompt: str = FLUSH_PROMPT
    flush_system_prompt: str = FLUSH_SYSTEM_PROMPT
    pruning_mode: str = "off"  # "cache-ttl" | "off"
    pruning_ttl_s: float = 300.0
    keep_last_assistants: int = 3
    read_only: bool = False
    timezone: str | None = None
    reset_mode: str = "daily"  # "daily" | "idle" | "off"
    reset_at_hour: int = 4
    idle_minutes: float | None = None
    llm_base_url: str = "http://127.0.0.1:11434/v1"
    llm_model: str = "qwen2.5:7b-instruct"
    llm_api_key: str | None = None
    llm_headers: dict[str, str] = field(default_factory=dict)
    llm_timeout_s: float = 120.0
    git_autocommit: bool = False
    max_tool_rounds: int = 12
    warnings: list[str] = field(default_factory=list)  # settings that work against each other

    @property
    def flush_threshold(self) -> int:
        """Session tokens above which the pre-compaction flush runs."""
        return max(0, self.context_tokens - self.reserve_tokens_floor - self.soft_threshold_tokens)

    @property
    def compaction_threshold(self) -> int:
        """Session tokens above which history is compacted."""
        return max(0, self.context_tokens - self.reserve_tokens_floor)


def runtime_settings(settings: Settings) -> RuntimeSettings:
    raw = settings.raw if isinstance(settings.raw, dict) else {}
    defaults = _get(raw, "agents", "defaults") or {}
    entry = next((a for a in _get(raw, "agents", "list") or [] if isinstance(a, dict)
                  and a.get("id") == settings.agent_id), {})

    def pick(*path: str) -> Any:
        v = _get(entry, *path)
        return v if v is not None else _get(defaults, *path)

    r = RuntimeSettings()
    r.context_tokens = int(_num(pick("contextTokens"), "agents.defaults.contextTokens", 1_000, None, r.context_tokens))
    r.bootstrap_max_chars = int(_num(pick("bootstrapMaxChars"), "agents.defaults.bootstrapMaxChars", 100, None,
                                     r.bootstrap_max_chars))
    r.bootstrap_total_max_chars = int(_num(pick("bootstrapTotalMaxChars"), "agents.defaults.bootstrapTotalMaxChars",
                                           100, None, r.bootstrap_total_max_chars))
    r.reserve_tokens_floor = int(_num(pick("compaction", "reserveTokensFloor"),
                                      "agents.defaults.compaction.reserveTokensFloor", 0, None, r.reserve_tokens_floor))
    r.keep_recent_tokens = int(_num(pick("compaction", "keepRecentTokens"),
                                    "agents.defaults.compaction.keepRecentTokens",
                                    0, None, min(r.keep_recent_tokens, r.context_tokens // 4)))
    flush = pick("compaction", "memoryFlush") or {}
    if not isinstance(flush, dict):
        raise ConfigError("agents.defaults.compaction.memoryFlush must be an object")
    r.flush_enabled = bool(flush.get("enabled", True))
    r.soft_threshold_tokens = int(_num(flush.get("softThresholdTokens"),
                                       "agents.defaults.compaction.memoryFlush.softThresholdTokens", 0, None,
                                       r.soft_threshold_tokens))
    if r.context_tokens <= r.reserve_tokens_floor + r.soft_threshold_tokens:
        r.warnings.append(
            f"agents.defaults.contextTokens ({r.context_tokens}) is not above compaction.reserveTokensFloor "
            f"({r.reserve_tokens_floor}) + memoryFlush.softThresholdTokens ({r.soft_threshold_tokens}): every "
            "request would flush memory and compact the session. Set contextTokens to the model's context window, "
            "or lower reserveTokensFloor")
    r.flush_prompt = str(flush.get("prompt") or r.flush_prompt)
    r.flush_system_prompt = str(flush.get("systemPrompt") or r.flush_system_prompt)
    pruning = pick("contextPruning") or {}
    r.pruning_mode = _choice(pruning.get("mode") if isinstance(pruning, dict) else None,
                             "agents.defaults.contextPruning.mode", ("off", "cache-ttl"), "off")
    r.pruning_ttl_s = parse_duration(pruning.get("ttl") if isinstance(pruning, dict) else None,
                                     "agents.defaults.contextPruning.ttl", r.pruning_ttl_s)
    r.keep_last_assistants = int(_num(pruning.get("keepLastAssistants") if isinstance(pruning, dict) else None,
                                      "agents.defaults.contextPruning.keepLastAssistants", 0, None, 3))
    access = _choice(pick("sandbox", "workspaceAccess"), "agents.defaults.sandbox.workspaceAccess",
                     ("rw", "ro", "none"), "rw")
    r.read_only = access != "rw"
    r.timezone = pick("userTimezone")
    reset = _get(raw, "session", "reset") or {}
    r.reset_mode = _choice(reset.get("mode") if isinstance(reset, dict) else None, "session.reset.mode",
                           ("daily", "idle", "off"), "daily")
    r.reset_at_hour = int(_num(reset.get("atHour"), "session.reset.atHour", 0, 23, 4))
    r.idle_minutes = _num(reset.get("idleMinutes"), "session.reset.idleMinutes", 1, None, None, "float")
    llm = raw.get("llm") or {}
    if not isinstance(llm, dict):
        raise ConfigError("llm must be an object with baseUrl, model, apiKey")
    # the environment wins over the config file, as it does for every other setting
    env = os.environ
    r.llm_base_url = str(env.get("MNEMOCLAW_LLM_BASE_URL") or llm.get("baseUrl") or r.llm_base_url)
    r.llm_model = str(env.get("MNEMOCLAW_LLM_MODEL") or llm.get("model") or r.llm_model)
    r.llm_api_key = env.get("MNEMOCLAW_LLM_API_KEY") or llm.get("apiKey") or env.get("OPENAI_API_KEY")
    r.llm_headers = dict(llm.get("headers") or {})
    r.llm_timeout_s = _num(llm.get("timeoutSeconds"), "llm.timeoutSeconds", 1, None, r.llm_timeout_s, "float")
    r.git_autocommit = bool(_get(raw, "memory", "git", "autoCommit") or False)
    return r
