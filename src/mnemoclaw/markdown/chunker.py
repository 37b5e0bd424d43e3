"""Line-based Markdown chunking. Pure: text in, chunks out.

Budgets are in tokens, estimated as 4 characters a token with every CJK character a
whole token (so Chinese text does not make chunks four times too large). A chunk
never exceeds the budget; over-long lines are sliced at character boundaries that
do not split a combining sequence; the overlap carries whole trailing lines.

A conversation's log (each block opens with who says it: ``## User``, ``- **Name** (…):``,
``User: …``) is chunked by message: no chunk holds part of one message beside another, short
messages share chunks whole, and a long message is split between paragraphs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

from ..text.tokenize import count_cjk, is_attached
from ..types import Chunk

# part of the index fingerprint: chunks made another way are made again
CHUNKER_ID = ("lines; annotated entries apart, fenced code no heading, keyed entries dated; "
              "conversations by message, turns of 150 tokens together, longer alone, split by paragraph")
DEFAULT_TOKENS = 400
DEFAULT_OVERLAP = 80
# An ATX heading line. A chunk of nothing but these (and blank lines) says nothing on its own:
# search returns what it heads instead (search/stages.py ``headings_give_way``)
HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _weight(text: str) -> int:
    # char-equivalents: 4 of them make a token, and a CJK character is a whole token
    return len(text) + 3 * count_cjk(text)


def _slice_line(line: str, budget: int) -> Iterator[str]:
    """Split one over-long line into pieces of at most ``budget`` char-equivalents."""
    start = 0
    n = len(line)
    while start < n:
        used = 0
        end = start
        while end < n:
            w = 4 if count_cjk(line[end]) else 1
            if used + w > budget and end > start:
                break
            used += w
            end += 1
        # do not cut before a combining mark, a joiner or a variation selector
        cut = end
        while start < cut < n and is_attached(line[cut]):
            cut -= 1
        if cut == start:
            cut = end
        yield line[start:cut]
        start = cut


def chunk_markdown(
    text: str, tokens: int = DEFAULT_TOKENS, overlap: int = DEFAULT_OVERLAP, *, conversation: bool | None = None
) -> list[Chunk]:
    """Chunk ``text`` into pieces of at most ``tokens`` tokens, ``overlap`` tokens of whole lines shared.

    A conversation's log (``conversation``; None: when ``messages`` finds one) is chunked by
    message instead: see ``_by_messages``."""
    max_w = max(32, tokens * 4)
    overlap_w = max(0, min(overlap, tokens - 1) * 4)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks = messages(lines) if conversation is not False else None
    if conversation is None and blocks is not None and not is_conversation(blocks):
        blocks = None
    if blocks:
        return _by_messages(lines, blocks, max_w, overlap_w)
    return _by_lines(list(enumerate(lines, 1)), max_w, overlap_w)


def _chunk(numbered: list[tuple[int, str]]) -> Chunk | None:
    """The lines as one chunk, blank lines at either end left out (they carry nothing: citations
    stay tight); None when nothing is left."""
    lo, hi = 0, len(numbered)
    while lo < hi and not numbered[lo][1].strip():
        lo += 1
    while hi > lo and not numbered[hi - 1][1].strip():
        hi -= 1
    if lo == hi:
        return None
    body = "\n".join(seg for _, seg in numbered[lo:hi])
    return Chunk(numbered[lo][0], numbered[hi - 1][0], body, text_hash(body))


def _by_lines(numbered: list[tuple[int, str]], max_w: int, overlap_w: int) -> list[Chunk]:
    """Lines filled into chunks of at most ``max_w`` char-equivalents, an over-long line sliced,
    the last whole lines of a chunk (up to ``overlap_w``) starting the next."""
    chunks: list[Chunk] = []
    current: list[tuple[int, str, int]] = []  # (line number, text, weight incl. newline)
    current_w = 0

    def flush() -> None:
        c = _chunk([(n, seg) for n, seg, _ in current])
        if c is not None:
            chunks.append(c)

    def carry(room: int) -> None:
        nonlocal current, current_w
        limit = min(overlap_w, room)
        kept: list[tuple[int, str, int]] = []
        acc = 0
        for entry in reversed(current):
            if acc + entry[2] > limit:
                break
            kept.append(entry)
            acc += entry[2]
        kept.reverse()
        # an overlap made only of blank lines carries nothing useful
        if not any(seg.strip() for _, seg, _ in kept):
            kept, acc = [], 0
        current, current_w = kept, acc

    for lineno, line in numbered:
        w = _weight(line) + 1
        segments = [line] if w <= max_w else list(_slice_line(line, max_w - 1))
        for seg in segments:
            sw = _weight(seg) + 1
            if current and current_w + sw > max_w:
                flush()
                carry(max_w - sw)
            current.append((lineno, seg, sw))
            current_w += sw
    flush()
    return chunks

# -- conversations ------------------------------------------------------------------------------

# Who says a message, at the start of its first line (outside code): a heading naming a role
# (``## User``, ``### Assistant (10:32)``), a bold name with a colon (``- **Caroline** (D1:2):``,
# ``**user**:``, ``**Assistant:**``), or a role with a colon (``User: …``, how a session's
# transcript is rendered: sessions/transcript.py). A heading naming anyone else is a topic, not a
# speaker; a plain ``Name:`` is too often a field (``Date: …``) to be one.
_ROLES = r"(?:user|assistant|human|ai|bot|model|agent|system|me)"
# the roles among them that are the person an agent works for: the rest are the agent's side
USER_ROLES = frozenset({"user", "human", "me"})
ROLES = USER_ROLES | frozenset({"assistant", "ai", "bot", "model", "agent", "system"})
_SPEAKER_HEADING = re.compile(
    r" {0,3}(#{1,6})[ \t]+\**(" + _ROLES + r")\**(?:[ \t]*[(\[][^)\]\n]{0,60}[)\]]|[ \t]+[-\u2013\u2014·|][^\n]{0,60}"
    r"|[ \t]+\d[\d:.\-/ T]{0,30})?[ \t]*:?[ \t]*#*[ \t]*$", re.I)
_SPEAKER_BOLD = re.compile(
    r"[ \t]{0,3}(?:[-*+][ \t]+)?\*\*([^*\n]{1,60}?)(?:[:\uff1a]\*\*|\*\*(?:[ \t]*\([^)\n]{0,60}\))?[ \t]*[:\uff1a])")
_SPEAKER_ROLE = re.compile(
    r"[ \t]{0,3}(?:[-*+][ \t]+)?(" + _ROLES + r")(?:[ \t]*\([^)\n]{0,60}\))?[ \t]*[:\uff1a][ \t]", re.I)
_ROLE_WORDS = re.compile(_ROLES, re.I)
_MAYBE = re.compile(r"[ \t]{0,3}(?:#|(?:[-*+][ \t]+)?(?:\*\*|" + _ROLES + r"\b))", re.I)
# Messages this short (char-equivalents, 150 tokens: a chat turn) share chunks with their
# neighbours, up to the chunk size; a longer one is a chunk of its own. At 100 tokens LoCoMo's
# longest turns (400-600 characters) stood alone and its workspace recall@5 fell 0.006; BEAM's
# recall was the same at 100 and 150 and 0.007 lower at 400, where a question and a short reply
# share a chunk (docs/quality.md, "Long conversations")
SHORT_MESSAGE = 600


def speaker(line: str) -> tuple[str, int] | None:
    """Who says the message ``line`` opens (lowercased) and its heading level (0 for a bold or
    a plain name); None when ``line`` opens no message."""
    m = _SPEAKER_HEADING.match(line)
    if m:
        return m.group(2).lower(), len(m.group(1))
    m = _SPEAKER_BOLD.match(line) or _SPEAKER_ROLE.match(line)
    if m:
        name = " ".join(m.group(1).split()).lower()
        # a name of three words at most and no digits: "**Task 1:**" labels a list item
        return (name, 0) if name and len(name.split()) <= 3 and not any(c.isdigit() for c in name) else None
    return None


def speakers(lines: list[str]) -> list[tuple[int, str, int]]:
    """The lines (0-based) outside code that open a message: (line, who, heading level). Where
    some headings name speakers, only they do: a bold label inside a reply (``**Note:**``) is
    the reply's."""
    from .annotations import in_code  # the one reading of fences

    # most lines of most chunks open with none of what a speaker opens with: a search asks this
    # of ten chunks, so the regular expressions and the fences are read only where one might
    found = [(i, *who) for i, line in enumerate(lines) if _MAYBE.match(line) and (who := speaker(line)) is not None]
    if found and any(mark in line for line in lines for mark in ("```", "~~~")):
        code = in_code(lines)
        found = [f for f in found if not code[f[0]]]
    if any(level for _, _, level in found):
        found = [f for f in found if f[2]]
    return found


