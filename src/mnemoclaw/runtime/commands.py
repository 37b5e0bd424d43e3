"""What the slash commands of a chat session print: ``/context list|detail`` and ``/status``
(the session, runtime/agent.py, runs the commands themselves: ``/compact [focus]``, ``/new``,
``/reset``, ``/verbose``, ``/recall [on|off]``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..text.tokenize import estimate_tokens

if TYPE_CHECKING:
    from ..api import Memory
    from ..tools.recall import Recall
    from .bootstrap import InjectedFile
    from .llm import ChatClient
    from .settings import RuntimeSettings

COMMANDS = "/context list|detail, /compact [focus], /status, /new, /reset, /verbose, /recall [on|off]"


@dataclass
class Reply:
    text: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    recalled: list[dict[str, Any]] = field(default_factory=list)  # entries put in context before the reply
    flushed: bool = False
    compacted: int = 0
    command: bool = False
    error: str | None = None


class Context(Protocol):
    """What ``/context`` reports of a chat session (runtime/agent.py's ``AgentSession`` is one:
    the session imports these reports, never the other way round)."""

    session_id: str
    recall_on: bool
    recalled: Recall | None  # what recall put before the last reply
    history: list[dict[str, Any]]
    summary: str | None
    rs: RuntimeSettings

    def system_prompt(self) -> tuple[str, list[InjectedFile]]: ...

    def tools(self) -> list[dict[str, Any]]: ...

    def message_tokens(self, m: dict[str, Any]) -> int: ...

    def session_tokens(self) -> int: ...


class Status(Protocol):
    """What ``/status`` reports of a chat session."""

    session_id: str
    meta: dict[str, Any]
    notes: list[str]
    workspace: Path
    rs: RuntimeSettings
    memory: Memory
    chat: ChatClient

    def session_tokens(self) -> int: ...


def context_breakdown(agent: Context, *, detail: bool = False) -> dict[str, Any]:
    """What the next request holds, as data (``/context``, ``mnemoclaw context --json``)."""
    system, files = agent.system_prompt()
    offered = agent.tools()
    tools_json = json.dumps(offered)
    rs = agent.rs
    out: dict[str, Any] = {
        "session": agent.session_id,
        "files": [{"name": f.name, "path": f.path, "status": f.status, "rawChars": f.raw_chars,
                   "injectedChars": f.injected_chars, "injectedTokens": f.injected_tokens} for f in files],
        "bootstrapMaxChars": rs.bootstrap_max_chars,
        "bootstrapTotalMaxChars": rs.bootstrap_total_max_chars,
        "systemPrompt": {"chars": len(system), "tokens": estimate_tokens(system)},
        "tools": {"count": len(offered), "chars": len(tools_json), "tokens": estimate_tokens(tools_json)},
        "history": {"messages": len(agent.history), "tokens": sum(agent.message_tokens(m) for m in agent.history),
                    "compacted": agent.summary is not None},
        "sessionTokens": agent.session_tokens(),
        "contextTokens": rs.context_tokens,
        "flushAt": rs.flush_threshold,
        "compactionAt": rs.compaction_threshold,
        "recall": {"on": agent.recall_on,
                   "entries": [e.wire() for e in agent.recalled.entries] if agent.recalled else [],
                   "chars": len(agent.recalled.block()) if agent.recalled else 0,
                   "note": agent.recalled.why_none if agent.recalled else None},
    }
    if detail:
        by_role: dict[str, list[int]] = {}
        for m in agent.history:
            by_role.setdefault(str(m.get("role")), []).append(agent.message_tokens(m))
        out["historyByRole"] = {r: {"messages": len(v), "tokens": sum(v)} for r, v in by_role.items()}
        out["largestMessages"] = [
            {"line": m["_line"], "role": m.get("role"), "tokens": agent.message_tokens(m),
             "preview": str(m.get("content") or m.get("tool_calls"))[:60]}
            for m in sorted(agent.history, key=agent.message_tokens, reverse=True)[:5]]
        out["toolTokens"] = {s["function"]["name"]: estimate_tokens(json.dumps(s)) for s in offered}
    return out


def context_report(agent: Context, *, detail: bool = False) -> str:
    c = context_breakdown(agent, detail=detail)
    lines = ["Bootstrap files (injected every turn):"]
    for f in c["files"]:
        lines.append(f"  {f['status']:9} {f['name']:13} raw {f['rawChars']:>7} chars  injected "
                     f"{f['injectedChars']:>7} chars ~{f['injectedTokens']} tokens")
    truncated = [f["name"] for f in c["files"] if f["status"] == "TRUNCATED"]
    if truncated:
        lines.append(f"  WARNING: {', '.join(truncated)} TRUNCATED to bootstrapMaxChars {c['bootstrapMaxChars']} "
                     f"(total cap {c['bootstrapTotalMaxChars']}): the model sees only the head and tail. "
                     "Shorten the file or raise agents.defaults.bootstrapMaxChars.")
    sp, tools, hist = c["systemPrompt"], c["tools"], c["history"]
    lines += [
        f"System prompt: {sp['chars']} chars ~{sp['tokens']} tokens",
        f"Tool schemas: {tools['count']} tools, {tools['chars']} chars ~{tools['tokens']} tokens",
        f"History: {hist['messages']} messages ~{hist['tokens']} tokens"
        + (" (+ compaction summary)" if hist["compacted"] else ""),
        f"Session: ~{c['sessionTokens']} / {c['contextTokens']} tokens "
        f"(flush at {c['flushAt']}, compaction at {c['compactionAt']})",
    ]
    rc = c["recall"]
    if not rc["on"]:
        lines.append("Recall before the reply: off (/recall on)")
    elif rc["entries"]:
        lines.append(f"Recalled for the last message: {len(rc['entries'])} entries, {rc['chars']} chars")
    else:
        lines.append(f"Recalled for the last message: nothing ({rc['note'] or 'no message yet'})")
    if detail:
        for e in rc["entries"]:
            lines.append(f"  recalled {e['citation']} score {e['score']:.2f}: {e['text'][:80]!r}")
        lines.append("History by role: " + ", ".join(f"{r} {v['messages']} msgs ~{v['tokens']} tokens"
                                                     for r, v in c["historyByRole"].items()))
        for m in c["largestMessages"]:
            lines.append(f"  line {m['line']:>6} {m['role']:9} ~{m['tokens']} tokens {m['preview']!r}")
        for name, tokens in c["toolTokens"].items():
            lines.append(f"  tool {name}: ~{tokens} tokens")
    return "\n".join(lines)


def status_report(agent: Status) -> str:
    m = agent.meta
    st = agent.memory.status(check_dirty=False)
    lines = [
        f"Session {agent.session_id}  model {agent.chat.model} at {agent.chat.base_url}",
        f"Tokens ~{agent.session_tokens()} / {agent.rs.context_tokens}; API usage in {m.get('inputTokens', 0)} "
        f"out {m.get('outputTokens', 0)}",
        f"Compactions {m.get('compactionCount', 0)}; "
        + (f"last memory flush {_fmt_time(m['memoryFlushAt'])} (before compaction "
           f"{int(m.get('memoryFlushCompactionCount') or 0) + 1})" if m.get("memoryFlushAt")
           else "no memory flush yet (one runs before the first compaction)"),
        f"Memory: {st['files']} files, {st['chunks']} chunks, {st['provider']}/{st['model'] or '-'}",
        f"Workspace {agent.workspace}" + ("  [read-only]" if agent.rs.read_only else ""),
    ]
    lines += [f"Note: {n}" for n in agent.notes]
    return "\n".join(lines)


def _fmt_time(ts: Any) -> str:
    return datetime.fromtimestamp(float(ts)).strftime("%Y-%m-%d %H:%M") if ts else "never"
