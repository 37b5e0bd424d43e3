"""Configuration: one JSON5 file with OpenClaw's key names, environment overrides, validation.

This is the only package that reads configuration. Everything below it receives plain
values. Unknown keys produce a warning that names them (with a suggestion); bad
values raise ``ConfigError`` naming the key and what is allowed.

``schema`` holds the keys, their defaults and their validation; ``openclaw`` what is OpenClaw's
(its sections, its two shapes of search block, what is read and not applied); ``load`` reads a
file and the environment into ``Settings`` (``settings``); ``writer`` is the one writer of
config files. This module only hands their public names on.
"""

from .load import (
    DEFAULT_AGENT,
    DEFAULT_CONFIG_NAME,
    DEFAULT_STATE_DIR,
    ENV_AGENT,
    ENV_CONFIG,
    ENV_HOST,
    ENV_MODEL_CACHE,
    ENV_PG_URL,
    ENV_PROVIDER,
    ENV_STATE_DIR,
    ENV_WORKSPACE,
    load_file,
    load_settings,
    openclaw_settings,
)
from .openclaw import (
    DEFAULT_OPENCLAW_DIR,
    EXCLUDE_SESSION_KEYS,
    OPENCLAW_APPLIED,
    OPENCLAW_CONFIG_NAME,
    OPENCLAW_FTS_NOT_APPLIED,
    OPENCLAW_NOT_APPLIED,
    OPENCLAW_SEARCH_NOT_APPLIED,
    openclaw_transcripts,
)
from .schema import (
    DEFAULT_FUSION,
    FUSIONS,
    MEMORY,
    MEMORY_SEARCH,
    RECALL_MIN_SCORE,
    F,
    check_leaf,
    defaults,
    merge_validated,
)
from .settings import Settings
from .writer import rewrite_file, set_workspace_value

__all__ = [
    "DEFAULT_AGENT", "DEFAULT_CONFIG_NAME", "DEFAULT_FUSION", "DEFAULT_OPENCLAW_DIR", "DEFAULT_STATE_DIR",
    "ENV_AGENT", "ENV_CONFIG", "ENV_HOST", "ENV_MODEL_CACHE", "ENV_PG_URL", "ENV_PROVIDER", "ENV_STATE_DIR",
    "ENV_WORKSPACE", "EXCLUDE_SESSION_KEYS", "FUSIONS", "MEMORY", "MEMORY_SEARCH", "OPENCLAW_APPLIED",
    "OPENCLAW_CONFIG_NAME", "OPENCLAW_FTS_NOT_APPLIED", "OPENCLAW_NOT_APPLIED", "OPENCLAW_SEARCH_NOT_APPLIED",
    "RECALL_MIN_SCORE", "F", "Settings", "check_leaf", "defaults", "load_file", "load_settings", "merge_validated",
    "openclaw_settings", "openclaw_transcripts", "rewrite_file", "set_workspace_value",
]
