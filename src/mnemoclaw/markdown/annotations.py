"""Annotations written in the Markdown: ``<!-- importance: 8 -->``, ``<!-- type: preference -->``,
``<!-- expires: 2027-03-31 -->``, ``<!-- key: db-host -->``, USER.md's ``<!-- observed: 2026-09-01 |
status: active -->``, ``<!-- trigger: deploy, 上线 -->`` (phrases a message may say that call for
the entry) and ``<!-- project: repo-name -->``, and the provenance the runtime writes on its notes
(``<!-- origin: agent; session: 2026-12-04-ab12; channel: telegram; chat: direct -->``).
Pure: text in, spans out.

An annotation belongs to the entry it is written in or beside:

- on a heading's line, or on comment-only lines straight under the heading: the heading's
  whole section (to the next heading of the same or a higher level);
- on a list item's line, or on comment-only lines straight under it: that item with its
  continuation and nested lines;
- on a paragraph's line, or straight under it: the paragraph;
- on comment-only lines after a blank line: the entry that follows.

Several may share one comment, separated by ``;`` (``<!-- type: task; expires: 2027-01-31 -->``).
An inner entry's value overrides its section's. Comments naming anything else are ordinary
comments. A bad value (importance 42, 2027-02-30) is reported with its line and ignored. Inside a
fenced code block nothing is an annotation or a heading: it is code.

Provenance is the writer's: what a note's heading says of its origin and session holds for every
line under it, and an entry inside a note an agent wrote cannot annotate itself (what an agent
writes is data, ``as_data``); such an annotation is reported and ignored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date

from ..text.tokenize import content_words

NAMES = ("importance", "type", "expires", "key", "observed", "status", "trigger", "project",
         # provenance, written by the runtime on what it writes (provenance.py)
         "origin", "session", "channel", "chat",
         # where a promoted line of MEMORY.md came from (promote/run.py)
         "from")
ORIGIN_VALUES = ("owner", "agent", "untrusted", "promoted")  # imported and transcript come from where a chunk is
MAX_TRIGGERS = 20  # phrases one trigger annotation may name
# an entry whose status says it no longer holds (USER.md's "superseded in place") does not answer
RETIRED = frozenset({"superseded", "retired", "inactive", "archived", "deprecated", "obsolete"})
COMMENT = re.compile(r"<!--(.*?)-->")
_PAIR = re.compile(r"^\s*([A-Za-z]+)\s*:\s*(.*?)\s*$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(\s|$)")
_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,9}[.)])(\s|$)")
_WORD = re.compile(r"^[\w][\w./:-]*$")
_CITATION = re.compile(r"^[\w][\w./ -]*\.md#L\d+(?:-L\d+)?(?:, [\w][\w./ -]*\.md#L\d+(?:-L\d+)?)*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
PROVENANCE = frozenset({"origin", "session", "channel", "chat"})  # the writer's, on a note's heading
# origins whose notes cannot annotate their own entries
_SPOKEN_FOR = frozenset({"agent", "untrusted"})


@dataclass(frozen=True, slots=True)
class Problem:
    line: int
    message: str


@dataclass(frozen=True, slots=True)
class Span:
    """Lines ``start``..``end`` (1-based, inclusive) and the annotations that hold for them."""

    start: int
    end: int
    attrs: dict


def parse_value(name: str, raw: str) -> tuple[object | None, str | None]:
    """(value, None) or (None, why it is refused)."""
    raw = raw.strip()
    if name == "importance":
        try:
            num = float(raw)
        except ValueError:
            return None, f"importance {raw!r} is not a number from 1 to 10"
        if "." in raw and 0.0 <= num <= 1.0:  # the 0-1 scale: 0.8 -> 8
            return max(1, round(num * 10)), None
        if num != int(num) or not 1 <= num <= 10:
            return None, f"importance {raw} is not a whole number from 1 to 10 (or 0.0-1.0)"
        return int(num), None
    if name == "trigger":  # "deploy, release day, 上线": each phrase as written, lower-cased
        phrases = list(dict.fromkeys(" ".join(p.split()).lower() for p in re.split(r"[,，、]", raw) if p.strip()))
        if not phrases:
            return None, "trigger names no phrase (write <!-- trigger: a, b -->)"
        if len(phrases) > MAX_TRIGGERS:
            return None, f"trigger names {len(phrases)} phrases; at most {MAX_TRIGGERS}"
        # a phrase of stop words or one letter ("the", "a", "的") is said by nearly every message
        empty = [p for p in phrases if not content_words(p)]
        if empty:
            return None, (f"trigger phrase {empty[0]!r} names no content word (a stop word or a single letter is "
                          "said by nearly every message); write a word the entry is about")
        return phrases, None
    if name == "origin":
        word = raw.lower()
        if word not in ORIGIN_VALUES:
            return None, f"origin {raw!r} is not one of {', '.join(ORIGIN_VALUES)}"
        return word, None
    if name == "from":  # citations: memory/2026-11-03.md#L4 or #L4-L6, a merged line's comma-separated
        if not _CITATION.match(raw):
            return None, f"from {raw!r} is not a citation (memory/YYYY-MM-DD.md#L4 or #L4-L6)"
        return raw, None
    if name == "session":  # an id as written: case kept
        if not _WORD.match(raw):
            return None, f"session {raw!r} is not a session id (letters, digits, '-', '_', '.', ':')"
        return raw, None
    if name in ("expires", "observed"):
        try:
            return date.fromisoformat(raw).isoformat(), None
        except ValueError:
            return None, f"{name} {raw!r} is not a date (YYYY-MM-DD)"
    word = re.sub(r"\s+", "-", raw.lower())
    if not word or not _WORD.match(word):
        return None, f"{name} {raw!r} is not a word (letters, digits, '-', '_', '.', '/')"
    return word, None


def comment_attrs(line: str, lineno: int, problems: list[Problem]) -> dict:
    """The annotations written on one line (later ones win)."""
    attrs: dict = {}
    for body in COMMENT.findall(line):
        for part in re.split(r"[;|]", body):  # "a: 1; b: 2", or USER.md's "observed: … | status: …"
            m = _PAIR.match(part)
            if not m or m.group(1).lower() not in NAMES:
                continue
            name = m.group(1).lower()
            value, why = parse_value(name, m.group(2))
            if why:
                problems.append(Problem(lineno, f"{why}; the annotation is ignored"))
            else:
                attrs[name] = value
    return attrs


def retired(attrs: dict) -> bool:
    """The entry's ``status`` says it no longer holds."""
    return attrs.get("status") in RETIRED


