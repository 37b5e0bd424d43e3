"""The Postgres index's schema: its named migrations, the indexes built beside them (the
keyword postings and an HNSW graph per vector dimension, with the walk a search takes), and
how a vector is written in SQL.
"""

from __future__ import annotations

import numpy as np

BUILD = "\x1fbuild-"  # a namespace being rebuilt: <ns><BUILD><pid>-<n>

# The HNSW graph: links a node keeps (m) and candidates kept while linking (ef_construction),
# and the candidates a search's walk keeps (ef_search). pgvector's defaults (16, 64, 40) gave
# recall@10 0.675 at a million chunks and 0.841 with ef_search 200; these give 0.9575
# (benchmarks/postgres_scale.py, docs/postgres.md).
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 128
HNSW_EF_SEARCH = 160
# Below this many chunks in the namespaces searched, the walk keeps fewer candidates: recall@10
# is 1.0 at 10 000 chunks with 80 already, and pgvector's planner prices a 160-wide walk above
# reading every vector, so a 10 000-chunk namespace was searched exactly from TOAST (hybrid p50
# 56.6 ms against 11.1 ms with 80; benchmarks/postgres_scale.py --sections compare, docs/postgres.md)
NARROW_WALK_BELOW = 100_000
HNSW_EF_SEARCH_NARROW = 80

