"""Long conversations (BEAM, 128K-token scale) as memory workspaces: turn-level evidence at a fixed context budget.

    python benchmarks/beam.py [--beam /work/.mirror/mohammadtavakoli78+BEAM/repo] [--scale 100K]
                              [--work-dir bench-results/work/beam] [--out bench-results/beam.json]
                              [--conversations 1,2,3] [--budget 8000] [--max-results 30]
                              [--others 40] [--seed 7] [--layout daily|messages|exchanges]
                              [--mode keyword|vector|hybrid] [--vector-weight 0.7] [--floors 0.5,0.9]
    python benchmarks/beam.py --compare FIRST.json SECOND.json [--system mnemoclaw|fts5|oracle]

Reads the BEAM conversations from ``--beam`` (a bare git mirror, read at HEAD, or a checked-out
folder) and never copies them into the repository. Only the ``chats/100K`` scale is read: any
other scale is refused (the larger ones are kept for an independent check).

Each conversation becomes one memory workspace: ``memory/YYYY-MM-DD.md``, one daily log per
batch by its date (a batch's ``time_anchor``, else the first of its messages that has one; a batch
with none goes into the previous batch's file; batches of one date share a file, in order). A
message is a block ``## User`` or ``## Assistant`` followed by what was said, made data the way
mnemoclaw writes any text that came through a tool (``markdown/annotations.as_data``): each heading
outside code goes two levels deeper (a message's ``# Title`` becomes ``### Title``, under its
speaker's heading, never a block of its own), a code fence left open is closed at the message's
end and ``<!--`` is written ``&lt;!--`` (no message annotates itself). The generator's trailing
plan marker on user messages (``->-> 1,2``) is dropped. No message id is written in the text:
the work dir keeps ``lines.json``, each file's line spans (heading to last line) -> message id.

Indexing and search are the engine as a user gets it: the default config, the embedded default
embedder, no API key, the default minScore floor; each question is asked for ``--max-results``.

Evidence (``evidence_for``), per question, the first rule that gives any message:
``ids``: its ``source_chat_ids`` (a list, or lists under keys), the ids the conversation has;
``named``: references naming a message (``chat_id: 58``, a bare number; not ``Session 60: ...``,
whose number is not always a message id);
``text``: for a statement the user made (``preference_being_tested``, ``instruction_being_tested``)
the user message holding the largest share of its content words (lowercased alphanumeric words of
two characters or more, a short stop list out), taken when that share is at least 0.4 (ties: the
shorter message). Abstention questions have none by design; other questions with none are left out
of recall. The run reports how often ``text`` picks a cited message where ids exist too.

Scoring at a fixed context budget (``--budget`` characters): results are taken in order; a
result's characters are its chunk text (the lines ``startLine..endLine`` as indexed, joined by
newlines, which is what the agent reads), plus one for the newline between results; the result that
crosses the budget is cut to its leading lines that fit (possibly none; its line range shrinks
to them), and no result after it is read. A message is covered when any of its lines is in a returned range. Per question:
recall = share of its evidence messages covered, all-found = every one covered, turns = messages
covered, chars = characters returned. recall@5: the first five results, whole, no budget.

Baseline ``fts5``: the very chunks mnemoclaw indexed (read from its store), in an SQLite FTS5
table (default unicode61 tokenizer), the question's word tokens OR-ed, ordered by bm25(), scored
the same way. ``oracle``: the five of those chunks holding the most evidence (greedy: each next
chunk the one adding most uncovered evidence), the bound on what ranking these chunks can reach
at five (greedy, so it may sit a little under the exact best five).

Out of scope: each workspace is asked ``--others`` questions drawn (seeded) from the other
conversations (abstention excluded); the share answered with nothing is reported (target >= 0.9),
and abstention questions answered with nothing as their own row. Paired differences (mnemoclaw -
fts5) come with a seeded bootstrap 95 % CI over questions.

The daily logs are a conversation's log to the chunker (``markdown/chunker.py``): each message is
chunked apart (short ones together, whole; a long one split between paragraphs), and the run
reports the share of chunks still holding lines of two messages. ``--floors``: each higher floor
applied to the same results (those scoring under it dropped), with the recall left, the answerable
questions left with nothing and the other conversations' questions answered with nothing: both
kinds of error on one curve, without searching again.

``--layout messages`` / ``exchanges`` (measurements of other units; the engine and its
defaults are unchanged) write each message, or each exchange (a turn: a user message and the
replies to it), as an annotated entry of its own, ``<!-- importance: 5 -->`` on its heading (the
importance an entry without one counts as, so the ranking is unchanged): the chunker chunks each
annotated entry apart, so no chunk holds two units (a long one is still split at the chunk size,
at line boundaries). Each layout has its own workspaces and index under the work dir. ``--mode``
searches the same index by keyword or vector alone (default: the configured hybrid);
``--vector-weight`` fixes the hybrid's vector weight (the text weight is 1 - it) instead of the
adaptive one, a search setting over the same index.

``--transform smalltalk|colloquial|units|respelled`` asks each question another way where the
transform applies (mnemoclaw.eval.transforms; names are the capitalised words the conversation
writes mid-sentence), the others as they are: ``--compare`` it with the plain run, question by
question. ``--without-first-person`` measures the ranking without reading a first-person
question's user messages first (search/conversation.py), over the same index. Beside the table:
whose messages the evidence is (user or assistant), the median search time, and of the
knowledge-update questions whose older and newer evidence are both returned, how often the newest
comes first.
"""

