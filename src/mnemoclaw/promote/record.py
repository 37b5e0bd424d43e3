"""From what a search returned to recall events: each result's shown lines read back as the
entries that hold them (promote/entries.py), recorded in the state directory's store
(promote/events.py). Called by the agent tools (``memory_search``), recall before the reply and
the command line, never failing the search it follows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..markdown.annotations import in_code
from ..notes import tombstones
from ..text.tokenize import keyword_query
from .entries import HEADING, entry_at, entry_id, recallable
from .events import Recalled, RecallEvents

log = logging.getLogger(__name__)

# at most this many entries are recorded for one result (a snippet may show lines of several), and
# how much an entry's recorded score depends on the share of the query's words it holds (0: not at
# all). Chosen on LoCoMo conversations 26-43 (benchmarks/promote.py; docs/promote.md): promoted
# lines holding a later question's evidence 0.434 at (1, 1.0) against 0.326 at (2, 0.5)
ENTRIES_PER_RESULT = 1
MATCH_WEIGHT = 1.0
_SAID: set[str] = set()


@dataclass(frozen=True)
class Found:
    """One result as a search returned it: where, which lines it showed, how well it scored.
    ``text``: the lines themselves (a transcript's messages are recorded as shown)."""

    path: str
    source: str
    lines: tuple[tuple[int, int], ...]  # 1-based, inclusive
    score: float
    text: str = ""


def entries_of(query: str, found: Iterable[Found], read: Callable[[str], str | None],
               state_dir: str | Path) -> list[Recalled]:
    """The entries the results showed that hold the query's words (daily logs and transcripts
    only), each once."""
    terms = set(keyword_query(query).as_written)
    out: dict[str, Recalled] = {}
    files: dict[str, list[str] | None] = {}
    code: dict[str, list[bool]] = {}  # which lines of each file are in a code block
    for f in found:
        if not recallable(f.path, f.source):
            continue
        if f.source == "sessions":  # a transcript's entry is the message as the index shows it
            text = f.text.strip()
            if text:
                start, end = (f.lines[0][0], f.lines[-1][1]) if f.lines else (0, 0)
                rid = entry_id(f.path, text)
                out.setdefault(rid, Recalled(rid, f.path, f.source, start, end, f.score,
                                             tuple(tombstones.line_keys(state_dir, _said(text)))))
            continue
        if f.path not in files:
            raw = read(f.path)
            files[f.path] = None if raw is None else raw.split("\n")
            code[f.path] = in_code(files[f.path] or [])
        lines = files[f.path]
        if not lines:
            continue
        spans: dict[tuple[int, int], int] = {}  # each entry shown: how many of the query's words it holds
        for lo, hi in f.lines:
            n, last = max(1, lo), min(hi, len(lines))
            while n <= last:
                if not lines[n - 1].strip() or HEADING.match(lines[n - 1]):
                    n += 1
                    continue
                ab = entry_at(lines, n - 1, code[f.path])
                if code[f.path][ab[0]]:  # a code block is never promoted: the prose around it is
                    n = max(n + 1, ab[1] + 1)
                    continue
                if ab not in spans:  # the query's index terms are stems and CJK pairs: read as written
                    low = "\n".join(lines[ab[0]:ab[1]]).casefold()
                    spans[ab] = sum(t in low for t in terms)
                n = max(n + 1, ab[1] + 1)
        # the entries that hold the query's words; when none does (a match by meaning alone), those shown
        best = sorted(spans, key=lambda ab: -spans[ab])
        if any(spans.values()):
            best = [ab for ab in best if spans[ab]]
        for a, b in best[:ENTRIES_PER_RESULT]:
            text = "\n".join(lines[a:b])
            rid = entry_id(f.path, text)
            # how well the entry itself answers: the result's score, less for an entry holding
            # few of the query's words (a line that rode in the same chunk); a match by meaning
            # alone (a question in another script) keeps the result's score
            share = spans[(a, b)] / len(terms) if terms and any(spans.values()) else 1.0
            out.setdefault(rid, Recalled(rid, f.path, f.source, a + 1, b,
                                         f.score * (1 - MATCH_WEIGHT + MATCH_WEIGHT * share),
                                         tuple(tombstones.line_keys(state_dir, lines[a:b]))))
    return list(out.values())


def _said(text: str) -> list[str]:
    """A transcript's shown lines as a forget knows them: "User: …" without who said it."""
    return [line.split(": ", 1)[-1] for line in text.split("\n")]


def record(events: RecallEvents, agent: str, query: str, found: Sequence[Found], read: Callable[[str], str | None],
           *, via: str, session: str | None = None) -> int:
    """Record one search's entries; never raises (a failure is said once a process)."""
    try:
        return events.record(agent, query, entries_of(query, found, read, events.path.parent), via=via, session=session)
    except Exception as exc:  # noqa: BLE001 - a recall event is never worth a failed search
        said = f"recall events could not be recorded in {events.path} ({exc}); searches go on without them"
        if said not in _SAID:
            _SAID.add(said)
            log.warning("%s", said)
        return 0


__all__ = ["ENTRIES_PER_RESULT", "Found", "entries_of", "record"]
