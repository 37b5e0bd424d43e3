"""What an agent (or a person at the shell) is told: the tools' answers on the wire, their
wording when something is wrong, and where the paths in a message are hidden.

The wire format is camelCase, snippets hold the lines that matched, citations are
``path#Lx-Ly``; a failure comes back as data (``disabled``, ``error``, ``action``), never as an
exception. ``explain`` words what makes results incomplete from a ``Situation`` that ``Memory``
gathers; ``scrub`` keeps where the workspace and state directory are out of an agent's sight.
Pure: no I/O.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ProviderError, WorkspaceError
from ..markdown import provenance
from ..markdown.annotations import NAMES as ANNOTATION_NAMES
from ..search.snippets import choose, choose_all
from ..text.tokenize import keyword_query
from ..types import Hit
from .specs import SNIPPET_MAX_CHARS, ToolArgumentError

AGENT = "agent"
PERSON = "person"  # the person at this machine (the CLI): real paths, commands to run


def make_snippet(text: str, query: str, limit: int = SNIPPET_MAX_CHARS) -> str:
    """At most ``limit`` characters of a chunk: its lines that hold the query's words."""
    terms = dict.fromkeys(keyword_query(query).as_written, 1.0)
    return provenance.without_provenance(choose(text, 1, terms, limit).text)


def snippet_lines(text: str, start_line: int, query: str,
                  limit: int = SNIPPET_MAX_CHARS) -> tuple[tuple[int, int], ...]:
    """The file lines ``make_snippet`` shows of a chunk starting at ``start_line`` (1-based, inclusive)."""
    terms = dict.fromkeys(keyword_query(query).as_written, 1.0)
    return choose(text, start_line, terms, limit).ranges


@dataclass
class SearchAnswer:
    """What memory_search answers, before it goes on the wire."""

    hits: Sequence[Hit]
    query: str
    citations: bool
    provider: str
    model: str | None
    fallback: bool
    mode: str
    extra: dict[str, Any] = field(default_factory=dict)  # indexing, damaged, ...
    warnings: list[str] = field(default_factory=list)
    min_score: float | None = None
    sessions: dict[str, dict[str, str]] = field(default_factory=dict)  # session metadata, for provenance

    def wire(self) -> dict[str, Any]:
        results = []
        # startLine/endLine: the whole chunk (what memory_get reads back); snippetLines: the
        # lines the snippet shows, chosen by what matched
        fallback_terms = dict.fromkeys(keyword_query(self.query).as_written, 1.0)
        snippets = choose_all(((h.path, h.text, h.start_line, h.terms or fallback_terms, h.analysed)
                               for h in self.hits),
                              SNIPPET_MAX_CHARS)
        for h, snippet in zip(self.hits, snippets, strict=True):
            item: dict[str, Any] = {"path": h.path, "startLine": h.start_line, "endLine": h.end_line,
                                    "score": round(h.score, 4), "snippet": provenance.without_provenance(snippet.text),
                                    "snippetLines": [list(r) for r in snippet.ranges], "source": h.source}
            item.update({name: h.annotations[name] for name in ANNOTATION_NAMES if name in h.annotations})
            item.update(provenance.of(h.path, h.source, h.annotations, self.sessions))
            if h.superseded_by:
                item["supersededBy"] = h.superseded_by
            if h.weak:
                item["weak"] = True
            if self.citations:
                cite = f"{h.path}#L{h.start_line}-L{h.end_line}"
                item["citation"] = cite
                item["snippet"] += f"\n\nSource: {cite}"
            results.append(item)
        out: dict[str, Any] = {"results": results, "provider": self.provider, "model": self.model,
                               "fallback": self.fallback, "mode": self.mode, **self.extra}
        if not results and ("indexing" in self.extra or "damaged" in self.extra):
            out["note"] = ("nothing found, but memory is not fully searchable right now (see indexing/damaged): "
                           "say you could not check all of it rather than that it is not there")
        elif self.hits and self.hits[0].weak:
            floor = f" {self.min_score:g}" if self.min_score else ""
            out["note"] = (f"only a weak match (its score is under the floor{floor}, but it holds most of the "
                           "question's words): it may not be the answer; read it before you rely on it, and if it "
                           "does not answer, say memory has nothing on this")
        elif not results:
            # the honest answer, in words an agent can pass on
            floor = f" (none scored {self.min_score:g} or more)" if self.min_score else ""
            out["note"] = (f"memory has nothing on this{floor}: say so rather than guess; search again with "
                           "other words if the user named something specific")
        if self.warnings:
            out["warning"] = "; ".join(self.warnings)
        return out


def search_failed(exc: Exception, public: Callable[[str], str]) -> dict[str, Any]:
    return {"results": [], "disabled": True, "error": public(str(exc)),
            "warning": "memory search is unavailable; answer without it and say so", "action": _action_for(exc)}


