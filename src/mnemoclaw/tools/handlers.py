"""The agent tools' handlers: each checks its arguments, asks ``ToolServices`` for the work and
answers in the wire format. None raises: a failure comes back as data with the next step to
take, and its paths are the ones its reader may see (``public``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ..errors import MnemoclawError
from ..markdown import provenance
from ..sessions.search import parse_day, search_sessions
from ..types import Hit
from .services import Caller, Found, ToolServices
from .specs import (
    ALL_CORPORA_RESULTS,
    ANNOTATION_PARAMS,
    GET,
    MAX_QUERY_CHARS,
    SEARCH,
    SESSIONS,
    ToolArgumentError,
)
from .wire import PERSON, SearchAnswer, append_failed, explain, get_failed, scrub, search_failed

log = logging.getLogger(__name__)
_SAID: set[str] = set()  # refusals said once per process


def public(services: ToolServices, caller: Caller, message: str) -> str:
    """An error as its reader sees it: for an agent, paths relative to the workspace (the
    state directory as STATE_DIR), never where either is on this machine; a person at this
    machine sees them as they are."""
    if caller.reader == PERSON:
        return message
    settings = services.settings
    return scrub(message, ((str(settings.workspace), "", "the workspace"),
                           (str(settings.state_dir), "STATE_DIR/", "STATE_DIR")))


def answer(services: ToolServices, caller: Caller, hits: list[Hit], query: str, mode: str | None = None,
           min_score: float | None = None, *, citations: bool | None = None) -> SearchAnswer:
    """``hits`` as ``memory_search`` answers them: with the provider, and warnings for
    whatever makes them incomplete (indexing, damage, a read-only or stale index)."""
    settings = services.settings
    s = services.situation(hits)
    out = SearchAnswer(hits, query, citations=settings.memory["citations"] != "off" if citations is None else citations,
                       provider=s.provider, model=s.model, fallback=s.fallback, mode=mode or s.mode,
                       min_score=settings.query_options().min_score if min_score is None else min_score,
                       sessions=s.sessions)
    explain(out, s, caller.reader)
    out.warnings[:] = [public(services, caller, w) for w in out.warnings]
    return out


def found(hits: list[Hit], results: list[dict[str, Any]]) -> list[Found]:
    """What a search answered, as recall events read it: each result's shown lines."""
    out = []
    for h, r in zip(hits, results, strict=True):
        ranges = tuple((int(a), int(b)) for a, b in r.get("snippetLines") or ()) or ((h.start_line, h.end_line),)
        lines = h.text.split("\n")
        shown = "\n".join(lines[n - h.start_line] for a, b in ranges for n in range(a, b + 1)
                          if 0 <= n - h.start_line < len(lines)) if h.source == "sessions" else ""
        out.append(Found(h.path, h.source, ranges, h.score, shown))
    return out


def memory_search(services: ToolServices, caller: Caller, query: str, max_results: int | None = None,
                  min_score: float | None = None, *, mode: str | None = None, kind: str | None = None,
                  history: bool | None = None, corpus: str | None = None, project: str | None = None,
                  origin: str | None = None) -> dict[str, Any]:
    """``memory_search``: failures come back with an ``action``."""
    try:
        args = SEARCH.check(query=query, max_results=max_results, min_score=min_score, kind=kind,
                            history=history, corpus=corpus, project=project, origin=origin)
    except ToolArgumentError as exc:
        if isinstance(query, str) and len(query) > MAX_QUERY_CHARS:  # refused at once, and not "unavailable"
            return {"results": [], "error": f"the query is {len(query)} characters long; at most "
                    f"{MAX_QUERY_CHARS}", "action": "search for the key words or one sentence of what you "
                    "are looking for"}
        return search_failed(exc, lambda said: public(services, caller, said))
    if not args["query"].strip():  # asked for nothing: not "memory has nothing on this"
        return {"results": [], "error": "the query is empty",
                "action": "call memory_search again with the words of what you are looking for"}
    settings = services.settings
    situation = services.situation()
    if situation.refusal:
        said = f"memory_search refused: {situation.refusal} (chatType direct, agent {settings.agent_id})"
        if said not in _SAID:
            _SAID.add(said)
            log.warning("%s", said)
        return {"results": [], "mode": mode or situation.mode,
                "note": f"memory search is off in this chat: {situation.refusal}; say you cannot search memory here"}
    corpus = args["corpus"] or ("sessions" if args["origin"] == provenance.TRANSCRIPT else "memory")
    if corpus == "sessions" and "sessions" not in settings.index_sources():
        return {"results": [], "corpus": corpus,
                "error": "past conversations are not indexed for this agent (memory.search.sources lacks "
                         "\"sessions\", or memory.search.experimental.sessionMemory is off)",
                "action": "use sessions_search to find their exact words, or corpus memory; to index them, "
                          "set both in the config"}
    wanted = args["max_results"]
    if wanted is None and corpus == "all":
        wanted = ALL_CORPORA_RESULTS
    try:
        hits = services.search(args["query"], max_results=wanted, min_score=args["min_score"], mode=mode,
                               kind=args["kind"], history=bool(args["history"]), corpus=corpus,
                               project=args["project"], origin=args["origin"])
    except (MnemoclawError, ValueError, OSError) as exc:
        return search_failed(exc, lambda said: public(services, caller, said))
    wire = answer(services, caller, hits, args["query"], mode, args["min_score"]).wire()
    services.recalled(args["query"], found(hits, wire["results"]), via="cli" if caller.reader == PERSON else "tool",
                      caller=caller)
    if corpus != "memory":
        wire["corpus"] = corpus
    return wire


