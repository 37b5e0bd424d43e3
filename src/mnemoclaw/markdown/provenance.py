"""Where a piece of memory came from: written by the owner (a file they edited), by the agent
(``memory_append``, the memory flush, the session hook), imported from another assistant, or
said in a session transcript. Pure: a chunk's path, source and annotations in, its origin out.

What the runtime writes carries its origin in the Markdown (``<!-- origin: agent; session: … -->``
on the note's heading), so a rebuild of the index keeps it; an import's origin is its folder
(``memory/imports/<source>/``); a transcript's is its file (the session) and the session's
metadata (channel, chat type). A line nobody marked is the owner's.
"""

from __future__ import annotations

import re
from typing import Any

OWNER, AGENT, IMPORTED, TRANSCRIPT, UNTRUSTED = "owner", "agent", "imported", "transcript", "untrusted"
PROMOTED = "promoted"  # a MEMORY.md line `mnemoclaw promote` moved there from a daily log
ORIGINS = (OWNER, AGENT, IMPORTED, TRANSCRIPT, UNTRUSTED, PROMOTED)
IMPORTS_DIR = "memory/imports"  # an import's files: memory/imports/<source>/...
IMPORT_SOURCES = ("chatgpt", "claude", "claude-code", "codex")  # what `mnemoclaw import` reads
# never put before the reply unasked: what someone else's export or content holds
NEVER_UNASKED = frozenset({IMPORTED, UNTRUSTED})


def imported_from(path: str) -> str | None:
    """The import source of a memory file (``chatgpt``, ``claude``, ...), or None."""
    if not path.startswith(IMPORTS_DIR + "/"):
        return None
    rest = path[len(IMPORTS_DIR) + 1:]
    return rest.split("/", 1)[0] if "/" in rest else None


def session_of(path: str) -> str:
    """A transcript's session id: its file's name without ``.jsonl``."""
    name = path.rsplit("/", 1)[-1]
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else name


def of(path: str, source: str, annotations: dict[str, Any],
       sessions: dict[str, dict[str, str]] | None = None) -> dict[str, str]:
    """``{"origin": ..., and where known "session", "channel", "chat", "importedFrom"}``.
    ``sessions``: session metadata by id (channel, chatType), for transcripts."""
    if source == "sessions":
        sid = session_of(path)
        out = {"origin": TRANSCRIPT, "session": sid}
        meta = (sessions or {}).get(sid) or {}
        if meta.get("channel"):
            out["channel"] = str(meta["channel"])
        if meta.get("chatType"):
            out["chat"] = str(meta["chatType"])
        return out
    where = imported_from(path)
    if where is not None:
        return {"origin": IMPORTED, "importedFrom": where}
    out = {"origin": str(annotations.get("origin") or OWNER)}
    for name in ("session", "channel", "chat"):
        if annotations.get(name):
            out[name] = str(annotations[name])
    if out["origin"] == PROMOTED and annotations.get("from"):
        out["promotedFrom"] = str(annotations["from"])
    return out


def sessions_by_id(entries: Any) -> dict[str, dict[str, str]]:
    """A ``sessions.json``'s channel and chat type by session id: OpenClaw keys it by session key
    (``agent:main:telegram:…`` -> an entry with ``sessionId``), the chat runtime by id."""
    out: dict[str, dict[str, str]] = {}
    if not isinstance(entries, dict):
        return out
    for key, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        sid = entry.get("sessionId") if isinstance(entry.get("sessionId"), str) else key
        meta = {name: str(entry[name]) for name in ("channel", "chatType")
                if isinstance(entry.get(name), str) and entry[name]}
        hook = hook_source(str(key), entry)
        if hook:
            meta["hook"] = hook
        out[str(sid)] = meta
    return out


def hook_source(key: str, entry: dict[str, Any]) -> str | None:
    """The external content a hook session was made from (``gmail``, ``webhook``): the entry's
    ``hookSource`` or ``externalContentSource``, else the source a ``hook:<source>:…`` key names."""
    for name in ("hookSource", "externalContentSource"):
        if isinstance(entry.get(name), str) and entry[name]:
            return str(entry[name])
    parts = key.split(":")
    if "hook" in parts[:-1]:
        return parts[parts.index("hook") + 1] or None
    return None


def excluded(meta: dict[str, str], policy: dict[str, tuple[str, ...]]) -> str | None:
    """Why a session is kept out of memory by ``memoryPolicy.excludeSessions`` (exact,
    case-sensitive names, any one of them enough), or None."""
    for field_name, setting, what in (("channel", "channels", "channel"), ("chatType", "chatTypes", "chat type"),
                                      ("hook", "hookExternalContentSources", "hook content source")):
        value = meta.get(field_name)
        if value and value in policy.get(setting, ()):
            return f"its {what} {value!r} is in memoryPolicy.excludeSessions.{setting}"
    return None


_COMMENT = re.compile(r"[ \t]*<!--(.*?)-->")
_PAIR = re.compile(r"^\s*([A-Za-z]+)\s*:")
WRITTEN = frozenset({"origin", "session", "channel", "chat"})  # what the runtime writes on its notes


def without_provenance(text: str) -> str:
    """``text`` with the provenance the runtime wrote on it taken out of its comments (a result
    says it in its own fields): ``## 14:05 <!-- importance: 8; origin: agent; session: s1 -->``
    reads ``## 14:05 <!-- importance: 8 -->``, a comment of provenance alone goes. Lines stay
    where they were."""
    if "<!--" not in text:
        return text

    def rewrite(m: re.Match[str]) -> str:
        parts = re.split(r"[;|]", m.group(1))
        kept = [p.strip() for p in parts if not ((n := _PAIR.match(p)) and n.group(1).lower() in WRITTEN)]
        if len(kept) == len(parts):
            return m.group(0)
        return f" <!-- {'; '.join(k for k in kept if k)} -->" if any(kept) else ""

    return _COMMENT.sub(rewrite, text)