# no ``from __future__ import annotations``: the dataclasses here are made while the module loads
# outside sys.modules (tests/test_lint.py loads every script so), where string annotations fail
import argparse
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from mnemoclaw.api import Memory, resolve_provider
from mnemoclaw.config import load_settings
from mnemoclaw.eval.transforms import OUT_OF_SCOPE, TRANSFORMS, Lexicon, apply
from mnemoclaw.markdown.annotations import as_data

DEFAULT_BEAM = "/work/.mirror/mohammadtavakoli78+BEAM/repo"
SCALES = ("100K",)  # the only scale this script reads; 500K, 1M and 10M are kept for an independent check
CATEGORIES = ("abstention", "contradiction_resolution", "event_ordering", "information_extraction",
              "instruction_following", "knowledge_update", "multi_session_reasoning", "preference_following",
              "summarization", "temporal_reasoning")
NO_EVIDENCE = "abstention"
BUDGET = 8000
TOP = 5
TEXT_SHARE = 0.4  # the ``text`` rule: the least share of a statement's words its message must hold
USER_STATEMENTS = ("preference_being_tested", "instruction_being_tested")
_STOP = frozenset("the a an and or of to in on for with is are was were be been am my me you your it its this "
                  "that at by as from have has had do did does we our can could would should will what which "
                  "how when".split())
_WORDS = re.compile(r"[a-z0-9]+")
_PLAN_MARK = re.compile(r"\s*->->\s*\d+\s*,\s*\d+\s*$")
# "Session N: ..." is not read: in temporal-reasoning questions its N is mostly not a cited message
_CHAT_ID = re.compile(r"^\s*chat_id\s*[:#]?\s*(\d+)\b", re.I)
_TOKEN = re.compile(r"\w+")


# -- reading BEAM -------------------------------------------------------------------------------

class Beam:
    """The BEAM files of one scale, from a bare git mirror (at HEAD) or a checked-out folder."""

    def __init__(self, path: str, scale: str = "100K"):
        if scale not in SCALES:
            raise SystemExit(f"scale {scale!r} refused: only {', '.join(SCALES)} is read here")
        self.path, self.scale = os.path.abspath(path), scale
        self.bare = not os.path.isdir(os.path.join(self.path, "chats")) and os.path.isfile(
            os.path.join(self.path, "HEAD"))
        if not self.bare and not os.path.isdir(os.path.join(self.path, "chats", scale)):
            raise SystemExit(f"no BEAM data at {self.path} (want a bare git mirror or a folder with chats/{scale})")

    def _read(self, rel: str) -> str:
        if not rel.startswith(f"chats/{self.scale}/"):
            raise ValueError(f"{rel}: outside chats/{self.scale}")
        if self.bare:
            return subprocess.run(["git", "--git-dir", self.path, "show", f"HEAD:{rel}"], check=True,
                                  capture_output=True, text=True).stdout
        with open(os.path.join(self.path, rel), encoding="utf-8") as fh:
            return fh.read()

    def conversations(self) -> list[str]:
        if self.bare:
            out = subprocess.run(["git", "--git-dir", self.path, "ls-tree", "--name-only", "HEAD",
                                  f"chats/{self.scale}/"], check=True, capture_output=True, text=True).stdout
            names = [line.rsplit("/", 1)[-1] for line in out.split()]
        else:
            names = os.listdir(os.path.join(self.path, "chats", self.scale))
        return sorted((n for n in names if n.isdigit()), key=int)

    def chat(self, conv: str) -> list[dict]:
        return json.loads(self._read(f"chats/{self.scale}/{conv}/chat.json"))

    def questions(self, conv: str) -> dict[str, list[dict]]:
        return json.loads(self._read(f"chats/{self.scale}/{conv}/probing_questions/probing_questions.json"))


# -- the workspace ----------------------------------------------------------------------------

def _anchor(text: str | None) -> date | None:
    for fmt in ("%B-%d-%Y", "%b-%d-%Y", "%Y-%m-%d", "%B %d, %Y"):
        try:
            return datetime.strptime(str(text).strip(), fmt).date()
        except ValueError:
            continue
    return None


def messages_of(batch: dict) -> list[dict]:
    return [m for turn in batch.get("turns", []) for m in turn]


def batch_dates(chat: list[dict], first: date = date(2024, 1, 1)) -> list[date]:
    """Each batch's date: its ``time_anchor``, else its first message's that has one, else the
    previous batch's (``first`` for a first batch with none)."""
    out: list[date] = []
    for batch in chat:
        found = _anchor(batch.get("time_anchor")) if batch.get("time_anchor") else None
        for m in messages_of(batch):
            if found is None and m.get("time_anchor"):
                found = _anchor(m["time_anchor"])
        out.append(found or (out[-1] if out else first))
    return out


def content_of(message: dict) -> str:
    """What a message says: its content, the generator's trailing plan marker dropped."""
    return _PLAN_MARK.sub("", str(message.get("content", ""))).strip("\n")


def message_lines(role: str, content: str) -> list[str]:
    """One message as a daily log's block: its speaker's heading, a blank line, what was said (as
    data: headings two levels deeper, an open fence closed, no annotation)."""
    said, _ = as_data(_PLAN_MARK.sub("", content).strip("\n"))
    return [f"## {'User' if role == 'user' else 'Assistant'}", "", *said.split("\n")]


@dataclass
class Span:
    path: str  # workspace-relative
    start: int
    end: int
    message: int


