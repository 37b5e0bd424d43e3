"""Promotion's settings (``mnemoclaw promote``, and the nightly run of a long-lived process),
read from either shape: OpenClaw's ``plugins.entries.memory-core.config.dreaming`` or
mnemoclaw's ``memory.dreaming``. Where both are set, OpenClaw's wins for the keys it sets.

Keys (OpenClaw's names; the last five are mnemoclaw's): ``enabled`` (false: only the command
promotes), ``frequency`` (cron, local time; "0 3 * * *"), ``model`` (a chat model merges what one
run promotes that says one thing: promote/merge.py), ``timeoutSeconds`` (its answer, 120), ``phases.deep.
maxPromotedSnippetTokens`` (160), ``phases.deep.maxPriorEntryLossFraction`` (0.25), ``diary``
(true: a diary of each run in the workspace's DREAMS.md, else in the state directory),
``minScore`` (0.8), ``minRecallCount`` (3), ``minUniqueQueries`` (3), ``limit`` (10 a run).
A key neither shape knows is named in ``unknown`` (``mnemoclaw status`` shows it), not applied.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError

OPENCLAW_WHERE = "plugins.entries.memory-core.config.dreaming"
OWN_WHERE = "memory.dreaming"
KEYS = ("enabled", "frequency", "model", "timeoutSeconds", "phases", "diary", "minScore", "minRecallCount",
        "minUniqueQueries", "limit")
DEEP_KEYS = ("maxPromotedSnippetTokens", "maxPriorEntryLossFraction")
PHASES = ("deep", "light", "rem")  # OpenClaw's phases; only deep's keys apply here


# the numeric keys: (Dreaming's field, lowest, highest, type)
NUMBERS: dict[str, tuple[str, float, float, type]] = {
    "timeoutSeconds": ("timeout_seconds", 1, 3600, float),
    "maxPromotedSnippetTokens": ("max_snippet_tokens", 8, 4000, int),
    "maxPriorEntryLossFraction": ("max_loss_fraction", 0, 1, float),
    "minScore": ("min_score", 0, 1, float),
    "minRecallCount": ("min_recall_count", 1, 1000, int),
    "minUniqueQueries": ("min_unique_queries", 1, 1000, int),
    "limit": ("limit", 1, 1000, int),
}


@dataclass(frozen=True)
class Dreaming:
    enabled: bool = False
    frequency: str = "0 3 * * *"
    model: str | None = None
    timeout_seconds: float = 120.0
    max_snippet_tokens: int = 160
    max_loss_fraction: float = 0.25
    diary: bool = False
    min_score: float = 0.8
    min_recall_count: int = 3
    min_unique_queries: int = 3
    limit: int = 10
    where: str | None = None  # which shape set it (None: neither)
    unknown: tuple[str, ...] = field(default=())


def _node(raw: Any, where: str) -> Any:
    node = raw
    for part in where.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _num(value: Any, key: str, lo: float, hi: float, kind: type) -> Any:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and lo <= value <= hi
    if not ok or (kind is int and int(value) != value):
        what = "a whole number" if kind is int else "a number"
        raise ConfigError(f"{key} must be {what} from {lo:g} to {hi:g}; got {json.dumps(value)}")
    return kind(value)


def dreaming(raw: dict[str, Any]) -> Dreaming:
    """The promotion settings of a config file's object (``Settings.raw``)."""
    theirs, ours = _node(raw, OPENCLAW_WHERE), _node(raw, OWN_WHERE)
    merged: dict[str, Any] = {}
    unknown: list[str] = []
    where = None
    for at, node in ((OWN_WHERE, ours), (OPENCLAW_WHERE, theirs)):
        if node is None:
            continue
        if not isinstance(node, dict):
            raise ConfigError(f"{at} must be an object (for example {{\"enabled\": true}}); got {json.dumps(node)}")
        where = at
        for key, value in node.items():
            if key not in KEYS:
                unknown.append(f"{at}.{key}")
                continue
            if key == "phases":
                if not isinstance(value, dict):
                    raise ConfigError(f"{at}.phases must be an object; got {json.dumps(value)}")
                for phase, keys in value.items():
                    if phase not in PHASES or not isinstance(keys, dict):
                        unknown.append(f"{at}.phases.{phase}")
                        continue
                    for k, v in keys.items():
                        if phase == "deep" and k in DEEP_KEYS:
                            merged[k] = (f"{at}.phases.deep.{k}", v)
                        else:
                            unknown.append(f"{at}.phases.{phase}.{k}")
                continue
            merged[key] = (f"{at}.{key}", value)
    out: dict[str, Any] = {}
    for key, (name, value) in merged.items():
        if key in ("enabled", "diary"):
            if not isinstance(value, bool):
                raise ConfigError(f"{name} must be true or false; got {json.dumps(value)}")
            out[key] = value
        elif key == "frequency":
            from ..text.cron import parse_cron  # checked here, so a bad schedule is said at start

            if not isinstance(value, str):
                raise ConfigError(f"{name} must be a cron schedule such as \"0 3 * * *\"; got {json.dumps(value)}")
            parse_cron(value, name)
            out["frequency"] = value
        elif key == "model":
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ConfigError(f"{name} must be a model name, or null; got {json.dumps(value)}")
            out["model"] = value
        elif key in NUMBERS:
            field_name, lo, hi, kind = NUMBERS[key]
            out[field_name] = _num(value, name, lo, hi, kind)
    return Dreaming(**out, where=where, unknown=tuple(unknown))


__all__ = ["DEEP_KEYS", "KEYS", "OPENCLAW_WHERE", "OWN_WHERE", "Dreaming", "dreaming"]
