"""Word-for-word search over session transcripts (``sessions_search``). Pure.

What the user and the assistant said, nothing else (tool calls and results, reasoning and
metadata are not searched), secrets redacted before anything is matched or shown. A message
matches when it holds every word of the query (a "quoted phrase" as written), case and
script aside: Traditional and Simplified Chinese match each other, and a word is found
inside a longer run of text, so a one- or two-character Chinese word is found as such.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from ..text import parse
from ..text.script import fold
from ..text.secrets import redact
from .transcript import entry_message

EXCERPT_CHARS = 240  # what a result shows of its message, around the first match
ROLE_NAMES = {"User": "user", "Assistant": "assistant"}


@dataclass(frozen=True, slots=True)
class SessionHit:
    session: str  # the transcript's session id (its file name without .jsonl)
    line: int  # the JSONL line, 1-based
    role: str  # "user" | "assistant"
    timestamp: float | None  # seconds since the epoch, when the transcript says
    excerpt: str


@dataclass(frozen=True, slots=True)
class SessionSearch:
    hits: list[SessionHit]
    sessions: int  # transcripts searched
    unreadable: list[tuple[str, str]]  # (session, why): not JSONL, nothing to search


def needles(query: str) -> list[str]:
    """The query's words and "quoted phrases", folded for matching."""
    try:
        parts = shlex.split(query)
    except ValueError:  # an unbalanced quote: the words as they are
        parts = query.split()
    return [_key(p) for p in parts if p.strip()]


def _key(text: str) -> str:
    return " ".join(fold(text).casefold().split())


def _timestamp(entry: dict[str, Any]) -> float | None:
    """When a message was said: ``timestamp`` (OpenClaw's messages), else ``at`` (an ISO string in
    OpenClaw's layout, seconds in mnemoclaw's own transcripts), on the entry or its message."""
    inner = entry.get("message")
    holders: tuple[dict[str, Any], ...] = (entry, inner) if isinstance(inner, dict) else (entry,)
    raw = next((holder[name] for name in ("timestamp", "at") for holder in holders
                if holder.get(name) is not None), None)
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        return raw / 1000 if raw > 1e11 else float(raw)  # OpenClaw writes milliseconds
    if isinstance(raw, str):
        try:
            moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            return None
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    return None


def _excerpt(text: str, at: int) -> str:
    if len(text) <= EXCERPT_CHARS:
        return text
    start = max(0, min(at - EXCERPT_CHARS // 3, len(text) - EXCERPT_CHARS))
    body = text[start:start + EXCERPT_CHARS]
    return ("…" if start else "") + body + ("…" if start + EXCERPT_CHARS < len(text) else "")


def search_sessions(transcripts: Iterable[tuple[str, str]], query: str, *, roles: Iterable[str] = (),
                    since: date | None = None, until: date | None = None, limit: int = 10) -> SessionSearch:
    """Messages of ``transcripts`` ((session id, JSONL text) pairs) holding every word of
    ``query``, newest first. ``since``/``until``: local calendar days, inclusive (a message
    without a timestamp passes no date filter)."""
    wanted = needles(query)
    allowed = set(roles)
    hits: list[SessionHit] = []
    unreadable: list[tuple[str, str]] = []
    count = 0
    for session, data in transcripts:
        count += 1
        lines = [(n, raw) for n, raw in enumerate(data.splitlines(), 1) if raw.strip()]
        parsed = 0
        for n, raw in lines:
            try:
                entry = parse.loads(raw)
            except ValueError:
                continue
            parsed += 1
            found = entry_message(entry)
            if found is None or not wanted:
                continue
            role = ROLE_NAMES[found[0]]
            if allowed and role not in allowed:
                continue
            text = " ".join(redact(found[1]).split())
            key = _key(text)
            if not all(w in key for w in wanted):
                continue
            ts = _timestamp(entry) if isinstance(entry, dict) else None
            if since or until:
                if ts is None:
                    continue
                day = datetime.fromtimestamp(ts).date()
                if (since and day < since) or (until and day > until):
                    continue
            at = key.find(wanted[0]) if len(key) == len(text) else 0
            hits.append(SessionHit(session, n, role, ts, _excerpt(text, at)))
        if lines and not parsed:
            unreadable.append((session, f"not JSONL: line {lines[0][0]} is not a JSON object"))
    hits.sort(key=lambda h: (-(h.timestamp or 0.0), h.session, -h.line))  # a later line is newer
    return SessionSearch(hits[:limit], count, unreadable)


_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_day(value: str, name: str) -> date:
    """A YYYY-MM-DD filter value, or ValueError naming ``name``."""
    if not _DAY.match(value or ""):
        raise ValueError(f"{name} must be a date YYYY-MM-DD, got {value!r}")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{name} must be a real date YYYY-MM-DD, got {value!r}") from None
