"""Optional git backup of the workspace's memory files (``memory.git.autoCommit``)."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)


def autocommit(workspace: Path, message: str) -> bool:
    """Commit the workspace's memory files to git (``memory.git.autoCommit``)."""
    try:
        if not (workspace / ".git").exists():
            subprocess.run(["git", "init", "-q"], cwd=workspace, check=True, capture_output=True, timeout=30)
        paths = [p for p in ("MEMORY.md", "memory.md", "memory") if (workspace / p).exists()]
        subprocess.run(["git", "add", "-A", "--", *paths], cwd=workspace, capture_output=True, timeout=30)
        r = subprocess.run(["git", "-c", "user.name=mnemoclaw", "-c", "user.email=mnemoclaw@localhost",
                            "commit", "-q", "-m", message], cwd=workspace, capture_output=True, timeout=30)
        return r.returncode == 0
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("git auto-commit failed: %s", exc)
        return False