def memory_get(services: ToolServices, caller: Caller, path: str, from_line: int | None = None,
               lines: int | None = None) -> dict[str, Any]:
    """``memory_get``: ``{"path", "text"}``, empty text past the end or for a missing file."""
    try:
        args = GET.check(path=path, from_line=from_line, lines=lines)
        shown, text = services.read(args["path"], args["from_line"], args["lines"])
        return {"path": shown, "text": text or ""}
    except (MnemoclawError, ValueError, OSError) as exc:
        return get_failed(path, exc, lambda said: public(services, caller, said))


def memory_append(services: ToolServices, caller: Caller, text: str, target: str | None = None, *,
                  importance: int | None = None, kind: str | None = None, expires: str | None = None,
                  key: str | None = None) -> dict[str, Any]:
    """``memory_append``. What it writes is the agent's (``<!-- origin: agent -->``, with the
    session, channel and chat type of its caller), so it can be told from the owner's lines,
    found by origin and forgotten by session."""
    try:  # the one writer of memory files checks the text and names every target it refuses
        given = {"importance": importance, "kind": kind, "expires": expires, "key": key}
        for param in ANNOTATION_PARAMS:
            param.check(given[param.keyword])
        return {"ok": True, **services.notes.append(text, target, importance=importance, kind=kind, expires=expires,
                                                    key=key, origin="agent", **caller.said_in)}
    except (MnemoclawError, OSError, ValueError) as exc:
        return append_failed(exc, lambda said: public(services, caller, said))


def memory_status(services: ToolServices, caller: Caller) -> dict[str, Any]:
    return services.status()


def sessions_search(services: ToolServices, caller: Caller, query: str, role: str | None = None,
                    since: str | None = None, until: str | None = None,
                    max_results: int | None = None) -> dict[str, Any]:
    """``sessions_search``: a bad argument comes back as ``error``."""
    try:
        args = SESSIONS.check(query=query, role=role, since=since, until=until, max_results=max_results)
        first = parse_day(args["since"], "since") if args["since"] else None
        last = parse_day(args["until"], "until") if args["until"] else None
    except (ToolArgumentError, ValueError) as exc:
        return {"results": [], "error": str(exc), "action": "call sessions_search again as the error says"}
    if not args["query"].strip():
        return {"results": [], "error": "the query is empty",
                "action": "call sessions_search again with the words to find"}
    by_id: dict[str, str] = {}

    def read() -> Any:
        for t in services.transcripts():
            by_id[t.session] = t.agent
            yield t.session, t.text

    found = search_sessions(read(), args["query"], roles=(args["role"],) if args["role"] else (),
                            since=first, until=last, limit=int(args["max_results"] or 10))
    agent = services.settings.agent_id
    out: dict[str, Any] = {"results": [
        {"session": h.session, "agent": by_id.get(h.session, agent), "line": h.line, "role": h.role,
         "timestamp": (time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(h.timestamp))
                       if h.timestamp is not None else None), "excerpt": h.excerpt}
        for h in found.hits], "sessionsSearched": found.sessions}
    if found.unreadable:
        out["unreadable"] = [{"session": s, "why": why} for s, why in found.unreadable]
    if not found.hits:
        out["note"] = (f"no message of the {found.sessions} session{'s' if found.sessions != 1 else ''} "
                       "searched holds every word of the query")
    return out


def memory_forget(services: ToolServices, caller: Caller, target: str | None = None, confirm: str | None = None, *,
                  session: str | None = None, source: str | None = None, participant: str | None = None,
                  since: str | None = None) -> dict[str, Any]:
    """``memory_forget`` (offered when memory.forget.tool is true): a preview with an id, then,
    called again with ``confirm`` = that id, the removal; by a query or citation (``target``) or
    by origin (``session``, ``source``, ``participant``, ``since``)."""
    origins = [(k, v) for k, v in (("session", session), ("source", source), ("participant", participant)) if v]
    if len(origins) + bool(target) != 1:
        return {"applied": False, "error": "say what to forget: one of target, session, source or participant"}
    if since and not origins:
        return {"applied": False, "error": "since goes with session, source or participant"}
    notes = services.notes
    try:
        if origins:
            origin = notes.forget_origin_plan(*origins[0], since)
            if origin.empty():
                return {"applied": False, **origin.as_dict(), "note": f"nothing in memory came from {origin.target}"}

            def forget_origin() -> dict[str, Any]:
                done = notes.forget_origin(origin)
                return {**done, "tombstone": public(services, caller, done["tombstone"])}
            return _confirmed(origin.as_dict(), origin.digest(), confirm, forget_origin)
        assert target is not None
        plan = notes.forget_plan(target)
        return _confirmed(plan.as_dict(), plan.digest(), confirm, lambda: notes.forget(plan))
    except (MnemoclawError, OSError) as exc:
        return {"applied": False, "error": public(services, caller, str(exc))}


def _confirmed(shown: dict[str, Any], digest: str, confirm: str | None,
               run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``memory_forget``'s two calls: without ``confirm`` the preview and its id, with the id
    the removal (``run``), any other id refused."""
    if not confirm:
        return {"applied": False, **shown,
                "note": "nothing was removed: show the user what would go, and only if they agree call "
                        "memory_forget again with the same arguments and confirm set to id"}
    if confirm != digest:
        return {"applied": False, "error": "confirm does not match what these arguments name now (memory changed, "
                "or the id is from another preview); nothing was removed", **shown}
    return {"applied": True, **shown, **{k: v for k, v in run().items() if k != "removed"}}
