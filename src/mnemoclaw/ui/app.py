"""The web UI: an edge over ``Memory`` like the CLI and the MCP server, with no logic of its own.

Every page has a URL that can be bookmarked: ``/search?q=…&mode=…``, ``/file/<path>#L10-L20``
(the citations the tools return), ``/health``. Memory files are shown by the same rules as
``memory_get`` (``Memory.read``): a path the tool refuses, the page refuses.

Safety: served on loopback by default, where the Host header must name loopback (a page on
another site cannot reach the app through DNS rebinding); any other bind needs a token, sent
as ``Authorization: Bearer …`` or given once as ``?token=…`` (kept in a same-site cookie).
Markdown is rendered with raw HTML turned off, and every template escapes what it shows.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from ..api import Memory
from ..errors import ConfigError, EditConflictError, MnemoclawError, PathDeniedError, ReadOnlyError
from ..notes.write import EDITABLE, content_hash
from ..search.searcher import MODES
from ..serve.http import bearer, same_secret
from ..serve.mcp import is_loopback
from ..text import script
from ..text.tokenize import irregular_in
from ..types import Hit

COOKIE = "mnemoclaw_ui_token"
SESSION = "mnemoclaw_ui_session"  # a browser's session: the forms' token is derived from it
MAX_RESULTS = 20

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


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


class Guard:
    """The checks every request passes before the app sees it: the Host header on loopback,
    the token anywhere else."""

    def __init__(self, app: Any, host: str, port: int, token: str | None):
        if not is_loopback(host) and not token:
            raise ConfigError(f"refusing to serve memory on {host} without a token: anyone who can reach it could "
                              "read your notes. Pass --token (or set MNEMOCLAW_UI_TOKEN), or bind to 127.0.0.1")
        self.app = app
        self.loopback = is_loopback(host)
        self.token = token
        self.port = port

    def host_allowed(self, value: str) -> bool:
        if not self.loopback:
            return True  # the token guards a public bind
        name, _, port = value.rpartition(":") if not value.endswith("]") else (value, "", "")
        if not name:
            name, port = value, ""
        if port and self.port and port != str(self.port):
            return False
        return name.strip("[]").lower() in ("127.0.0.1", "localhost", "::1")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not self.host_allowed(headers.get("host", "")):
            await _plain(send, 421, "this app answers only to 127.0.0.1, localhost or [::1] (Host header "
                         f"{headers.get('host', '')!r}); open it at its loopback address")
            return
        if self.token:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            given = query.get("token")
            if given is not None and same_secret(given, self.token):
                rest = urlencode([(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"))
                                  if k != "token"])
                await send({"type": "http.response.start", "status": 303, "headers": [
                    (b"location", (scope["path"] + ("?" + rest if rest else "")).encode("latin-1")),
                    (b"set-cookie", f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode("latin-1")),
                ]})
                await send({"type": "http.response.body", "body": b""})
                return
            authorization = headers.get("authorization", "")
            cookies = dict(part.strip().split("=", 1) for part in headers.get("cookie", "").split(";") if "=" in part)
            credential = bearer(authorization)
            ok = (credential is not None and same_secret(credential, self.token)) or \
                same_secret(cookies.get(COOKIE, ""), self.token)
            if not ok:
                await _plain(send, 401, "this app needs its token: open it once as /?token=<the token it was "
                             "started with> (or send Authorization: Bearer <token>)")
                return
        started = time.perf_counter()

        async def timed(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":  # the page is built by now: what it cost the server
                took = (time.perf_counter() - started) * 1000
                message = {**message, "headers": [*message.get("headers", []),
                                                  (b"server-timing", f"app;dur={took:.2f}".encode("latin-1"))]}
            await send(message)

        await self.app(scope, receive, timed)


async def _plain(send: Send, status: int, text: str) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
    await send({"type": "http.response.body", "body": text.encode("utf-8")})


class IndexJob:
    """The one sync or rebuild the health page started, run on a thread of its own, with how
    far it is for the page to poll."""

    def __init__(self, mem: Memory):
        self.mem = mem
        self._lock = threading.Lock()
        self.state: dict[str, Any] = {"running": False}

    def start(self, kind: str) -> bool:
        with self._lock:
            if self.state.get("running"):
                return False
            self.state = {"running": True, "kind": kind, "filesDone": 0, "filesTotal": 0, "started": time.time()}
        threading.Thread(target=self._run, args=(kind,), name="mnemoclaw-ui-index", daemon=True).start()
        return True

    def _progress(self, done: int, total: int) -> None:
        self.state = {**self.state, "filesDone": done, "filesTotal": total}

    def _run(self, kind: str) -> None:
        try:
            report = self.mem.sync_apart(full=kind == "rebuild", progress=self._progress)
            result: dict[str, Any] = {"added": report.added, "changed": report.changed, "removed": report.removed,
                                      "unchanged": report.unchanged, "chunksEmbedded": report.chunks_embedded,
                                      "seconds": round(report.seconds, 2),
                                      "failed": [{"path": p, "reason": r} for p, r in report.failed]}
            if report.vectors_error:
                result["vectorsError"] = report.vectors_error
            self.state = {**self.state, "running": False, "result": result}
        except Exception as exc:  # shown on the page: the index keeps its last good state
            self.state = {**self.state, "running": False, "error": self.mem.public(str(exc))}


def create_app(mem: Memory, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> Any:
    """The ASGI app for ``mem`` (which the caller opens and closes)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, RedirectResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    env = _templates()
    md = _markdown()
    lock = threading.Lock()  # one request at a time uses ``mem`` (its store has one connection)

    def serial(handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
        def run(request: Request) -> Response:
            with lock:
                return handler(request)
        return run

    async def in_memory(work: Callable[[], Any]) -> Any:
        """``work`` on a worker thread, holding the lock: never on the event loop."""
        import anyio

        def locked() -> Any:
            with lock:
                return work()
        return await anyio.to_thread.run_sync(locked)

    secret = secrets.token_bytes(32)  # per process: a restart asks the page to be loaded again
    writable = mem.settings.openclaw_dir is None

    def form_token(session: str) -> str:
        return hmac.new(secret, session.encode("utf-8"), hashlib.sha256).hexdigest()

    def page(name: str, status: int = 200, request: Request | None = None, **values: Any) -> HTMLResponse:
        session = (request.cookies.get(SESSION) if request is not None else None) or secrets.token_urlsafe(24)
        html = env.get_template(name).render(agent=mem.settings.agent_id, csrf=form_token(session),
                                             writable=writable, **values)
        response = HTMLResponse(html, status_code=status)
        if request is None or request.cookies.get(SESSION) != session:
            response.set_cookie(SESSION, session, httponly=True, samesite="strict")
        return response

    async def form(request: Request) -> dict[str, str] | Response:
        """The posted fields, or the refusal of a request that is not this app's own form."""
        if not writable:
            return page("error.html", 403, request, title="Read-only",
                        message="this agent's memory is OpenClaw's and is served read-only")
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
            return page("error.html", 403, request, title="Refused",
                        message=f"a form from another site ({origin}) cannot write to memory")
        if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return page("error.html", 403, request, title="Refused", message="a form from another site cannot "
                        "write to memory")
        fields = dict(parse_qsl((await request.body()).decode("utf-8", "replace"), keep_blank_values=True))
        session = request.cookies.get(SESSION, "")
        if not session or not same_secret(fields.get("csrf", ""), form_token(session)):
            return page("error.html", 403, request, title="Refused", message="this form is out of date (the app "
                        "restarted, or cookies are off): load the page again and resubmit")
        return fields

    async def home(request: Request) -> Response:
        return RedirectResponse("/search", status_code=303)

    def search(request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        mode = request.query_params.get("mode") or mem.backend.default_mode()

        def answer(status: int = 200, results: list | None = None, error: str | None = None,
                   warning: str | None = None, took: float | None = None) -> Response:
            return page("search.html", status, request, q=q, mode=mode, modes=MODES, results=results or [],
                        error=error, warning=warning, took=took)

        if mode not in MODES:
            return answer(400, error=f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
        if not q:
            return answer()
        started = time.perf_counter()
        try:
            hits = mem.search(q, mode=mode, max_results=MAX_RESULTS, corpus="all")
        except (MnemoclawError, ValueError, OSError) as exc:
            return answer(503, error=mem.public(str(exc)))
        took = (time.perf_counter() - started) * 1000
        wire = mem.answer(hits, q, mode, citations=True).wire()
        results = [_explained(hit, item, q) for hit, item in zip(hits, wire["results"], strict=True)]
        return answer(results=results, warning=wire.get("warning"), took=took)

    def file(request: Request) -> Response:
        path = request.path_params["path"]
        try:
            shown, text = mem.read(path)
        except PathDeniedError as exc:
            return page("error.html", 403, request, title="Not a memory file", message=mem.public(str(exc)))
        except (MnemoclawError, OSError, ValueError) as exc:
            return page("error.html", 500, request, title="Could not read the file", message=mem.public(str(exc)))
        if text is None:
            return page("error.html", 404, request, title="No such file", message=f"{shown} does not exist (yet)")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return page("file.html", request=request, path=shown, lines=list(enumerate(lines, 1)),
                    rendered=md.render(text), editable=writable and EDITABLE.fullmatch(shown) is not None,
                    saved=request.query_params.get("saved"))

    def files(request: Request) -> Response:
        return page("files.html", request=request, files=_memory_files(mem))

    def health(request: Request) -> Response:
        try:
            status = mem.status()
        except (MnemoclawError, OSError) as exc:
            return page("error.html", 500, request, title="Status unavailable", message=mem.public(str(exc)))
        return page("health.html", request=request, summary=_summary(status), rows=_status_rows(status),
                    job=job.state)

    async def append(request: Request) -> Response:
        fields = await form(request)
        if isinstance(fields, Response):
            return fields
        def write() -> dict[str, Any]:
            done = mem.notes.append(fields.get("text", ""))
            mem.sync()  # indexed before the page says saved
            return done

        try:
            done = await in_memory(write)
        except (MnemoclawError, OSError, ValueError) as exc:
            return page("error.html", 400, request, title="Not saved", message=mem.public(str(exc)))
        return RedirectResponse(f"/file/{quote(done['path'])}?saved=appended#L{done['startLine']}-L{done['endLine']}",
                                status_code=303)

    def edit_form(request: Request) -> Response:
        path = request.path_params["path"]
        try:
            got = mem.notes.opened(path)
        except (MnemoclawError, OSError, ValueError) as exc:
            return page("error.html", 403, request, title="Cannot edit", message=mem.public(str(exc)))
        if not writable or EDITABLE.fullmatch(got["path"]) is None:
            return page("error.html", 403, request, title="Cannot edit", message=(
                f"{got['path']} cannot be edited here: only MEMORY.md and the daily logs (memory/YYYY-MM-DD.md) can"
                if writable else "this agent's memory is OpenClaw's and is served read-only"))
        return page("edit.html", request=request, path=got["path"], text=got["text"], base=got["base"], disk=None)

    async def edit_save(request: Request) -> Response:
        fields = await form(request)
        if isinstance(fields, Response):
            return fields
        path = request.path_params["path"]
        text = fields.get("text", "").replace("\r\n", "\n")
        try:
            done = await in_memory(lambda: mem.notes.edit(path, text, fields.get("base", "")))
        except EditConflictError as exc:
            return page("edit.html", 409, request, path=path, text=text, base=content_hash(exc.current),
                        disk=exc.current, error=mem.public(str(exc)))
        except (MnemoclawError, OSError, ValueError) as exc:
            return page("error.html", 403 if isinstance(exc, PathDeniedError | ReadOnlyError) else 400, request,
                        title="Not saved", message=mem.public(str(exc)))
        return RedirectResponse(f"/file/{quote(done['path'])}?saved=edited", status_code=303)

    def sessions(request: Request) -> Response:
        from ..runtime.transcript import SessionStore, epoch_seconds

        store = SessionStore(mem.settings.sessions_dir, read_only=True)
        rows = sorted((m for m in store.all_meta().values() if isinstance(m, dict) and m.get("sessionId")),
                      key=lambda m: epoch_seconds(m.get("updatedAt")), reverse=True)
        for m in rows:
            m["updated"] = epoch_seconds(m.get("updatedAt"))
            m["flushed"] = epoch_seconds(m.get("memoryFlushAt")) if m.get("memoryFlushAt") else None
        return page("sessions.html", request=request, rows=rows, folder=str(store.dir))

    def session(request: Request) -> Response:
        from ..runtime.agent import AgentSession
        from ..runtime.transcript import SessionStore

        sid = request.path_params["sid"]
        known = SessionStore(mem.settings.sessions_dir, read_only=True).all_meta()
        if sid not in known:
            return page("error.html", 404, request, title="No such session",
                        message=f"no chat session {sid!r}; the sessions page lists them")
        try:
            agent = AgentSession(mem, session_id=sid)
            c = agent.context_breakdown(detail=True)
        except (MnemoclawError, OSError, ValueError) as exc:
            return page("error.html", 500, request, title="Cannot read the session", message=mem.public(str(exc)))
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
        wrote = _written_in(mem, sid)
        transcript = [{"line": m.get("_line"), "role": m.get("role"), "tokens": agent.message_tokens(m),
                       "recalled": recalled.get(m.get("_line") or -1, []),
                       "text": m.get("content") if isinstance(m.get("content"), str) else str(m.get("tool_calls") or
                                                                                          m.get("content") or "")}
                      for m in agent.history]
        return page("session.html", request=request, c=c, sid=sid, meta=known[sid], window=window, used=used,
                    bars=bars, marks=marks, files=files, total=total, transcript=transcript, cap_pct=100 * cap / scale,
                    summary=agent.summary, wrote=wrote)

    job = IndexJob(mem)

    async def index_now(request: Request) -> Response:
        fields = await form(request)
        if isinstance(fields, Response):
            return fields
        kind = "rebuild" if fields.get("kind") == "rebuild" else "sync"
        job.start(kind)  # one at a time: a second press while one runs follows the first
        return RedirectResponse("/health#job", status_code=303)

    def job_state(request: Request) -> Response:
        from starlette.responses import JSONResponse

        return JSONResponse(job.state)

    static = StaticFiles(directory=str(resources.files("mnemoclaw.ui") / "static"))
    app = Starlette(routes=[
        Route("/", home), Route("/search", serial(search)), Route("/files", serial(files)),
        Route("/file/{path:path}", serial(file)), Route("/health", serial(health)),
        Route("/append", append, methods=["POST"]),
        Route("/sessions", serial(sessions)), Route("/sessions/{sid}", serial(session)),
        Route("/index", index_now, methods=["POST"]), Route("/index/progress", job_state),
        Route("/edit/{path:path}", serial(edit_form)), Route("/edit/{path:path}", edit_save, methods=["POST"]),
        Mount("/static", static, name="static"),
    ])
    return Guard(app, host, port, token)


def _explained(hit: Hit, item: dict[str, Any], query: str) -> dict[str, Any]:
    """A result with why it ranked: the keyword score and the query terms it holds, the
    vector similarity, the fused score; and the query's Chinese words as the snippet writes
    them in the other script (``marks``: 資料庫 for 数据库) and the irregular forms of its words
    (won for win), for the highlighter."""
    words = {t for line in (hit.analysed or []) for t in line}
    matched = [t for t in hit.terms if t in words] if words else []
    words_typed = query.split()
    marks = [*script.marks(item["snippet"], words_typed), *irregular_in(item["snippet"], words_typed)]
    return {**item, "href": f"/file/{quote(hit.path)}#L{hit.start_line}-L{hit.end_line}", "keyword": hit.text_score,
            "vector": hit.vector_score, "matched": matched, "marks": marks}


DATED = re.compile(r"memory/(\d{4})-(\d{2})-(\d{2})(?:-(.+))?\.md")


def _written_in(mem: Memory, sid: str) -> list[dict[str, Any]]:
    """What the agent wrote to memory in session ``sid`` (its notes carry ``session: sid``), by
    citation, in file order."""
    out: list[dict[str, Any]] = []
    try:
        annotated = mem.store.annotations()
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


def _memory_files(mem: Memory) -> dict[str, Any]:
    """What the index holds of memory, by kind: MEMORY.md; the daily logs and session summaries
    (``memory/YYYY-MM-DD[-slug].md``) as a timeline, newest day first, a month a group; the
    other notes under memory/; the files of memorySearch.extraPaths."""
    long_term, other, extra = [], [], []
    days: dict[str, list[dict[str, Any]]] = {}
    for path, rec in sorted(mem.store.file_records().items()):
        if rec.source != "memory":
            continue
        dated = DATED.fullmatch(path)
        if path in ("MEMORY.md", "memory.md"):
            long_term.append({"path": path, "size": rec.size})
        elif dated:
            day = "-".join(dated.groups()[:3])
            days.setdefault(day, []).append({"path": path, "size": rec.size,
                                             "kind": "session summary" if dated.group(4) else "daily log",
                                             "slug": dated.group(4) or ""})
        elif path.startswith("memory/"):
            other.append({"path": path, "size": rec.size})
        else:
            extra.append({"path": path, "size": rec.size})
    months: list[tuple[str, list[tuple[str, str, list[dict[str, Any]]]]]] = []
    for day in sorted(days, reverse=True):
        try:
            label = datetime.strptime(day, "%Y-%m-%d")
        except ValueError:  # 2026-02-31: a name, not a date
            other.extend(days[day])
            continue
        month = label.strftime("%B %Y")
        if not months or months[-1][0] != month:
            months.append((month, []))
        entries = sorted(days[day], key=lambda e: (e["kind"] != "daily log", e["path"]))
        months[-1][1].append((day, label.strftime("%a"), entries))
    return {"long_term": long_term, "timeline": months, "other": other, "extra": extra,
            "count": len(long_term) + sum(len(v) for v in days.values()) + len(other) + len(extra)}


def _summary(st: dict[str, Any]) -> list[tuple[str, str, str]]:
    """What a person checks first, as (label, value, state) with state ok / warn / bad."""
    synced = st.get("lastSync")
    out = [
        ("Index", f"{st.get('index')} ({st.get('backend')}, {st.get('store')})", "ok"),
        ("Files · chunks · vectors", f"{st.get('files')} · {st.get('chunks')} · {st.get('vectors')}",
         "ok" if st.get("chunks") else "warn"),
        ("Provider / model", f"{st.get('provider')} / {st.get('model')}", "ok"),
        ("Search mode", str(st.get("mode")), "ok" if st.get("mode") == "hybrid" else "warn"),
        ("Vector search", str(st.get("vectorSearch")), "ok"),
        ("Fallback", str(st.get("fallback") or "none"), "warn" if st.get("fallback") else "ok"),
        ("Last sync", time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(synced)) if synced else "never",
         "ok" if synced else "warn"),
        ("Changed since the last sync", "yes: the next search indexes them" if st.get("dirty") else "no",
         "warn" if st.get("dirty") else "ok"),
        ("Damage", str(st.get("damaged") or "none"), "bad" if st.get("damaged") else "ok"),
    ]
    if st.get("vectorsError"):
        out.append(("Embedding provider", str(st["vectorsError"]), "bad"))
    for warning in st.get("warnings") or []:
        out.append(("Warning", str(warning), "warn"))
    return out


def _status_rows(status: dict[str, Any]) -> list[tuple[str, str]]:
    """``status`` as label/value rows, nested values flattened with dotted names."""
    rows: list[tuple[str, str]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, list):
            rows.append((prefix, ", ".join(str(v) for v in value) if value else "none"))
        else:
            rows.append((prefix, "" if value is None else str(value)))

    walk("", status)
    return rows


def serve(mem: Memory, host: str, sock: socket.socket, token: str | None, *,
          on_ready: Callable[[str], None] | None = None) -> None:
    """Run the app on ``sock``, bound to ``host`` (``serving.listen``), until interrupted."""
    from ..serve.http import serve as run

    app = create_app(mem, host=host, port=sock.getsockname()[1], token=token)

    def bound(shown: str, at: int) -> None:
        if on_ready:
            on_ready(f"http://{shown}:{at}/")

    run(app, sock, on_bound=bound, lifespan="off")
