"""Commands that serve memory to other programs: mcp (stdio or HTTP) and the web ui."""

from __future__ import annotations

import click

from ..serve.nearby import serving
from .app import Ctx, cli, translated
from .index import SERVED


# -- mcp ----------------------------------------------------------------------------------
@cli.command()
@click.option("--http", "http_bind", metavar="HOST:PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (loopback unless you pass a token).")
@click.option("--token", envvar="MNEMOCLAW_MCP_TOKEN", metavar="TOKEN",
              help="Bearer token every HTTP request must carry (env MNEMOCLAW_MCP_TOKEN); required off loopback.")
@click.option("--session-idle", "idle_minutes", type=click.FloatRange(min=0.01), metavar="MINUTES",
              help="HTTP: close a session with no request for this long (default memory.mcp.sessionIdleMinutes, 30).")
@click.option("--max-sessions", type=click.IntRange(min=1), metavar="N",
              help="HTTP: sessions open at once; one more closes the least recently used idle one "
                   "(default memory.mcp.maxSessions, 256).")
@click.option("--no-watch", is_flag=True, help="Do not watch the files (a search still indexes what changed).")
@click.pass_obj
@translated
def mcp(obj: Ctx, http_bind, token, idle_minutes: float | None, max_sessions: int | None, no_watch: bool) -> None:
    """Run an MCP server: memory_search, memory_get, memory_append, memory_status.

    stdio by default (what Claude Code, Cursor and OpenClaw launch); --http HOST:PORT for
    streamable HTTP. Logs go to stderr; stdout carries only protocol frames.
    """
    from ..api import Memory
    from ..promote.schedule import nightly
    from ..serve.mcp import MemoryService, parse_bind, run_http, run_stdio

    settings = obj.settings(**({"sync": {"watch": False}} if no_watch else {}))
    read_only = settings.openclaw_dir is not None
    service = MemoryService(lambda: Memory(settings), forget_tool=bool(settings.memory["forget"]["tool"]))
    if http_bind:
        host, port = parse_bind(http_bind)

        def ready(url: str) -> None:
            click.echo(f"mnemoclaw MCP server for {settings.workspace} at {url}"
                       + (" (bearer token required)" if token else "") + (" [read-only]" if read_only else "")
                       + f"; what agents write is from session {service.session_id}", err=True)

        limits = settings.memory["mcp"]
        idle = idle_minutes if idle_minutes is not None else limits["sessionIdleMinutes"]
        with serving(settings, "mcp", service.provider, SERVED), nightly(settings, lambda: Memory(settings)):
            run_http(service, host, port, token, read_only=read_only, on_ready=ready, idle_seconds=idle * 60,
                     max_sessions=max_sessions if max_sessions is not None else limits["maxSessions"])
    else:  # the index opens once the transport has stdout: the first request opens it
        with serving(settings, "mcp", service.provider, SERVED, warm=False), \
                nightly(settings, lambda: Memory(settings)):
            run_stdio(service, read_only=read_only)


# -- ui -----------------------------------------------------------------------------------
@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on (loopback unless you pass a token).")
@click.option("--port", default=7420, show_default=True, type=int, help="Port (0: any free one).")
@click.option("--token", envvar="MNEMOCLAW_UI_TOKEN", metavar="TOKEN",
              help="Token a browser gives once as ?token=… (env MNEMOCLAW_UI_TOKEN); required off loopback.")
@click.option("--open", "open_browser", is_flag=True, help="Open the app in the default browser.")
@click.pass_obj
@translated
def ui(obj: Ctx, host: str, port: int, token, open_browser: bool) -> None:
    """Serve a web app for looking inside this agent's memory: search with why each result
    ranked, the memory files with their lines, and the index's health."""
    from ..promote.schedule import nightly
    from ..serve.http import listen
    from ..ui.app import serve

    sock = listen(host, port, option="--port")  # before the first sync: a busy port is said at once
    with obj.memory(background=True) as mem:
        mem.sync()
        if mem.settings.openclaw_dir is None:
            mem.freshness.watch()  # a long-running process: file events instead of a walk before each search

        def ready(url: str) -> None:
            click.echo(f"mnemoclaw ui for {mem.settings.workspace} at {url}"
                       + (" (token required: open ?token=…)" if token else ""), err=True)
            if open_browser:
                import webbrowser

                webbrowser.open(url + (f"?token={token}" if token else ""))

        with serving(mem.settings, "ui", lambda: mem.provider, SERVED), \
                nightly(mem.settings, lambda: obj.memory(settings=mem.settings)):
            serve(mem, host, sock, token, on_ready=ready)
