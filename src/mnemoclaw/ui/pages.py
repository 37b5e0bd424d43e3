"""What every view of the web UI shares: the Memory, taken by one request at a time; the
templates; the browser's session, from which the token its forms carry is derived; and the
check a posted form passes before it may write to memory."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from importlib import resources
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..api import Memory
from ..serve.http import same_secret

SESSION = "mnemoclaw_ui_session"  # a browser's session: the forms' token is derived from it
READ_ONLY = "this agent's memory is OpenClaw's and is served read-only"
T = TypeVar("T")


def _templates() -> Any:
    import jinja2

    folder = str(resources.files("mnemoclaw.ui") / "templates")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["when"] = lambda t: time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t else "never"
    return env


def _markdown() -> Any:
    from markdown_it import MarkdownIt

    # raw HTML in a note is text, not markup: a note holding <script> or onerror= renders inert
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).disable("image")


class Pages:
    """The templates and the Memory behind them, for the views."""

    def __init__(self, mem: Memory):
        self.mem = mem
        self.writable = mem.settings.openclaw_dir is None
        self.markdown = _markdown()
        self._templates = _templates()
        self._lock = threading.Lock()  # one request at a time uses ``mem`` (its store has one connection)
        self._secret = secrets.token_bytes(32)  # per process: a restart asks the page to be loaded again

    # -- the Memory, one request at a time --------------------------------------------------
    def serial(self, view: Callable[[Request], Response]) -> Callable[[Request], Response]:
        """``view`` holding the lock (Starlette runs a plain function on a worker thread)."""
        def run(request: Request) -> Response:
            with self._lock:
                return view(request)
        return run

    async def in_memory(self, work: Callable[[], T]) -> T:
        """``work`` on a worker thread, holding the lock: never on the event loop."""
        import anyio

        def locked() -> T:
            with self._lock:
                return work()
        return await anyio.to_thread.run_sync(locked)

    # -- pages ------------------------------------------------------------------------------
    def page(self, name: str, status: int = 200, request: Request | None = None, **values: Any) -> HTMLResponse:
        session = (request.cookies.get(SESSION) if request is not None else None) or secrets.token_urlsafe(24)
        html = self._templates.get_template(name).render(agent=self.mem.settings.agent_id,
                                                         csrf=self._form_token(session), writable=self.writable,
                                                         **values)
        response = HTMLResponse(html, status_code=status)
        if request is None or request.cookies.get(SESSION) != session:
            response.set_cookie(SESSION, session, httponly=True, samesite="strict")
        return response

    def error(self, request: Request, status: int, title: str, message: str) -> HTMLResponse:
        return self.page("error.html", status, request, title=title, message=message)

    # -- forms ------------------------------------------------------------------------------
    def _form_token(self, session: str) -> str:
        return hmac.new(self._secret, session.encode("utf-8"), hashlib.sha256).hexdigest()

    async def form(self, request: Request) -> dict[str, str] | Response:
        """The posted fields, or the refusal of a request that is not this app's own form."""
        if not self.writable:
            return self.error(request, 403, "Read-only", READ_ONLY)
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
            return self.error(request, 403, "Refused", f"a form from another site ({origin}) cannot write to memory")
        if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return self.error(request, 403, "Refused", "a form from another site cannot write to memory")
        fields = dict(parse_qsl((await request.body()).decode("utf-8", "replace"), keep_blank_values=True))
        session = request.cookies.get(SESSION, "")
        if not session or not same_secret(fields.get("csrf", ""), self._form_token(session)):
            return self.error(request, 403, "Refused", "this form is out of date (the app restarted, or cookies are "
                              "off): load the page again and resubmit")
        return fields
