"""The tools a chat session offers, and running the calls the model makes.

The memory tools are ``tools/``'s (their descriptions, bounds and handlers are written
there once); the session adds ``read`` (any file in the workspace, through the
workspace's one sandbox), keeps the memory flush to an append-only tool for today's
log, refuses writes in a read-only workspace, and commits memory writes to git when
asked to.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import tools
from ..api import Memory
from ..notes import tombstones
from ..notes.paths import resolve_workspace_file
from ..tools.services import AGENT, Caller
from .compaction import json_args
from .settings import RuntimeSettings

READ_MAX_CHARS = 64_000
READ = tools.ToolSpec("read", "Read a text file in the workspace (for example TOOLS.md), or a range of its lines.", (
    tools.Param("path", "string", "Workspace-relative path", required=True),
    tools.Param("from", "integer", "First line, 1-based", minimum=1, py="from_line"),
    tools.Param("lines", "integer", "Number of lines to read", minimum=0),
))
ExtraTool = tuple[dict[str, Any], Callable[[dict[str, Any]], Any]]  # (function schema, handler)


def encoded(answer: Any) -> str:
    """A tool's answer as the model reads it back: JSON (a text answer as it is)."""
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


class ToolBox:
    def __init__(self, memory: Memory, workspace: Path, rs: RuntimeSettings, *,
                 commit: Callable[[str], None], extra: dict[str, ExtraTool] | None = None):
        self.memory = memory
        self.workspace = workspace
        self.rs = rs
        self._commit = commit
        self.extra = dict(extra or {})
        self.said_in: dict[str, str] = {}  # the session, channel and chat type what the agent writes came from

    def offered(self) -> list[dict[str, Any]]:
        """The tool schemas of a normal request."""
        out = [tools.SEARCH.function(), tools.GET.function(), tools.SESSIONS.function(), READ.function()]
        if not self.rs.read_only:
            out.append(tools.APPEND.function())
        return out + [schema for schema, _ in self.extra.values()]

    @staticmethod
    def for_flush() -> list[dict[str, Any]]:
        """The memory flush may read, and append to today's log; nothing else."""
        return [READ.function(), tools.FLUSH_APPEND.function()]

    def run(self, call: dict[str, Any], *, flush: bool = False) -> str:
        """One tool call of the model, answered as the JSON it reads back; never raises."""
        return encoded(self.answer(call, flush=flush))

    def answer(self, call: dict[str, Any], *, flush: bool = False) -> Any:
        """One tool call of the model, answered as data (``run`` gives it as JSON); never raises."""
        name = str((call.get("function") or {}).get("name"))
        args = json_args(call)
        try:
            out: Any
            if name == READ.name:
                out = self._read(READ.check(**READ.parse(args)))
            elif flush:
                out = self._memory_tool(name, args, spec=tools.FLUSH_APPEND) if name == tools.APPEND.name \
                    else {"error": f"only read and memory_append can be used now, not {name!r}"}
            elif name in self.extra:
                out = self.extra[name][1](args)
            else:
                out = self._memory_tool(name, args)
        except Exception as exc:  # a tool failure is the model's to handle, not a crash
            out = {"error": str(exc)}
        return out

    def _memory_tool(self, name: str, args: dict[str, Any], *, spec: tools.ToolSpec | None = None) -> dict[str, Any]:
        """A memory tool, called by this session's agent: what it appends is written with the
        session, channel and chat type it was said in; a write in a read-only workspace is refused."""
        if name == tools.APPEND.name and self.rs.read_only and spec is not None:
            return {"ok": False, "error": "the workspace is read-only; nothing was written"}  # the flush's append
        if name == tools.STATUS.name and not tools.STATUS.parse(args):  # a turn does not wait for a walk of the files
            return {**self.memory.status(check_dirty=False), "readOnly": self.rs.read_only}
        caller = Caller(AGENT, **self.said_in)
        out = self.memory.tools.said_by(caller).call(name, args, read_only=self.rs.read_only, spec=spec)
        if name == tools.APPEND.name and out.get("ok") and self.rs.git_autocommit:
            self._commit(f"memory: {out['path']}")
        return out

    # -- read -------------------------------------------------------------------------------
    def _read(self, args: dict[str, Any]) -> dict[str, Any]:
        path = args["path"]
        target = resolve_workspace_file(path, self.workspace)
        if not target.is_file():
            return {"path": path, "text": ""}
        # a forgotten line a restore brought back is not read back either (the target is inside the workspace)
        rel = target.relative_to(Path(self.workspace).resolve()).as_posix()
        fences = tombstones.load(self.memory.settings.state_dir)
        text = fences.view(rel, "memory", target.read_text("utf-8", errors="replace"))[0]
        lines = text.splitlines()
        first = max(1, int(args["from_line"] or 1))
        count = args["lines"]
        chosen = lines[first - 1 : first - 1 + int(count)] if count else lines[first - 1 :]
        text = "\n".join(chosen)
        if len(text) > READ_MAX_CHARS:
            text = text[:READ_MAX_CHARS] + f"\n[... cut at {READ_MAX_CHARS} characters; read a line range ...]"
        return {"path": path, "text": text}