def build_logs(chat: list[dict]) -> tuple[dict[str, str], list[Span]]:
    """The daily logs (relative path -> text) and each message's line span."""
    files: dict[str, list[str]] = {}
    spans: list[Span] = []
    for batch, day in zip(chat, batch_dates(chat), strict=True):
        rel = f"memory/{day.isoformat()}.md"
        lines = files.setdefault(rel, [f"# {day.isoformat()}"])
        for m in messages_of(batch):
            block = message_lines(m.get("role", "user"), str(m.get("content", "")))
            lines.append("")
            start = len(lines) + 1
            lines.extend(block)
            spans.append(Span(rel, start, len(lines), int(m["id"])))
    return {rel: "\n".join(lines) + "\n" for rel, lines in files.items()}, spans


# a neutral annotation (the importance an entry without one counts as): it makes the entry a span of
# its own, which the chunker chunks apart, and changes nothing in the ranking
ENTRY = " <!-- importance: 5 -->"


def build_entries(chat: list[dict], unit: str) -> tuple[dict[str, str], list[Span]]:
    """The same logs, each message (``unit="messages"``) or each exchange of messages
    (``"exchanges"``: a turn of the conversation, a user message and the replies to it) an annotated
    entry of its own, which the chunker keeps apart from its neighbours (long ones are still split
    at the chunk size). An exchange is written as a ``## Exchange`` section, its messages under it
    as ``### User`` / ``### Assistant`` (what they said four levels deeper)."""
    if unit == "messages":
        files, spans = build_logs(chat)
        out = {}
        for rel, text in files.items():
            lines = text.split("\n")
            for s in (s for s in spans if s.path == rel):
                lines[s.start - 1] += ENTRY
            out[rel] = "\n".join(lines)
        return out, spans
    grouped: dict[str, list[str]] = {}
    spans = []
    for batch, day in zip(chat, batch_dates(chat), strict=True):
        rel = f"memory/{day.isoformat()}.md"
        lines = grouped.setdefault(rel, [f"# {day.isoformat()}"])
        for turn in batch.get("turns", []):
            lines += ["", "## Exchange" + ENTRY]
            for m in turn:
                said, _ = as_data(as_data(_PLAN_MARK.sub("", str(m.get("content", ""))).strip("\n"))[0])
                lines.append("")
                start = len(lines) + 1
                lines += [f"### {'User' if m.get('role') == 'user' else 'Assistant'}", "", *said.split("\n")]
                spans.append(Span(rel, start, len(lines), int(m["id"])))
    return {rel: "\n".join(lines) + "\n" for rel, lines in grouped.items()}, spans


def crossing(chunks: "Sequence[Result]", spans_by_path: dict[str, list[Span]]) -> float:
    """The share of chunks holding lines of more than one message."""
    return _mean([float(len(covered([(c.path, c.start, c.end)], spans_by_path)) > 1) for c in chunks])


def _write_if_changed(path: str, text: str) -> None:
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def write_workspace(root: str, files: dict[str, str], spans: list[Span]) -> str:
    ws = os.path.join(root, "workspace")
    for rel, text in files.items():
        _write_if_changed(os.path.join(ws, rel), text)
    mem_dir = os.path.join(ws, "memory")
    for stale in set(os.listdir(mem_dir)) - {os.path.basename(r) for r in files}:
        os.unlink(os.path.join(mem_dir, stale))
    _write_if_changed(os.path.join(root, "lines.json"),
                      json.dumps([[s.path, s.start, s.end, s.message] for s in spans]))
    return ws


# -- evidence ---------------------------------------------------------------------------------

def _ints(value: Any) -> Iterable[int]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _ints(v)
    elif isinstance(value, list):
        for v in value:
            yield from _ints(v)
    elif isinstance(value, int) and not isinstance(value, bool):
        yield value
    elif isinstance(value, str) and value.strip().isdigit():
        yield int(value)


def content_words(text: str) -> set[str]:
    return {w for w in _WORDS.findall(text.lower()) if len(w) > 1 and w not in _STOP}


def best_statement(text: str, messages: Sequence[dict]) -> tuple[int | None, float]:
    """The user message holding the largest share of ``text``'s content words, and that share
    (ties: the shorter message)."""
    words = content_words(text)
    best, share, size = None, 0.0, 0
    for m in messages:
        if m.get("role") != "user":
            continue
        held = content_words(str(m.get("content", "")))
        s = len(words & held) / len(words) if words else 0.0
        if s > share or (s == share and best is not None and len(held) < size):
            best, share, size = int(m["id"]), s, len(held)
    return best, share


def evidence_for(question: dict, category: str, messages: Sequence[dict]) -> tuple[list[int], str]:
    """(evidence message ids, the rule that gave them); ([], "none") when no rule gives any."""
    if category == NO_EVIDENCE:
        return [], "abstention"
    known = {int(m["id"]) for m in messages}
    ids = list(dict.fromkeys(i for i in _ints(question.get("source_chat_ids")) if i in known))
    if ids:
        return ids, "ids"
    named = list(dict.fromkeys(i for i in named_references(question) if i in known))
    if named:
        return named, "named"
    found = []
    for key in USER_STATEMENTS:
        if question.get(key):
            best, share = best_statement(str(question[key]), messages)
            if best is not None and share >= TEXT_SHARE:
                found.append(best)
    if found:
        return list(dict.fromkeys(found)), "text"
    return [], "none"


# -- scoring ----------------------------------------------------------------------------------

@dataclass
class Result:
    """One ranked result: a chunk's file, line range and text."""

    path: str
    start: int
    end: int
    text: str
    score: float = 0.0


