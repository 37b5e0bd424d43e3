"""What a recall names and what may be promoted: pure, text in and data out.

An *entry* is the unit of a daily log a result is recalled as: the list item (with its indented
continuation lines) or the paragraph that holds the result's best line. Its identity is its path
and its text (``entry_id``), so it survives the entry moving lines; its lines are also known by
the keyed hashes a forget records (``notes/tombstones.py``), so a forget reaches its events.

``junk`` is the guard rail every candidate passes before it may enter MEMORY.md: no commands,
tool output, code, metadata or scores, bare headings, small talk, secrets, or fragments.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..markdown.annotations import COMMENT, in_code
from ..text.dates import note_date
from ..text.secrets import redactions
from ..text.smalltalk import is_small_talk, question_of
from ..text.tokenize import content_words

# a daily log: memory/YYYY-MM-DD.md (or a dated file beside it, memory/2026-11-03-standup.md)
DAILY = re.compile(r"(?:^|/)memory/(\d{4}-\d{2}-\d{2})[^/]*\.md$")
IMPORTS_PREFIX = "memory/imports/"
HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])[ \t]+")
_QUOTE = re.compile(r"^\s*>\s?")
_BLANK = re.compile(r"^\s*$")

# a line a shell reads: a prompt, or a command word followed by arguments
_PROMPT = re.compile(r"^\s*(?:[$#>]|PS[^>]*>|\w+@[\w.-]+[:~][^$#]*[$#])\s+\S")
_COMMANDS = ("cd ls cat rm mv cp mkdir rmdir chmod chown sudo apt apt-get yum brew pip pip3 npm npx pnpm yarn "
             "git docker kubectl curl wget python python3 node make cargo go ssh scp tar unzip grep sed awk find "
             "export source echo systemctl service kill pkill psql sqlite3 mnemoclaw openclaw uv poetry").split()
_COMMAND = re.compile(r"^\s*(?:[-*+]\s+)?`?(?:" + "|".join(map(re.escape, _COMMANDS))
                      + r")(?:\s+-{1,2}[\w-]+|\s+[\w./~:@=-]+){1,}`?\s*$")
# a command quoted inside prose: `psql -h db -c "..."` (a flag, or two arguments or more); `make test` is a name
_INLINE_COMMAND = re.compile(r"`(?:" + "|".join(map(re.escape, _COMMANDS)) + r")(?:\s+[^`\s]+){0,}?\s+-{1,2}\w[^`]*`|"
                             r"`(?:" + "|".join(map(re.escape, _COMMANDS)) + r")(?:\s+[^`\s]+){2,}`")
_PIPELINE = re.compile(r"\S\s*(?:&&|\|\||\|)\s*(?:" + "|".join(map(re.escape, _COMMANDS)) + r")\b")
# what a tool or a program prints
_TOOL_OUTPUT = re.compile(
    r"^\s*(?:Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|\w*(?:Error|Exception):\s|"
    r"exit (?:code|status)\s*[:=]?\s*\d|\[(?:tool|tool_result|tool_use|stdout|stderr)\b|<(?:tool|function)_?\w*>|"
    r"(?:stdout|stderr|returncode|tool_call_id)\s*[:=])", re.I)
_JSONISH = re.compile(r"^\s*[\[{].*[\]}]\s*,?\s*$")
# scores and metadata: what a ranking or a program says about an entry, not the entry
_METADATA = re.compile(
    r"\[(?:score|recall|relevance|confidence|weight|count|rank|id)\s*[=:][^\]]*\]|"
    r"\b(?:score|recalls?|relevance|confidence|similarity)\s*[=:]\s*\d|^\s*---\s*$|"
    r"^\s*[\w.-]+\s*[=:]\s*\S+(?:\s*[,;]\s*[\w.-]+\s*[=:]\s*\S+){2,}\s*$", re.I)
_FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})")
# an entry shorter than this many content words says too little alone
MIN_WORDS = 3


@dataclass
class Entry:
    """What the store knows of one entry's recalls."""

    id: str
    agent: str
    path: str
    source: str
    start_line: int
    end_line: int
    recalls: int
    score_sum: float
    score_max: float
    first_at: float
    last_at: float
    queries: list[str] = field(default_factory=list)
    days: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    words: dict[str, int] = field(default_factory=dict)

    @property
    def mean_score(self) -> float:
        return self.score_sum / self.recalls if self.recalls else 0.0


def recallable(path: str, source: str) -> bool:
    """Whether a result at ``path`` is what recall events count: a daily log's entry or a
    transcript's message (MEMORY.md is where promotion leads; an import is someone else's)."""
    if source == "sessions":
        return True
    return DAILY.search(path) is not None and not path.startswith(IMPORTS_PREFIX)


def day_of(path: str) -> str | None:
    """A daily log's day (ISO), as every reader of a note's date reads it (text/dates.py)."""
    day = note_date(path) if DAILY.search(path) else None
    return day.isoformat() if day else None


