"""Line-based Markdown chunking. Pure: text in, chunks out.

Budgets are in tokens, estimated as 4 characters a token with every CJK character a
whole token (so Chinese text does not make chunks four times too large). A chunk
never exceeds the budget; over-long lines are sliced at character boundaries that
do not split a combining sequence; the overlap carries whole trailing lines.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

from ..text.tokenize import count_cjk, is_attached
from ..types import Chunk

# part of the index fingerprint: chunks made another way are made again
CHUNKER_ID = "lines; annotated entries apart, fenced code no heading, keyed entries dated"
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
    text: str, tokens: int = DEFAULT_TOKENS, overlap: int = DEFAULT_OVERLAP
) -> list[Chunk]:
    """Chunk ``text`` into pieces of at most ``tokens`` tokens, ``overlap`` tokens of whole lines shared."""
    max_w = max(32, tokens * 4)
    overlap_w = max(0, min(overlap, tokens - 1) * 4)
    chunks: list[Chunk] = []
    current: list[tuple[int, str, int]] = []  # (line number, text, weight incl. newline)
    current_w = 0

    def flush() -> None:
        # blank lines at either end carry nothing: keep citations tight
        lo, hi = 0, len(current)
        while lo < hi and not current[lo][1].strip():
            lo += 1
        while hi > lo and not current[hi - 1][1].strip():
            hi -= 1
        if lo < hi:
            body = "\n".join(seg for _, seg, _ in current[lo:hi])
            chunks.append(Chunk(current[lo][0], current[hi - 1][0], body, text_hash(body)))

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

    for lineno, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
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
    out: list[tuple[Chunk, dict]] = []
    for span in spans:
        body = "\n".join(lines[span.start - 1 : span.end])
        if not body.strip():
            continue
        # a section's heading between annotated entries stays a chunk of its own (its line
        # numbers are the entries' citations); search never returns it (search/annotated.py)
        shift = span.start - 1
        for c in chunk_markdown(body, tokens, overlap):
            out.append((Chunk(c.start_line + shift, c.end_line + shift, c.text, c.hash), span.attrs))
    return out
