"""Reading the files a sync indexes and cutting them into the rows it writes: a file read as
UTF-8 (or refused with a reason a user can act on), what a tombstone fences blanked, its
annotations parsed, its chunks cut to the chunking and the provider's input limit, each keyed
entry dated, and a transcript's lines mapped back to its JSONL lines.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ..errors import StoreError
from ..markdown.annotations import Span, annotate, decode, encode, heading_date
from ..markdown.chunker import chunk_markdown, chunk_spans, text_hash
from ..markdown.provenance import imported_from
from ..notes import tombstones
from ..sessions.transcript import parse_transcript
from ..store.base import FileWrite
from ..text.tokenize import estimate_tokens
from ..types import Chunk, ChunkRow, FileRecord, IndexReport, SourceFile

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 32 * 1024 * 1024


@dataclass
class Prepared:
    """One changed file, read and cut into the rows to index."""

    file: SourceFile
    record: FileRecord
    rows: list[ChunkRow]


def _fenced_text(fences: tombstones.Fences, f: SourceFile, text: str) -> str:
    """The text to index of ``f`` with what a tombstone fences blanked (``Fences.view``, the one
    filter every reader uses). Its hash is the file's, so a file a new tombstone touches is
    indexed again."""
    return fences.view(f.path, f.source, text)[0]


def chunk_id(source: str, path: str, start: int, end: int, chash: str, model: str) -> str:
    return hashlib.sha256(f"{source}:{path}:{start}:{end}:{chash}:{model}".encode()).hexdigest()


# in a file name: what would break a citation across lines (or hide in a terminal)
CONTROL_CHARS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def read_markdown(path: str, size: int) -> str:
    """Read a memory file (or a transcript) as UTF-8 text; raise ValueError with a reason a user can act on."""
    if size > MAX_FILE_BYTES:
        raise ValueError(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    with open(path, "rb") as fh:
        data = fh.read()
    if b"\x00" in data[:8192]:
        raise ValueError("binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start}); convert it to UTF-8") from None
    return text.removeprefix("\ufeff")


def prepare(files: Iterable[SourceFile], indexed: dict[str, FileRecord], report: IndexReport, *, model: str,
            chunk_tokens: int, chunk_overlap: int, max_tokens: int | None, state_dir: str | None,
            failed: dict[str, tuple[int, int]], earlier: Callable[[str], FileWrite | None]
            ) -> Iterator[tuple[SourceFile, Prepared | None]]:
    """Each of ``files`` read and cut into rows for ``model``, or None where the index holds its
    content already (``indexed``). A file that cannot be read is reported and remembered in
    ``failed`` (path -> its mtime and size), so it does not make every search sync again;
    ``earlier`` reads what the index holds of a file (the age of its keyed entries)."""
    fences = tombstones.load(state_dir) if state_dir else tombstones.Fences()
    if fences.damaged:
        report.warnings.append((tombstones.FILE, fences.damaged))
    for f in files:
        try:
            if CONTROL_CHARS.search(f.path):  # a citation must be one line: `path#Lx-Ly`
                raise ValueError("its name holds a line break or another control character, which would "
                                 "split its citations; rename it")
            text = read_markdown(f.abspath, f.size)
        except (ValueError, OSError) as exc:
            reason = str(exc) if isinstance(exc, ValueError) else (exc.strerror or str(exc))
            report.failed.append((f.path, reason))
            # remembered, so an unreadable file does not make every search re-sync
            failed[f.path] = (f.mtime_ns, f.size)
            continue
        failed.pop(f.path, None)
        text = _fenced_text(fences, f, text)
        fhash = text_hash(text)
        old = indexed.get(f.path)
        if old is not None and old.hash == fhash and old.source == f.source:
            yield f, None
            continue
        transcript = parse_transcript(text) if f.source == "sessions" else None
        if f.source == "sessions" or imported_from(f.path) is not None:
            # what a conversation or another assistant's export says is data: it annotates nothing
            spans: list[Span] = []
        else:
            spans, problems = annotate(text)
            for p in problems:
                report.warnings.append((f.path, f"line {p.line}: {p.message}"))
                log.warning("%s line %d: %s", f.path, p.line, p.message)
        pieces = chunk_spans(transcript.text if transcript else text, spans, chunk_tokens, chunk_overlap)
        if max_tokens and max_tokens < chunk_tokens:
            pieces = [(sub, attrs) for c, attrs in pieces for sub in _split_for_limit([c], max_tokens)]
        if any("key" in attrs for _, attrs in pieces):
            pieces = _dated(f, pieces, earlier)
        if transcript:  # rendered lines -> the JSONL lines they came from
            lines = transcript.source_lines
            pieces = [(Chunk(lines[c.start_line - 1], lines[c.end_line - 1], c.text, c.hash), a)
                      for c, a in pieces]
        rows = []
        seen_ids: set[str] = set()
        for c, attrs in pieces:
            cid = chunk_id(f.source, f.path, c.start_line, c.end_line, c.hash, model)
            if cid in seen_ids:  # identical slices of one over-long line: nothing to add
                continue
            seen_ids.add(cid)
            rows.append(ChunkRow(cid, f.path, f.source, c.start_line, c.end_line, c.hash, model, c.text,
                                 encode(attrs)))
        yield f, Prepared(f, FileRecord(f.path, f.source, fhash, f.mtime_ns, f.size), rows)


def _dated(f: SourceFile, pieces: list[tuple[Chunk, dict]],
           earlier: Callable[[str], FileWrite | None]) -> list[tuple[Chunk, dict]]:
    """Each keyed chunk with its own age, which "newer" of two values of a key reads
    (search/annotated.py): ``seen``, when its text was first indexed (kept from the index
    for text it holds already, else the file's modification time or now, whichever is
    earlier: the line was written by then), and ``dated``, a date its heading carries
    (``## 2026-11-20 14:05``, how memory_append stamps MEMORY.md). Never the file's
    modification time as it is now, which an edit anywhere else in the file moves."""
    try:
        old = earlier(f.path)
    except StoreError:  # a damaged index being repaired: its dates are lost with it
        old = None
    before: dict[str, int] = {}
    for row in old.chunks if old is not None else ():
        seen = decode(row.meta).get("seen")
        if isinstance(seen, int):
            before.setdefault(row.hash, seen)
    first = int(min(f.mtime_ns / 1e9, time.time()))
    # the chunks of one span share its attrs: an entry cut in pieces is one entry (``entry``,
    # its first line), told apart from the entry beside it that has the same key
    entries: dict[int, dict] = {}
    out = []
    for c, attrs in pieces:
        if "key" in attrs:
            entry = entries.get(id(attrs))
            if entry is None:
                entry = entries[id(attrs)] = {"entry": c.start_line}
                dated = heading_date(c.text)
                if dated:
                    entry["dated"] = dated
            attrs = {**attrs, **entry, "seen": before.get(c.hash, first)}
        out.append((c, attrs))
    return out


def _split_for_limit(chunks: list[Chunk], limit: int) -> list[Chunk]:
    """Split chunks longer than a provider's input limit, keeping file line numbers."""
    out = []
    for c in chunks:
        if estimate_tokens(c.text) <= limit:
            out.append(c)
            continue
        for sub in chunk_markdown(c.text, limit, 0):
            out.append(Chunk(c.start_line + sub.start_line - 1, c.start_line + sub.end_line - 1, sub.text, sub.hash))
    return out
