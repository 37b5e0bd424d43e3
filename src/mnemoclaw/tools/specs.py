"""The agent tools, said once: what each is for, its arguments and their bounds. The MCP
server, the chat runtime and the CLI all read this module; nothing else writes a tool's
description or bound. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import MnemoclawError
from ..markdown import provenance
from ..search.relevance import DEFAULT_MIN_SCORE

SNIPPET_MAX_CHARS = 700
# A search query is a question or a few words; a longer one is a mistake (a pasted
# file) that would tie the index up for minutes, so it is refused with a reason.
MAX_QUERY_CHARS = 4000
MAX_RESULTS = 100

INSTRUCTIONS = """\
This server is your long-term memory: Markdown notes (MEMORY.md for durable facts and \
rules, memory/YYYY-MM-DD.md daily logs) that persist across sessions and compaction.
- Before answering anything about earlier work, decisions, people, preferences, dates or \
open tasks, call memory_search; read more with memory_get. If nothing is found, say so.
- Write what must last as soon as you learn it with memory_append: decisions, facts, \
commitments and the user's instructions go to today's log; corrections, preferences and \
rules ("ask before sending", "do nothing until I say so") go to MEMORY.md \
(target="long_term"). Anything not written down is forgotten."""
READ_ONLY_NOTE = "This memory is served read-only: it cannot be written from here."


class ToolArgumentError(MnemoclawError):
    """A tool was called with an argument it does not take, or a value out of bounds."""


@dataclass(frozen=True)
class Param:
    name: str  # on the wire
    type: str  # JSON schema type: "string" | "integer" | "number" | "boolean"
    description: str
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    enum: tuple[str, ...] = ()
    py: str = ""  # the Python keyword, where the wire name is not one ("from")

    @property
    def keyword(self) -> str:
        return self.py or self.name

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "description": self.description}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        if self.enum:
            out["enum"] = list(self.enum)
        return out

    def check(self, value: Any) -> Any:
        """``value`` as the tool takes it, or ToolArgumentError naming the argument and the bound."""
        if value is None:
            if self.required:
                raise ToolArgumentError(f"{self.name} is required")
            return None
        if self.type == "string":
            if not isinstance(value, str):
                raise ToolArgumentError(f"{self.name} must be a string, got {type(value).__name__}")
            if self.max_length is not None and len(value) > self.max_length:
                raise ToolArgumentError(f"{self.name} is {len(value)} characters long; at most {self.max_length}")
            if self.enum and value not in self.enum:
                raise ToolArgumentError(f"{self.name} must be one of {', '.join(self.enum)}; got {value!r}")
            return value
        if self.type == "boolean":
            if not isinstance(value, bool):
                raise ToolArgumentError(f"{self.name} must be true or false, got {value!r}")
            return value
        if self.type == "integer":
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise ToolArgumentError(f"{self.name} must be a whole number, got {value!r}")
            try:
                number: float = int(value)
            except (TypeError, ValueError):
                raise ToolArgumentError(f"{self.name} must be a whole number, got {value!r}") from None
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise ToolArgumentError(f"{self.name} must be a number, got {value!r}") from None
            if isinstance(value, bool) or math.isnan(number):
                raise ToolArgumentError(f"{self.name} must be a number, got {value!r}")
        lo = -math.inf if self.minimum is None else self.minimum
        hi = math.inf if self.maximum is None else self.maximum
        if not lo <= number <= hi:
            bounds = f"between {self.minimum:g} and {self.maximum:g}" if self.maximum is not None \
                else f"{self.minimum:g} or more"
            raise ToolArgumentError(f"{self.name} must be {bounds}, got {value!r}")
        return number


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: tuple[Param, ...]
    writes: bool = False

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {p.name: p.schema() for p in self.params},
                "required": [p.name for p in self.params if p.required], "additionalProperties": False}

    def function(self) -> dict[str, Any]:
        """The tool for an OpenAI-compatible chat request."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.json_schema()}}

    def parse(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Wire arguments -> Python keywords; an argument the tool does not take is refused
        (the values are checked by ``check``, which the Python API calls too)."""
        known = {p.name: p for p in self.params}
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            raise ToolArgumentError(f"{self.name} does not take {', '.join(unknown)}; it takes "
                                    f"{', '.join(known) or 'no arguments'}")
        return {p.keyword: arguments.get(p.name) for p in self.params}

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def check(self, **values: Any) -> dict[str, Any]:
        """Each value checked against its bound (by Python keyword)."""
        return {p.keyword: p.check(values.get(p.keyword)) for p in self.params}


# What memory_search can read: the Markdown memory, the indexed transcripts, or both.
CORPORA = ("memory", "sessions", "all")
ALL_CORPORA_RESULTS = 10  # the default number of results when searching everything

SEARCH = ToolSpec("memory_search", """\
Search long-term memory (MEMORY.md and the daily logs) by meaning and by keyword, in any \
language. Use it BEFORE answering questions about past work, decisions, people, \
preferences, dates or todos. Naming a date ("2026-03-04", "March 2026") favours notes \
from then. Returns ranked snippets (the lines that matched) with path, line range and \
citation; read the surrounding lines with memory_get. A score is the estimated chance \
(0-1) that the result is about the question rather than merely the nearest text, on the \
same scale for every query; an empty list means memory has nothing on it: say so, do not \
guess. A result marked weak scored under the floor: alone it holds most of the question's \
words, after other results it is what else was found; read it before you rely on it. \
Entries annotated in the Markdown carry importance, type, expires and key; an expired \
entry, or one a newer entry with the same key replaced, is left out unless history is true.""", (
    Param("query", "string", "What to look for, in natural language or exact terms", required=True,
          max_length=MAX_QUERY_CHARS),
    Param("maxResults", "integer", "How many results (default 6)", minimum=1, maximum=MAX_RESULTS,
          py="max_results"),
    Param("minScore", "number", f"Drop results scoring below this, 0-1 (default {DEFAULT_MIN_SCORE:g})",
          minimum=0, maximum=1, py="min_score"),
    Param("type", "string", "Only entries annotated with this type: fact, preference, task, summary or "
          "another word the notes use", max_length=40, py="kind"),
    Param("history", "boolean", "Also return expired entries and the older values of keyed entries, each "
          "marked (default false)"),
    Param("corpus", "string", "memory: the Markdown memory (default); sessions: past conversations, where they "
          "are indexed; all: both (default 10 results)", enum=CORPORA),
    Param("project", "string", "The project (repository) the work is in: entries annotated with another "
          "project come after this one's", max_length=100),
    Param("origin", "string", "Only results from there: owner (what the owner wrote), agent (what an agent "
          "wrote, the memory flush and the session hook included), imported (another assistant's export), "
          "transcript (past conversations), untrusted", enum=provenance.ORIGINS),
))

