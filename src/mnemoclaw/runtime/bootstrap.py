"""Workspace files injected into the system prompt on every turn.

Order AGENTS, SOUL, TOOLS, IDENTITY, USER, HEARTBEAT, BOOTSTRAP, then MEMORY (only in
the main private session: never into group chats). A file over ``bootstrapMaxChars``
keeps its head (70 %) and tail (20 %) around a visible marker; the total is capped by
``bootstrapTotalMaxChars``; a missing file injects ``[MISSING] Expected at: <path>``.
Truncation is never silent: each file's status is reported to ``/context``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..notes.tombstones import Fences
from ..text.tokenize import estimate_tokens

BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md")
HEAD_SHARE = 0.7
TAIL_SHARE = 0.2


@dataclass
class InjectedFile:
    name: str
    path: str
    status: str  # OK | TRUNCATED | MISSING
    raw_chars: int
    injected_chars: int
    text: str

    @property
    def injected_tokens(self) -> int:
        return estimate_tokens(self.text)


def truncate(text: str, limit: int, name: str) -> str:
    if len(text) <= limit:
        return text
    head = int(limit * HEAD_SHARE)
    tail = int(limit * TAIL_SHARE)
    cut = len(text) - head - tail
    marker = (f"\n\n[... TRUNCATED {cut} of {len(text)} characters of {name} (bootstrapMaxChars {limit}); "
              f"read the whole file with the read tool ...]\n\n")
    return text[:head] + marker + text[len(text) - tail:]


def load_bootstrap(workspace: Path, *, max_chars: int, total_max_chars: int,
                   include_memory: bool, fences: Fences | None = None) -> list[InjectedFile]:
    """The workspace files injected every turn; MEMORY.md without what ``fences`` keeps out (a
    forgotten line a restore brought back)."""
    names = list(BOOTSTRAP_FILES)
    if include_memory:
        names.append("MEMORY.md" if (workspace / "MEMORY.md").exists() or not (workspace / "memory.md").exists()
                     else "memory.md")
    out: list[InjectedFile] = []
    budget = total_max_chars
    for name in names:
        path = workspace / name
        if os.path.islink(path) or not path.is_file():
            text = f"[MISSING] Expected at: {path}"
            out.append(InjectedFile(name, str(path), "MISSING", 0, len(text), text))
            continue
        raw = path.read_text("utf-8", errors="replace")
        if fences is not None and name.lower() == "memory.md":
            raw = fences.view(name, "memory", raw)[0]
        limit = min(max_chars, max(0, budget))
        text = truncate(raw, limit, name) if limit > 0 else f"[... {name} left out: bootstrapTotalMaxChars reached ...]"
        status = "OK" if text == raw else "TRUNCATED"
        budget -= len(text)
        out.append(InjectedFile(name, str(path), status, len(raw), len(text), text))
    return out


def render(files: list[InjectedFile]) -> str:
    parts = ["# Workspace files (injected every turn)"]
    for f in files:
        parts.append(f"## {f.name}\n\n{f.text}")
    return "\n\n".join(parts)


_KEEP_AFTER_COMPACTION = re.compile(r"red lines?|startup|session start|safety|rules|never", re.I)


def sections_to_reinject(agents_md: str) -> str:
    """The sections of AGENTS.md that must be in front of the model again after compaction."""
    out = []
    current: list[str] | None = None
    for line in agents_md.splitlines():
        if line.startswith("#"):
            current = [line] if _KEEP_AFTER_COMPACTION.search(line) and line.startswith("##") else None
            if current is not None:
                out.append(current)
            continue
        if current is not None:
            current.append(line)
    return "\n".join("\n".join(sec).strip() for sec in out).strip()
