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
import ipaddress
import json
import logging
import secrets
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, TypeVar

from pydantic import Field  # the MCP SDK's own dependency: tool schemas are pydantic models

from . import tools
from .api import Memory
from .errors import ConfigError
from .serving import bearer, same_secret

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


class _SaidOverMcp:
    """The memory an MCP client's tool calls reach: what it appends is the agent's, said in this
    server's session over the ``mcp`` channel (``<!-- origin: agent; session: mcp-…; channel: mcp -->``)."""

    def __init__(self, memory: Memory, session_id: str):
        self._memory, self._session = memory, session_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._memory, name)

    def memory_append(self, text: str, target: str | None = None, **annotations: Any) -> dict[str, Any]:
        return self._memory.memory_append(text, target, **annotations, session=self._session, channel="mcp")


def _handler(service: MemoryService, spec: tools.ToolSpec, read_only: bool) -> Callable[..., Any]:
    """An MCP tool function for ``spec``: its signature (the schema the client sees, and
    what the SDK validates) is made from the spec's parameters and bounds."""
    async def handler(**kwargs: Any) -> dict[str, Any]:
        wire = {p.name: kwargs[p.keyword] for p in spec.params if kwargs.get(p.keyword) is not None}
        return await service.call(lambda m: tools.call(_SaidOverMcp(m, service.session_id), spec.name, wire,
                                                       read_only=read_only, spec=spec))

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
        from .recall import recall

        found = await service.call(lambda mem: recall(mem, message))
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


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self.token = token

    def _authorized(self, header: bytes) -> bool:
        credential = bearer(header)
        return credential is not None and same_secret(credential, self.token)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not self._authorized(got):
                body = json.dumps({"error": "unauthorized: send Authorization: Bearer <token>"}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(service: MemoryService, host: str, token: str | None, *, read_only: bool = False) -> Any:
    if not is_loopback(host) and not token:
        raise ConfigError(
            f"refusing to serve memory on {host} without a token: anyone who can reach it could read your notes. "
            "Pass --token (or set MNEMOCLAW_MCP_TOKEN), or bind to 127.0.0.1"
        )
    from mcp.server.transport_security import TransportSecuritySettings

    server = build_server(service, read_only=read_only)
    security = None
    if not is_loopback(host):
        # the bearer token guards a public bind; the Host allow-list is for loopback only
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(streamable_http_path="/mcp", host=host, transport_security=security)
    return BearerAuth(app, token) if token else app


def run_http(service: MemoryService, host: str, port: int, token: str | None, *, read_only: bool = False,
             on_ready: Callable[[str], None] | None = None) -> None:
    from .serving import listen, serve

    app = http_app(service, host, token, read_only=read_only)
    sock = listen(host, port, option="--http HOST:PORT")  # before the model loads: a busy port is said at once

    def bound(shown: str, at: int) -> None:
        if on_ready:
            on_ready(f"http://{shown}:{at}/mcp")

    try:
        serve(app, sock, on_bound=bound, before=service.warm, lifespan="on")
    finally:
        service.close()
