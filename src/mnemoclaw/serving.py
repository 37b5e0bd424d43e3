"""Running an HTTP edge (the MCP server's streamable HTTP, the web UI) under uvicorn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal


def serve(app: Any, host: str, port: int, *, on_bound: Callable[[str, int], None] | None = None,
          before: Callable[[], None] | None = None, lifespan: Literal["auto", "on", "off"] = "auto") -> None:
    """Serve ``app`` until interrupted; ``before`` runs first, ``on_bound`` gets the printable
    host and the port actually bound (port 0 picks a free one) once the server listens."""
    import anyio
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan=lifespan)
    server = uvicorn.Server(config)

    async def main() -> None:
        if before:
            before()
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:
                if server.should_exit:
                    return
                await anyio.sleep(0.05)
            bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
            if on_bound:
                on_bound(host if ":" not in host else f"[{host}]", bound)

    anyio.run(main)