def get_failed(path: Any, exc: Exception, public: Callable[[str], str]) -> dict[str, Any]:
    shown = path if isinstance(path, str) and len(path) <= 200 else "" if not isinstance(path, str) \
        else path[:200] + "…"
    return {"path": shown, "text": "", "error": public(str(exc))}


def append_failed(exc: Exception, public: Callable[[str], str]) -> dict[str, Any]:
    return {"ok": False, "error": public(str(exc))}


def _action_for(exc: Exception) -> str:
    if isinstance(exc, ToolArgumentError):
        return "call memory_search again as the error says"
    if isinstance(exc, WorkspaceError):
        return "run `mnemoclaw init` to create the workspace, then `mnemoclaw index`"
    if isinstance(exc, ProviderError):
        return "check the embedding provider settings, or set memorySearch.provider to \"none\" for keyword-only search"
    return "run `mnemoclaw status` to see what is wrong, then `mnemoclaw index --full`"


@dataclass(frozen=True)
class Situation:
    """What an answer is told about where its results come from, as ``Memory`` finds it for
    one answer: with what (the provider, the mode), and what makes the results incomplete."""

    provider: str = "none"
    model: str | None = None
    fallback: bool = False  # the fallback provider answers
    mode: str = "hybrid"  # what a search that names no mode does
    refusal: str | None = None  # why memory search is off where the question is asked (a qmd scope rule)
    sessions: dict[str, dict[str, str]] = field(default_factory=dict)  # transcripts' channel and chat type
    backend_fallback: dict[str, Any] | None = None  # qmd could not answer: the builtin index did
    damaged: str | None = None
    read_only_why: str | None = None  # the index cannot be synced: why
    last_sync: float | None = None
    indexing: dict[str, Any] | None = None  # {kind, filesDone, filesTotal, by}
    update_error: str | None = None  # the last sync before a search failed
    vectors_error: str | None = None  # the provider failed: keyword only


def explain(answer: SearchAnswer, situation: Situation, reader: str = AGENT) -> None:
    """Add to ``answer`` what its reader must know about where these results come from."""
    s = situation
    if s.backend_fallback:
        answer.extra["backendFallback"] = dict(s.backend_fallback)
        answer.warnings.append(f"qmd could not answer ({s.backend_fallback['reason']}): these results come from "
                               "mnemoclaw's builtin index of the same files")
    if s.damaged is not None:
        answer.extra["damaged"] = s.damaged
        answer.warnings.append(f"the index is damaged ({s.damaged}): these results come from what could still be "
                               "read and may miss notes; the next sync rebuilds it from the Markdown files "
                               "(`mnemoclaw index`)")
    if s.read_only_why is not None:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.last_sync)) if s.last_sync else "an unknown time"
        answer.warnings.append(f"the index was not updated ({s.read_only_why}): these results are as of its last "
                               f"sync ({when}); notes written since then are not in it")
    if s.indexing is not None:
        answer.extra["indexing"] = s.indexing
        done, total = s.indexing["filesDone"], s.indexing["filesTotal"]
        if s.indexing["kind"] == "rebuild":
            answer.warnings.append(f"the index is being rebuilt ({done} of {total} files); until that is done "
                                   "the results come from the previous index")
        elif reader == PERSON:
            answer.warnings.append(f"memory is only partly indexed ({done} of {total} changed files so far; a "
                                   "search indexes the newest first): run `mnemoclaw index` to index the rest "
                                   "now (or keep `mnemoclaw watch` running), then search again")
        else:
            answer.warnings.append(f"memory is still being indexed ({done} of {total} changed files so far), "
                                   "so these results may be incomplete: if nothing relevant is found, say that "
                                   "memory is still loading and search again shortly, not that nothing is there")
    if s.update_error:
        answer.warnings.append(f"the index could not be updated ({s.update_error}); results may miss recent notes")
    if s.vectors_error:
        answer.warnings.append(f"the embedding provider failed ({s.vectors_error}): notes are searchable by "
                               "keyword only until it works again")


def scrub(message: str, roots: Sequence[tuple[str, str, str]]) -> str:
    """``message`` with each root's path replaced: (where it is, what a path inside it starts
    with instead, what the root itself is called): the workspace's files become relative paths
    and the state directory STATE_DIR, so an agent never learns where either is on this machine."""
    spellings = []
    for root, inside, itself in roots:
        spellings += [(spelling, inside, itself) for spelling in {root, os.path.realpath(root)}]
    for spelling, inside, itself in sorted(spellings, key=lambda r: -len(r[0])):  # the longest first
        message = message.replace(spelling + os.sep, inside).replace(spelling, itself)
    return message
