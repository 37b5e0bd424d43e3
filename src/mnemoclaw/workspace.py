"""The agent workspace on disk: which paths the memory tools may read, and scaffolding.

``memory_get`` may read ``MEMORY.md``, ``memory.md``, ``memory/**/*.md`` and Markdown
files inside the configured extra paths, never through a symbolic link and never
outside those places. Each refusal says which rule it hit.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .atomic import write_atomic
from .errors import EditConflictError, PathDeniedError
from .index.discovery import IGNORED_DIRS, ROOT_FILES
from .text.secrets import redact_counted

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


APPEND_MAX_CHARS = 64 * 1024
DAILY_TARGETS = (None, "", "daily", "today")
LONG_TERM_TARGETS = ("long_term", "long-term", "longterm", "MEMORY.md")


@dataclass(frozen=True)
class Appended:
    path: str  # workspace-relative
    start_line: int
    end_line: int
    redacted: int = 0  # secrets replaced by [REDACTED] before writing


# -- the one writer of memory files ---------------------------------------------------------
# Every write into a memory file (an agent's memory_append, the memory flush, the
# session-memory hook, hygiene) goes through here: never through a symbolic link, never
# into a file with a second hard link (it would change the same bytes somewhere else on
# disk), never with a secret in it (the index would hand it to every later search).
def _open_memory_file(ws: Path, rel: str, *, create_new: bool = False) -> int:
    """A descriptor for reading and appending ``ws/rel`` (``create_new``: a new file only)."""
    folder = (ws / rel).parent
    if folder != ws and folder.is_symlink():
        raise PathDeniedError(f"{folder.relative_to(ws).as_posix()}/ is a symbolic link; memory is written only "
                              "to real files in the workspace")
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | (os.O_EXCL if create_new else 0)
    try:
        fd = os.open(ws / rel, flags, 0o644)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathDeniedError(f"{rel} is a symbolic link; memory is written only to real files") from None
        raise PathDeniedError(f"cannot write {rel}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PathDeniedError(f"{rel} is not a regular file; nothing was written")
        if st.st_nlink > 1:
            raise PathDeniedError(
                f"{rel} has {st.st_nlink} hard links: writing it would change the same file elsewhere on disk, "
                f"so nothing was written. Make it a file of its own (cp {rel} {rel}.tmp && mv {rel}.tmp {rel})"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_fd(fd: int) -> str:
    chunks: list[bytes] = []
    offset = 0
    while True:
        part = os.pread(fd, 1 << 20, offset)
        if not part:
            break
        chunks.append(part)
        offset += len(part)
    return b"".join(chunks).decode("utf-8", "replace")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


def append_note(workspace: Path, text: str, target: str | None = None, now: datetime | None = None, *,
                annotation: str = "") -> Appended:
    """Append ``text`` to today's daily log (``memory/YYYY-MM-DD.md``, local time) or, with
    ``target="long_term"``, to MEMORY.md: append-only, under a timestamp line, never
    overwriting, secrets redacted. No other file can be written: ``target`` is a choice,
    not a path."""
    if not isinstance(text, str) or not text.strip():
        raise PathDeniedError("nothing to append: text is empty")
    if "\x00" in text:
        raise PathDeniedError("text contains a NUL character")
    if len(text) > APPEND_MAX_CHARS:
        raise PathDeniedError(f"text is {len(text)} characters; at most {APPEND_MAX_CHARS} per append")
    now = now or datetime.now().astimezone()
    ws = Path(os.path.realpath(workspace))
    if not ws.is_dir():
        raise PathDeniedError("the workspace does not exist; run `mnemoclaw init`")
    if target in DAILY_TARGETS:
        folder = ws / "memory"
        if folder.is_symlink():
            raise PathDeniedError("memory/ is a symbolic link; appends go only to real files in the workspace")
        folder.mkdir(exist_ok=True)
        rel = f"memory/{now:%Y-%m-%d}.md"
        header = f"# {now:%Y-%m-%d}\n"
        stamp = f"## {now:%H:%M}"
    elif target in LONG_TERM_TARGETS:
        names = set(os.listdir(ws))
        rel = "memory.md" if "MEMORY.md" not in names and "memory.md" in names else "MEMORY.md"
        header = "# Memory\n"
        stamp = f"## {now:%Y-%m-%d %H:%M}"
    else:
        raise PathDeniedError(
            f"target {target!r} is not allowed: memory_append writes to today's daily log (omit target) "
            "or to MEMORY.md (target=\"long_term\"), nothing else"
        )
    if annotation:  # on the timestamp heading: it holds for the whole note
        stamp += f" {annotation}"
    body, redacted = redact_counted(text.strip())
    fd = _open_memory_file(ws, rel)
    try:
        existing = _read_fd(fd)
        if not existing:
            sep = header + "\n"
        else:
            sep = "" if existing.endswith("\n\n") else ("\n" if existing.endswith("\n") else "\n\n")
        _write_all(fd, f"{sep}{stamp}\n\n{body}\n".encode())
    finally:
        os.close(fd)
    start = (existing + sep + stamp + "\n\n").count("\n") + 1
    end = start + body.count("\n")
    return Appended(rel, start, end, redacted)


def create_note(workspace: Path, stem: str, text: str) -> str:
    """Write ``text`` (secrets redacted) to a new ``memory/<stem>.md`` (``-2``, ``-3``, ... if
    taken); returns its workspace-relative path. Never replaces a file."""
    ws = Path(os.path.realpath(workspace))
    folder = ws / "memory"
    if folder.is_symlink():
        raise PathDeniedError("memory/ is a symbolic link; memory is written only to real files in the workspace")
    folder.mkdir(exist_ok=True)
    body, _ = redact_counted(text)
    for n in range(1, 1000):
        rel = f"memory/{stem}.md" if n == 1 else f"memory/{stem}-{n}.md"
        try:
            fd = _open_memory_file(ws, rel, create_new=True)
        except FileExistsError:
            continue
        try:
            _write_all(fd, body.encode("utf-8"))
        finally:
            os.close(fd)
        return rel
    raise PathDeniedError(f"memory/{stem}.md and 998 numbered variants exist already; nothing was written")


def extend_file(workspace: Path, rel: str, expected: str, addition: str) -> int:
    """Append ``addition`` (secrets redacted) to ``rel`` if it still holds exactly ``expected``
    (raise otherwise: someone changed it meanwhile); returns the secrets redacted."""
    ws = Path(os.path.realpath(workspace))
    body, redacted = redact_counted(addition)
    fd = _open_memory_file(ws, rel)
    try:
        if _read_fd(fd) != expected:
            raise PathDeniedError(f"{rel} changed since the proposal was made; run the command again")
        _write_all(fd, body.encode("utf-8"))
    finally:
        os.close(fd)
    return redacted


EDITABLE = re.compile(r"(MEMORY|memory)\.md|memory/\d{4}-\d{2}-\d{2}\.md")


def content_hash(text: str) -> str:
    """What an editor remembers of the file it opened, to notice a change under it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def replace_note(workspace: Path, rel: str, base: str, text: str) -> int:
    """Replace MEMORY.md or a daily log (``rel``) with ``text`` (secrets redacted), in one
    rename, if it still holds what had hash ``base`` when it was opened (a file not written yet
    holds the empty text); raise EditConflictError with what it holds otherwise. Returns the secrets
    redacted."""
    if not EDITABLE.fullmatch(rel):
        raise PathDeniedError(f"{rel} cannot be edited here: only MEMORY.md and the daily logs "
                              "(memory/YYYY-MM-DD.md) can")
    if "\x00" in text:
        raise PathDeniedError("text contains a NUL character; nothing was written")
    ws = Path(os.path.realpath(workspace))
    fd = _open_memory_file(ws, rel)  # the same checks as an append: no link, a regular file of its own
    try:
        current = _read_fd(fd)
    finally:
        os.close(fd)
    if content_hash(current) != base:
        raise EditConflictError(f"{rel} changed on disk since it was opened; nothing was written", current)
    body, redacted = redact_counted(text)
    if body and not body.endswith("\n"):
        body += "\n"
    write_atomic(ws / rel, body)
    return redacted