def entry_at(lines: Sequence[str], index: int, code: Sequence[bool] | None = None) -> tuple[int, int]:
    """The entry holding ``lines[index]`` (0-based): (start, end exclusive). A list item runs to
    the next item at its depth or shallower, a blank line or a heading; a paragraph between blank
    lines and headings; a heading is an entry of its own. A fenced code block is an entry of its
    own, fences included, and ends the paragraph before it, as Markdown reads it: "like this:"
    and the code under it are two entries, not one. ``code``: which lines are in a block
    (``in_code``), read from ``lines`` when not given (pass it when asking of many lines of one
    file)."""
    n = len(lines)
    if not 0 <= index < n:
        raise IndexError(index)
    if code is None:
        code = in_code(list(lines))
    if code[index]:  # the code lines around it (two blocks with nothing between them read as one)
        start, end = index, index + 1
        while start > 0 and code[start - 1]:
            start -= 1
        while end < n and code[end]:
            end += 1
        return start, end
    if HEADING.match(lines[index]) or _BLANK.match(lines[index]):
        return index, index + 1
    # the item this line belongs to: the nearest item marker above it, at no deeper indentation
    start = index
    while start > 0 and not _ITEM.match(lines[start]) and not _BLANK.match(lines[start - 1]) \
            and not HEADING.match(lines[start - 1]) and not code[start - 1]:
        start -= 1
    item = _ITEM.match(lines[start])
    depth = len(item.group(1)) if item else -1
    end = start + 1
    while end < n and not _BLANK.match(lines[end]) and not HEADING.match(lines[end]) and not code[end]:
        nxt = _ITEM.match(lines[end])
        if nxt and (item is None or len(nxt.group(1)) <= depth):
            break
        end += 1
    return start, end


def normalized(text: str) -> str:
    """An entry's text as its identity reads it: comments out, whitespace collapsed."""
    return " ".join(COMMENT.sub(" ", text).split())


def entry_id(path: str, text: str) -> str:
    """An entry's identity: its file and its words, not where they stand."""
    return hashlib.sha256(f"{path}\0{normalized(text)}".encode()).hexdigest()[:24]


def body(text: str) -> str:
    """An entry as a line of MEMORY.md: its list marker and comments taken off, its lines joined."""
    out = []
    for i, line in enumerate(text.split("\n")):
        line = COMMENT.sub("", line)
        if i == 0:
            line = _ITEM.sub("", line, count=1)
        line = _QUOTE.sub("", line).strip()
        if line:
            out.append(line)
    return " ".join(out)


def junk(text: str) -> str | None:
    """Why ``text`` (an entry as a daily log holds it) may not enter MEMORY.md, or None."""
    lines = [line for line in text.split("\n") if line.strip()]
    if not lines:
        return "empty"
    if any(_FENCE.match(line) for line in lines) or any(in_code(lines)):
        return "a code block"
    if all(HEADING.match(line) for line in lines):
        return "a bare heading"
    plain = body(text)
    if redactions(text):
        return "a secret"
    for line in lines:
        line = _QUOTE.sub("", _ITEM.sub("", line, count=1))
        if _TOOL_OUTPUT.search(line):
            return "tool output"
        if _PROMPT.match(line) or _COMMAND.match(line) or _PIPELINE.search(line) or _INLINE_COMMAND.search(line):
            return "a shell command"
        if _METADATA.search(line):
            return "metadata or a score"
    if _JSONISH.match(plain) or _letters_share(plain) < 0.5:
        return "tool output"
    rest = question_of(plain)
    if is_small_talk(plain) or (rest != plain and len(content_words(rest)) < MIN_WORDS and not _cjk_enough(rest)):
        return "small talk"  # a greeting, thanks, the weather, with nothing said beside it
    if len(content_words(plain)) < MIN_WORDS and not _cjk_enough(plain):
        return "too short to stand alone"
    if all(_asks(s) for s in _SENTENCE.split(plain.strip()) if s.strip()):
        return "a question, not something known"
    return None


# a sentence ends at . ! ? (or their CJK forms) before a space or the end; one that asks ends in ? or
# ？ and, in words of Latin letters, opens as a question does (after a "hmm," or an "ok cool,"): "I'm
# 46 and earn $85,000, can you help me plan a will?" states what it asks about, and stays
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")
_ASKED = re.compile(r"[?？][\s\)\]\"'”]*$")
_SAID_BY = re.compile(r"^\*\*[^*\n]{1,60}\*\*(?:\s*\([^)\n]{0,60}\))?\s*[:\uff1a]\s*")  # "**Caroline** (D1:3): "
_OPENS_ASKING = re.compile(
    r"^(?:(?:hmm+|ok(?:ay)?|so|well|oh|and|but|also|cool|hey|um+|uh+|btw|by the way|anyway)\b[\s,!.]*)*"
    r"(?:how|what|what's|which|who|whom|whose|when|where|why|do|does|did|is|are|was|were|am|can|could|should|"
    r"would|will|shall|may|might|have|has|had|isn't|aren't|don't|doesn't|didn't|won't|can't)\b", re.I)


def _asks(sentence: str) -> bool:
    """Whether a sentence only asks: it ends in a question mark and, unless written in CJK, opens
    as a question does."""
    sentence = _SAID_BY.sub("", sentence.strip())
    return bool(_ASKED.search(sentence)) and (_cjk_enough(sentence) or bool(_OPENS_ASKING.match(sentence)))


def _letters_share(text: str) -> float:
    """The share of the non-space characters that are letters (of any script) or digits."""
    chars = [c for c in text if not c.isspace()]
    return sum(c.isalnum() for c in chars) / len(chars) if chars else 0.0


def _cjk_enough(text: str) -> bool:
    """A Chinese entry counts characters, not words: six or more that are not function words."""
    runs = [w for w in content_words(text) if not w.isascii()]
    return sum(len(w) for w in runs) >= 6


__all__ = ["DAILY", "Entry", "MIN_WORDS", "body", "day_of", "entry_at", "entry_id", "junk", "normalized", "recallable"]
