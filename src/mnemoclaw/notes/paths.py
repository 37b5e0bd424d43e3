"""Which paths of the workspace the memory tools may read (the one path sandbox).

``memory_get`` may read ``MEMORY.md``, ``memory.md``, ``memory/**/*.md`` and Markdown
files inside the configured extra paths, never through a symbolic link and never
outside those places. Each refusal says which rule it hit.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import PathDeniedError
from .discovery import IGNORED_DIRS, ROOT_FILES

ALLOWED_HINT = "allowed: MEMORY.md, memory.md, memory/**/*.md and .md files inside configured extraPaths"
# Longer paths cannot name a file (PATH_MAX, NAME_MAX on Linux and macOS): refused before
# any system call, so the error names the path as given, not an absolute one.
MAX_PATH_CHARS = 1024
MAX_NAME_BYTES = 255


@dataclass(frozen=True)
class ResolvedPath:
    display: str  # the path as search results show it
    abspath: Path


def _links_on_the_way(base: Path, target: Path) -> Path | None:
    """The first symbolic link between ``base`` (exclusive) and ``target`` (inclusive), if any."""
    rel = target.relative_to(base)
    cur = base
    for part in rel.parts:
        cur = cur / part
        if cur.is_symlink():
            return cur
    return None


def resolve_memory_path(raw: str, workspace: Path, extra_paths: list[Path]) -> ResolvedPath:
    """Check ``raw`` against the memory path rules; raise PathDeniedError saying why not."""
    if not isinstance(raw, str) or not raw.strip():
        raise PathDeniedError(f"memory_get needs a path, e.g. MEMORY.md or memory/2026-01-31.md ({ALLOWED_HINT})")
    text = raw.strip()
    if "\x00" in text:
        raise PathDeniedError("path contains a NUL byte")
    if len(text) > MAX_PATH_CHARS or any(len(part.encode("utf-8", "replace")) > MAX_NAME_BYTES
                                         for part in text.split("/")):
        shown = text if len(text) <= 80 else text[:60] + "…" + text[-12:]
        raise PathDeniedError(f"{shown!r} is too long to be a file name ({len(text)} characters); {ALLOWED_HINT}")
    try:
        return _resolve(text, workspace, extra_paths)
    except OSError as exc:  # the checks stat the path: say why in the caller's own terms
        raise PathDeniedError(f"cannot read {text!r}: {exc.strerror or exc}") from None


def _resolve(text: str, workspace: Path, extra_paths: list[Path]) -> ResolvedPath:
    ws_given = Path(os.path.normpath(os.path.abspath(os.path.expanduser(str(workspace)))))
    ws = Path(os.path.realpath(workspace))
    expanded = Path(os.path.expanduser(text))
    candidate = expanded if expanded.is_absolute() else ws / expanded
    # normalise without resolving links, so a link is seen (and refused), not followed
    normal = Path(os.path.normpath(candidate))
    if not normal.name.lower().endswith(".md"):
        raise PathDeniedError(f"{text!r} is not a Markdown file; {ALLOWED_HINT}")

    def under(path: Path, root: Path) -> bool:
        try:
            path.relative_to(root)
            return True
        except ValueError:
            return False

    # A root may be configured through a link above it (/tmp -> /private/tmp): paths
    # are accepted in either spelling and checked in the real one. Links at or below
    # a root are never followed.
    if under(normal, ws_given) and not under(normal, ws):
        normal = ws / normal.relative_to(ws_given)
    roots: list[tuple[Path, bool]] = []  # (real root, is a single file)
    for extra in extra_paths:
        given = Path(os.path.normpath(os.path.abspath(os.path.expanduser(str(extra)))))
        if given.is_symlink():
            continue
        real = Path(os.path.realpath(given))
        single = given.suffix.lower() == ".md" and not given.is_dir()
        if not under(normal, real) and (normal == given or under(normal, given)):
            normal = real / normal.relative_to(given) if not single else real
        roots.append((real, single))

    base: Path | None = None
    if under(normal, ws):
        parts = normal.relative_to(ws).parts
        if (len(parts) == 1 and parts[0] in ROOT_FILES) or (len(parts) >= 2 and parts[0] == "memory"):
            base = ws
    if base is None:
        for root, single in roots:
            if (single and normal == root) or (not single and under(normal, root)):
                base = root.parent if single else root
                break
    if base is None:
        if not under(normal, ws):
            escape = ".." in Path(text).parts
            why = "climbs out of the workspace with '..'" if escape else "is outside the workspace"
            raise PathDeniedError(f"{text!r} {why}; {ALLOWED_HINT}")
        raise PathDeniedError(f"{text!r} is not a memory file; {ALLOWED_HINT}")
    if any(p in IGNORED_DIRS for p in normal.relative_to(base).parts):
        raise PathDeniedError(f"{text!r} is inside an ignored directory; {ALLOWED_HINT}")
    link = _links_on_the_way(base, normal)
    if link is not None:
        raise PathDeniedError(f"{text!r} goes through the symbolic link {link}; memory files are never read "
                              "through links")
    display = normal.relative_to(ws).as_posix() if under(normal, ws) else str(normal)
    return ResolvedPath(display, normal)


MAX_READ_BYTES = 32 * 1024 * 1024


def resolve_workspace_file(raw: str, workspace: Path) -> Path:
    """Any file inside the workspace (the runtime's ``read`` tool: TOOLS.md, data files),
    never through a symbolic link and never out of the workspace."""
    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
        raise PathDeniedError("read needs a path inside the workspace, e.g. TOOLS.md")
    if len(raw) > MAX_PATH_CHARS:
        raise PathDeniedError(f"the path is too long to be a file name ({len(raw)} characters)")
    ws = Path(os.path.realpath(workspace))
    normal = Path(os.path.normpath(ws / os.path.expanduser(raw.strip())))
    try:
        normal.relative_to(ws)
    except ValueError:
        raise PathDeniedError(f"read is limited to files inside the workspace; {raw!r} is not") from None
    if normal == ws:
        raise PathDeniedError(f"{raw!r} is the workspace itself, not a file in it")
    try:
        link = _links_on_the_way(ws, normal)
    except OSError as exc:
        raise PathDeniedError(f"cannot read {raw!r}: {exc.strerror or exc}") from None
    if link is not None:
        raise PathDeniedError(f"read is limited to files inside the workspace; {raw!r} goes through a symbolic link")
    return normal


CITATION = re.compile(r"^(?P<path>.+?)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")


def split_citation(cited: str) -> tuple[str, int, int] | None:
    """``memory/2026-03-01.md#L3-L5`` (what results cite) as (path, 3, 5); None for a plain path."""
    m = CITATION.match(cited.strip())
    if not m:
        return None
    start = int(m["start"])
    return m["path"], start, int(m["end"] or start)


def read_lines(path: Path, from_line: int | None, lines: int | None, shown: str | None = None) -> str | None:
    """Lines ``from_line`` (1-based) .. ``from_line + lines - 1``; empty text past the end,
    ``None`` if the file does not exist.

    ``shown`` is how errors name the file (the path as the caller gave it)."""
    name = shown or str(path)
    try:
        # O_NOFOLLOW: a file swapped for a link after the checks is refused, not followed;
        # O_NONBLOCK: a FIFO does not hang the reader
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathDeniedError(f"{name} is a symbolic link; memory files are never read through links") from None
        if exc.errno == errno.EISDIR:
            raise PathDeniedError(f"{name} is a directory, not a memory file") from None
        raise PathDeniedError(f"cannot read {name}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise PathDeniedError(f"{name} is not a regular file")
        data = fh.read(MAX_READ_BYTES + 1)
    text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_READ_BYTES:
        text += "\n[truncated: file larger than 32 MiB]"
    if from_line is None and lines is None:
        return text
    start = max(1, from_line or 1)
    all_lines = text.split("\n")
    if start > len(all_lines):
        return ""
    end = len(all_lines) if lines is None else start - 1 + max(0, lines)
    return "\n".join(all_lines[start - 1 : end])
