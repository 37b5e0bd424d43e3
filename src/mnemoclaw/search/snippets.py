"""Which lines of a chunk an agent reads: the ones that hold what matched. Pure.

A chunk is about 1 500 characters and a snippet at most 700, so a snippet cut from the
chunk's start or around its first matching word often misses the line that answers.
Lines are chosen whole, by how much of the query's IDF weight each holds (a matching
question lends its weight to the line after it, the answer), then the lines next to
them fill what room is left; they keep the order they stand in the file, with their
line numbers. A line too long is shown cut to its part that matched, who said it (a
dialogue's ``- **Caroline** (D3:5):``) kept in front: without it the words are nobody's.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..text.tokenize import analyze, has_terms, is_attached, spellings

GAP = "\n…\n"  # between lines that are not next to each other in the file
# A line that asks (ends with "?", perhaps before a bracketed note) keeps this share of its
# score and passes this share to the next line (measured on LoCoMo, docs/quality.md).
QUESTION = re.compile(r"\?\s*(\[[^\]]*\])?\s*$")
QUESTION_KEEPS = 0.6
QUESTION_PASSES = 0.6
# A line longer than this is shown shortened to the part that holds the most query weight, so
# a snippet can hold several of a long chunk's lines (a dialogue turn runs to 300 characters
# and more); snippetLines still names the whole lines. The line that matched best may run to
# BEST_LINE_MAX: the answer is most often on it, and the others, shorter, leave room for more
# of the lines around it (measured on LoCoMo, docs/quality.md "Snippets").
LINE_MAX = 100
BEST_LINE_MAX = 220
# Who speaks a dialogue line stays in front of the part of it shown: "- **Caroline** (D3:5): ",
# a saved session's "- **User**: ", a transcript's "User: ", "小明：", a bare "- (D1:3) ". A name
# is bold, or at most three words; a dialogue id or a time may follow it in brackets.
_ID = r"\([^()\n]*\d[^()\n]*\)"
SPEAKER = re.compile(
    r"[ \t]*(?:[-*+][ \t]+)?"
    r"(?:\*\*[^*\n]+?[:：]\*\*[ \t]*"  # **User:**
    rf"|(?:\*\*[^*\n]+?\*\*|__[^_\n]+?__|[^\s:：*_()#>|][^\s:：]*(?: [^\s:：]+){{0,2}}?)(?:[ \t]*{_ID})?"
    r"[ \t]*(?::[ \t]+|：[ \t]*)"
    rf"|{_ID}[ \t]+)"
)
PREFIX_MAX = 40  # a longer start of a line is not who speaks it
# How many of a speaker's characters a shortened line may hold beyond its length. 0: the speaker
# (21 characters on average in LoCoMo) counts against the line's 100 or 220, which keeps more
# evidence lines in a snippet than an allowance of 10, 20 or 40 (snippet recall@5 by text 0.855
# against 0.852, 0.848, 0.848 on the even questions; docs/quality.md "Snippets").
PREFIX_ALLOWANCE = 0
BREAK = re.compile(r"\s|[，。、；：！？]")


@dataclass(frozen=True, slots=True)
class Snippet:
    text: str
    ranges: tuple[tuple[int, int], ...]  # the file lines shown, 1-based and inclusive


def choose(text: str, start_line: int, terms: Mapping[str, float], limit: int,
           shown: Collection[int] = (), line_max: int = LINE_MAX,
           analysed: Sequence[Sequence[str]] | None = None, best_line_max: int = BEST_LINE_MAX,
           allowance: int = PREFIX_ALLOWANCE) -> Snippet:
    """At most ``limit`` characters of ``text`` (a chunk whose first line is ``start_line``).
    Lines in ``shown`` (file line numbers an earlier result's snippet holds) count as matching
    nothing, so overlapping chunks show different lines. ``analysed``: the terms of the
    chunk's lines that have any, as keyword search read them (saves analysing again). A line is
    shown shortened to ``line_max`` characters, the best one to ``best_line_max``, who speaks it
    kept in front (``allowance``: how many of the speaker's characters do not count)."""
    full = text.split("\n")
    if len(text) <= limit:
        return Snippet(text, ((start_line, start_line + len(full) - 1),))
    scores = _line_scores(full, terms, _aligned(full, analysed))
    for n in shown:
        if 0 <= n - start_line < len(full):
            scores[n - start_line] = 0.0
    order = sorted(range(len(full)), key=lambda i: (-scores[i], i))
    if not terms or scores[order[0]] == 0:
        order = list(range(len(full)))  # nothing matched by words (a vector match): the chunk's start
    else:
        order = [i for i in order if scores[i] > 0]
    lines = _Shortened(full, terms, line_max, longer=(order[0], best_line_max), allowance=allowance)
    chosen: set[int] = set()

    def size(picked: set[int]) -> int:
        return sum(len(lines[i]) for i in picked) + (len(picked) - 1) + _gaps(picked) * (len(GAP) - 1)

    def add(i: int) -> bool:
        if i in chosen or size(chosen | {i}) > limit:
            return False
        chosen.add(i)
        return True

    for i in order:  # the best lines first, whole
        if lines[i].strip():
            add(i)
    grown = True
    while grown:  # then the lines around them, the one after first, while there is room
        grown = False
        for i in sorted(chosen.copy()):
            for j in (i + 1, i - 1):
                if 0 <= j < len(lines) and add(j):
                    grown = True
    if not chosen:  # one line longer than the limit: the part around its first match
        i = order[0]
        return Snippet(_shorten(full[i], terms, limit, allowance=0), ((start_line + i, start_line + i),))
    picked = sorted(chosen)
    parts: list[str] = []
    ranges: list[list[int]] = []
    for i in picked:
        if ranges and i == ranges[-1][1] + 1:
            ranges[-1][1] = i
            parts[-1] += "\n" + lines[i]
        else:
            ranges.append([i, i])
            parts.append(lines[i])
    return Snippet(GAP.join(parts), tuple((start_line + a, start_line + b) for a, b in ranges))


Chunk = tuple[str, str, int, Mapping[str, float], Sequence[Sequence[str]] | None]


def choose_all(chunks: Iterable[Chunk], limit: int, line_max: int = LINE_MAX,
               best_line_max: int = BEST_LINE_MAX, allowance: int = PREFIX_ALLOWANCE) -> list[Snippet]:
    """Snippets for results in rank order, each (path, text, start line, terms, analysed
    lines or None); a line an earlier snippet already shows is not chosen again for its words."""
    shown: dict[str, set[int]] = {}
    out = []
    for path, text, start_line, terms, analysed in chunks:
        seen = shown.setdefault(path, set())
        snippet = choose(text, start_line, terms, limit, seen, line_max, analysed, best_line_max, allowance)
        for a, b in snippet.ranges:
            seen.update(range(a, b + 1))
        out.append(snippet)
    return out


def _aligned(lines: list[str], analysed: Sequence[Sequence[str]] | None) -> list[Sequence[str]] | None:
    """Each line's terms from ``analysed`` (which skips lines without a word), or None
    when the two do not line up."""
    if analysed is None:
        return None
    out: list[Sequence[str]] = []
    it = iter(analysed)
    for line in lines:
        if has_terms(line):
            got = next(it, None)
            if got is None:
                return None
            out.append(got)
        else:
            out.append(())
    return out if next(it, None) is None else None


def _line_scores(lines: list[str], terms: Mapping[str, float],
                 analysed: list[Sequence[str]] | None = None) -> list[float]:
    """Each line's share of the query's IDF weight; a question that matches passes most of
    its weight to the line after it, where a dialogue or a Q&A note holds the answer."""
    scores = [0.0] * len(lines)
    # a stem differs from its word at most in its last two letters (happi, stabl), and an
    # irregular form is looked for as written ("won" for win)
    needles = {w[: max(1, len(w) - 2)] if w.isascii() else w for t in terms for w in spellings(t)}
    for i, line in enumerate(lines):
        if analysed is not None:
            present = set(analysed[i])
            score = sum(w for t, w in terms.items() if t in present) if present else 0.0
        else:
            score = _line_score(line, terms, needles)
        if score and QUESTION.search(line):
            scores[i] += score * QUESTION_KEEPS
            after = next((j for j in range(i + 1, min(i + 3, len(lines))) if lines[j].strip()), None)
            if after is not None:
                scores[after] += score * QUESTION_PASSES
        else:
            scores[i] += score
    return scores


class _Shortened:
    """The chunk's lines as shown, each shortened when first looked at; ``longer``: one line
    (its index) and the length it may run to instead of ``line_max``."""

    def __init__(self, full: list[str], terms: Mapping[str, float], line_max: int,
                 longer: tuple[int, int] | None = None, allowance: int = PREFIX_ALLOWANCE):
        self.full, self.terms, self.line_max = full, terms, line_max
        self.longer, self.allowance = longer, allowance
        self.done: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self.full)

    def __getitem__(self, i: int) -> str:
        line = self.done.get(i)
        if line is None:
            most = self.longer[1] if self.longer is not None and self.longer[0] == i else self.line_max
            line = self.done[i] = _shorten(self.full[i], self.terms, most, self.allowance)
        return line


def speaker(line: str) -> str:
    """The start of ``line`` that says who speaks, as the dialogue writers put it (``- **Caroline**
    (D3:5): ``, a saved session's ``- **User**: ``, a transcript's ``User: ``, ``小明：``, a bare
    ``- (D1:3) ``), or "" when it has none."""
    found = SPEAKER.match(line)
    return found.group(0) if found and len(found.group(0)) <= PREFIX_MAX and found.end() < len(line) else ""


def _shorten(line: str, terms: Mapping[str, float], line_max: int, allowance: int = 0) -> str:
    """``line`` cut to ``line_max`` characters: the window holding the most query weight
    (the start of the line when that holds as much). Who speaks stays in front of it; up to
    ``allowance`` of its characters do not count against ``line_max``."""
    if len(line) <= line_max:
        return line
    head = speaker(line)
    room = line_max - len(head) + min(len(head), allowance)
    if room < line_max // 2:  # a length too short to hold a speaker and what was said: what was said
        head, room = "", line_max
    body = line[len(head):]
    return line if len(body) <= room else head + _window(body, terms, room)


def _window(text: str, terms: Mapping[str, float], most: int) -> str:
    """The ``most`` characters of ``text`` holding the most query weight, an ellipsis where
    the text goes on; never cut inside a character (a combining mark stays with its letter)."""
    lowered = _lower(text)
    hits = [(i, t) for t in terms for w in spellings(t) for i in _positions(lowered, w)]
    width = most - 2  # room for an ellipsis at each end

    def weight(start: int) -> float:
        return sum(terms[t] for t in {t for i, t in hits if start <= i and i + len(t) <= start + width})

    starts = [0] + [max(0, min(i - most // 4, len(text) - width)) for i, _ in hits]
    best = max(starts, key=lambda st: (weight(st), -st))
    if best == 0:
        return text[: _cut(text, most - 1)] + "…"
    space = BREAK.search(text, best, best + 15)  # start on a word, or after a Chinese comma
    begin = _cut(text, space.end() if space else best)
    end = _cut(text, best + width)
    return "…" + text[begin:end] + ("…" if end < len(text) else "")


def _cut(text: str, i: int) -> int:
    """``i``, moved back past what belongs to the character before it."""
    while 0 < i < len(text) and (is_attached(text[i]) or text[i - 1] == "\u200d"):
        i -= 1
    return i


def _lower(text: str) -> str:
    """``text`` lowercased character by character, so positions in it are positions in ``text``
    (``"İ".lower()`` is two characters)."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _positions(text: str, needle: str) -> list[int]:
    out, i = [], text.find(needle)
    while i >= 0 and needle:
        out.append(i)
        i = text.find(needle, i + 1)
    return out


def _gaps(picked: set[int]) -> int:
    ordered = sorted(picked)
    return sum(1 for a, b in zip(ordered, ordered[1:], strict=False) if b != a + 1)


def _line_score(line: str, terms: Mapping[str, float], needles: Collection[str] = ()) -> float:
    if not terms or not line.strip():
        return 0.0
    if needles and line.isascii():  # a line without a term's first letters cannot hold it
        lowered = line.lower()
        if not any(n in lowered for n in needles):
            return 0.0
    present = set(analyze(line))
    return sum(w for t, w in terms.items() if t in present)