def messages(lines: list[str]) -> list[tuple[int, int, str | None]] | None:
    """The lines as consecutive blocks (0-based start, end exclusive, who says it): whatever
    comes before the first message, then each message from the line saying who says it to the
    next such line. A heading outside code that names no one ends a message too, unless it is
    deeper than the headings naming speakers (a reply's own sections). None when no line opens
    a message."""
    from .annotations import in_code

    found = speakers(lines)
    if not found:
        return None
    code = in_code(lines)
    deepest = min((lv for _, _, lv in found if lv), default=6)
    opens: dict[int, str | None] = {i: who for i, who, _ in found}
    for i, line in enumerate(lines):
        if i not in opens and not code[i] and (h := re.match(r" {0,3}(#{1,6})(?:[ \t]|$)", line)):
            if len(h.group(1)) <= deepest:
                opens[i] = None
    starts = sorted({0, *opens})
    return [(a, b, opens.get(a)) for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]


def is_conversation(blocks: list[tuple[int, int, str | None]]) -> bool:
    """Whether the blocks are a conversation: two speakers or more, taking turns at least twice
    (``A, B, A``), or two roles (a user and an assistant) speaking at least once each. One bold
    label (``**Note**:``) or two are a note's, not a conversation."""
    said = [who for _, _, who in blocks if who is not None]
    names = set(said)
    if len(names) < 2:
        return False
    turns = sum(1 for a, b in zip(said, said[1:], strict=False) if a != b)
    return turns >= 2 or all(_ROLE_WORDS.fullmatch(n) for n in names)


