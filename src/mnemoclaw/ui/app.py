"""The web UI: an edge over ``Memory`` like the CLI and the MCP server, with no logic of its own.

Every page has a URL that can be bookmarked: ``/search?q=…&mode=…``, ``/file/<path>#L10-L20``
(the citations the tools return), ``/health``. Memory files are shown by the same rules as
``memory_get`` (``Memory.read``): a path the tool refuses, the page refuses.

Safety: served on loopback by default, where the Host header must name loopback (a page on
another site cannot reach the app through DNS rebinding); any other bind needs a token, sent
as ``Authorization: Bearer …`` or given once as ``?token=…`` (kept in a same-site cookie).
Both are ``serve.http.TokenGuard``'s checks, the MCP server's too. Markdown is rendered with
raw HTML turned off, and every template escapes what it shows.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, MutableMapping
from functools import partial
from importlib import resources
from typing import Any

from ..api import Memory
from ..serve.http import ASGIApp, Receive, Refusal, Scope, Send, TokenGuard, require_token
from .pages import Pages
from .views import edit, files, health, search, sessions

COOKIE = "mnemoclaw_ui_token"
UNAUTHORIZED = Refusal.plain(401, "this app needs its token: open it once as /?token=<the token it was started "
                             "with> (or send Authorization: Bearer <token>)")
GET, POST = ("GET",), ("POST",)


async def home(request: Any) -> Any:
    from starlette.responses import RedirectResponse

    return RedirectResponse("/search", status_code=303)


def routes(pages: Pages, job: health.IndexJob) -> list[tuple[str, Callable[..., Any], tuple[str, ...]]]:
    """Every page and form of the app as (path, view, methods). A page that reads memory is
    ``serial`` (one request at a time: its store has one connection); a form that writes
    takes the same lock for the write itself (``Pages.in_memory``)."""
    serial = pages.serial
    return [
        ("/", home, GET),
        ("/search", serial(partial(search.search, pages)), GET),
        ("/files", serial(partial(files.files, pages)), GET),
        ("/file/{path:path}", serial(partial(files.file, pages)), GET),
        ("/health", serial(partial(health.health, pages, job)), GET),
        ("/append", partial(edit.append, pages), POST),
        ("/sessions", serial(partial(sessions.sessions, pages)), GET),
        ("/sessions/{sid}", serial(partial(sessions.session, pages)), GET),
        ("/index", partial(health.index_now, pages, job), POST),
        ("/index/progress", partial(health.progress, job), GET),
        ("/edit/{path:path}", serial(partial(edit.edit_form, pages)), GET),
        ("/edit/{path:path}", partial(edit.edit_save, pages), POST),
    ]


class Timed:
    """ASGI middleware: each answer says what it cost the server (``Server-Timing: app;dur=…``)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def timed(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":  # the page is built by now: what it cost the server
                took = (time.perf_counter() - started) * 1000
                message = {**message, "headers": [*message.get("headers", []),
                                                  (b"server-timing", f"app;dur={took:.2f}".encode("latin-1"))]}
            await send(message)

        await self.app(scope, receive, timed)


def create_app(mem: Memory, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> Any:
    """The ASGI app for ``mem`` (which the caller opens and closes)."""
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    require_token(host, token, variable="MNEMOCLAW_UI_TOKEN")
    pages = Pages(mem)
    table = routes(pages, health.IndexJob(mem))
    static = StaticFiles(directory=str(resources.files("mnemoclaw.ui") / "static"))
    app = Starlette(routes=[*(Route(path, view, methods=list(methods)) for path, view, methods in table),
                            Mount("/static", static, name="static")])
    return TokenGuard(Timed(app), token=token, refusal=UNAUTHORIZED, cookie=COOKIE, served_at=(host, port))


def serve(mem: Memory, host: str, sock: socket.socket, token: str | None, *,
          on_ready: Callable[[str], None] | None = None) -> None:
    """Run the app on ``sock``, bound to ``host`` (``serving.listen``), until interrupted."""
    from ..serve.http import serve as run

    app = create_app(mem, host=host, port=sock.getsockname()[1], token=token)

    def bound(shown: str, at: int) -> None:
        if on_ready:
            on_ready(f"http://{shown}:{at}/")

    run(app, sock, on_bound=bound, lifespan="off")
