"""Which transcripts an agent may search: ``tools.sessions.visibility``.

``"all"`` lets ``sessions_search`` read every agent's transcripts beside this agent's own; any
other value (OpenClaw's ``self``, ``tree``, ``agent``) this agent's own. ``memory_search`` indexes
this agent's own whatever it says.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .openclaw import agents, locate

ALL = "all"


def visibility(raw: Mapping[str, Any]) -> str | None:
    """``tools.sessions.visibility`` as a config file sets it (None when it does not)."""
    tools = raw.get("tools")
    sessions = tools.get("sessions") if isinstance(tools, Mapping) else None
    value = sessions.get("visibility") if isinstance(sessions, Mapping) else None
    return value if isinstance(value, str) else None


def transcript_folders(agent_id: str, own: Path, setting: str | None, *, openclaw_dir: Path | None = None,
                       openclaw_version: str | None = None, state_dir: Path | None = None) -> list[tuple[str, Path]]:
    """(agent, folder) of each transcript folder ``sessions_search`` may read, this agent's own
    first. For an OpenClaw agent (``openclaw_dir``), every OpenClaw agent where OpenClaw keeps its
    transcripts (a copy of its database's under ``state_dir``); else mnemoclaw's own agents'
    folders beside this one (``<state>/agents/<id>/sessions``)."""
    if setting != ALL:
        return [(agent_id, own)]
    if openclaw_dir is not None and state_dir is not None:
        out = [(agent_id, own)]
        for agent in agents(openclaw_dir):
            if agent != agent_id:
                found = locate(openclaw_dir, agent, state_dir / "openclaw" / agent / "sessions",
                               version=openclaw_version)
                if found.sessions_dir.is_dir():
                    out.append((agent, found.sessions_dir))
        return out
    others = sorted(p for p in own.parent.parent.glob("*/sessions") if p.is_dir() and p != own)
    return [(agent_id, own), *((p.parent.name, p) for p in others)]