def _paragraphs(lines: list[str], a: int, b: int) -> list[tuple[int, int]]:
    """Lines ``a``..``b`` (0-based, end exclusive) as paragraphs: runs of lines between blank
    lines outside code, a fenced block whole with the lines around it (blank lines included)."""
    from .annotations import in_code

    code = in_code(lines[a:b])
    out: list[tuple[int, int]] = []
    start = None
    for i in range(a, b):
        blank = not lines[i].strip() and not code[i - a]
        if blank and start is not None:
            out.append((start, i))
            start = None
        elif not blank and start is None:
            start = i
    if start is not None:
        out.append((start, b))
    return out


def _block_weight(lines: list[str], a: int, b: int) -> int:
    return sum(_weight(line) + 1 for line in lines[a:b])


def _by_messages(lines: list[str], blocks: list[tuple[int, int, str | None]], max_w: int,
                 overlap_w: int) -> list[Chunk]:
    """A conversation chunked so that no chunk holds part of one message beside another: short
    messages (``SHORT_MESSAGE``) fill chunks together, whole, the last whole ones of a chunk (up to
    ``overlap_w``) starting the next, as lines do; a longer message is a chunk of its own, and one
    over the chunk size is split between paragraphs (a code block whole where it fits; a paragraph
    over the chunk size by lines), the last whole paragraphs of a piece (up to ``overlap_w``)
    starting the next."""
    out: list[Chunk] = []
    group: list[tuple[int, int, int]] = []  # whole short messages: (start, end, weight)
    group_w = 0

    def emit(spans: list[tuple[int, int, int]]) -> None:
        if spans:
            c = _chunk([(i + 1, lines[i]) for i in range(spans[0][0], spans[-1][1])])
            if c is not None:
                out.append(c)

    def fill(units: list[tuple[int, int, int]], w: int) -> None:
        """Add ``units`` (a message, or a paragraph of one) to the open chunk, closing it first
        when they do not fit; the closed chunk's last whole units up to ``overlap_w`` open the next."""
        nonlocal group, group_w
        if group and group_w + w > max_w:
            emit(group)
            kept: list[tuple[int, int, int]] = []
            acc = 0
            for u in reversed(group):
                if acc + u[2] > min(overlap_w, max_w - w):
                    break
                kept.append(u)
                acc += u[2]
            kept.reverse()
            group, group_w = kept, acc
        group.extend(units)
        group_w += w

    def close() -> None:
        nonlocal group, group_w
        emit(group)
        group, group_w = [], 0

    for a, b, _ in blocks:
        w = _block_weight(lines, a, b)
        if w <= min(SHORT_MESSAGE, max_w):
            fill([(a, b, w)], w)
            continue
        close()
        if w <= max_w:
            emit([(a, b, w)])
            continue
        for pa, pb in _paragraphs(lines, a, b):
            # a paragraph carries the blank lines before it, so pieces join as the message reads
            pa0 = group[-1][1] if group else pa
            pw = _block_weight(lines, pa0, pb)
            if pw <= max_w:
                fill([(pa0, pb, pw)], pw)
                continue
            close()
            out.extend(_by_lines([(i + 1, lines[i]) for i in range(pa, pb)], max_w, overlap_w))
        close()
    close()
    return out


def chunk_spans(
    text: str, spans: list, tokens: int = DEFAULT_TOKENS, overlap: int = DEFAULT_OVERLAP
) -> list[tuple[Chunk, dict]]:
    """Chunk each span (markdown/annotations.py: lines with the same annotations) on its own,
    so a chunk never mixes entries annotated differently; each chunk comes with its span's
    annotations. One span (a file with no annotations) chunks exactly as ``chunk_markdown``."""
    if len(spans) <= 1:
        attrs = spans[0].attrs if spans else {}
        return [(c, attrs) for c in chunk_markdown(text, tokens, overlap)]
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # whether the file is a conversation is the whole file's to say, not one entry's
    blocks = messages(lines)
    conversation = blocks is not None and is_conversation(blocks)
    out: list[tuple[Chunk, dict]] = []
    for span in spans:
        body = "\n".join(lines[span.start - 1 : span.end])
        if not body.strip():
            continue
        # a section's heading between annotated entries stays a chunk of its own (its line
        # numbers are the entries' citations); search never returns it (search/annotated.py)
        shift = span.start - 1
        for c in chunk_markdown(body, tokens, overlap, conversation=conversation):
            out.append((Chunk(c.start_line + shift, c.end_line + shift, c.text, c.hash), span.attrs))
    return out

