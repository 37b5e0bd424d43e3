"""Which files are memory: MEMORY.md, memory.md, USER.md, memory/**/*.md and the configured extra paths.

Symbolic links are never followed (a link could lead anywhere on disk), tool and
package directories are skipped, and a file reachable through two configured paths
is indexed once, under its first name.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..markdown.provenance import sessions_by_id
from ..text import parse
from ..types import SourceFile

log = logging.getLogger(__name__)

IGNORED_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".hg", ".svn"})
ROOT_FILES = ("MEMORY.md", "memory.md", "USER.md")  # USER.md: the user model, when present


def display_path(abspath: str, workspace: str) -> str:
    """Workspace-relative POSIX path for files inside the workspace, else the absolute path."""
    prefix = workspace.rstrip(os.sep) + os.sep
    if abspath.startswith(prefix):
        return abspath[len(prefix):].replace(os.sep, "/")
    return abspath


def walk_markdown(root: str, on_link: Callable[[str], None] | None = None) -> Iterator[os.DirEntry[str]]:
    """The ``.md`` files below ``root``, by name, never through a symbolic link: a linked file or
    folder is passed to ``on_link`` (a reader that reports what it skipped) and not entered.
    Every reader of a user's folders walks them with this (the index, imports)."""
    stack = [root]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            log.warning("cannot list %s: %s", top, exc)
            continue
        dirs = []
        for entry in entries:
            try:
                if entry.is_symlink():
                    if on_link is not None and (entry.name.lower().endswith(".md") or _is_dir(entry.path)):
                        on_link(entry.path)
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in IGNORED_DIRS:
                        dirs.append(entry.path)
                elif entry.is_file(follow_symlinks=False) and entry.name.lower().endswith(".md"):
                    yield entry
            except OSError:
                continue
        stack.extend(reversed(dirs))


def _is_dir(path: str) -> bool:
    """Whether a link points at a folder (a linked folder could hold memory; a linked socket
    or image is no reader's business)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def is_link(path: str | os.PathLike[str]) -> bool:
    """``path`` is a symbolic link (an entry every reader of a user's folders skips)."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def discover(workspace: Path, extra_paths: Iterable[Path] = (),
             on_link: Callable[[str], None] | None = None) -> list[SourceFile]:
    """List memory files with their stat, de-duplicated by real path; each symbolic link met
    (a memory file, a folder below memory/, an extra path) is passed to ``on_link`` as the
    index names files (workspace-relative where it can be), and not followed.

    Links are never followed, so below a root whose real path is known every entry's
    path is already real: ``realpath`` runs once per root, not once per file (it costs
    a system call per path component, which dominated a 20 000-file scan).
    """
    ws = os.path.realpath(workspace)
    seen: set[str] = set()
    out: list[SourceFile] = []

    def add(real: str, st: os.stat_result) -> None:
        if real in seen:
            return
        seen.add(real)
        out.append(SourceFile(display_path(real, ws), real, "memory", st.st_mtime_ns, st.st_size))

    try:
        top_names = set(os.listdir(ws))
    except OSError:
        top_names = set()
    for name in ROOT_FILES:
        # on a case-insensitive disk both names open the same file: keep the real spelling once
        if name not in top_names:
            continue
        p = os.path.join(ws, name)
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            add(p, st)
        elif stat.S_ISLNK(st.st_mode) and on_link is not None:
            on_link(name)

    roots = [os.path.join(ws, "memory")]
    roots.extend(str(extra) for extra in extra_paths)
    for i, root in enumerate(roots):
        try:
            st = os.lstat(root)
        except OSError:
            if i:
                log.debug("extra path %s does not exist; ignored", root)
            continue
        if stat.S_ISLNK(st.st_mode):
            log.info("skipping %s: symbolic links are not followed", root)
            if on_link is not None:
                on_link(display_path(os.path.abspath(root), ws))
            continue
        real_root = os.path.realpath(root)
        if stat.S_ISDIR(st.st_mode):
            linked = None if on_link is None else (lambda p: on_link(display_path(p, ws)))
            for entry in walk_markdown(real_root, linked):
                try:
                    add(entry.path, entry.stat(follow_symlinks=False))
                except OSError:
                    continue
        elif root.lower().endswith(".md"):
            add(real_root, st)
    return out


SESSIONS_PREFIX = "sessions/"


def discover_sessions(directory: Path) -> list[SourceFile]:
    """Session transcripts (``*.jsonl``) directly in ``directory``; links are not followed."""
    out: list[SourceFile] = []
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return out
    real = os.path.realpath(directory)
    for entry in entries:
        if not entry.name.endswith(".jsonl"):
            continue
        try:
            if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        out.append(SourceFile(SESSIONS_PREFIX + entry.name, os.path.join(real, entry.name), "sessions",
                              st.st_mtime_ns, st.st_size))
    return out


_SESSIONS: dict[str, tuple[tuple[int, int], Any, dict[str, dict[str, str]]]] = {}  # path -> (stamp, data, by id)


def _sessions_json(directory: str | os.PathLike[str]) -> tuple[Any, dict[str, dict[str, str]]]:
    """A folder's ``sessions.json`` as parsed, and its channels, chat types and hook sources by
    session id (provenance.sessions_by_id), read again only when the file changes; (None, {})
    when there is none or it cannot be read."""
    path = os.path.join(directory, "sessions.json")
    try:
        st = os.stat(path)
        stamp = (st.st_mtime_ns, st.st_size)
        kept = _SESSIONS.get(path)
        if kept is not None and kept[0] == stamp:
            return kept[1], kept[2]
        with open(path, encoding="utf-8") as fh:
            data = parse.loads(fh.read())
    except (OSError, ValueError):
        return None, {}
    if len(_SESSIONS) > 64:
        _SESSIONS.clear()
    _SESSIONS[path] = (stamp, data, sessions_by_id(data))
    return data, _SESSIONS[path][2]


def session_metas(directory: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """Each transcript's channel, chat type and hook source by session id ({} without a
    readable ``sessions.json``)."""
    return _sessions_json(directory)[1]


def session_keys(directory: str | os.PathLike[str]) -> dict[str, str]:
    """Session key -> session id (OpenClaw keys ``sessions.json`` by session key)."""
    data = _sessions_json(directory)[0]
    if not isinstance(data, dict):
        return {}
    return {str(k): v["sessionId"] for k, v in data.items()
            if isinstance(v, dict) and isinstance(v.get("sessionId"), str)}
