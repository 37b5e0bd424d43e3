"""One table from a tool's name to its handler, and ``call``: a tool call with wire arguments,
as the MCP server and the chat runtime make it. ``Tools`` is the same bound to one
``ToolServices`` and one ``Caller``, for Python (``Memory.tools``) and the command line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..types import Hit
from . import handlers
from .recall import Recall, recall
from .services import AGENT, PERSON, Caller, ToolServices
from .specs import APPEND, FORGET, GET, SEARCH, SESSIONS, STATUS, TOOLS, ToolArgumentError, ToolSpec, tools_for
from .wire import SearchAnswer

Handler = Callable[..., dict[str, Any]]  # (services, caller, **the spec's keywords) -> the answer on the wire

HANDLERS: dict[str, Handler] = {
    SEARCH.name: handlers.memory_search,
    GET.name: handlers.memory_get,
    APPEND.name: handlers.memory_append,
    STATUS.name: handlers.memory_status,
    SESSIONS.name: handlers.sessions_search,
    FORGET.name: handlers.memory_forget,
}


def call(services: ToolServices, caller: Caller, name: str, arguments: Mapping[str, Any], *,
         read_only: bool = False, spec: ToolSpec | None = None) -> dict[str, Any]:
    """One tool call with wire arguments; never raises: a bad call is answered with what went
    wrong. ``spec``: the tool as this caller was offered it (``memory_forget`` where the config
    enables it, the memory flush's append); ``read_only``: the tools that write are not offered."""
    spec = spec or TOOLS.get(name)
    if spec is None or spec.name != name or (read_only and spec.writes):
        offered = ", ".join(t.name for t in tools_for(read_only))
        return {"error": f"unknown tool {name!r}; the tools are {offered}"}
    if not isinstance(arguments, Mapping):
        return _refused(spec, f"{spec.name} takes an object of arguments")
    try:
        kwargs = spec.parse(arguments)
    except ToolArgumentError as exc:
        return _refused(spec, str(exc))
    out = HANDLERS[spec.name](services, caller, **kwargs)
    return {**out, "readOnly": read_only} if spec.name == STATUS.name else out


def _refused(spec: ToolSpec, why: str) -> dict[str, Any]:
    if spec.name == SEARCH.name:
        return {"results": [], "disabled": True, "error": why, "warning": "memory_search was called wrongly",
                "action": "call memory_search again as the error says"}
    if spec.name == APPEND.name:
        return {"ok": False, "error": f"{why}; nothing was written"}
    if spec.name == GET.name:
        return {"path": "", "text": "", "error": why}
    return {"error": why}


@dataclass(frozen=True)
class Tools:
    """The agent tools over one memory, as one caller calls them; no method raises."""

    services: ToolServices
    caller: Caller = Caller()

    def said_by(self, caller: Caller) -> Tools:
        """The same tools, called by ``caller``."""
        return replace(self, caller=caller)

    def for_person(self) -> Tools:
        """The same tools, answering the person at this machine (real paths, commands to run)."""
        return self.said_by(Caller(PERSON))

    def call(self, name: str, arguments: Mapping[str, Any], *, read_only: bool = False,
             spec: ToolSpec | None = None) -> dict[str, Any]:
        return call(self.services, self.caller, name, arguments, read_only=read_only, spec=spec)

    def memory_search(self, query: str, max_results: int | None = None, min_score: float | None = None, *,
                      mode: str | None = None, kind: str | None = None, history: bool | None = None,
                      corpus: str | None = None, project: str | None = None,
                      origin: str | None = None) -> dict[str, Any]:
        return handlers.memory_search(self.services, self.caller, query, max_results, min_score, mode=mode, kind=kind,
                                      history=history, corpus=corpus, project=project, origin=origin)

    def memory_get(self, path: str, from_line: int | None = None, lines: int | None = None) -> dict[str, Any]:
        return handlers.memory_get(self.services, self.caller, path, from_line, lines)

    def memory_append(self, text: str, target: str | None = None, *, importance: int | None = None,
                      kind: str | None = None, expires: str | None = None, key: str | None = None) -> dict[str, Any]:
        return handlers.memory_append(self.services, self.caller, text, target, importance=importance, kind=kind,
                                      expires=expires, key=key)

    def memory_status(self) -> dict[str, Any]:
        return handlers.memory_status(self.services, self.caller)

    def sessions_search(self, query: str, role: str | None = None, since: str | None = None,
                        until: str | None = None, max_results: int | None = None) -> dict[str, Any]:
        return handlers.sessions_search(self.services, self.caller, query, role, since, until, max_results)

    def memory_forget(self, target: str | None = None, confirm: str | None = None, *, session: str | None = None,
                      source: str | None = None, participant: str | None = None,
                      since: str | None = None) -> dict[str, Any]:
        return handlers.memory_forget(self.services, self.caller, target, confirm, session=session, source=source,
                                      participant=participant, since=since)

    def recall(self, message: str, *, last_turn: str | None = None,
               options: dict[str, Any] | None = None) -> Recall:
        """What memory puts before the reply to ``message`` (``tools/recall.py``)."""
        return recall(self.services, message, last_turn=last_turn, options=options, caller=self.caller)

    def answer(self, hits: list[Hit], query: str, mode: str | None = None, min_score: float | None = None, *,
               citations: bool | None = None) -> SearchAnswer:
        """``hits`` as ``memory_search`` answers them (the web UI shows its own search so)."""
        return handlers.answer(self.services, self.caller, hits, query, mode, min_score, citations=citations)

    def public(self, message: str) -> str:
        """An error as this caller's reader may see it."""
        return handlers.public(self.services, self.caller, message)


__all__ = ["AGENT", "HANDLERS", "PERSON", "Caller", "Tools", "call"]