# Named, ordered migrations. Never edit one that has shipped: add the next.
MIGRATIONS: list[tuple[str, str]] = [
    ("0001_base", """
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE mc_ns (ns text PRIMARY KEY, generation bigint NOT NULL DEFAULT 0);
        CREATE TABLE mc_meta (ns text NOT NULL, key text NOT NULL, value text NOT NULL, PRIMARY KEY (ns, key));
        CREATE TABLE mc_files (
            ns text NOT NULL, path text NOT NULL, source text NOT NULL, hash text NOT NULL,
            mtime_ns bigint NOT NULL, size bigint NOT NULL, indexed_at double precision NOT NULL,
            PRIMARY KEY (ns, path));
        CREATE TABLE mc_chunks (
            id bigserial PRIMARY KEY, ns text NOT NULL, cid text NOT NULL, path text NOT NULL,
            source text NOT NULL, start_line integer NOT NULL, end_line integer NOT NULL, hash text NOT NULL,
            model text NOT NULL, text text NOT NULL, meta text NOT NULL DEFAULT '',
            terms text NOT NULL, ntok integer NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', terms)) STORED,
            dims integer, embedding vector, updated_at double precision NOT NULL,
            UNIQUE (ns, cid));
        CREATE INDEX mc_chunks_path ON mc_chunks (ns, path);
        CREATE INDEX mc_chunks_hash ON mc_chunks (hash);
        CREATE INDEX mc_chunks_tsv ON mc_chunks USING gin (tsv);
        CREATE INDEX mc_chunks_annotated ON mc_chunks (ns) WHERE meta <> '';
        CREATE TABLE mc_cache (
            provider text NOT NULL, model text NOT NULL, provider_key text NOT NULL, hash text NOT NULL,
            embedding bytea NOT NULL, dims integer NOT NULL, updated_at double precision NOT NULL,
            PRIMARY KEY (provider, model, provider_key, hash));
        CREATE INDEX mc_cache_updated ON mc_cache (updated_at);
        CREATE TABLE mc_locks (ns text PRIMARY KEY, host text NOT NULL, pid integer NOT NULL,
                               since double precision NOT NULL);
    """),
    ("0002_document_frequencies", """
        -- each term's document frequency per namespace, kept by every write: BM25's IDF without
        -- counting matches at search time
        CREATE TABLE mc_df (ns text NOT NULL, term text NOT NULL, df integer NOT NULL, PRIMARY KEY (ns, term));
        INSERT INTO mc_df (ns, term, df)
            SELECT c.ns, u.lexeme, count(*) FROM mc_chunks c, unnest(c.tsv) u GROUP BY c.ns, u.lexeme;
    """),
    ("0003_lexemes_only", """
        -- lexemes without positions: small enough to stay in the row (a toasted tsvector was read
        -- again for every test of it); BM25 reads positions from the terms column, not from here
        DROP INDEX mc_chunks_tsv;
        ALTER TABLE mc_chunks DROP COLUMN tsv;
        ALTER TABLE mc_chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (strip(to_tsvector('simple', terms))) STORED;
        CREATE INDEX mc_chunks_tsv ON mc_chunks USING gin (tsv);
    """),
    ("0004_postings", """
        -- an inverted index of term -> (chunk, term frequency, chunk length), each term's list in
        -- the order of the BM25 weight it gives a chunk (its impact), so a search reads the best
        -- postings of a common term and stops, where a tsvector match visited every matching row
        -- each namespace's chunk count and total length, kept by every write: BM25's corpus
        -- statistics without counting a million rows after each write
        ALTER TABLE mc_ns ADD COLUMN chunks bigint NOT NULL DEFAULT 0, ADD COLUMN tokens bigint NOT NULL DEFAULT 0;
        UPDATE mc_ns n SET chunks = s.chunks, tokens = s.tokens FROM (SELECT ns, count(*) AS chunks,
            sum(ntok) AS tokens FROM mc_chunks GROUP BY ns) s WHERE n.ns = s.ns;
        ALTER TABLE mc_chunks ADD COLUMN ref_dl integer NOT NULL DEFAULT 1;
        UPDATE mc_chunks c SET ref_dl = s.ref FROM (SELECT ns, greatest(round(avg(ntok)), 1)::int AS ref
            FROM mc_chunks GROUP BY ns) s WHERE c.ns = s.ns;
        CREATE TABLE mc_postings (ns text NOT NULL, term text NOT NULL, id bigint NOT NULL, imp smallint NOT NULL,
                                  tf smallint NOT NULL, dl integer NOT NULL);
        -- the impact in integers, so that this and a write's Python compute the same number
        -- (PostgresStore._impact)
        INSERT INTO mc_postings (ns, term, id, imp, tf, dl)
            SELECT ns, term, id, (327670 * tf * ref_dl / (10 * tf * ref_dl + 3 * ref_dl + 9 * ntok))::smallint,
                   tf, ntok
            FROM (SELECT c.ns, t.term, c.id, least(count(*), 32767)::bigint AS tf, c.ntok::bigint AS ntok,
                         c.ref_dl::bigint AS ref_dl
                  FROM mc_chunks c, unnest(string_to_array(replace(c.terms, E'\\n', ' '), ' ')) t(term)
                  WHERE t.term <> '' GROUP BY c.ns, t.term, c.id, c.ntok, c.ref_dl) x;
        CREATE UNIQUE INDEX mc_postings_key ON mc_postings (ns, term, imp DESC, id) INCLUDE (tf, dl);
        -- document frequencies from the same split of the terms the BM25 above the store uses
        DELETE FROM mc_df;
        INSERT INTO mc_df (ns, term, df) SELECT ns, term, count(*) FROM mc_postings GROUP BY ns, term;
        DROP INDEX mc_chunks_tsv;
        ALTER TABLE mc_chunks DROP COLUMN tsv;
    """),
    ("0005_file_hosts", """
        -- the hosts ("host:workspace") that have had each file, the one whose copy is indexed
        -- first: a sync removes a file missing from its workspace only if its host has had it
        ALTER TABLE mc_files ADD COLUMN hosts text[] NOT NULL DEFAULT '{}';
        -- the host that wrote a namespace last had each of its files when it did (that sync removed
        -- the others); a namespace no lock names keeps '{}', which any host that lacks a file removes
        UPDATE mc_files f SET hosts = ARRAY[l.host] FROM mc_locks l WHERE l.ns = f.ns;
    """),
    ("0006_own_meta", """
        -- the store's own bookkeeping in its own namespace: meta() shows only what was indexed
        UPDATE mc_meta SET key = 'store:' || key WHERE key = 'damaged';
    """),
    ("0007_file_seen", """
        -- each host's stat of its copy of a file ({"host:workspace": [mtime_ns, size]}), which a
        -- write of new content resets to the writer's: file sync gives each copy its own mtime,
        -- and the row's one stat made every file look changed to one host after each sync of the
        -- other. Rows from before record none: each host compares the row's stat, as before, and
        -- records its own at its next touch (index/planning.py stat_here)
        ALTER TABLE mc_files ADD COLUMN seen jsonb NOT NULL DEFAULT '{}';
    """),
]

OWN = "store:"  # the prefix of the store's own metadata keys (kept apart from the indexer's)
DAMAGED = OWN + "damaged"
# as migration 0004 made it; bulk_load() drops it while it loads an empty database
POSTINGS_INDEX = ("CREATE UNIQUE INDEX IF NOT EXISTS mc_postings_key ON mc_postings (ns, term, imp DESC, id) "
                  "INCLUDE (tf, dl)")
TABLES = ("mc_chunks", "mc_files", "mc_meta", "mc_df", "mc_postings")  # what a namespace holds


def walk_width(chunks: int) -> int:
    """How many candidates the HNSW walk keeps (``hnsw.ef_search``) for namespaces of this size."""
    return HNSW_EF_SEARCH_NARROW if chunks < NARROW_WALK_BELOW else HNSW_EF_SEARCH


def vec_text(v: np.ndarray) -> str:
    """A vector as pgvector reads it from text (``'[0.1,0.2]'``)."""
    return "[" + ",".join(map(str, np.asarray(v, dtype=np.float32).tolist())) + "]"


def vec_parse(text: str) -> np.ndarray:
    return np.array(text[1:-1].split(","), dtype=np.float32) if len(text) > 2 else np.zeros(0, np.float32)

