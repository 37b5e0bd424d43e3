"""Memory hygiene: distil recent daily logs into proposed MEMORY.md additions.

The model reads the last N days of ``memory/YYYY-MM-DD*.md`` and the current MEMORY.md
and proposes durable facts, preferences and rules not yet in MEMORY.md. The proposal
is shown as a unified diff; MEMORY.md changes only when the user confirms (or passes
``--apply``), and then only by appending.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from ..config import Settings
from ..errors import PathDeniedError, ReadOnlyError
from ..markdown.annotations import as_data
from ..notes import tombstones
from ..notes.discovery import is_link
from ..notes.git import autocommit
from ..notes.tombstones import Fences
from ..notes.write import extend_file
from ..text.dates import note_date
from ..text.secrets import redact
from .llm import ChatClient, LLMError
from .settings import runtime_settings

DISTIL_SYSTEM = (
    "You maintain an assistant's long-term memory file MEMORY.md. From the daily logs given, pick what is worth "
    "keeping for months: durable facts about the user and their projects, decisions, preferences, and rules or "
    "corrections the user gave. Skip what MEMORY.md already says, one-off chatter and finished tasks. Answer "
    "with Markdown bullet points only (\"- ...\"), at most 20, each self-contained and specific; answer NONE if "
    "nothing qualifies."
)

@dataclass
class Proposal:
    additions: list[str]
    diff: str
    sources: list[str]
    new_text: str
    current: str = ""  # MEMORY.md when the proposal was made


def recent_logs(workspace: Path, days: int, today: date | None = None) -> list[Path]:
    today = today or datetime.now().date()
    first = today - timedelta(days=days - 1)
    out = []
    for p in sorted((workspace / "memory").glob("*.md")):
        d = note_date(p.name)
        if d is not None and first <= d <= today and not p.is_symlink():
            out.append(p)
    return out


def propose(workspace: Path, chat: ChatClient, days: int = 7, today: date | None = None,
            max_chars: int = 60_000, fences: Fences | None = None) -> Proposal:
    logs = recent_logs(workspace, days, today)
    memory_path = workspace / "MEMORY.md"
    if is_link(memory_path):
        raise PathDeniedError("MEMORY.md is a symbolic link; memory files are never read or changed through links "
                              "(replace the link with the file itself)")
    current = memory_path.read_text("utf-8") if memory_path.is_file() else ""
    if not logs:
        return Proposal([], "", [], current, current)
    fences = fences or Fences()  # what was forgotten and came back (a restore) is not distilled
    text = "\n\n".join(f"### {p.name}\n"
                       + fences.view(p.relative_to(workspace).as_posix(), "memory",
                                     p.read_text('utf-8', errors='replace'))[0] for p in logs)
    if len(text) > max_chars:
        text = text[-max_chars:]  # the newest days matter most
    answer = chat.complete([
        {"role": "system", "content": DISTIL_SYSTEM},
        {"role": "user", "content": f"Current MEMORY.md:\n{current or '(empty)'}\n\nDaily logs:\n{text}"},
    ]).text
    # a model's words are data: a comment it wrote (or copied from a log) annotates nothing
    additions = [redact(as_data(line.strip())[0]) for line in answer.splitlines() if line.strip().startswith("- ")]
    additions = [a for a in additions if a[2:].strip() and a[2:].strip().lower() not in current.lower()]
    if not additions:
        return Proposal([], "", [p.name for p in logs], current, current)
    stamp = (today or datetime.now().date()).isoformat()
    block = f"\n## Distilled {stamp} (from {len(logs)} daily logs)\n\n" + "\n".join(additions) + "\n"
    base = current if not current or current.endswith("\n") else current + "\n"
    new_text = (base or "# Memory\n") + block
    diff = "".join(difflib.unified_diff(current.splitlines(True), new_text.splitlines(True),
                                        "MEMORY.md", "MEMORY.md (proposed)"))
    return Proposal(additions, diff, [p.name for p in logs], new_text, current)


def apply(workspace: Path, proposal: Proposal) -> None:
    """Append the proposal to MEMORY.md (the file is only ever extended, through the one
    writer of memory files: no links, no hard links, no secrets)."""
    extend_file(workspace, "MEMORY.md", proposal.current, proposal.new_text[len(proposal.current):])


def distil(settings: Settings, days: int = 7, chat: ChatClient | None = None) -> Proposal:
    """``mnemoclaw hygiene``: the proposal from the last ``days`` of logs, by the configured chat model."""
    chat = chat or ChatClient.from_settings(runtime_settings(settings))
    try:
        return propose(settings.workspace, chat, days, fences=tombstones.load(settings.state_dir))
    except LLMError as exc:
        raise LLMError(f"hygiene needs a chat model to distil the daily logs: {exc}") from None


def accept(settings: Settings, proposal: Proposal) -> None:
    """Append an accepted proposal to MEMORY.md (and commit it, with ``memory.git.autoCommit``)."""
    settings.check_writable("hygiene --apply (MEMORY.md)")
    rs = runtime_settings(settings)
    if rs.read_only:
        raise ReadOnlyError("the workspace is read-only (agents.defaults.sandbox.workspaceAccess); not applying")
    apply(settings.workspace, proposal)
    if rs.git_autocommit:
        autocommit(settings.workspace, "memory: hygiene")