def text_lines(result: Result, file_lines: Sequence[str] | None = None) -> list[tuple[int, str]]:
    """The result's text, line by line, each with its line number in the file. A line the chunker
    sliced (longer than a chunk) stands as its pieces, each piece with the line's number."""
    pieces = result.text.split("\n")
    if len(pieces) == result.end - result.start + 1 or file_lines is None:
        return [(min(result.start + i, result.end), p) for i, p in enumerate(pieces)]
    out, n, held = [], result.start, ""
    for p in pieces:
        out.append((n, p))
        held += p
        whole = file_lines[n - 1] if 0 < n <= len(file_lines) else ""
        if held == whole or len(held) >= len(whole):
            n, held = min(n + 1, result.end), ""
    return out


def within_budget(results: Sequence[Result], budget: int,
                  lines_of: Callable[[Result], list[tuple[int, str]]] | None = None
                  ) -> tuple[list[tuple[str, int, int]], int]:
    """The (path, first line, last line) ranges read within ``budget`` characters, and the
    characters read: whole results in order (each its text's length, plus one newline between
    results), the one crossing the budget cut to its leading lines that fit."""
    lines_of = lines_of or text_lines
    ranges: list[tuple[str, int, int]] = []
    used = 0
    for r in results:
        sep = 1 if ranges else 0
        if used + sep + len(r.text) <= budget:
            ranges.append((r.path, r.start, r.end))
            used += sep + len(r.text)
            continue
        kept, size = [], sep - 1  # the newline before each line but the first is counted with it
        for n, line in lines_of(r):
            if used + size + 1 + len(line) > budget:
                break
            kept.append(n)
            size += 1 + len(line)
        if kept:
            ranges.append((r.path, kept[0], kept[-1]))
            used += size
        break
    return ranges, used


def covered(ranges: Iterable[tuple[str, int, int]], spans_by_path: dict[str, list[Span]]) -> set[int]:
    """The messages any of whose lines a range holds."""
    out: set[int] = set()
    for path, a, b in ranges:
        for s in spans_by_path.get(path, ()):
            if s.start <= b and a <= s.end:
                out.add(s.message)
    return out


def score(results: Sequence[Result], evidence: Sequence[int], spans_by_path: dict[str, list[Span]], budget: int,
          lines_of: Callable[[Result], list[tuple[int, str]]] | None = None) -> dict[str, float]:
    ranges, chars = within_budget(results, budget, lines_of)
    seen = covered(ranges, spans_by_path)
    top = covered(((r.path, r.start, r.end) for r in results[:TOP]), spans_by_path)
    wanted = set(evidence)
    return {"recall": len(wanted & seen) / len(wanted), "all_found": float(wanted <= seen),
            "turns": float(len(seen)), "chars": float(chars), f"recall@{TOP}": len(wanted & top) / len(wanted),
            "results": float(len(results)), "empty": float(not results)}


def oracle(chunks: Sequence[Result], evidence: Sequence[int], spans_by_path: dict[str, list[Span]],
           k: int = TOP) -> list[Result]:
    """The ``k`` chunks holding most of the evidence, greedily (each adds the most not yet held)."""
    wanted = set(evidence)
    held = {i: covered([(c.path, c.start, c.end)], spans_by_path) & wanted for i, c in enumerate(chunks)}
    picked: list[int] = []
    got: set[int] = set()
    for _ in range(k):
        best = max((i for i in held if i not in picked), key=lambda i: (len(held[i] - got), -len(chunks[i].text)),
                   default=None)
        if best is None or not held[best] - got:
            break
        picked.append(best)
        got |= held[best]
    return [chunks[i] for i in picked]


def bootstrap(diffs: Sequence[float], seed: int, n: int = 10000) -> tuple[float, float, float]:
    """The mean of paired differences and its 95 % percentile-bootstrap interval."""
    if not diffs:
        return 0.0, 0.0, 0.0
    rng = random.Random(seed)
    k = len(diffs)
    means = sorted(sum(diffs[rng.randrange(k)] for _ in range(k)) / k for _ in range(n))
    return sum(diffs) / k, means[int(0.025 * n)], means[int(0.975 * n) - 1]


# -- the baseline -----------------------------------------------------------------------------

class Fts5:
    """A plain FTS5 OR-query over given chunks, best bm25() first."""

    def __init__(self, chunks: Sequence[Result]):
        self.chunks = list(chunks)
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE c USING fts5(text)")
        self.db.executemany("INSERT INTO c(rowid, text) VALUES (?, ?)", ((i, c.text) for i, c in enumerate(chunks)))

    def search(self, question: str, limit: int) -> list[Result]:
        tokens = list(dict.fromkeys(t.lower() for t in _TOKEN.findall(question)))
        if not tokens:
            return []
        query = " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)
        rows = self.db.execute("SELECT rowid, bm25(c) FROM c WHERE c MATCH ? ORDER BY bm25(c) LIMIT ?",
                               (query, limit)).fetchall()
        return [Result(**{**self.chunks[i].__dict__, "score": -s}) for i, s in rows]


def stored_chunks(mem: Memory, workspace: str) -> list[Result]:
    """Every chunk mnemoclaw indexed for the workspace's files, from its store."""
    store = mem.backend.store  # type: ignore[attr-defined]
    out = []
    for path in sorted(store.file_records()):
        got = store.file_chunks(path)
        for c in (got.chunks if got else []):
            out.append(Result(_rel(c.path, workspace), c.start_line, c.end_line, c.text))
    return out


def _rel(path: str, workspace: str) -> str:
    return os.path.relpath(path, workspace) if os.path.isabs(path) else path


