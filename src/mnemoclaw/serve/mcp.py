"""mnemoclaw as an MCP server, over stdio or streamable HTTP.

Tools: ``memory_search`` and ``memory_get`` (the shapes of the memory tools),
``memory_append`` (append-only: today's daily log, or MEMORY.md) and ``memory_status``.
The tool descriptions carry the memory protocol, so any MCP client's model learns when
to search and when to write.

One ``Memory`` serves the session, owned by a single worker thread: every tool call
runs there in order, so the SQLite connection is never shared between threads, and
the event loop stays free. The index is kept fresh by the watcher and the background
writer, and a search indexes what changed before it runs.

Over stdio nothing but protocol frames reaches stdout: logging goes to stderr, and the
index is opened only once the transport has taken over stdout.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, TypeVar

from pydantic import Field  # the MCP SDK's own dependency: tool schemas are pydantic models

from .. import tools
from ..api import Memory
from ..errors import ConfigError
from ..tools.services import AGENT, Caller
from .http import Refusal, TokenGuard, is_loopback, require_token

log = logging.getLogger(__name__)
T = TypeVar("T")

class MemoryService:
    """Runs every memory call on one dedicated thread, opening the Memory lazily."""

    def __init__(self, open_memory: Callable[[], Memory], *, keep_fresh: bool = True, forget_tool: bool = False):
        self._open = open_memory
        self.forget_tool = forget_tool  # offer memory_forget (memory.forget.tool)
        # what memory_append writes is annotated with this run of the server as its session, so
        # `mnemoclaw forget --session` can take back what one run's agent wrote
        self.session_id = f"mcp-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        self._keep_fresh = keep_fresh
        self._memory: Memory | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mnemoclaw-memory")

    def _get(self) -> Memory:
        if self._memory is None:
            self._memory = self._open()
            if self._keep_fresh:
                self._memory.start_background()
        return self._memory

    def provider(self) -> Any:
        """The session's embedding model (opening the Memory if it is not open yet)."""
        return self._executor.submit(lambda: self._get().provider).result()

    def warm(self) -> None:
        """Open the index (and start keeping it fresh) now, without waiting for it."""
        self._executor.submit(self._get)

    async def call(self, fn: Callable[[Memory], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(self._get()))

    def close(self) -> None:
        def shut() -> None:
            if self._memory is not None:
                self._memory.close()
                self._memory = None

        self._executor.submit(shut).result(timeout=30)
        self._executor.shutdown(wait=True)


_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


def _handler(service: MemoryService, spec: tools.ToolSpec, read_only: bool) -> Callable[..., Any]:
    """An MCP tool function for ``spec``: its signature (the schema the client sees, and
    what the SDK validates) is made from the spec's parameters and bounds."""
    # what an MCP client appends is the agent's, said in this server's session over the ``mcp``
    # channel (``<!-- origin: agent; session: mcp-…; channel: mcp -->``)
    caller = Caller(AGENT, session=service.session_id, channel="mcp")

    async def handler(**kwargs: Any) -> dict[str, Any]:
        wire = {p.name: kwargs[p.keyword] for p in spec.params if kwargs.get(p.keyword) is not None}
        return await service.call(lambda m: m.tools.said_by(caller).call(spec.name, wire, read_only=read_only,
                                                                          spec=spec))

    params = []
    for p in spec.params:
        kind = _TYPES[p.type] if p.required else _TYPES[p.type] | None
        field = Field(description=p.description, ge=p.minimum, le=p.maximum, max_length=p.max_length,
                      validation_alias=p.name if p.py else None)
        params.append(inspect.Parameter(p.keyword, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[kind, field],
                                        default=inspect.Parameter.empty if p.required else None))
    handler.__signature__ = inspect.Signature(params, return_annotation=dict[str, Any])  # type: ignore[attr-defined]
    handler.__name__ = spec.name
    return handler


def _strict(tool: Any) -> Any:
    """Refuse arguments a tool does not take, instead of dropping them: an agent that
    passes ``path`` to memory_append must learn it was not written there."""
    from pydantic import ConfigDict

    model = tool.fn_metadata.arg_model
    strict: Any = type(model.__name__, (model,),
                       {"model_config": ConfigDict(**{**model.model_config, "extra": "forbid"})})
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
    return tool


def build_server(service: MemoryService, *, read_only: bool = False, name: str = "mnemoclaw") -> Any:
    from mcp.server import MCPServer
    from mcp.server.mcpserver.tools import Tool

    instructions = tools.INSTRUCTIONS if not read_only else tools.INSTRUCTIONS.split("\n- Write")[0] + (
        "\n" + tools.READ_ONLY_NOTE)
    made = []
    for spec in tools.tools_for(read_only, forget=service.forget_tool):
        tool = Tool.from_function(_handler(service, spec, read_only), name=spec.name, description=spec.description)
        made.append(_strict(tool) if spec.writes else tool)
    server = MCPServer(name, instructions=instructions, log_level="WARNING", tools=made)

    @server.prompt(name="recall", description="What mnemoclaw would put before the reply to MESSAGE: the memory "
                   "entries that clearly bear on it, with citations (nothing when none does). No model call.")
    async def recall_prompt(message: str) -> str:
        found = await service.call(lambda mem: mem.tools.recall(message))
        return found.block() or f"Memory has nothing that clearly bears on this message ({found.why_none})."

    return server


# -- transports -----------------------------------------------------------------------------
def run_stdio(service: MemoryService, *, read_only: bool = False) -> None:
    import anyio

    server = build_server(service, read_only=read_only)

    async def main() -> None:
        # the stdio transport now owns stdout: opening the index cannot leak output into it
        service.warm()
        await server.run_stdio_async()

    try:
        anyio.run(main)
    finally:
        service.close()


def parse_bind(value: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``PORT`` (loopback); IPv6 as ``[::1]:PORT``."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", value
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise ConfigError(f"--http expects HOST:PORT (e.g. 127.0.0.1:8765), got {value!r}") from None
    if not 0 <= number <= 65535:
        raise ConfigError(f"--http port must be 0-65535, got {number}")
    return host, number


_UNAUTHORIZED = Refusal(401, json.dumps({"error": "unauthorized: send Authorization: Bearer <token>"}).encode(),
                        ((b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")))


class BearerAuth(TokenGuard):
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>`` (the
    Host header is the SDK's to check)."""

    def __init__(self, app: Any, token: str):
        super().__init__(app, token=token, refusal=_UNAUTHORIZED)


_SESSION_HEADER = b"mcp-session-id"
_VERSION_HEADER = b"mcp-protocol-version"


def _header(headers: Any, name: bytes) -> str | None:
    for key, value in headers or ():
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


class SessionLimit:
    """ASGI middleware: at most ``cap`` MCP sessions are open at once.

    A request that may open one more (a POST without a session id at a protocol version that has
    sessions: ``initialize``) first closes the least recently used session that has no request in
    flight. It is closed the way a client
    closes it, with a DELETE through the SDK, so its id answers 404 from then on and its client
    initializes again, as the streamable HTTP spec says. A client that initializes and never
    sends DELETE thus cannot grow the server: without this, each such session kept ~40 KB until
    its idle timeout (30 minutes), and 3 300 of them took the server from 226 to 363 MB. When
    every open session has a request in flight (an open GET stream, a long search), nothing is
    closed and the SDK's own limit (the same ``cap``) answers 503.
    """

    def __init__(self, app: Any, cap: int, path: str):
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        self.app = app
        self.cap = cap
        self.path = path  # where the sessions are served; what is asked elsewhere has none
        # a request at a later protocol version (2026-07-28: one self-contained POST, no session) opens
        # none, so it closes none; the SDK tells the two apart by this header the same way
        self._session_versions = {None, *HANDSHAKE_PROTOCOL_VERSIONS}
        # the sessions opened through here, least recently used first: id -> requests in flight
        self._open: OrderedDict[str, int] = OrderedDict()
        self._opening = 0  # requests without a session id being served: each may open one

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        session = _header(scope.get("headers"), _SESSION_HEADER)
        if session is not None:
            await self._serve_session(session, scope, receive, send)
        elif scope.get("method") == "POST" and _header(scope.get("headers"), _VERSION_HEADER) in self._session_versions:
            await self._serve_opening(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _serve_session(self, session: str, scope: dict[str, Any], receive: Any, send: Any) -> None:
        known = session in self._open
        if known:
            self._open[session] += 1
            self._open.move_to_end(session)
        status: int | None = None

        async def watched(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watched)
        finally:
            if known and session in self._open:
                self._open[session] -= 1
                self._open.move_to_end(session)  # used until now: the most recently used
                ended = status == 404 or (scope.get("method") == "DELETE" and status is not None and status < 300)
                if ended:
                    del self._open[session]

    async def _serve_opening(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self._opening += 1
        reserved = True

        async def watched(message: dict[str, Any]) -> None:
            nonlocal reserved
            if message["type"] == "http.response.start":
                opened = _header(message.get("headers"), _SESSION_HEADER) if message["status"] < 400 else None
                if opened is not None:
                    self._open[opened] = 0
                # the room it held is the session's now (or free): a keep-alive client's next request
                # may arrive before this one's handler has returned
                self._opening -= 1
                reserved = False
            await send(message)

        try:
            while len(self._open) + self._opening > self.cap:
                if not await self._close_least_recently_used(scope):
                    break  # every session is busy: the SDK's limit refuses this one
            await self.app(scope, receive, watched)
        finally:
            if reserved:
                self._opening -= 1

    async def _close_least_recently_used(self, scope: dict[str, Any]) -> bool:
        victim = next((session for session, busy in self._open.items() if not busy), None)
        if victim is None:
            return False
        del self._open[victim]  # before the await: no other request picks it meanwhile
        # the DELETE is sent with the Host of the request that needs the room, so it passes the
        # SDK's checks exactly when that request would
        headers = [(k, v) for k, v in scope.get("headers") or () if k.lower() == b"host"]
        delete = {**scope, "method": "DELETE", "path": self.path, "query_string": b"",
                  "headers": [*headers, (_SESSION_HEADER, victim.encode("latin-1"))]}
        status: int | None = None

        async def nothing() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def answered(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await self.app(delete, nothing, answered)
        if status in (200, 404):  # closed now, or it had already expired
            log.info("closed MCP session %s, the least recently used, to open another (%d open at most)",
                     victim[:12], self.cap)
            return True
        log.warning("could not close MCP session %s to make room (HTTP %s)", victim[:12], status)
        self._open[victim] = 0
        self._open.move_to_end(victim, last=False)
        return False


def http_app(service: MemoryService, host: str, token: str | None, *, idle_seconds: float, max_sessions: int,
             read_only: bool = False) -> Any:
    require_token(host, token, variable="MNEMOCLAW_MCP_TOKEN")
    from mcp.server.transport_security import TransportSecuritySettings

    server = build_server(service, read_only=read_only)
    security = None
    if not is_loopback(host):
        # the bearer token guards a public bind; the Host allow-list is for loopback only
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    # The SDK ends a session idle this long (its id then answers 404) and refuses a session beyond
    # max_sessions; SessionLimit makes room first by closing the least recently used one.
    app = SessionLimit(server.streamable_http_app(streamable_http_path="/mcp", host=host, transport_security=security,
                                                  session_idle_timeout=idle_seconds, max_sessions=max_sessions),
                       max_sessions, path="/mcp")
    return BearerAuth(app, token) if token else app


def run_http(service: MemoryService, host: str, port: int, token: str | None, *, idle_seconds: float,
             max_sessions: int, read_only: bool = False, on_ready: Callable[[str], None] | None = None) -> None:
    from .http import listen, serve

    app = http_app(service, host, token, read_only=read_only, idle_seconds=idle_seconds, max_sessions=max_sessions)
    sock = listen(host, port, option="--http HOST:PORT")  # before the model loads: a busy port is said at once

    def bound(shown: str, at: int) -> None:
        if on_ready:
            on_ready(f"http://{shown}:{at}/mcp")

    try:
        serve(app, sock, on_bound=bound, before=service.warm, lifespan="on")
    finally:
        service.close()