def strip_comments(line: str) -> str:
    return COMMENT.sub("", line)


def searchable(text: str, meta: str) -> str:
    """A chunk's text as keyword search indexes it: each annotation comment replaced by the
    words of its key ("db-host" -> "db host"), the name of the thing the entry sets, and its
    trigger phrases, so "what is the db host now" finds it, while "type" or "importance" in a
    question does not match every annotated entry."""
    if not meta:
        return text

    def words(m: re.Match[str]) -> str:
        pairs = [p for p in map(_PAIR.match, re.split(r"[;|]", m.group(1))) if p]
        keys = [p.group(2) for p in pairs if p.group(1).lower() == "key"]
        keys += [t for p in pairs if p.group(1).lower() == "trigger" for t in re.split(r"[,，、]", p.group(2))]
        return " " + " ".join(re.sub(r"[-_./:]+", " ", k) for k in keys) + " "

    return COMMENT.sub(words, text)


def _comment_only(line: str) -> bool:
    return bool(COMMENT.search(line)) and not strip_comments(line).strip()


class Entries:
    """The entries of a file's lines: sections, list items, paragraphs."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        self.n = len(lines)
        self.code = [False, *in_code(lines)]  # inside a fenced code block (fences included), 1-based
        self.level = [0] * (self.n + 1)  # heading level of each line (1-based), 0 for none
        for i, line in enumerate(lines, 1):
            m = None if self.code[i] else _HEADING.match(line)
            self.level[i] = len(m.group(1)) if m else 0

    def section_end(self, i: int) -> int:
        j = i + 1
        while j <= self.n and not (self.level[j] and self.level[j] <= self.level[i]):
            j += 1
        return j - 1

    def block(self, i: int) -> tuple[int, int, int]:
        """The entry holding line i: (start, end, depth); a heading's is its whole section."""
        lines, level, n = self.lines, self.level, self.n
        if level[i]:
            return i, self.section_end(i), level[i]
        # a list item: back to its item line, forward over continuation and deeper lines
        j = i
        while j >= 1 and lines[j - 1].strip() and not level[j] and not _ITEM.match(lines[j - 1]):
            j -= 1
        item = _ITEM.match(lines[j - 1]) if j >= 1 and lines[j - 1].strip() else None
        if item:
            indent = len(item.group(1))
            k = j + 1
            while k <= n and lines[k - 1].strip() and not level[k]:
                m = _ITEM.match(lines[k - 1])
                if m and len(m.group(1)) <= indent:
                    break
                k += 1
            return j, k - 1, 7 + indent
        # a paragraph: the run of non-blank lines that are neither headings nor items
        s = i
        while s > 1 and lines[s - 2].strip() and not level[s - 1] and not _ITEM.match(lines[s - 2]):
            s -= 1
        e = i
        while e < n and lines[e].strip() and not level[e + 1] and not _ITEM.match(lines[e]):
            e += 1
        return s, e, 100


