"""What a Postgres namespace holds of each file: its chunks (each with its analysed terms and
their postings, the keyword side's inverted index), the files' records with the hosts that have
had them, the namespace's metadata and statistics, and the embedding cache every namespace and
host shares. Shared namespaces' files are shown as shared/<namespace>/<path>.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..markdown.annotations import searchable
from ..markdown.chunker import text_hash
from ..text.tokenize import fts_document
from ..types import ChunkRow, FileRecord, StoredChunk
from .base import CacheKey, FileWrite
from .postgres_connection import PostgresConnection
from .postgres_schema import OWN, vec_parse, vec_text

SHARED = "shared/"  # a shared namespace's file as results show it: shared/<namespace>/<path>


class PostgresIndex(PostgresConnection):
    """Files, chunks, metadata, statistics and the embedding cache of one namespace."""

    # -- metadata ---------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        """The namespace's metadata; the store's own keys (``OWN``) are not part of it."""
        return {k: v for k, v in self._all_meta().items() if not k.startswith(OWN)}

    def _all_meta(self) -> dict[str, str]:
        return dict(self._cached("meta", lambda: dict(self._rows("SELECT key, value FROM mc_meta WHERE ns = %s",
                                                                   (self.ns,)))))

    def set_meta(self, items: dict[str, str]) -> None:
        with self._tx() as c:
            c.cursor().executemany("INSERT INTO mc_meta (ns, key, value) VALUES (%s, %s, %s) ON CONFLICT (ns, key) "
                                   "DO UPDATE SET value = excluded.value", [(self.ns, k, v) for k, v in items.items()])

    def delete_meta(self, keys: Iterable[str]) -> None:
        with self._tx() as c:
            c.execute("DELETE FROM mc_meta WHERE ns = %s AND key = ANY(%s)", (self.ns, list(keys)))

    # -- files and chunks -------------------------------------------------------------------
    def file_records(self) -> dict[str, FileRecord]:
        return self._cached("files", lambda: {
            p: FileRecord(p, source, h, mtime, size, tuple(hosts),
                          tuple(sorted((who, int(stat[0]), int(stat[1])) for who, stat in seen.items())))
            for p, source, h, mtime, size, hosts, seen in self._rows(
                "SELECT path, source, hash, mtime_ns, size, hosts, seen FROM mc_files WHERE ns = %s", (self.ns,))})

    def apply(self, writes: Sequence[FileWrite], removes: Iterable[str] = (),
              touches: Iterable[FileRecord] = ()) -> None:
        removes, touches = list(removes), list(touches)
        if not writes and not removes and not touches:
            return
        now = time.time()
        chunks = [(row, vec) for w in writes for row, vec in zip(w.chunks, w.vectors, strict=False)]
        docs = [fts_document(searchable(row.text, row.meta)) for row, _ in chunks]
        gone = [w.record.path for w in writes] + removes

        def write(c: Any) -> None:
            if gone:  # the old chunks' postings, and their document frequencies with them
                old = c.execute("SELECT id, terms, ntok, ref_dl FROM mc_chunks WHERE ns = %s AND path = ANY(%s)",
                                (self.ns, gone)).fetchall()
                keys: tuple[list[str], list[int], list[int]] = ([], [], [])
                df_gone: Counter[str] = Counter()
                for rid, terms, ntok, ref in old:
                    for term, f in Counter(terms.split()).items():
                        keys[0].append(term)
                        keys[1].append(self._impact(f, ntok, ref))
                        keys[2].append(rid)
                        df_gone[term] += 1
                c.execute("DELETE FROM mc_postings p USING unnest(%s::text[], %s::int[], %s::bigint[]) "
                          "k(term, imp, id) WHERE p.ns = %s AND p.term = k.term AND p.imp = k.imp AND p.id = k.id",
                          (*keys, self.ns))
                c.execute("UPDATE mc_ns SET chunks = chunks - %s, tokens = tokens - %s WHERE ns = %s",
                          (len(old), sum(r[2] for r in old), self.ns))
                if df_gone:
                    c.execute("UPDATE mc_df f SET df = f.df - d.n FROM unnest(%s::text[], %s::int[]) d(term, n) "
                              "WHERE f.ns = %s AND f.term = d.term", (list(df_gone), list(df_gone.values()), self.ns))
                c.execute("DELETE FROM mc_chunks WHERE ns = %s AND path = ANY(%s)", (self.ns, gone))
            if removes:
                c.execute("DELETE FROM mc_files WHERE ns = %s AND path = ANY(%s)", (self.ns, removes))
            if chunks:
                ids = [r[0] for r in c.execute("SELECT nextval(pg_get_serial_sequence('mc_chunks', 'id')) "
                                               "FROM generate_series(1, %s)", (len(chunks),)).fetchall()]
                # the length impacts are measured against: the namespace's mean chunk length now
                have, tokens = c.execute("SELECT chunks, tokens FROM mc_ns WHERE ns = %s", (self.ns,)).fetchone()
                lengths = [len(doc.split()) for doc in docs]
                ref = max(round(tokens / have if have > 0 else sum(lengths) / len(lengths)), 1)
                c.execute("UPDATE mc_ns SET chunks = chunks + %s, tokens = tokens + %s WHERE ns = %s",
                          (len(lengths), sum(lengths), self.ns))
                df: Counter[str] = Counter()
                with c.cursor() as cur:
                    with cur.copy("COPY mc_chunks (id, ns, cid, path, source, start_line, end_line, hash, model, "
                                  "text, meta, terms, ntok, ref_dl, dims, embedding, updated_at) FROM STDIN") as copy:
                        for rid, (row, vec), doc, n in zip(ids, chunks, docs, lengths, strict=True):
                            copy.write_row((rid, self.ns, row.id, row.path, row.source, row.start_line, row.end_line,
                                            row.hash, row.model, row.text, row.meta, doc, n, ref,
                                            None if vec is None else len(vec),
                                            None if vec is None else vec_text(vec), now))
                    with cur.copy("COPY mc_postings (ns, term, id, imp, tf, dl) FROM STDIN") as copy:
                        for rid, doc, n in zip(ids, docs, lengths, strict=True):
                            tf = Counter(doc.split())
                            df.update(tf.keys())
                            for term, f in tf.items():
                                copy.write_row((self.ns, term, rid, self._impact(f, n, ref), min(f, 32767), n))
                if df:
                    c.execute("INSERT INTO mc_df (ns, term, df) SELECT %s, t, n FROM unnest(%s::text[], %s::int[]) "
                              "u(t, n) ON CONFLICT (ns, term) DO UPDATE SET df = mc_df.df + excluded.df",
                              (self.ns, list(df), list(df.values())))
            # the hosts that have had a file: this one's copy is indexed now (first), and a
            # touch adds it where missing; the others stay named (they had the file too). The
            # stats seen: a write is new content, which the others' copies may not have (their
            # stats go, so they read and hash theirs); a touch adds this host's beside theirs
            hosts = {"write": "array_prepend(%(me)s::text, array_remove(mc_files.hosts, %(me)s::text))",
                     "touch": "CASE WHEN %(me)s::text = ANY(mc_files.hosts) THEN mc_files.hosts "
                              "ELSE array_append(mc_files.hosts, %(me)s::text) END"}
            seen = {"write": "excluded.seen", "touch": "mc_files.seen || excluded.seen"}
            for kind, records in (("write", [w.record for w in writes]), ("touch", touches)):
                if records:
                    c.cursor().executemany(
                        "INSERT INTO mc_files (ns, path, source, hash, mtime_ns, size, indexed_at, hosts, seen) "
                        "VALUES (%(ns)s, %(path)s, %(source)s, %(hash)s, %(mtime)s, %(size)s, %(now)s, "
                        "%(hosts)s::text[], jsonb_build_object(%(me)s::text, jsonb_build_array(%(mtime)s::bigint, "
                        "%(size)s::bigint))) "
                        "ON CONFLICT (ns, path) DO UPDATE SET source = excluded.source, hash = excluded.hash, "
                        "mtime_ns = excluded.mtime_ns, size = excluded.size, indexed_at = excluded.indexed_at, "
                        f"hosts = {hosts[kind]}, seen = {seen[kind]}",
                        [{"ns": self.ns, "path": r.path, "source": r.source, "hash": r.hash, "mtime": r.mtime_ns,
                          "size": r.size, "now": now, "me": self.origin,
                          "hosts": list(dict.fromkeys([self.origin, *r.hosts]))} for r in records])

        self._retrying(write)
        dims = {len(v) for w in writes for v in w.vectors if v is not None}
        for d in dims:
            self._ensure_vector_index(d)

    @staticmethod
    def _impact(tf: int, dl: int, ref: int) -> int:
        """A posting's place in its term's list: FTS5's BM25 weight of the term for the chunk
        (k1 1.2, b 0.75, against the mean length ``ref``) in 0..32767, in integers, as migration
        0004 computes it, so a deletion finds the posting a write made."""
        tf = min(tf, 32767)
        return 327670 * tf * ref // (10 * tf * ref + 3 * ref + 9 * dl)

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """Writes inside go in without the indexes that are built faster from all the rows at
        once: a vector index that does not exist yet, and, into a database with no postings yet,
        the postings index (measured: a million chunks load several times faster). Both are
        built at the end, also when the load fails; a process killed before that leaves the
        postings index to the next store opened on the database (``_ensure_postings_index``)."""
        with self._conn() as c:
            empty = bool(c.execute("SELECT NOT EXISTS (SELECT 1 FROM mc_postings)").fetchone()[0])
            if empty:
                c.execute("DROP INDEX IF EXISTS mc_postings_key")
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
            if empty:
                self._ensure_postings_index()
        for d in self._deferred:
            self._ensure_vector_index(d)
        self._deferred.clear()

    def file_chunks(self, path: str) -> FileWrite | None:
        rec = self.file_records().get(path)
        if rec is None:
            return None
        rows = self._rows("SELECT cid, path, source, start_line, end_line, hash, model, text, meta, embedding::text "
                          "FROM mc_chunks WHERE ns = %s AND path = %s ORDER BY start_line, id", (self.ns, path))
        rows = [r for r in rows if text_hash(r[7]) == r[5]]
        return FileWrite(rec, [ChunkRow(*r[:9]) for r in rows], [None if r[9] is None else vec_parse(r[9])
                                                                   for r in rows])

    def vectors_for_hashes(self, hashes: Iterable[str], model: str) -> dict[str, np.ndarray]:
        rows = self._rows("SELECT DISTINCT ON (hash) hash, embedding::text FROM mc_chunks WHERE ns = %s AND "
                          "model = %s AND embedding IS NOT NULL AND hash = ANY(%s)",
                          (self.ns, model, list(dict.fromkeys(hashes))))
        return {h: vec_parse(v) for h, v in rows}

    def _shown(self, ns: str, path: str) -> str:
        """A path as results show it: a shared namespace's files under shared/<namespace>/."""
        return path if ns == self.ns else f"{SHARED}{ns}/{path}"

    def _located(self, shown: str) -> tuple[str, str]:
        """(namespace, path) of a path as results show it."""
        if shown.startswith(SHARED):
            ns, _, path = shown[len(SHARED):].partition("/")
            if ns in self.shared:
                return ns, path
        return self.ns, shown

    def chunks(self, rowids: Sequence[int]) -> dict[int, StoredChunk]:
        if not rowids:
            return {}
        rows = self._rows("SELECT id, ns, path, source, start_line, end_line, text, hash, meta FROM mc_chunks "
                          "WHERE id = ANY(%s) AND ns = ANY(%s)", (list(rowids), self._read_ns))
        return {r[0]: StoredChunk(r[0], self._shown(r[1], r[2]), *r[3:]) for r in rows if text_hash(r[6]) == r[7]}

    def file_heads(self, paths: Iterable[str]) -> dict[str, str]:
        wanted = {self._located(p): p for p in dict.fromkeys(paths)}
        rows = self._rows("SELECT ns, path, text, hash FROM mc_chunks WHERE ns = ANY(%s) AND start_line = 1 AND "
                          "path = ANY(%s)", (self._read_ns, list({p for _, p in wanted})))
        return {wanted[(ns, p)]: t for ns, p, t, h in rows if (ns, p) in wanted and text_hash(t) == h}

    def shared_file(self, path: str) -> str | None:
        """The text of a shared namespace's file (shared/<namespace>/<path>), put together from
        its chunks: a host that does not have the file can still read it. None if ``path`` is
        not one."""
        ns, rel = self._located(path)
        if ns == self.ns:
            return None
        rows = self._rows("SELECT start_line, end_line, text, hash FROM mc_chunks WHERE ns = %s AND path = %s "
                          "ORDER BY start_line, id", (ns, rel))
        if not rows:
            return None
        lines: dict[int, str] = {}
        for start, end, text, h in rows:
            parts = text.split("\n")
            if text_hash(text) != h or len(parts) != end - start + 1:  # a slice of an over-long line
                continue
            for i, line in enumerate(parts):
                lines.setdefault(start + i, line)
        last = max(lines, default=0)
        return "\n".join(lines.get(i, "") for i in range(1, last + 1))  # lines no chunk holds were blank

    def annotations(self) -> dict[int, tuple[str, int, int, str]]:
        return self._cached("notes", lambda: {r[0]: (self._shown(r[1], r[2]), r[3], r[4], r[5]) for r in self._rows(
            "SELECT id, ns, path, start_line, end_line, meta FROM mc_chunks WHERE ns = ANY(%s) AND meta <> ''",
            (self._read_ns,))})

    def counts(self) -> dict[str, int]:
        (files,), = self._rows("SELECT count(*) FROM mc_files WHERE ns = %s", (self.ns,))
        chunks, vectors = self._rows("SELECT count(*), count(embedding) FROM mc_chunks WHERE ns = %s", (self.ns,))[0]
        (cache,), = self._rows("SELECT count(*) FROM mc_cache")
        return {"files": files, "chunks": chunks, "vectors": vectors, "cacheEntries": cache}

    def vector_dims(self) -> int | None:
        rows = self._rows("SELECT dims FROM mc_chunks WHERE ns = %s AND dims IS NOT NULL LIMIT 1", (self.ns,))
        return int(rows[0][0]) if rows else None

    # -- the namespaces' statistics (BM25's, and the vector walk's width) -------------------
    def corpus_size(self) -> int:
        return self._corpus_stats()[0]

    def _corpus_stats(self) -> tuple[int, float]:
        def make() -> tuple[int, float]:
            n, total = self._rows("SELECT coalesce(sum(chunks), 0)::bigint, coalesce(sum(tokens), 0)::bigint "
                                  "FROM mc_ns WHERE ns = ANY(%s)", (self._read_ns,))[0]
            self._caches["df"] = (None, {})
            return int(n), (float(total) / n if n else 0.0)
        return self._cached("stats", make)

    def _doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        cache: dict[str, int] = self._caches.setdefault("df", (None, {}))[1]
        missing = [t for t in dict.fromkeys(terms) if t not in cache]
        if missing:  # kept by every write (mc_df): one look-up for all of them
            rows = self._rows("SELECT term, sum(df) FROM mc_df WHERE ns = ANY(%s) AND term = ANY(%s) GROUP BY term",
                              (self._read_ns, missing))
            found = {t: int(n) for t, n in rows}
            cache.update({t: max(found.get(t, 0), 0) for t in missing})
        return {t: cache[t] for t in terms}

    # -- embedding cache (one for every namespace and host) ---------------------------------
    def cache_get(self, key: CacheKey, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        rows = self._rows("SELECT hash, embedding FROM mc_cache WHERE provider = %s AND model = %s AND "
                          "provider_key = %s AND hash = ANY(%s)",
                          (key.provider, key.model, key.provider_key, list(dict.fromkeys(hashes))))
        return {h: np.frombuffer(bytes(b), dtype=np.float32) for h, b in rows}

    def cache_put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time()
        with self._conn() as c:
            c.cursor().executemany(
                "INSERT INTO mc_cache VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (provider, model, provider_key, "
                "hash) DO UPDATE SET embedding = excluded.embedding, dims = excluded.dims, "
                "updated_at = excluded.updated_at",
                [(key.provider, key.model, key.provider_key, h, np.asarray(v, np.float32).tobytes(), len(v), now)
                 for h, v in items.items()])

    def cache_prune(self, max_entries: int) -> int:
        with self._conn() as c:
            (total,), = c.execute("SELECT count(*) FROM mc_cache").fetchall()
            excess = total - max_entries
            if excess <= 0:
                return 0
            c.execute("DELETE FROM mc_cache WHERE (provider, model, provider_key, hash) IN (SELECT provider, model, "
                      "provider_key, hash FROM mc_cache ORDER BY updated_at LIMIT %s)", (excess,))
        return int(excess)

    def cache_items(self, batch: int = 1000) -> Iterator[tuple[CacheKey, dict[str, np.ndarray]]]:
        keys = self._rows("SELECT DISTINCT provider, model, provider_key FROM mc_cache")
        for provider, model, pkey in keys:
            rows = self._rows("SELECT hash, embedding FROM mc_cache WHERE provider = %s AND model = %s AND "
                              "provider_key = %s ORDER BY hash", (provider, model, pkey))
            for i in range(0, len(rows), batch):
                yield CacheKey(provider, model, pkey), {h: np.frombuffer(bytes(b), dtype=np.float32)
                                                        for h, b in rows[i : i + batch]}

    def cache_delete(self, hashes: Iterable[str]) -> int:
        with self._conn() as c:
            cur = c.execute("DELETE FROM mc_cache WHERE hash = ANY(%s)", (list(dict.fromkeys(hashes)),))
            return int(cur.rowcount or 0)