GET = ToolSpec("memory_get", """\
Read a memory file, or a range of its lines: MEMORY.md, memory.md, memory/*.md or a \
configured extra Markdown path. Use after memory_search to read around a hit \
(from = first line, 1-based; lines = how many). A missing file returns empty text.""", (
    Param("path", "string", "Workspace-relative path, e.g. memory/2026-05-01.md", required=True),
    Param("from", "integer", "First line, 1-based", minimum=1, py="from_line"),
    Param("lines", "integer", "Number of lines to read", minimum=0),
))

# Written into the note as <!-- name: value --> (markdown/annotations.py), read back by search.
ANNOTATION_PARAMS = (
    Param("importance", "integer", "How much this matters, 1-10 (omit for ordinary notes)", minimum=1, maximum=10),
    Param("type", "string", "fact, preference, task or summary", max_length=40, py="kind"),
    Param("expires", "string", "YYYY-MM-DD after which this no longer holds (a deadline, a temporary "
          "arrangement)", max_length=10),
    Param("key", "string", "A short name for the thing this sets (\"db-host\", \"editor\"): a later note with "
          "the same key replaces this one in searches", max_length=80),
)

APPEND = ToolSpec("memory_append", """\
Write to memory (append-only, with a timestamp; never overwrites). Omit target to append \
to today's daily log (facts, decisions, progress, the user's instructions); \
target="long_term" appends to MEMORY.md (durable preferences, rules, corrections). Write \
as soon as something worth keeping happens; keep entries short and specific. No other \
file can be written.""", (
    Param("text", "string", "The note, in Markdown (a line or a short list)", required=True),
    Param("target", "string", "Omit for today's log; \"long_term\" for MEMORY.md", enum=("long_term",)),
    *ANNOTATION_PARAMS,
), writes=True)

# The memory flush may only append to today's log: the same tool without a target.
FLUSH_APPEND = ToolSpec("memory_append", "Append a note to today's daily log (memory/YYYY-MM-DD.md). Append-only.",
                        (APPEND.params[0], *ANNOTATION_PARAMS), writes=True)

STATUS = ToolSpec("memory_status", "Show the memory index: workspace, files and chunks, embedding provider, "
                  "freshness.", ())

# Off unless memory.forget.tool is true: an agent that can erase memory can erase the wrong thing.
FORGET = ToolSpec("memory_forget", """\
Remove lines from memory for good (the files and the index). Say what: target (a query: every \
line holding all its words, with its list item or paragraph; or a citation \
memory/2026-03-01.md#L3-L5), or an origin: session (what an agent wrote in that session, and \
its transcript), source (an import) or participant (what that person said in transcripts), \
with since to keep what is older. The first call returns what would be removed and an id, and \
removes nothing. Show the user those lines; only if they agree, call again with the same \
arguments and confirm = that id. What is forgotten by origin stays out of every later index \
and re-import.""", (
    Param("target", "string", "A query or a citation path#Lx-Ly", max_length=MAX_QUERY_CHARS),
    Param("session", "string", "Forget what came from this session (its id or session key)", max_length=200),
    Param("source", "string", "Forget an import source", enum=provenance.IMPORT_SOURCES),
    Param("participant", "string", "Forget what this person said in the transcripts", max_length=200),
    Param("since", "string", "With session, source or participant: only what is dated then or later, "
          "YYYY-MM-DD", max_length=10),
    Param("confirm", "string", "The id the preview returned, once the user agreed", max_length=40),
), writes=True)

SESSIONS = ToolSpec("sessions_search", """\
Search past conversations word for word: what the user and the assistant said in earlier \
sessions (not tool output), newest first, each with its session, line, role, time and a \
short excerpt (secrets redacted). Every word of the query must appear ("quoted phrase" as \
written); Chinese is found in either script and by single characters. Use it for what was \
said rather than what memory keeps; memory_search finds notes by meaning.""", (
    Param("query", "string", "The words or \"phrase\" to find", required=True, max_length=MAX_QUERY_CHARS),
    Param("role", "string", "Only messages of this role", enum=("user", "assistant")),
    Param("since", "string", "Only messages from this day on, YYYY-MM-DD", max_length=10),
    Param("until", "string", "Only messages up to this day, YYYY-MM-DD", max_length=10),
    Param("maxResults", "integer", "How many messages (default 10)", minimum=1, maximum=50, py="max_results"),
))

TOOLS = {t.name: t for t in (SEARCH, GET, APPEND, STATUS, SESSIONS)}


def tools_for(read_only: bool, *, forget: bool = False) -> list[ToolSpec]:
    offered = [*TOOLS.values(), *([FORGET] if forget else [])]
    return [t for t in offered if not (read_only and t.writes)]
