"""Session transcripts as searchable text.

A transcript is JSONL, one entry a line. Only what the user and the assistant said is
kept: tool calls, tool results, reasoning and metadata are dropped, whitespace is
collapsed and secrets are redacted before anything reaches the index. Each kept
message becomes one ``User: …`` or ``Assistant: …`` line, and the line numbers of the
rendered text map back to the JSONL lines they came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..text import parse
from ..text.secrets import REDACTED, redact

__all__ = ["REDACTED", "Transcript", "entry_message", "message_text", "parse_transcript", "redact"]

ROLES = {"user": "User", "assistant": "Assistant"}
TEXT_PART_TYPES = {"text", "input_text", "output_text"}


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


def entry_message(entry: Any) -> tuple[str, str] | None:
    """(``User`` or ``Assistant``, what was said) of a transcript entry; None for anything else."""
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
            entry = parse.loads(line)
        except ValueError:
            continue
        found = entry_message(entry)
        if found is None:
            continue
        label, text = found
        text = " ".join(redact(text).split())
        if not text:
            continue
        out.append(f"{label}: {text}")
        where.append(lineno)
    return Transcript("\n".join(out), where, len(out))