_CAPITALISED = re.compile(r"(?<=[a-z,;] )([A-Z][a-z]+)\b")


def lexicon(messages: Sequence[dict], seed: int) -> Lexicon:
    """What the transforms know of a conversation: its names (capitalised words it writes after a
    lowercase word or a comma, as a name stands mid-sentence, and never in lower case) and its
    words (what a respelled name must not be)."""
    text = "\n".join(content_of(m) for m in messages)
    lower = {w for w in _TOKEN.findall(text) if w.islower()}
    names = {w for w in _CAPITALISED.findall(text) if w.lower() not in lower}
    words = set(_TOKEN.findall(text.lower()))
    return Lexicon(is_name=names.__contains__, is_person=names.__contains__,
                   taken=lambda w: w.lower() in words, seed=seed)


def newest_first(results: Sequence[Result], evidence: Sequence[int], spans_by_path: dict[str, list[Span]]
                 ) -> bool | None:
    """Whether the newest of a question's evidence messages comes no later in ``results`` than
    the first of the older ones; None unless both the newest and an older one are returned."""
    ids = sorted(set(evidence))
    first: dict[int, int] = {}
    for rank, r in enumerate(results):
        for m in covered([(r.path, r.start, r.end)], spans_by_path):
            first.setdefault(m, rank)
    older = [first[i] for i in ids[:-1] if i in first]
    return first[ids[-1]] <= min(older) if len(ids) > 1 and ids[-1] in first and older else None


def roles_of_evidence(convs: Sequence["Conversation"]) -> dict[str, dict[str, int]]:
    """Per category, how many of the questions' evidence messages (counted per question) each
    side wrote."""
    out: dict[str, Counter] = defaultdict(Counter)
    for conv in convs:
        role = {int(m["id"]): m.get("role", "user") for m in conv.messages}
        for category, _, ids, _ in conv.questions:
            for i in ids:
                out[category][role.get(i, "?")] += 1
    return {c: dict(v) for c, v in out.items()}


# -- running ----------------------------------------------------------------------------------

@dataclass
class Conversation:
    name: str
    messages: list[dict]
    questions: list[tuple[str, dict, list[int], str]]  # (category, question, evidence, rule)
    files: dict[str, str] = field(default_factory=dict)
    spans: list[Span] = field(default_factory=list)


def load(beam: Beam, names: Sequence[str], layout: str) -> list[Conversation]:
    out = []
    for name in names:
        chat = beam.chat(name)
        messages = [m for b in chat for m in messages_of(b)]
        qs = []
        for category, items in beam.questions(name).items():
            for q in items:
                ids, rule = evidence_for(q, category, messages)
                qs.append((category, q, ids, rule))
        files, spans = build_logs(chat) if layout == "daily" else build_entries(chat, layout)
        out.append(Conversation(name, messages, qs, files, spans))
    return out


def named_references(question: dict) -> list[int]:
    """The message ids a question's references name (``chat_id: 58``, or 58)."""
    refs = question.get("conversation_references", question.get("conversation_reference")) or []
    named: list[int] = []
    for ref in refs if isinstance(refs, list) else [refs]:
        if isinstance(ref, int) and not isinstance(ref, bool):
            named.append(ref)
        elif isinstance(ref, str) and (m := _CHAT_ID.match(ref)):
            named.append(int(m.group(1)))
    return named


def named_rule_agreement(convs: Sequence[Conversation]) -> list[int]:
    """Where a question cites ids and its references name messages too: [named ids among the
    cited ones, named ids]."""
    out = [0, 0]
    for conv in convs:
        for _, q, ids, rule in conv.questions:
            if rule == "ids":
                for i in named_references(q):
                    out[0] += int(i in ids)
                    out[1] += 1
    return out


