"""Session transcripts as searchable text.

A transcript is JSONL, one entry a line. Only what the user and the assistant said is
kept: tool calls, tool results, reasoning and metadata are dropped, whitespace is
collapsed and secrets are redacted before anything reaches the index. Each kept
message becomes one ``User: …`` or ``Assistant: …`` line, and the line numbers of the
rendered text map back to the JSONL lines they came from.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

ROLES = {"user": "User", "assistant": "Assistant"}
TEXT_PART_TYPES = {"text", "input_text", "output_text"}
REDACTED = "[REDACTED]"

# Each pattern matches a whole secret (group 0) or, for "name = value" forms, keeps the
# name and replaces the value (group "value").
_SECRET_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)", re.S),
    re.compile(r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),  # OpenAI, Anthropic
    re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),  # Stripe
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}"),  # GitHub
    re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"),  # GitLab
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),  # Slack
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),  # Google
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bhf_[A-Za-z0-9]{30,}"),  # Hugging Face
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # JWT
    re.compile(r"(?i)\bbearer\s+(?P<value>[A-Za-z0-9_\-\.=:/+]{12,})"),
    re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<value>[^\s@/]+)@"),  # user:password@host
    re.compile(
        r"(?i)(?:\b|_)(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|access[_\-]?token|auth[_\-]?token|token|"
        r"passw(?:or)?d|pwd|client[_\-]?secret|private[_\-]?key|aws_secret_access_key)"
        r"[\"']?\s*(?:[:=]|\bis\b)\s*[\"']?(?P<value>[^\s\"',;]{6,})"
    ),
    re.compile(r"(?:密码|口令|密钥|令牌)\s*(?:[:：=是为]|\s)\s*(?P<value>[^\s，。,;；]{4,})"),
]


def redact(text: str) -> str:
    """Replace API keys, tokens and passwords in common formats with ``[REDACTED]``."""
    for pattern in _SECRET_PATTERNS:
        if "value" in pattern.groupindex:
            text = pattern.sub(_replace_value, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def _replace_value(m: re.Match[str]) -> str:
    start, end = m.span("value")
    s0 = m.start()
    whole = m.group(0)
    return whole[: start - s0] + REDACTED + whole[end - s0 :]


@dataclass(frozen=True)
class Transcript:
    text: str  # one "User: …" / "Assistant: …" line per kept message
    source_lines: list[int]  # rendered line i (0-based) came from JSONL line source_lines[i] (1-based)
    messages: int


def message_text(content: Any) -> str:
    """The plain text of a message's content (a string, or a list of typed parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in TEXT_PART_TYPES and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return " ".join(parts)
    return ""


def _entry_message(entry: Any) -> tuple[str, str] | None:
    if not isinstance(entry, dict):
        return None
    msg = entry.get("message") if entry.get("type", "message") == "message" else None
    if msg is None and "role" in entry:  # a bare chat message
        msg = entry
    if not isinstance(msg, dict):
        return None
    label = ROLES.get(msg.get("role"))  # type: ignore[arg-type]
    if label is None:
        return None
    return label, message_text(msg.get("content"))


def parse_transcript(data: str) -> Transcript:
    """Render a JSONL transcript. Lines that are not JSON (a torn last line) are skipped."""
    out: list[str] = []
    where: list[int] = []
    for lineno, line in enumerate(data.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        found = _entry_message(entry)
        if found is None:
            continue
        label, text = found
        text = " ".join(redact(text).split())
        if not text:
            continue
        out.append(f"{label}: {text}")
        where.append(lineno)
    return Transcript("\n".join(out), where, len(out))
