"""The session runtime: an agent that does not forget.

``AgentSession`` drives one conversation turn by turn against any OpenAI-compatible
chat endpoint, with the memory tools, and defends the memory three ways:

1. the bootstrap files (AGENTS.md first) are injected into every request, and
   truncation is reported, never silent;
2. before the context fills, one silent turn (the *memory flush*) lets the model write
   lasting notes to today's daily log, once per compaction cycle, also when a single
   turn jumps past the threshold and before compacting after an overflow error;
3. compaction replaces old turns by a structured summary that keeps rules and exact
   identifiers, and re-injects AGENTS.md's red lines; context pruning trims old tool
   results in the request only, never in the transcript.

Every message goes to the session's JSONL transcript as it happens.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..api import Memory
from ..errors import MnemoclawError
from ..markdown import provenance
from ..notes import tombstones
from ..notes.git import autocommit
from ..text.tokenize import estimate_tokens
from ..tools.recall import Recall
from . import commands
from .bootstrap import InjectedFile, load_bootstrap, render, sections_to_reinject
from .commands import Reply
from .compaction import (
    MERGE_SYSTEM,
    SUMMARY_SYSTEM,
    ensure_structure,
    extractive_summary,
    identifiers,
    pieces,
    split_point,
)
from .compaction import render as render_history
from .llm import ChatClient, ContextOverflowError, LLMError
from .pruning import prune
from .session_memory import NO_REPLY, save_session
from .settings import RuntimeSettings, runtime_settings
from .tooling import ExtraTool, ToolBox, encoded
from .transcript import SessionStore

log = logging.getLogger(__name__)

MAX_OVERFLOW_RETRIES = 2

BASE_PROMPT = """\
You are a helpful assistant with long-term memory. Your memory is Markdown in your workspace: \
MEMORY.md (durable facts, preferences, rules) and memory/YYYY-MM-DD.md (daily logs).
- Before answering about earlier work, decisions, people, preferences, dates or open tasks, call \
memory_search, then memory_get for details. If nothing is found, say so.
- Write what must last as soon as it happens with memory_append (today's log; target "long_term" \
for MEMORY.md). An instruction that constrains you is written the moment it is given.
- Cite memory you use as path#Lx-Ly."""


class AgentSession:
    def __init__(self, memory: Memory, *, runtime: RuntimeSettings | None = None, chat: ChatClient | None = None,
                 session_id: str | None = None, main_session: bool = True, clock: Callable[[], float] = time.time,
                 extra_tools: dict[str, ExtraTool] | None = None):
        self.memory = memory
        self.rs = runtime or runtime_settings(memory.settings)
        self.chat = chat or ChatClient.from_settings(self.rs)
        self.workspace = Path(memory.settings.workspace)
        # an OpenClaw agent's sessions are OpenClaw's: read (for /context), never written
        self.store = SessionStore(memory.settings.sessions_dir, read_only=memory.settings.openclaw_dir is not None,
                                  state_dir=memory.settings.state_dir)
        self.main_session = main_session
        self.clock = clock
        self.toolbox = ToolBox(memory, self.workspace, self.rs, commit=self._autocommit, extra=extra_tools)
        self.verbose = False
        self.recall_on = bool(memory.settings.memory["recall"]["enabled"])
        self.recalled: Recall | None = None  # what recall put before the last reply
        self.notes: list[str] = []
        self._last_request_at: float | None = None
        self._usage_anchor: tuple[int, int] | None = None  # (history length, tokens the API reported)
        self._fixed_tokens: int | None = None  # system prompt + tool schemas, as of the last request built
        sid = session_id or self.store.latest()
        if sid is None or (session_id is None and self._expired(self.store.meta(sid))):
            sid = self.store.new_id()
        self._open(sid)
        if self.rs.read_only:
            self.notes.append("workspace is read-only (sandbox.workspaceAccess): no memory flush, no memory writes")
        for warning in self.rs.warnings:
            log.warning("%s", warning)
            self.notes.append(warning)
        memory.freshness.start_session()

    # -- session state --------------------------------------------------------------
    def _open(self, session_id: str) -> None:
        self.session_id = session_id
        self.summary: str | None = None
        self.history: list[dict[str, Any]] = []
        for line, entry in self.store.read(session_id):
            kind = entry.get("type")
            if kind == "message" and isinstance(entry.get("message"), dict):
                self.history.append({**entry["message"], "_line": line})
            elif kind == "compaction":
                self.summary = entry.get("summary")
                keep = int(entry.get("firstKeptLine") or line)
                self.history = [m for m in self.history if m["_line"] >= keep]
        self.meta = self.store.meta(session_id)
        if not self.meta and self.store.read_only:
            self.meta = {"sessionId": session_id, "compactionCount": 0}
        elif not self.meta:
            now = self.clock()
            self.meta = self.store.update_meta(session_id, sessionId=session_id, createdAt=now, updatedAt=now,
                                               compactionCount=0, memoryFlushCompactionCount=None,
                                               channel="cli", chatType="direct",
                                               memoryFlushAt=None, inputTokens=0, outputTokens=0, totalTokens=0)
            self.store.append(session_id, {"type": "session", "id": session_id, "at": now,
                                           "workspace": str(self.workspace)})
        self.toolbox.said_in = {"session": session_id, "channel": str(self.meta.get("channel") or "cli"),
                                "chat": str(self.meta.get("chatType") or "direct")}
        self._usage_anchor = None
        self._fixed_tokens = None
        self._history_tokens = sum(self.message_tokens(m) for m in self.history)

    def _set_meta(self, **changes: Any) -> None:
        self.meta = self.store.update_meta(self.session_id, **changes)

    def _now(self) -> datetime:
        tz = None
        if self.rs.timezone:
            try:
                from zoneinfo import ZoneInfo

                tz = ZoneInfo(self.rs.timezone)
            except Exception:
                log.warning("unknown timezone %r in agents.defaults.userTimezone; using the system's", self.rs.timezone)
        if tz:
            return datetime.fromtimestamp(self.clock(), tz).astimezone(tz)
        return datetime.fromtimestamp(self.clock()).astimezone()

    def _expired(self, meta: dict[str, Any]) -> bool:
        """Daily reset (after ``atHour`` local time) or idle reset."""
        updated = meta.get("updatedAt")
        if updated is None:
            return False
        now = self._now()
        if self.rs.reset_mode == "idle" or self.rs.idle_minutes:
            if self.rs.idle_minutes and self.clock() - float(updated) > self.rs.idle_minutes * 60:
                return True
        if self.rs.reset_mode == "daily":
            boundary = now.replace(hour=self.rs.reset_at_hour, minute=0, second=0, microsecond=0)
            if now < boundary:
                boundary -= timedelta(days=1)
            return float(updated) < boundary.timestamp()
        return False

    def _record(self, message: dict[str, Any]) -> dict[str, Any]:
        # "content" stays even when null: some servers insist on it next to tool_calls
        clean = {k: v for k, v in message.items() if not k.startswith("_") and (v is not None or k == "content")}
        line = self.store.append(self.session_id, {"type": "message", "at": self.clock(), "message": clean})
        stored = {**clean, "_line": line}
        self.history.append(stored)
        self._history_tokens += self.message_tokens(stored)
        self._set_meta(updatedAt=self.clock(), totalTokens=self.session_tokens())
        return stored

    # -- token accounting --------------------------------------------------------------
    @staticmethod
    def message_tokens(m: dict[str, Any]) -> int:
        cached = m.get("_tokens")
        if cached is None:
            content = m.get("content")
            text = content if isinstance(content, str) else json.dumps(content or "", ensure_ascii=False)
            calls = json.dumps(m.get("tool_calls"), ensure_ascii=False) if m.get("tool_calls") else ""
            cached = estimate_tokens(text) + estimate_tokens(calls) + 4
            m["_tokens"] = cached
        return cached

    def system_prompt(self) -> tuple[str, list[InjectedFile]]:
        files = load_bootstrap(self.workspace, max_chars=self.rs.bootstrap_max_chars,
                               total_max_chars=self.rs.bootstrap_total_max_chars, include_memory=self.main_session,
                               fences=tombstones.load(self.memory.settings.state_dir))
        today = self._now()
        parts = [BASE_PROMPT, render(files), f"Today is {today:%Y-%m-%d %A}, {today:%H:%M} local time."]
        if self.summary:
            parts.append("# Summary of the earlier conversation (compacted)\n\n" + self.summary)
            agents = next((f for f in files if f.name == "AGENTS.md" and f.status != "MISSING"), None)
            if agents is not None:
                raw = Path(agents.path).read_text("utf-8", errors="replace")
                again = sections_to_reinject(raw)
                if again:
                    parts.append("# Re-read after compaction (from AGENTS.md)\n\n" + again)
        system = "\n\n".join(parts)
        # what every request carries besides the history; kept for token accounting
        self._fixed_tokens = estimate_tokens(system) + estimate_tokens(json.dumps(self.tools()))
        return system, files

    def tools(self) -> list[dict[str, Any]]:
        return self.toolbox.offered()

    def session_tokens(self) -> int:
        """Tokens of the next request: the API's own count where it gave one, else an estimate."""
        if self._usage_anchor is not None and self._usage_anchor[0] <= len(self.history):
            n, reported = self._usage_anchor
            return reported + sum(self.message_tokens(m) for m in self.history[n:])
        if self._fixed_tokens is None:
            self.system_prompt()
        return (self._fixed_tokens or 0) + self._history_tokens

    # -- requests ----------------------------------------------------------------------------
    def _messages(self, system: str) -> list[dict[str, Any]]:
        history = self.history
        if self.rs.pruning_mode == "cache-ttl" and (
                self._last_request_at is None or self.clock() - self._last_request_at >= self.rs.pruning_ttl_s):
            history = prune(history, keep_last_assistants=self.rs.keep_last_assistants,
                            hard=self.session_tokens() > self.rs.context_tokens // 2)
        out = [{"role": "system", "content": system}]
        out += [{k: v for k, v in m.items() if not k.startswith("_")} for m in history]
        return out

    def _complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]):
        result = self.chat.complete(messages, tools)
        self._last_request_at = self.clock()
        usage = result.usage or {}
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        if isinstance(prompt, int):
            self._set_meta(inputTokens=int(self.meta.get("inputTokens") or 0) + prompt,
                           outputTokens=int(self.meta.get("outputTokens") or 0) + int(completion or 0))
        return result

    # -- a turn -----------------------------------------------------------------------------
    def send(self, text: str) -> Reply:
        """One user turn (or a slash command): returns what to show the user."""
        if text.strip().startswith("/"):
            return self.command(text.strip())
        if self._expired(self.meta):
            self._open(self.store.new_id())
            self.notes.append("a new session started (daily reset)")
        self.recalled = self._recall(text)
        said = self._record({"role": "user", "content": text})
        if self.recalled and self.recalled.entries:  # what came unasked, by citation (never its text): the UI shows it
            self.store.append(self.session_id, {"type": "recall", "at": self.clock(), "forLine": said["_line"],
                                                "entries": [{k: v for k, v in e.wire().items() if k != "text"}
                                                            for e in self.recalled.entries]})
        reply = Reply("", recalled=[e.wire() for e in self.recalled.entries] if self.recalled else [])
        recalled = self.recalled.block() if self.recalled else ""
        overflow = 0
        rounds = 0
        while True:
            reply.flushed |= self._maybe_flush()
            reply.compacted += self._maybe_compact()
            system, _ = self.system_prompt()
            if recalled:
                system = f"{system}\n\n{recalled}"
            try:
                result = self._complete(self._messages(system), self.tools())
            except ContextOverflowError as exc:
                overflow += 1
                if overflow > MAX_OVERFLOW_RETRIES:
                    reply.error = str(exc)
                    reply.text = ("The conversation does not fit the model's context even after compacting "
                                  f"{MAX_OVERFLOW_RETRIES} times ({exc}). Start a new session with /new; "
                                  "everything written to memory carries over.")
                    return reply
                log.info("context overflow: flushing and compacting before retrying")
                reply.flushed |= self.flush(reason="overflow")
                reply.compacted += int(self.compact(reason="overflow", force=True))
                continue
            except LLMError as exc:
                reply.error = str(exc)
                reply.text = f"The chat model failed: {exc}"
                return reply
            usage = result.usage or {}
            self._record(result.message)
            if isinstance(usage.get("prompt_tokens"), int):
                self._usage_anchor = (len(self.history) - 1, int(usage["prompt_tokens"]))
            if not result.tool_calls:
                reply.text = "" if result.text.strip() == NO_REPLY else result.text
                return reply
            for call in result.tool_calls:
                output = self.toolbox.run(call)
                reply.tool_calls.append({"name": (call.get("function") or {}).get("name"), "result": output[:200]})
                self._record({"role": "tool", "tool_call_id": call.get("id"),
                              "name": (call.get("function") or {}).get("name"), "content": output})
            rounds += 1
            if rounds >= self.rs.max_tool_rounds:
                reply.text = f"(stopped after {rounds} rounds of tool calls)"
                return reply

    def _recall(self, text: str) -> Recall | None:
        """Memory for this message before the model sees it (memory.recall; /recall off)."""
        if not self.recall_on:
            return None
        last = next((m for m in reversed(self.history) if m.get("role") == "assistant"
                     and isinstance(m.get("content"), str) and m["content"].strip()), None)
        return self.memory.tools.recall(text, last_turn=last["content"] if last else None)

    def _autocommit(self, message: str) -> None:
        if not self.rs.git_autocommit:
            return
        autocommit(self.workspace, message)

    # -- memory flush -------------------------------------------------------------------------
    def _flush_due(self) -> bool:
        if not self.rs.flush_enabled or self.rs.read_only:
            return False
        if self.meta.get("memoryFlushCompactionCount") == self.meta.get("compactionCount", 0):
            return False  # already flushed in this compaction cycle
        return True

    def excluded(self) -> str | None:
        """Why this session is kept out of memory (memoryPolicy.excludeSessions), or None: then
        neither the flush nor the session hook writes anything from it."""
        policy = self.memory.settings.exclude_sessions()
        if not policy:
            return None
        meta = {"channel": str(self.meta.get("channel") or "cli"),
                "chatType": str(self.meta.get("chatType") or "direct")}
        hook = provenance.hook_source(self.session_id, self.meta)
        return provenance.excluded({**meta, **({"hook": hook} if hook else {})}, policy)

    def _maybe_flush(self) -> bool:
        if self.session_tokens() < self.rs.flush_threshold:
            return False
        if self.rs.read_only and self.rs.flush_enabled:
            note = "memory flush skipped: the workspace is read-only"
            if note not in self.notes:
                self.notes.append(note)
            return False
        why = self.excluded() if self.rs.flush_enabled else None
        if why:
            note = f"memory flush skipped: this session is excluded from memory ({why})"
            if note not in self.notes:
                self.notes.append(note)
            return False
        return self.flush(reason="threshold") if self._flush_due() else False

    def flush(self, *, reason: str = "manual") -> bool:
        """One silent turn: the model may read and append to today's log. Never shown."""
        if not self._flush_due() or self.excluded():
            return False
        today = self._now()
        system, _ = self.system_prompt()
        system = f"{self.rs.flush_system_prompt}\n\n{system}"
        prompt = self.rs.flush_prompt.replace("{date}", f"{today:%Y-%m-%d}").replace("YYYY-MM-DD", f"{today:%Y-%m-%d}")
        messages = self._messages(system) + [{"role": "user", "content": prompt}]
        appended: list[str] = []
        try:
            for _ in range(4):
                try:
                    result = self._complete(messages, ToolBox.for_flush())
                except ContextOverflowError:
                    # the flush must fit too: drop tool results older than the last turn and try once more
                    messages = [messages[0]] + prune(messages[1:], keep_last_assistants=1, hard=True)
                    result = self._complete(messages, ToolBox.for_flush())
                messages.append({k: v for k, v in result.message.items() if v is not None})
                if not result.tool_calls:
                    break
                for call in result.tool_calls:
                    answer = self.toolbox.answer(call, flush=True)
                    if ((call.get("function") or {}).get("name") == "memory_append" and isinstance(answer, dict)
                            and answer.get("ok") is True):
                        appended.append(answer["path"])
                    messages.append({"role": "tool", "tool_call_id": call.get("id"), "content": encoded(answer)})
        except LLMError as exc:
            self.notes.append(f"memory flush failed: {exc}")
            log.warning("memory flush failed: %s", exc)
            return False
        self.store.append(self.session_id, {"type": "memory_flush", "at": self.clock(), "reason": reason,
                                            "appended": appended})
        self._set_meta(memoryFlushCompactionCount=self.meta.get("compactionCount", 0), memoryFlushAt=self.clock())
        return True

    # -- compaction ---------------------------------------------------------------------------
    def _maybe_compact(self) -> int:
        if self.session_tokens() < self.rs.compaction_threshold:
            return 0
        return int(self.compact(reason="threshold"))

    def compact(self, focus: str | None = None, *, reason: str = "manual", force: bool = False) -> bool:
        before = self.session_tokens()
        keep = self.rs.keep_recent_tokens if not force else min(self.rs.keep_recent_tokens, self.rs.context_tokens // 8)
        k = split_point(self.history, keep, self.message_tokens)
        if k == 0 and (force or reason == "command"):
            # asked for (or forced by an overflow): keep only the current turn
            starts = [i for i, m in enumerate(self.history) if m.get("role") == "user"]
            k = starts[-1] if starts else 0
            if k == 0 and force and len(self.history) > 1:
                k = len(self.history) - 1  # one huge turn: keep only its newest message
                while k > 0 and self.history[k].get("role") == "tool":
                    k -= 1
        if k == 0:
            return False
        old, kept = self.history[:k], self.history[k:]
        text = render_history(old)
        if self.summary:
            text = "Summary of what came before:\n" + self.summary + "\n\n" + text
        summary = self._summarise(text, focus, old)
        summary = ensure_structure(summary, identifiers(text))
        first_kept = kept[0]["_line"] if kept else (self.history[-1]["_line"] + 1 if self.history else 1)
        self.summary = summary
        self.history = kept
        self._history_tokens = sum(self.message_tokens(m) for m in kept)
        self._usage_anchor = None
        self._fixed_tokens = None  # the summary is part of the system prompt now
        count = int(self.meta.get("compactionCount") or 0) + 1
        after = self.session_tokens()
        self.store.append(self.session_id, {"type": "compaction", "at": self.clock(), "reason": reason, "focus": focus,
                                            "summary": summary, "firstKeptLine": first_kept,
                                            "tokensBefore": before, "tokensAfter": after})
        self._set_meta(compactionCount=count, totalTokens=after)
        log.info("compacted %d messages: %d -> %d tokens", len(old), before, after)
        return True

    def _summarise(self, text: str, focus: str | None, old: list[dict[str, Any]]) -> str:
        budget = max(2_000, int(self.rs.context_tokens * 0.4))
        extra = f"\nFocus on: {focus}" if focus else ""
        try:
            parts = []
            for piece in pieces(text, budget):
                result = self.chat.complete([{"role": "system", "content": SUMMARY_SYSTEM + extra},
                                             {"role": "user", "content": piece}])
                parts.append(result.text)
            if len(parts) == 1:
                return parts[0]
            merged = "\n\n---\n\n".join(f"Part {i + 1}:\n{p}" for i, p in enumerate(parts))
            return self.chat.complete([{"role": "system", "content": MERGE_SYSTEM + extra},
                                       {"role": "user", "content": merged}]).text
        except LLMError as exc:
            self.notes.append(f"compaction summary written without the model ({exc})")
            return extractive_summary(old, self.summary)

    # -- commands and the session-memory hook ----------------------------------------------
    def command(self, line: str) -> Reply:
        """A slash command (``commands.COMMANDS``), answered as a reply."""
        name, _, rest = line.partition(" ")
        rest = rest.strip()
        if name == "/context":
            return Reply(commands.context_report(self, detail=rest == "detail"), command=True)
        if name == "/compact":
            done = self.compact(rest or None, reason="command")
            return Reply("Compacted." if done else "Nothing to compact yet.", command=True, compacted=int(done))
        if name == "/status":
            return Reply(commands.status_report(self), command=True)
        if name in ("/new", "/reset"):
            why = self.excluded()
            path = self.end_session()
            self.start_new()
            return Reply(f"New session {self.session_id}." + (f" The last one was saved to {path}." if path else "")
                         + (f" The last one was not saved: it is excluded from memory ({why})." if why else ""),
                         command=True)
        if name == "/verbose":
            self.verbose = not self.verbose
            return Reply(f"Verbose {'on' if self.verbose else 'off'}.", command=True)
        if name == "/recall":
            if rest in ("on", "off"):
                self.recall_on = rest == "on"
            elif rest:
                return Reply(f"/recall takes on or off, not {rest!r}.", command=True)
            last = self.recalled
            said = ("; last message: " + (", ".join(e.citation for e in last.entries) or (last.why_none or "nothing"))
                    if last is not None else "")
            return Reply(f"Recall before the reply is {'on' if self.recall_on else 'off'}{said}.", command=True)
        return Reply(f"Unknown command {name}. Commands: {commands.COMMANDS}", command=True)

    def start_new(self) -> None:
        self._open(self.store.new_id())

    def end_session(self) -> str | None:
        """The session-memory hook (``/new``, ``/reset``): see runtime/session_memory.py."""
        if self.rs.read_only or self.excluded():
            return None
        rel = save_session(self.store, self.session_id, self.workspace, self.chat, self._now(),
                           said_in=self.toolbox.said_in)
        if rel:
            self._autocommit(f"memory: {rel}")
        return rel

    def context_breakdown(self, *, detail: bool = False) -> dict[str, Any]:
        return commands.context_breakdown(self, detail=detail)

    def context_report(self, *, detail: bool = False) -> str:
        return commands.context_report(self, detail=detail)

    def status_report(self) -> str:
        return commands.status_report(self)


__all__ = ["AgentSession", "Reply", "MnemoclawError", "autocommit"]
