"""The writes: ``/append`` (today's daily log or MEMORY.md) and ``/edit/<path>`` (MEMORY.md and
the daily logs, refused when the file changed since the form was loaded). Each write is indexed
before the page says saved."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...errors import EditConflictError, MnemoclawError, PathDeniedError, ReadOnlyError
from ...notes.write import EDITABLE, content_hash
from ..pages import READ_ONLY, Pages


async def append(pages: Pages, request: Request) -> Response:
    fields = await pages.form(request)
    if isinstance(fields, Response):
        return fields
    mem = pages.mem

    def write() -> dict[str, Any]:
        done = mem.notes.append(fields.get("text", ""))
        mem.sync()  # indexed before the page says saved
        return done

    try:
        done = await pages.in_memory(write)
    except (MnemoclawError, OSError, ValueError) as exc:
        return pages.error(request, 400, "Not saved", str(exc))
    return RedirectResponse(f"/file/{quote(done['path'])}?saved=appended#L{done['startLine']}-L{done['endLine']}",
                            status_code=303)


def edit_form(pages: Pages, request: Request) -> Response:
    try:
        got = pages.mem.notes.opened(request.path_params["path"])
    except (MnemoclawError, OSError, ValueError) as exc:
        return pages.error(request, 403, "Cannot edit", str(exc))
    if not pages.writable or EDITABLE.fullmatch(got["path"]) is None:
        return pages.error(request, 403, "Cannot edit", (
            f"{got['path']} cannot be edited here: only MEMORY.md and the daily logs (memory/YYYY-MM-DD.md) can"
            if pages.writable else READ_ONLY))
    return pages.page("edit.html", request=request, path=got["path"], text=got["text"], base=got["base"], disk=None)


async def edit_save(pages: Pages, request: Request) -> Response:
    fields = await pages.form(request)
    if isinstance(fields, Response):
        return fields
    mem = pages.mem
    path = request.path_params["path"]
    text = fields.get("text", "").replace("\r\n", "\n")
    try:
        done = await pages.in_memory(lambda: mem.notes.edit(path, text, fields.get("base", "")))
    except EditConflictError as exc:
        return pages.page("edit.html", 409, request, path=path, text=text, base=content_hash(exc.current),
                          disk=exc.current, error=str(exc))
    except (MnemoclawError, OSError, ValueError) as exc:
        return pages.error(request, 403 if isinstance(exc, PathDeniedError | ReadOnlyError) else 400, "Not saved",
                           str(exc))
    return RedirectResponse(f"/file/{quote(done['path'])}?saved=edited", status_code=303)
