"""``/health``, the index's state, and the one sync or rebuild it can start (``/index``),
run on a thread of its own while the page polls ``/index/progress``."""

from __future__ import annotations

import threading
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from ...api import Memory
from ...errors import MnemoclawError
from ...promote.run import summary as promotion
from ..pages import Pages


class IndexJob:
    """The one sync or rebuild the health page started, with how far it is."""

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
            report = self.mem.sync(apart=True, full=kind == "rebuild", progress=self._progress)
            result: dict[str, Any] = {"added": report.added, "changed": report.changed, "removed": report.removed,
                                      "unchanged": report.unchanged, "chunksEmbedded": report.chunks_embedded,
                                      "seconds": round(report.seconds, 2),
                                      "failed": [{"path": p, "reason": r} for p, r in report.failed]}
            if report.vectors_error:
                result["vectorsError"] = report.vectors_error
            self.state = {**self.state, "running": False, "result": result}
        except Exception as exc:  # shown on the page: the index keeps its last good state
            self.state = {**self.state, "running": False, "error": str(exc)}


def health(pages: Pages, job: IndexJob, request: Request) -> Response:
    try:
        status = pages.mem.status()
    except (MnemoclawError, OSError) as exc:
        return pages.error(request, 500, "Status unavailable", str(exc))
    try:  # what promotion would do next (words only, quick), and when it runs
        promote: dict[str, Any] = promotion(pages.mem)
    except (MnemoclawError, OSError) as exc:
        promote = {"error": str(exc)}
    return pages.page("health.html", request=request, summary=summary(status), rows=status_rows(status),
                      job=job.state, promote=promote)


async def index_now(pages: Pages, job: IndexJob, request: Request) -> Response:
    fields = await pages.form(request)
    if isinstance(fields, Response):
        return fields
    kind = "rebuild" if fields.get("kind") == "rebuild" else "sync"
    job.start(kind)  # one at a time: a second press while one runs follows the first
    return RedirectResponse("/health#job", status_code=303)


def progress(job: IndexJob, request: Request) -> Response:
    return JSONResponse(job.state)  # no lock: the state is replaced whole, and a poll never waits behind a page


def summary(st: dict[str, Any]) -> list[tuple[str, str, str]]:
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


def status_rows(status: dict[str, Any]) -> list[tuple[str, str]]:
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
