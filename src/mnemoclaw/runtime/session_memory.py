"""The session-memory hook: on ``/new`` and ``/reset``, the last 15 real messages of the
session go to ``memory/YYYY-MM-DD-<slug>.md`` (the slug is 1-2 words from the model, or
``HHMM`` when it cannot be reached), written through the one writer of memory files."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from ..markdown.annotations import as_data, render
from ..notes.write import create_note
from .llm import ChatClient, LLMError
from .transcript import SessionStore

NO_REPLY = "NO_REPLY"
KEEP_MESSAGES = 15


def real_messages(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    """What the user and the assistant said, from the transcript (which keeps every message:
    after a compaction the history in memory holds only the summary and the turns kept)."""
    said = [e["message"] for _, e in store.read(session_id)
            if e.get("type") == "message" and isinstance(e.get("message"), dict)]
    return [m for m in said if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)
            and m["content"].strip() and not m["content"].startswith("/") and m["content"].strip() != NO_REPLY]


def save_session(store: SessionStore, session_id: str, workspace: Path, chat: ChatClient, now: datetime, *,
                 said_in: dict[str, str] | None = None) -> str | None:
    """Write the session's last messages to a new memory file; its workspace-relative path. The
    heading carries the note's provenance (the agent wrote it, from this session), so a search
    shows where it came from and ``forget --session`` finds it."""
    last = real_messages(store, session_id)[-KEEP_MESSAGES:]
    if not last:
        return None
    slug = topic_slug(chat, last) or f"{now:%H%M}"
    origin = render({"origin": "agent", **(said_in or {"session": session_id})})
    body = [f"# Session {session_id} ({now:%Y-%m-%d %H:%M}) {origin}", ""]
    for m in last:
        who = "User" if m["role"] == "user" else "Assistant"
        said = as_data(" ".join(str(m["content"]).split()))[0]  # what was said is data, not annotations
        body.append(f"- **{who}**: {said}")
    return create_note(workspace, f"{now:%Y-%m-%d}-{slug}", "\n".join(body) + "\n")


def topic_slug(chat: ChatClient, messages: list[dict[str, Any]]) -> str | None:
    convo = "\n".join(f"{m['role']}: {str(m['content'])[:300]}" for m in messages)
    try:
        result = chat.complete([
            {"role": "system", "content": "Reply with a 1-2 word lowercase slug naming the topic of this "
                                          "conversation, words joined by '-'. Only the slug."},
            {"role": "user", "content": convo}])
    except LLMError:
        return None
    slug = re.sub(r"[^a-z0-9-]+", "-", result.text.strip().lower()).strip("-")
    return "-".join(slug.split("-")[:2])[:40] or None