def text_rule_agreement(convs: Sequence[Conversation]) -> dict[str, list[int]]:
    """Where a question cites ids and states a user statement too: how often the ``text`` rule
    (taken) picks one of the cited messages; per category [agrees, taken]."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for conv in convs:
        for category, q, ids, rule in conv.questions:
            if rule != "ids":
                continue
            for key in USER_STATEMENTS:
                if q.get(key):
                    best, share = best_statement(str(q[key]), conv.messages)
                    if best is not None and share >= TEXT_SHARE:
                        out[category][1] += 1
                        out[category][0] += int(best in ids)
    return dict(out)


def progress(label: str, done: int, total: int, t0: float) -> None:
    if done % 10 and done < total:
        return
    print(f"\r{label}: {done}/{total}  ({time.monotonic() - t0:.0f} s)", end="" if done < total else "\n",
          file=sys.stderr, flush=True)


def open_memory(root: str, provider: Any, overrides: dict[str, Any] | None = None) -> tuple[Memory, Any]:
    settings = load_settings(workspace=os.path.join(root, "workspace"), state_dir=os.path.join(root, "state"),
                             config={}, overrides=overrides or {}, env={})
    if provider is None:
        provider = resolve_provider(settings)
    return Memory(settings, provider=provider, background=False), provider


def run(args: argparse.Namespace) -> dict[str, Any]:
    t_start = time.monotonic()
    beam = Beam(args.beam, args.scale)
    names = beam.conversations()
    if args.conversations:
        wanted = args.conversations.split(",")
        missing = set(wanted) - set(names)
        if missing:
            raise SystemExit(f"no such conversation at {args.scale}: {', '.join(sorted(missing))}")
        names = [n for n in names if n in wanted]
    convs = load(beam, names, args.layout)
    # the other conversations' questions (of the whole scale, whichever are run), abstention's left out
    pool = [(other, cat, q["question"]) for other in beam.conversations()
            for cat, items in beam.questions(other).items() if cat != NO_EVIDENCE for q in items]
    rows: list[dict[str, Any]] = []
    out_rows: list[dict[str, Any]] = []
    provider = None
    # a fixed vector weight instead of the adaptive one: a search setting, the index is the same
    overrides = ({"query": {"hybrid": {"vectorWeight": args.vector_weight, "textWeight": 1 - args.vector_weight}}}
                 if args.vector_weight is not None else {})
    floors = [float(f) for f in args.floors.split(",")] if args.floors else []
    index_seconds = 0.0
    search_ms: list[float] = []
    if args.without_first_person:  # the ablation: no question reads as the user's
        from mnemoclaw.search import conversation

        conversation.in_first_person = lambda query: False
    chunks_total = 0
    crossed: list[float] = []
    t0 = time.monotonic()
    for n, conv in enumerate(convs, 1):
        root = os.path.join(os.path.abspath(args.work_dir), args.layout, conv.name)
        ws = write_workspace(root, conv.files, conv.spans)
        spans_by_path: dict[str, list[Span]] = defaultdict(list)
        for s in conv.spans:
            spans_by_path[s.path].append(s)
        file_lines = {rel: text.split("\n") for rel, text in conv.files.items()}
        mem, provider = open_memory(root, provider, overrides)
        try:
            ti = time.monotonic()
            label = f"index {conv.name} ({n}/{len(convs)})"
            report = mem.sync(progress=lambda d, t, label=label, ti=ti: progress(label, d, t, ti))
            index_seconds += time.monotonic() - ti
            if report.failed:
                raise SystemExit(f"{len(report.failed)} files failed to index, e.g. {report.failed[0]}")
            chunks = stored_chunks(mem, ws)
            chunks_total += len(chunks)
            crossed.append(crossing(chunks, spans_by_path))
            fts = Fts5(chunks)

            def lines_of(r: Result, fl=file_lines) -> list[tuple[int, str]]:
                return text_lines(r, fl.get(r.path))

            ts = time.monotonic()
            lex = lexicon(conv.messages, args.seed) if args.transform else None
            for i, (category, q, evidence, rule) in enumerate(conv.questions):
                asked = q["question"]
                if lex is not None:
                    asked = apply(args.transform, asked, lex, f"{conv.name}:{i}") or asked
                tq = time.perf_counter()
                hits = mem.search(asked, max_results=args.max_results, mode=args.mode, sync=False)
                search_ms.append((time.perf_counter() - tq) * 1000)
                ours = [Result(_rel(h.path, ws), h.start_line, h.end_line, h.text, h.score) for h in hits]
                theirs = fts.search(asked, args.max_results)
                row: dict[str, Any] = {"conv": conv.name, "category": category, "rule": rule,
                                       "evidence": evidence, "top_score": ours[0].score if ours else None,
                                       "mnemoclaw_empty": float(not ours), "fts5_empty": float(not theirs),
                                       "weak": float(bool(hits) and hits[0].weak),
                                       "transformed": asked != q["question"]}
                if category == "knowledge_update":
                    row["newest_first"] = {"mnemoclaw": newest_first(ours, evidence, spans_by_path),
                                           "fts5": newest_first(theirs, evidence, spans_by_path)}
                if evidence:
                    row["mnemoclaw"] = score(ours, evidence, spans_by_path, args.budget, lines_of)
                    row["floors"] = {str(f): score([r for r in ours if r.score >= f], evidence, spans_by_path,
                                                   args.budget, lines_of)["recall"] for f in floors}
                    row["fts5"] = score(theirs, evidence, spans_by_path, args.budget, lines_of)
                    row["oracle"] = score(oracle(chunks, evidence, spans_by_path), evidence, spans_by_path,
                                          args.budget, lines_of)
                rows.append(row)
                progress(f"search {conv.name} ({n}/{len(convs)})", i + 1, len(conv.questions), ts)
            others = [(cat, text) for c, cat, text in pool if c != conv.name]
            rng = random.Random(f"{args.seed}-{conv.name}")  # a workspace's draw does not depend on the others run
            for cat, text in rng.sample(others, min(args.others, len(others))):
                hits = mem.search(text, max_results=args.max_results, mode=args.mode, sync=False)
                out_rows.append({"conv": conv.name, "category": cat, "empty": float(not hits),
                                 "weak": float(bool(hits) and hits[0].weak),
                                 "top_score": hits[0].score if hits else None,
                                 "fts5_empty": float(not fts.search(text, args.max_results))})
        finally:
            mem.close()
    print(f"searched {len(convs)} conversations in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    result = summarise(rows, out_rows, convs, args.seed)
    search_ms.sort()
    result["search_ms_p50"] = round(search_ms[len(search_ms) // 2], 1) if search_ms else None
    result["transform"] = args.transform
    result["transformed_questions"] = sum(r["transformed"] for r in rows)
    result["first_person_rule"] = not args.without_first_person
    result.update({"scale": args.scale, "conversations": [c.name for c in convs], "budget": args.budget,
                   "max_results": args.max_results, "layout": args.layout, "mode": args.mode or "configured (hybrid)",
                   "vector_weight": args.vector_weight if args.vector_weight is not None else "adaptive",
                   "chunks": chunks_total, "chunks_crossing_messages": round(_mean(crossed), 4),
                   "index_seconds": round(index_seconds, 1), "wall_seconds": round(time.monotonic() - t_start, 1),
                   "provider": getattr(provider, "model", None) or type(provider).__name__,
                   "questions": rows, "out_of_scope_questions": out_rows})
    return result


LAYOUTS = ("daily", "messages", "exchanges")
METRICS = ("recall", f"recall@{TOP}", "all_found", "turns", "chars")
SYSTEMS = ("mnemoclaw", "fts5", "oracle")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summarise(rows: list[dict], out_rows: list[dict], convs: Sequence[Conversation], seed: int) -> dict[str, Any]:
    by_cat: dict[str, Any] = {}
    groups = {c: [r for r in rows if r["category"] == c] for c in CATEGORIES}
    groups["all"] = rows
    for cat, group in groups.items():
        scored = [r for r in group if "mnemoclaw" in r]
        entry: dict[str, Any] = {"questions": len(group), "with_evidence": len(scored),
                                 "rules": dict(Counter(r["rule"] for r in group))}
        for system in SYSTEMS:
            entry[system] = {m: round(_mean([r[system][m] for r in scored]), 4) for m in METRICS}
        for m in ("recall", f"recall@{TOP}"):
            d, lo, hi = bootstrap([r["mnemoclaw"][m] - r["fts5"][m] for r in scored], seed)
            entry[f"diff_{m}"] = {"mean": round(d, 4), "ci95": [round(lo, 4), round(hi, 4)]}
        entry["answered_empty"] = {"mnemoclaw": round(_mean([r["mnemoclaw_empty"] for r in group]), 4),
                                   "fts5": round(_mean([r["fts5_empty"] for r in group]), 4)}
        by_cat[cat] = entry
    tops = sorted(r["top_score"] for r in rows if r["top_score"] is not None)
    scored = [r for r in rows if "floors" in r]
    answerable = [r for r in rows if r["category"] != NO_EVIDENCE]

    def nothing(r: dict, f: float) -> float:
        return float(r["top_score"] is None or r["top_score"] < f)

    floors = {f: {"recall": round(_mean([r["floors"][f] for r in scored]), 4),
                  "answerable_empty": round(_mean([nothing(r, float(f)) for r in answerable]), 4),
                  "out_of_scope_empty": round(_mean([nothing(r, float(f)) for r in out_rows]), 4)}
              for f in (scored[0]["floors"] if scored else {})}
    return {
        "floors": floors,
        "by_category": by_cat,
        "evidence_rules": {c: dict(Counter(r["rule"] for r in groups[c])) for c in CATEGORIES},
        "evidence_by_role": roles_of_evidence(convs),
        "newest_first": {system: [sum(r["newest_first"][system] is True for r in rows if "newest_first" in r),
                                  sum(r["newest_first"][system] is not None for r in rows if "newest_first" in r)]
                         for system in ("mnemoclaw", "fts5")},
        "text_rule_agreement": text_rule_agreement(convs),
        "named_rule_agreement": named_rule_agreement(convs),
        "out_of_scope": {"queries": len(out_rows), "empty": round(_mean([r["empty"] for r in out_rows]), 4),
                         "weak": round(_mean([r["weak"] for r in out_rows]), 4),
                         "fts5_empty": round(_mean([r["fts5_empty"] for r in out_rows]), 4),
                         "empty_by_category": {c: round(_mean([r["empty"] for r in out_rows if r["category"] == c]), 4)
                                               for c in CATEGORIES if any(r["category"] == c for r in out_rows)}},
        "top_score": {"median": tops[len(tops) // 2] if tops else None,
                      "share_at_least_0.999": round(_mean([float(t >= 0.999) for t in tops]), 4)},
    }


def table(result: dict[str, Any]) -> str:
    k = f"recall@{TOP}"
    lines = [f"| category | n | mnemoclaw recall | fts5 recall | diff [95 % CI] | mnemoclaw {k} | fts5 {k} | "
             f"diff [95 % CI] | oracle {k} | all found m / f | turns m / f | chars m / f |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for cat, e in result["by_category"].items():
        if cat == NO_EVIDENCE or not e["with_evidence"]:
            continue
        m, f, o = e["mnemoclaw"], e["fts5"], e["oracle"]
        dr, d5 = e["diff_recall"], e[f"diff_{k}"]
        lines.append(
            f"| {'**all**' if cat == 'all' else cat} | {e['with_evidence']} | {m['recall']:.3f} | {f['recall']:.3f} | "
            f"{dr['mean']:+.3f} [{dr['ci95'][0]:+.3f}, {dr['ci95'][1]:+.3f}] | {m[k]:.3f} | {f[k]:.3f} | "
            f"{d5['mean']:+.3f} [{d5['ci95'][0]:+.3f}, {d5['ci95'][1]:+.3f}] | {o[k]:.3f} | "
            f"{m['all_found']:.3f} / {f['all_found']:.3f} | {m['turns']:.1f} / {f['turns']:.1f} | "
            f"{m['chars']:.0f} / {f['chars']:.0f} |")
    a = result["by_category"].get(NO_EVIDENCE)
    oos = result["out_of_scope"]
    lines += ["", "| asked where nothing answers | n | mnemoclaw: answered with nothing | fts5 |", "|---|---|---|---|"]
    if a and a["questions"]:
        lines.append(f"| abstention questions | {a['questions']} | {a['answered_empty']['mnemoclaw']:.3f} | "
                     f"{a['answered_empty']['fts5']:.3f} |")
    lines.append(f"| other conversations' questions | {oos['queries']} | {oos['empty']:.3f} | {oos['fts5_empty']:.3f} |")
    if result.get("floors"):
        lines += ["", "| a higher floor over the same results | recall | answerable answered with nothing | "
                  "other conversations' questions answered with nothing |", "|---|---|---|---|"]
        for f, e in result["floors"].items():
            lines.append(f"| {f} | {e['recall']:.3f} | {e['answerable_empty']:.3f} | {e['out_of_scope_empty']:.3f} |")
    return "\n".join(lines)


def compare(first: dict[str, Any], second: dict[str, Any], seed: int, system: str = "mnemoclaw") -> str:
    """Two runs' ``system`` rows question by question (the same questions in the same order): the
    second run's recall within budget and recall@5 less the first's, with bootstrap 95 % CIs."""
    a = [r for r in first["questions"] if system in r]
    b = [r for r in second["questions"] if system in r]
    if [(r["conv"], r["category"]) for r in a] != [(r["conv"], r["category"]) for r in b]:
        raise SystemExit("the two runs did not ask the same questions")
    k = f"recall@{TOP}"
    lines = [f"| category | n | first recall | second recall | diff [95 % CI] | first {k} | second {k} | "
             "diff [95 % CI] | chars first / second |", "|---|---|---|---|---|---|---|---|---|"]
    for cat in (*CATEGORIES, "all"):
        pairs = [(x, y) for x, y in zip(a, b, strict=True) if cat in ("all", x["category"])]
        if not pairs:
            continue
        cells = []
        for m in ("recall", k):
            d, lo, hi = bootstrap([y[system][m] - x[system][m] for x, y in pairs], seed)
            cells += [f"{_mean([x[system][m] for x, _ in pairs]):.3f}", f"{_mean([y[system][m] for _, y in pairs]):.3f}",
                      f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]"]
        chars = f"{_mean([x[system]['chars'] for x, _ in pairs]):.0f} / {_mean([y[system]['chars'] for _, y in pairs]):.0f}"
        lines.append(f"| {'**all**' if cat == 'all' else cat} | {len(pairs)} | " + " | ".join(cells) + f" | {chars} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beam", default=DEFAULT_BEAM, help="a bare git mirror of BEAM (read at HEAD) or a checkout")
    ap.add_argument("--scale", default="100K", help="only 100K is read; any other is refused")
    ap.add_argument("--work-dir", default="bench-results/work/beam")
    ap.add_argument("--out", default="bench-results/beam.json")
    ap.add_argument("--conversations", default=None, help="comma-separated conversation numbers (default: all)")
    ap.add_argument("--budget", type=int, default=BUDGET)
    ap.add_argument("--max-results", type=int, default=30)
    ap.add_argument("--others", type=int, default=40, help="other conversations' questions asked of each workspace")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--layout", default="daily", choices=LAYOUTS)
    ap.add_argument("--mode", default=None, choices=("keyword", "vector", "hybrid"),
                    help="how mnemoclaw searches (default: the configured mode, hybrid)")
    ap.add_argument("--vector-weight", type=float, default=None,
                    help="compare: a fixed hybrid vector weight (text weight 1 - it) instead of the adaptive one")
    ap.add_argument("--floors", default="0.1,0.2,0.3,0.5,0.7,0.9,0.95,0.99,0.999",
                    help="higher score floors, each applied to the same results: recall and out-of-scope "
                         "questions answered with nothing at each (both kinds of error)")
    ap.add_argument("--compare", nargs=2, metavar=("FIRST.json", "SECOND.json"), default=None,
                    help="no run: two runs' results question by question (the second less the first)")
    ap.add_argument("--system", default="mnemoclaw", choices=SYSTEMS, help="the row --compare reads")
    ap.add_argument("--transform", default=None, choices=sorted(set(TRANSFORMS) - OUT_OF_SCOPE),
                    help="ask each question another way where the transform applies (compare with the plain run)")
    ap.add_argument("--without-first-person", action="store_true",
                    help="compare: the ranking without reading a first-person question's user messages first")
    args = ap.parse_args()
    if args.compare:
        runs = []
        for path in args.compare:
            with open(path) as fh:
                runs.append(json.load(fh))
        print(compare(runs[0], runs[1], args.seed, args.system))
        return
    if args.scale not in SCALES:
        ap.error(f"scale {args.scale!r} refused: only {', '.join(SCALES)} is read (the others are kept for an "
                 "independent check)")
    result = run(args)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1)
    print(table(result))
    print(f"\nother conversations' questions answered with nothing, by their category: "
          f"{json.dumps(result['out_of_scope']['empty_by_category'])}")
    print(f"evidence rules: {json.dumps(result['evidence_rules'])}")
    print(f"evidence messages by who wrote them: {json.dumps(result['evidence_by_role'])}")
    print(f"knowledge updates with the newest and an older evidence message returned, newest first "
          f"(first, of): {json.dumps(result['newest_first'])}")
    print(f"search p50 {result['search_ms_p50']} ms; first-person rule {'on' if result['first_person_rule'] else 'off'}"
          + (f"; {result['transform']}: {result['transformed_questions']} questions asked another way"
             if result["transform"] else ""))
    print(f"text rule where ids exist too (agrees, taken): {json.dumps(result['text_rule_agreement'])}; "
          f"named references among the cited ids: {result['named_rule_agreement']}")
    print(f"top-1 score: {json.dumps(result['top_score'])}; chunks {result['chunks']}; "
          f"holding more than one message {result['chunks_crossing_messages']:.3f}; "
          f"indexing {result['index_seconds']} s; whole run {result['wall_seconds']} s")


if __name__ == "__main__":
    main()
