"""The SQLite index's schema and the file-level facts it depends on: named migrations,
the FTS5 tables, the MATCH syntax, and whether a file or a disk can take writes."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from ..text.tokenize import KeywordQuery

# Text reaches FTS5 already analyzed (stemmed words, CJK grams; text/tokenize.py),
# so its tokenizer only has to split on the spaces between terms.
FTS_TOKENIZE = "unicode61 remove_diacritics 0"

FTS_TABLE = f"CREATE VIRTUAL TABLE chunks_fts USING fts5(text, tokenize='{FTS_TOKENIZE}')"
# document frequency of each term, for BM25's IDF
VOCAB_TABLE = "CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, row)"

# Named, ordered migrations. Never edit one that has shipped: add the next.
# The prefix of the store's own metadata keys (how wide the sqlite-vec table is, whether it is
# behind the chunks): kept apart from what the indexer records, never shown by ``meta()``.
OWN = "store:"
DIMS = OWN + "vector_dims"
VEC_STALE = OWN + "vec_stale"

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_base",
        f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE files (
            path TEXT PRIMARY KEY,
            source TEXT NOT NULL,
            hash TEXT NOT NULL,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            indexed_at REAL NOT NULL
        );
        CREATE TABLE chunks (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            path TEXT NOT NULL,
            source TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            hash TEXT NOT NULL,
            model TEXT NOT NULL,
            text TEXT NOT NULL,
            embedding BLOB,
            updated_at REAL NOT NULL,
            ntok INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX chunks_path ON chunks(path);
        CREATE INDEX chunks_hash ON chunks(hash);
        CREATE TABLE embedding_cache (
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            provider_key TEXT NOT NULL,
            hash TEXT NOT NULL,
            embedding BLOB NOT NULL,
            dims INTEGER NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (provider, model, provider_key, hash)
        ) WITHOUT ROWID;
        CREATE INDEX embedding_cache_updated ON embedding_cache(updated_at);
        {FTS_TABLE};
        {VOCAB_TABLE};
        """,
    ),
    (
        "0002_chunk_meta",
        # a chunk's annotations (markdown/annotations.py), '' for none; a partial index
        # finds the few annotated chunks without reading the rest
        """
        ALTER TABLE chunks ADD COLUMN meta TEXT NOT NULL DEFAULT '';
        CREATE INDEX chunks_annotated ON chunks(rowid) WHERE meta != '';
        """,
    ),
    (
        "0003_own_meta",
        # the store's own bookkeeping in its own namespace: meta() shows only what was indexed
        f"""
        UPDATE meta SET key = '{OWN}' || key WHERE key IN ('vector_dims', 'vec_stale');
        """,
    ),
]

# SQLite's limit on bound parameters is 32766 on modern builds, 999 on old ones.
IN_BATCH = 900


def fts_match(query: KeywordQuery) -> str:
    # Every term is quoted, so FTS5 operators typed by a user (AND, NEAR, *, ^, :) are
    # plain words; terms are letters, digits or CJK only, so they contain no quotes.
    parts = ['"' + " ".join(p) + '"' for p in query.phrases]
    parts.extend(f'"{t}"' for t in query.terms)
    return " OR ".join(parts)





def disk_full(directory: str, room: int = 1 << 20) -> bool:
    """Less than ``room`` bytes left for us on the disk holding ``directory``."""
    try:
        st = os.statvfs(directory)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < room


def read_only_path(path: str) -> bool:
    """The index cannot be written: its file, or the directory that must hold it (and its
    -wal, -shm and lock files), refuses writes. Checked with access(2), which also sees a
    read-only mount for root."""
    parent = os.path.dirname(os.path.abspath(path))
    probe = parent
    while not os.path.exists(probe):  # the directory is made on first use
        probe = os.path.dirname(probe)
    if not os.access(probe, os.W_OK):
        return True
    return os.path.exists(path) and not os.access(path, os.W_OK)


def unlink_db(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(path + suffix)
        except FileNotFoundError:
            pass


def chunked(seq: Sequence[Any], n: int = IN_BATCH) -> Iterator[Sequence[Any]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]
