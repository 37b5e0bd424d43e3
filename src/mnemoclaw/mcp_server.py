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
import hmac
import ipaddress
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, TypeVar

from pydantic import Field  # the MCP SDK's own dependency: tool schemas are pydantic models

from .api import MAX_QUERY_CHARS, Memory
from .errors import ConfigError

log = logging.getLogger(__name__)
T = TypeVar("T")

INSTRUCTIONS = """\
This server is your long-term memory: Markdown notes (MEMORY.md for durable facts and \
rules, memory/YYYY-MM-DD.md daily logs) that persist across sessions and compaction.
- Before answering anything about earlier work, decisions, people, preferences, dates or \
open tasks, call memory_search; read more with memory_get. If nothing is found, say so.
- Write what must last as soon as you learn it with memory_append: decisions, facts, \
commitments and the user's instructions go to today's log; corrections, preferences and \
rules ("ask before sending", "do nothing until I say so") go to MEMORY.md \
(target="long_term"). Anything not written down is forgotten."""

SEARCH_DESC = """\
Search long-term memory (MEMORY.md and the daily logs) by meaning and by keyword, in any \
language. Use it BEFORE answering questions about past work, decisions, people, \
preferences, dates or todos. Naming a date ("2026-03-04", "March 2026") favours notes \
from then. Returns ranked snippets with path, line range and citation; read the \
surrounding lines with memory_get."""

GET_DESC = """\
Read a memory file, or a range of its lines: MEMORY.md, memory.md, memory/*.md or a \
configured extra Markdown path. Use after memory_search to read around a hit \
(from = first line, 1-based; lines = how many). A missing file returns empty text."""

APPEND_DESC = """\
Write to memory (append-only, with a timestamp; never overwrites). Omit target to append \
to today's daily log (facts, decisions, progress, the user's instructions); \
target="long_term" appends to MEMORY.md (durable preferences, rules, corrections). Write \
as soon as something worth keeping happens; keep entries short and specific. No other \
file can be written."""

STATUS_DESC = "Show the memory index: workspace, files and chunks, embedding provider, freshness."


class MemoryService:
    """Runs every memory call on one dedicated thread, opening the Memory lazily."""

    def __init__(self, open_memory: Callable[[], Memory], *, keep_fresh: bool = True):
        self._open = open_memory
        self._keep_fresh = keep_fresh
        self._memory: Memory | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mnemoclaw-memory")

    def _get(self) -> Memory:
        if self._memory is None:
            self._memory = self._open()
            if self._keep_fresh:
                self._memory.start_background()
        return self._memory

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


def _strict(tool: Any) -> Any:
    """Refuse arguments the tool does not take, instead of dropping them: an agent that
    passes ``path`` to memory_append must learn it was not written there."""
    from pydantic import ConfigDict

    model = tool.fn_metadata.arg_model
    strict = type(model.__name__, (model,), {"model_config": ConfigDict(**{**model.model_config, "extra": "forbid"})})
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
    return tool


def build_server(service: MemoryService, *, read_only: bool = False, name: str = "mnemoclaw") -> Any:
    from mcp.server import MCPServer
    from mcp.server.mcpserver.tools import Tool

    instructions = INSTRUCTIONS if not read_only else INSTRUCTIONS.split("\n- Write")[0] + (
        "\nThis memory is served read-only: it cannot be written from here.")

    async def memory_search(
        query: Annotated[str, Field(description="What to look for, in natural language or exact terms",
                                    max_length=MAX_QUERY_CHARS)],
        maxResults: Annotated[int | None, Field(description="How many results (default 6)", ge=1, le=100)] = None,
        minScore: Annotated[float | None, Field(description="Drop results scoring below this, 0-1 (default 0.35)",
                                                ge=0, le=1)] = None,
    ) -> dict[str, Any]:
        return await service.call(lambda m: m.memory_search(query, maxResults, minScore))

    async def memory_get(
        path: Annotated[str, Field(description="Workspace-relative path, e.g. memory/2026-05-01.md")],
        from_: Annotated[int | None, Field(validation_alias="from", description="First line, 1-based", ge=1)] = None,
        lines: Annotated[int | None, Field(description="Number of lines to read", ge=0)] = None,
    ) -> dict[str, Any]:
        return await service.call(lambda m: m.memory_get(path, from_, lines))

    async def memory_append(
        text: Annotated[str, Field(description="The note, in Markdown (a line or a short list)")],
        target: Annotated[str | None, Field(description='Omit for today\'s log; "long_term" for MEMORY.md')] = None,
    ) -> dict[str, Any]:
        return await service.call(lambda m: m.memory_append(text, target))

    async def memory_status() -> dict[str, Any]:
        def status(m: Memory) -> dict[str, Any]:
            st = m.status()
            st["readOnly"] = read_only
            return st

        return await service.call(status)

    tools = [Tool.from_function(memory_search, description=SEARCH_DESC),
             Tool.from_function(memory_get, description=GET_DESC)]
    if not read_only:
        tools.append(_strict(Tool.from_function(memory_append, description=APPEND_DESC)))
    tools.append(Tool.from_function(memory_status, description=STATUS_DESC))
    return MCPServer(name, instructions=instructions, log_level="WARNING", tools=tools)


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
        self.expected = token.encode()

    def _authorized(self, header: bytes) -> bool:
        # the scheme is case-insensitive (RFC 9110 11.1); the token is compared in constant time
        scheme, _, credential = header.strip().partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credential.strip(), self.expected)

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
    import anyio
    import uvicorn

    app = http_app(service, host, token, read_only=read_only)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)

    async def main() -> None:
        service.warm()
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:
                if server.should_exit:
                    return
                await anyio.sleep(0.05)
            bound = server.servers[0].sockets[0].getsockname() if server.servers else (host, port)
            url = f"http://{host if ':' not in host else f'[{host}]'}:{bound[1]}/mcp"
            if on_ready:
                on_ready(url)

    try:
        anyio.run(main)
    finally:
        service.close()
