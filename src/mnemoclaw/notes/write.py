"""The one writer of memory files: appends, new files, extensions and replacements.

Every write into a memory file (an agent's memory_append, the memory flush, the session-memory
hook, hygiene, an edit in the web UI) goes through here: never through a symbolic link, never
into a file with a second hard link (it would change the same bytes somewhere else on disk),
never with a secret in it (the index would hand it to every later search).
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

from ..atomic import like_parent_dir, new_file_mode, write_atomic
from ..errors import EditConflictError, PathDeniedError
from ..markdown.annotations import as_data
from ..text.secrets import redact_counted

APPEND_MAX_CHARS = 64 * 1024
DAILY_TARGETS = (None, "", "daily", "today")
LONG_TERM_TARGETS = ("long_term", "long-term", "longterm", "MEMORY.md")


@dataclass(frozen=True)
class Appended:
    path: str  # workspace-relative
    start_line: int
    end_line: int
    redacted: int = 0  # secrets replaced by [REDACTED] before writing
    neutralised: int = 0  # comments written as plain text (the text was data: as_data)


def _open_memory_file(ws: Path, rel: str, *, create_new: bool = False) -> int:
    """A descriptor for reading and appending ``ws/rel`` (``create_new``: a new file only)."""
    folder = (ws / rel).parent
    if folder != ws and folder.is_symlink():
        raise PathDeniedError(f"{folder.relative_to(ws).as_posix()}/ is a symbolic link; memory is written only "
                              "to real files in the workspace")
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | (os.O_EXCL if create_new else 0)
    try:
        fd = os.open(ws / rel, flags, new_file_mode(folder))
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
                annotation: str = "", verbatim: bool = False) -> Appended:
    """Append ``text`` to today's daily log (``memory/YYYY-MM-DD.md``, local time) or, with
    ``target="long_term"``, to MEMORY.md: append-only, under a timestamp line, never
    overwriting, secrets redacted. No other file can be written: ``target`` is a choice,
    not a path. ``annotation`` (the writer's) goes on the timestamp line; the text is data
    (``as_data``: its comments cannot annotate it, its headings stay under the timestamp)
    unless ``verbatim`` (the owner's own words, typed into the web UI)."""
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
        like_parent_dir(folder)
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
    body, neutralised = (text.strip(), 0) if verbatim else as_data(text.strip())
    body, redacted = redact_counted(body)
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
    return Appended(rel, start, end, redacted, neutralised)


def create_note(workspace: Path, stem: str, text: str) -> str:
    """Write ``text`` (secrets redacted) to a new ``memory/<stem>.md`` (``-2``, ``-3``, ... if
    taken); returns its workspace-relative path. Never replaces a file."""
    ws = Path(os.path.realpath(workspace))
    folder = ws / "memory"
    if folder.is_symlink():
        raise PathDeniedError("memory/ is a symbolic link; memory is written only to real files in the workspace")
    like_parent_dir(folder)
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
    write_atomic(ws / rel, body, private=False)  # the user's file: its own mode, or its folder's
    return redacted
