"""``/sessions``, the chat sessions newest first, and ``/sessions/<id>``: what fills a session's
context window, its transcript with what was recalled for each message, and what it wrote to memory.

The chat runtime is imported when one of these pages is asked for: the rest of the app never needs it."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...api import Memory
from ...errors import MnemoclawError
from ..pages import Pages


def sessions(pages: Pages, request: Request) -> Response:
    from ...runtime.transcript import SessionStore, epoch_seconds

    store = SessionStore(pages.mem.settings.sessions_dir, read_only=True)
    rows = sorted((m for m in store.all_meta().values() if isinstance(m, dict) and m.get("sessionId")),
                  key=lambda m: epoch_seconds(m.get("updatedAt")), reverse=True)
    for m in rows:
        m["updated"] = epoch_seconds(m.get("updatedAt"))
        m["flushed"] = epoch_seconds(m.get("memoryFlushAt")) if m.get("memoryFlushAt") else None
    return pages.page("sessions.html", request=request, rows=rows, folder=str(store.dir))


def session(pages: Pages, request: Request) -> Response:
    from ...runtime.agent import AgentSession
    from ...runtime.transcript import SessionStore

    mem = pages.mem
    sid = request.path_params["sid"]
    known = SessionStore(mem.settings.sessions_dir, read_only=True).all_meta()
    if sid not in known:
        return pages.error(request, 404, "No such session", f"no chat session {sid!r}; the sessions page lists them")
    try:
        agent = AgentSession(mem, session_id=sid)
        c = agent.context_breakdown(detail=True)
    except (MnemoclawError, OSError, ValueError) as exc:
        return pages.error(request, 500, "Cannot read the session", str(exc))
    window = max(int(c["contextTokens"] or 0), 1)
    parts = [("system prompt", c["systemPrompt"]["tokens"]), ("tool schemas", c["tools"]["tokens"]),
             ("history", c["history"]["tokens"])]
    used = sum(t for _, t in parts)
    bars = [(name, tokens, 100 * tokens / window) for name, tokens in parts]
    marks = [("memory flush", c["flushAt"], 100 * c["flushAt"] / window),
             ("compaction", c["compactionAt"], 100 * c["compactionAt"] / window)]
    cap = max(int(c["bootstrapMaxChars"] or 0), 1)
    scale = max([cap, *(f["rawChars"] for f in c["files"])])  # a file's bar: its characters, the cap marked
    files = [{**f, "pct": 100 * f["rawChars"] / scale, "kept": 100 * f["injectedChars"] / scale}
             for f in c["files"]]
    total = sum(f["injectedChars"] for f in c["files"])
    recalled: dict[int, list[dict[str, Any]]] = {}
    for _, entry in agent.store.read(sid):
        if entry.get("type") == "recall" and isinstance(entry.get("forLine"), int):
            recalled[entry["forLine"]] = [e for e in entry.get("entries") or [] if isinstance(e, dict)]
    transcript = [{"line": m.get("_line"), "role": m.get("role"), "tokens": agent.message_tokens(m),
                   "recalled": recalled.get(m.get("_line") or -1, []),
                   "text": m.get("content") if isinstance(m.get("content"), str) else str(m.get("tool_calls") or
                                                                                      m.get("content") or "")}
                  for m in agent.history]
    return pages.page("session.html", request=request, c=c, sid=sid, meta=known[sid], window=window, used=used,
                      bars=bars, marks=marks, files=files, total=total, transcript=transcript,
                      cap_pct=100 * cap / scale, summary=agent.summary, wrote=written_in(mem, sid))


def written_in(mem: Memory, sid: str) -> list[dict[str, Any]]:
    """What the agent wrote to memory in session ``sid`` (its notes carry ``session: sid``), by
    citation, in file order."""
    out: list[dict[str, Any]] = []
    try:
        annotated = mem.backend.store.annotations()
    except (MnemoclawError, OSError, ValueError):
        return out
    for path, start, end, meta in annotated.values():
        try:
            attrs = json.loads(meta)
        except ValueError:
            continue
        if isinstance(attrs, dict) and attrs.get("session") == sid:
            out.append({"path": path, "startLine": start, "endLine": end, "citation": f"{path}#L{start}-L{end}"})
    return sorted(out, key=lambda w: (w["path"], w["startLine"]))
