"""``/files``, what the index holds of memory as a timeline, and ``/file/<path>``, one memory
file by the rules of ``memory_get`` (``Memory.read``): a path the tool refuses, the page refuses."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...api import Memory
from ...errors import MnemoclawError, PathDeniedError
from ...notes.write import EDITABLE
from ..pages import Pages

DATED = re.compile(r"memory/(\d{4})-(\d{2})-(\d{2})(?:-(.+))?\.md")


def file(pages: Pages, request: Request) -> Response:
    mem = pages.mem
    try:
        shown, text = mem.read(request.path_params["path"])
    except PathDeniedError as exc:
        return pages.error(request, 403, "Not a memory file", str(exc))
    except (MnemoclawError, OSError, ValueError) as exc:
        return pages.error(request, 500, "Could not read the file", str(exc))
    if text is None:
        return pages.error(request, 404, "No such file", f"{shown} does not exist (yet)")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return pages.page("file.html", request=request, path=shown, lines=list(enumerate(lines, 1)),
                      rendered=pages.markdown.render(text),
                      editable=pages.writable and EDITABLE.fullmatch(shown) is not None,
                      saved=request.query_params.get("saved"))


def files(pages: Pages, request: Request) -> Response:
    return pages.page("files.html", request=request, files=memory_files(pages.mem))


def memory_files(mem: Memory) -> dict[str, Any]:
    """What the index holds of memory, by kind: MEMORY.md; the daily logs and session summaries
    (``memory/YYYY-MM-DD[-slug].md``) as a timeline, newest day first, a month a group; the
    other notes under memory/; the files of memorySearch.extraPaths."""
    long_term, other, extra = [], [], []
    days: dict[str, list[dict[str, Any]]] = {}
    for path, rec in sorted(mem.backend.store.file_records().items()):
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
