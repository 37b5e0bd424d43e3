"""Compaction: older history becomes a structured summary; recent turns stay verbatim.

The split falls only at the start of a user turn, so an assistant's tool call is never
separated from its result. Long histories are summarised in pieces and the pieces
merged. Identifiers (ticket numbers, hashes, versions, paths, URLs, e-mail addresses)
found in the summarised part are checked against the summary and any the model left
out are added under "Exact identifiers": they are exactly what a summary tends to
paraphrase away and exactly what a later task needs verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..sessions.transcript import message_text
from ..text import parse
from ..text.tokenize import estimate_tokens

HEADINGS = ("## Decisions", "## Open TODOs", "## Constraints/Rules", "## Pending user asks", "## Exact identifiers")

SUMMARY_SYSTEM = (
    "You compact a conversation between a user and an AI assistant so the assistant can continue it after the "
    "older turns are removed. Write a summary with exactly these sections, in this order:\n"
    + "\n".join(HEADINGS)
    + "\nUnder each, short bullet points. Keep every instruction, rule and constraint the user gave, word for word "
    "where possible (for example \"do nothing until I say so\"). Copy identifiers (ticket numbers, ids, hashes, "
    "file paths, URLs, versions, names) exactly. Write \"- none\" under an empty section. Output only the summary."
)
MERGE_SYSTEM = (
    "Merge these partial summaries of one conversation, oldest first, into one summary with exactly the same "
    "sections (" + ", ".join(h[3:] for h in HEADINGS) + "). Later information wins where they disagree; keep every "
    "rule and every identifier. Output only the merged summary."
)

_IDENT = re.compile(
    r"https?://[^\s)\]>\"']+"
    r"|[\w.+-]+@[\w-]+\.[\w.-]+"
    r"|(?<![\w/])(?:~|\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b"
    r"|\b[A-Z][A-Z0-9]{1,9}-\d{2,}\b"
    r"|\b[0-9a-f]{7,40}\b"
    r"|\bv?\d+\.\d+\.\d+(?:[-+.][\w.]+)?\b"
)
MAX_IDENTIFIERS = 120


def identifiers(text: str) -> list[str]:
    """Identifier-like strings, in order of first appearance, without duplicates."""
    seen: dict[str, None] = {}
    for m in _IDENT.finditer(text):
        token = m.group(0).rstrip(".,;:")
        if re.fullmatch(r"[0-9a-f]{7,40}", token) and not re.search(r"[a-f]", token):
            continue  # a plain number, not a hash
        seen.setdefault(token, None)
    out = list(seen)
    return out[-MAX_IDENTIFIERS:]


def split_point(messages: list[dict[str, Any]], keep_tokens: int, tokens: Callable[[dict[str, Any]], int]) -> int:
    """Index of the first message kept verbatim (0: nothing to compact).

    Only the start of a user turn qualifies. The kept part is the longest run of whole
    recent turns within ``keep_tokens``, and at least the last turn.
    """
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not starts:
        return 0
    suffix = 0
    best = starts[-1]
    total_from: dict[int, int] = {}
    for i in range(len(messages) - 1, -1, -1):
        suffix += tokens(messages[i])
        total_from[i] = suffix
    for i in reversed(starts):
        if total_from[i] <= keep_tokens:
            best = i
        else:
            break
    return best


def render(messages: list[dict[str, Any]], tool_chars: int = 2_000) -> str:
    """A transcript for the summariser: text in full, tool results shortened."""
    lines = []
    for m in messages:
        role = m.get("role")
        content = message_text(m.get("content"))
        if role == "user":
            lines.append(f"User: {content}")
        elif role == "assistant":
            if content:
                lines.append(f"Assistant: {content}")
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                lines.append(f"Assistant called {fn.get('name')}({fn.get('arguments', '')})")
        elif role == "tool":
            if len(content) > tool_chars:
                cut = len(content) - tool_chars
                content = content[: tool_chars // 2] + f" [... {cut} chars ...] " + content[-tool_chars // 2 :]
            lines.append(f"Tool result ({m.get('name', 'tool')}): {content}")
        elif role == "system":
            lines.append(f"System: {content}")
    return "\n".join(lines)


def pieces(text: str, budget_tokens: int) -> list[str]:
    """Split a rendered transcript at line breaks into parts of at most ``budget_tokens``."""
    out: list[list[str]] = [[]]
    used = 0
    for line in text.split("\n"):
        n = estimate_tokens(line) + 1
        if out[-1] and used + n > budget_tokens:
            out.append([])
            used = 0
        out[-1].append(line)
        used += n
    return ["\n".join(p) for p in out if p]


def ensure_structure(summary: str, idents: list[str]) -> str:
    """Every heading present; identifiers the model dropped appended under the last one."""
    summary = summary.strip()
    for h in HEADINGS:
        if h.lower() not in summary.lower():
            summary += f"\n\n{h}\n- none"
    missing = [i for i in idents if i not in summary]
    if missing:
        summary += "\n" + "\n".join(f"- `{i}`" for i in missing)
    return summary


def extractive_summary(messages: list[dict[str, Any]], previous: str | None) -> str:
    """A summary made without the model (it could not be reached): what the user said,
    newest last, and every identifier. Better than losing the history."""
    asks = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    rule = re.compile(r"\b(never|always|don't|do not|until|must|only|wait|ask)\b|不要|别|必须|先", re.I)
    rules = [a for a in asks if rule.search(a)]
    parts = ["## Decisions\n- (compacted without the model: see the user's messages below)",
             "## Open TODOs\n- none recorded",
             "## Constraints/Rules\n" + ("\n".join(f"- {r[:500]}" for r in rules) or "- none"),
             "## Pending user asks\n" + ("\n".join(f"- {a[:300]}" for a in asks[-20:]) or "- none"),
             "## Exact identifiers"]
    if previous:
        parts.insert(0, "Earlier summary:\n" + previous)
    return "\n\n".join(parts)


def json_args(call: dict[str, Any]) -> dict[str, Any]:
    fn = call.get("function") or {}
    raw = fn.get("arguments") or "{}"
    if isinstance(raw, dict):
        return raw
    try:
        value = parse.loads(raw)
        return value if isinstance(value, dict) else {}
    except ValueError:
        return {}