def annotated_entries(text: str) -> tuple[list[tuple[int, int, dict, int]], list[Problem]]:
    """Each annotation with the lines it covers: (start, end, attrs, depth), where depth orders
    outer (sections) before inner (items, paragraphs); and the annotations refused."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    n = len(lines)
    problems: list[Problem] = []
    scoped: list[tuple[int, int, dict, int]] = []
    if "<!--" not in text:
        return scoped, problems
    doc = Entries(lines)

    for i, line in enumerate(lines, 1):
        if "<!--" not in line or doc.code[i]:
            continue
        attrs = comment_attrs(line, i, problems)
        if not attrs:
            continue
        target = i
        if _comment_only(line):
            # straight under an entry: that entry; after a blank line: the next one
            above = i - 1
            while above >= 1 and _comment_only(lines[above - 1]):
                above -= 1
            if above >= 1 and lines[above - 1].strip():
                target = above
                below = i + 1
                while below <= n and _comment_only(lines[below - 1]):
                    below += 1
                if not doc.level[above] and below <= n and _ITEM.match(lines[below - 1]) and not doc.code[below]:
                    # written before the item below, as many do; it holds for the entry above
                    first = strip_comments(lines[below - 1]).rstrip()
                    first = first if len(first) <= 60 else first[:59] + "…"
                    problems.append(Problem(i, f"this annotation holds for the entry above it (line {above}), not "
                                               f"the list item below it (line {below}); if it is meant for that "
                                               f"item, write it on the item's line: {first} "
                                               f"{COMMENT.search(line).group(0)}"))  # type: ignore[union-attr]
            else:
                below = i + 1
                while below <= n and (_comment_only(lines[below - 1]) or not lines[below - 1].strip()):
                    below += 1
                if below > n:
                    problems.append(Problem(i, "an annotation with no entry after it; ignored"))
                    continue
                target = below
        s, e, depth = doc.block(target)
        scoped.append((min(s, i), max(e, i), attrs, depth))

    return scoped, problems


def annotate(text: str) -> tuple[list[Span], list[Problem]]:
    """The file's lines as consecutive spans of equal annotations (one span of ``{}`` for a
    file with none), and the annotations refused."""
    n = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
    scoped, problems = annotated_entries(text)
    if not scoped:
        return [Span(1, n, {})], problems
    per_line: list[dict] = [{} for _ in range(n + 1)]
    spoken_for: set[int] = set()  # entries inside an agent's note that annotate themselves
    starts: set[int] = set()
    for s, e, attrs, _ in sorted(scoped, key=lambda t: t[3]):
        if per_line[s].get("origin") in _SPOKEN_FOR:  # the note's writer annotated it: nothing inside may
            spoken_for.add(s)
            continue
        starts.add(s)
        for j in range(s, e + 1):
            outer = per_line[j]
            own = {k: v for k, v in attrs.items() if k not in PROVENANCE} if "origin" in outer else attrs
            per_line[j] = {**outer, **own}
    for s in sorted(spoken_for):
        problems.append(Problem(s, "an annotation inside a note an agent wrote is ignored: only a note's writer "
                                   "annotates it (on its heading); move the entry under a heading of your own"))
    # each annotated entry is a span of its own, even beside one annotated alike (two values of one key)
    spans: list[Span] = []
    for j in range(1, n + 1):
        if spans and spans[-1].attrs == per_line[j] and (j not in starts or not per_line[j]):
            spans[-1] = Span(spans[-1].start, j, spans[-1].attrs)
        else:
            spans.append(Span(j, j, per_line[j]))
    return spans, problems


def in_code(lines: list[str]) -> list[bool]:
    """Whether each line is inside a fenced code block (its fences included); a fence left open
    runs to the end, as Markdown reads it."""
    return _fences(lines)[0]


def _fences(lines: list[str]) -> tuple[list[bool], str]:
    """``in_code``, and the fence left open at the end ("" for none)."""
    out: list[bool] = []
    fence = ""
    for line in lines:
        m = _FENCE.match(line)
        if not fence:
            # a backtick fence's info string holds no backtick (```a`b is inline code, not a fence)
            if m and not (m.group(1)[0] == "`" and "`" in line[m.end():]):
                fence = m.group(1)
            out.append(bool(fence))
            continue
        out.append(True)
        if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end():].strip():
            fence = ""
    return out, fence


def as_data(text: str) -> tuple[str, int]:
    """Text that came through a tool (an agent's note, a transcript's message, an import), made
    data before it is written under a heading the writer annotated: each ``<!--`` is written
    ``&lt;!--`` (shown as typed, never read as an annotation, so only the writer says where the
    note came from and what it weighs), each heading outside code goes two levels deeper (the note
    stays under the writer's heading instead of starting one of its own) and a code block left
    open is closed. Returns the text and how many comments were neutralised."""
    comments = text.count("<!--")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    code, left_open = _fences(lines)
    for i, line in enumerate(lines):
        m = None if code[i] else _HEADING.match(line)
        if m:
            lines[i] = line[: m.start(1)] + "#" * min(6, len(m.group(1)) + 2) + line[m.end(1):]
    if left_open:
        lines.append(left_open)
    return neutralise_comments("\n".join(lines)), comments


def neutralise_comments(text: str) -> str:
    """``text`` with each ``<!--`` written ``&lt;!--``: shown as typed, read as no annotation."""
    return text.replace("<!--", "&lt;!--")


_ISO_DAY = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")


def heading_date(text: str) -> str | None:
    """The date (YYYY-MM-DD) a chunk's first line carries when it is a heading (``## 2026-11-20
    14:05``, the stamp of a note appended to MEMORY.md), else None."""
    first = text.lstrip("\n").split("\n", 1)[0]
    m = _HEADING.match(first) and _ISO_DAY.search(strip_comments(first))
    if not m:
        return None
    try:
        return date.fromisoformat(m.group(1)).isoformat()
    except ValueError:
        return None


def encode(attrs: dict) -> str:
    """How a chunk's annotations are stored ('' for none)."""
    return json.dumps(attrs, sort_keys=True, ensure_ascii=False, separators=(",", ":")) if attrs else ""


def decode(meta: str) -> dict:
    if not meta:
        return {}
    try:
        value = json.loads(meta)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def render(attrs: dict) -> str:
    """``attrs`` written back as the comment a person would type (for ``memory_append``)."""
    parts = [f"{name}: {', '.join(map(str, v)) if isinstance(v, list) else v}"
             for name in NAMES if (v := attrs.get(name)) not in (None, "", [])]
    return f"<!-- {'; '.join(parts)} -->" if parts else ""
