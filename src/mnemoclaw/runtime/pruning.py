"""Context pruning (``contextPruning.mode: "cache-ttl"``): old tool results are trimmed
in the request only. The transcript on disk and the session's history are never
changed, and user and assistant text is never touched.

Tool results older than the last ``keep_last_assistants`` assistant messages that are
longer than 4 000 characters keep their first and last 1 500; with ``hard`` (the
context is still over half full) they are replaced by a placeholder.
"""

from __future__ import annotations

from typing import Any

SOFT_CHARS = 4_000
HEAD_CHARS = 1_500
TAIL_CHARS = 1_500
CLEARED = "[Old tool result content cleared]"


def prune(messages: list[dict[str, Any]], *, keep_last_assistants: int = 3, hard: bool = False) -> list[dict[str, Any]]:
    assistants = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    if len(assistants) <= keep_last_assistants:
        return list(messages)
    protect_from = assistants[-keep_last_assistants] if keep_last_assistants else len(messages)
    out = []
    for i, m in enumerate(messages):
        content = m.get("content")
        if i < protect_from and m.get("role") == "tool" and isinstance(content, str):
            if hard and content != CLEARED:
                m = {**m, "content": CLEARED, "_tokens": None}
            elif len(content) > SOFT_CHARS:
                cut = len(content) - HEAD_CHARS - TAIL_CHARS
                m = {**m, "content": f"{content[:HEAD_CHARS]}\n"
                                    f"[... {cut} characters of an old tool result trimmed ...]\n"
                                     f"{content[-TAIL_CHARS:]}", "_tokens": None}
        out.append(m)
    return out
