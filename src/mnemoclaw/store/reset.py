"""Clearing an agent's derived index (`mnemoclaw reset`): the index file, its embedding cache
and the state kept beside it. Never a Markdown file, never a transcript: the next sync
rebuilds everything from them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ..atomic import private_dir
from ..errors import ConfigError, LockTimeoutError
from ..locks import file_lock

SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
LOCK_NAME = "write.lock"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def reset_index(agent: str, driver: str, index: Path, state: Path, state_dir: Path, *,
                dry_run: bool = False) -> dict[str, Any]:
    """Remove what the index of ``agent`` derives from its files (``index``, the index file of
    store ``driver``; ``state``, what is kept beside it; ``state_dir``, mnemoclaw's state
    directory), under its write lock (refused while another process writes it). Returns what
    was (or would be) removed."""
    if driver != "sqlite":
        raise ConfigError("reset clears an agent's SQLite index; a Postgres namespace is rebuilt in place with "
                          "`mnemoclaw index --full` (its embedding cache is shared with the other namespaces)")
    files = [Path(f"{index}{suffix}") for suffix in ("", *SQLITE_SIDE_FILES)]
    files = [p for p in files if p.is_file()]
    if state.is_dir():
        files += sorted(p for p in state.rglob("*") if p.is_file() and p.name != LOCK_NAME)
    removed = [{"path": str(p), "bytes": _size(p)} for p in files]
    report: dict[str, Any] = {"agent": agent, "index": str(index), "removed": removed,
                              "bytes": sum(r["bytes"] for r in removed), "dryRun": dry_run}
    if dry_run or not files:
        return report
    private_dir(state)
    try:
        with file_lock(str(state / LOCK_NAME), timeout=0, what=f"index {index}", index=str(index)):
            for p in files:
                p.unlink(missing_ok=True)
    except LockTimeoutError as exc:
        raise LockTimeoutError(f"{exc.args[0].split(';')[0]}: reset removed nothing. Stop the process that "
                               "writes it (watch, mcp, ui or chat) and run reset again.",
                               holder=exc.holder, index=str(index)) from None
    shutil.rmtree(state, ignore_errors=True)  # the lock file too, now that nobody holds it
    for parent in (state.parent, state_dir / "memory"):  # mnemoclaw's own folders, when left empty
        try:
            os.rmdir(parent)  # only when empty
        except OSError:
            pass
    return report
