"""The workspace as a git repository: the one place mnemoclaw runs git.

Memory files are committed when ``memory.git.autoCommit`` asks for it (after each memory write),
when a forget removes lines and when old daily logs are archived; a forget asks which commits
still hold what it removed, since history keeps it after the files no longer do.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)

# mnemoclaw's commits name it as their author, whoever's repository it is
AUTHOR = ["-c", "user.name=mnemoclaw", "-c", "user.email=mnemoclaw@localhost"]
MEMORY_PATHS = ("MEMORY.md", "memory.md", "memory")
HISTORY_LINES = 20  # removed lines looked up in git history (each is one pickaxe search)


def is_repository(workspace: Path) -> bool:
    return (workspace / ".git").exists()


def _git(workspace: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *AUTHOR, *args], cwd=workspace, check=check, capture_output=True, text=True,
                          timeout=30)


def commit(workspace: Path, paths: Sequence[str], message: str) -> str | None:
    """Commit ``paths`` as they are now; the commit's id (HEAD when nothing changed), or None
    when git refused."""
    try:
        _git(workspace, "add", "--", *paths)
        if _git(workspace, "status", "--porcelain", "--", *paths).stdout.strip():
            _git(workspace, "commit", "-q", "-m", message, "--", *paths)
        return _git(workspace, "rev-parse", "--short", "HEAD").stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def autocommit(workspace: Path, message: str) -> bool:
    """Commit every memory file (``memory.git.autoCommit``), making the repository if there is none."""
    try:
        if not is_repository(workspace):
            _git(workspace, "init", "-q")
        paths = [p for p in MEMORY_PATHS if (workspace / p).exists()]
        _git(workspace, "add", "-A", "--", *paths, check=False)
        return _git(workspace, "commit", "-q", "-m", message, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("git auto-commit failed: %s", exc)
        return False


def commits_holding(workspace: Path, lines: Sequence[str]) -> list[str]:
    """The commits of the repository at ``workspace`` that added or removed any of ``lines``
    (git's pickaxe, every branch): if there is one, history still holds the text."""
    found: dict[str, None] = {}
    wanted = [t for t in dict.fromkeys(line.strip() for line in lines) if len(t) >= 4][:HISTORY_LINES]
    for text in wanted:
        try:
            out = _git(workspace, "log", "--all", "--format=%h", "-F", f"-S{text}", check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        found.update(dict.fromkeys(out.stdout.split()))
    return list(found)
