"""What the SQLite index holds of each file: its chunks (checked against their hashes as they
are read), the files' records, the index's metadata, batches applied atomically, and the
embedding cache. Its keyword and vector sides are ``sqlite.py`` and ``sqlite_vectors.py``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from ..errors import IndexCorruptError
from ..markdown.annotations import searchable
from ..markdown.chunker import text_hash
from ..text.tokenize import fts_document
from ..types import ChunkRow, FileRecord, StoredChunk
from .base import CacheKey, FileWrite, damage_reason, from_blob, to_blob
from .sqlite_file import SQLiteFile
from .sqlite_schema import DIMS, OWN, VEC_STALE, chunked


class SQLiteIndex(SQLiteFile):
    """Files, chunks, metadata and the embedding cache over the index file's connection."""

    # -- metadata ---------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        """The index's key/value metadata (read once per index version: searches ask often);
        the store's own keys (``OWN``) are not part of it."""
        return {k: v for k, v in self._all_meta().items() if not k.startswith(OWN)}

    def _all_meta(self) -> dict[str, str]:
        version = self._version()
        if self._meta_cache is None or self._meta_cache[0] != version:
            self._meta_cache = (version, dict(self.conn.execute("SELECT key, value FROM meta")))
        return self._meta_cache[1]

    def set_meta(self, items: dict[str, str]) -> None:
        with self.transaction():
            self._set_meta(items)

    def delete_meta(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        with self.transaction():
            self.conn.executemany("DELETE FROM meta WHERE key = ?", [(k,) for k in keys])

    # -- files and chunks -------------------------------------------------------
    def file_records(self) -> dict[str, FileRecord]:
        """What the index holds per file (cached until the index changes; do not mutate)."""
        version = self._version()
        if self._files_cache is None or self._files_cache[0] != version:
            rows = self.conn.execute("SELECT path, source, hash, mtime_ns, size FROM files")
            self._files_cache = (version, {r[0]: FileRecord(*r) for r in rows})
        return self._files_cache[1]

    def annotations(self) -> dict[int, tuple[str, int, int, str]]:
        """The annotated chunks: rowid -> (path, start line, end line, meta), cached until the
        index changes (do not mutate)."""
        version = self._version()
        if self._notes_cache is None or self._notes_cache[0] != version:
            rows = self.conn.execute("SELECT rowid, path, start_line, end_line, meta FROM chunks WHERE meta != ''")
            self._notes_cache = (version, {r[0]: (r[1], r[2], r[3], r[4]) for r in rows})
        return self._notes_cache[1]

    def _delete_paths(self, paths: Sequence[str]) -> None:
        has_vec = self.vec_loaded and self._vec_table_exists()
        for group in chunked(list(paths)):
            marks = ",".join("?" * len(group))
            rowids = [r[0] for r in self.conn.execute(f"SELECT rowid FROM chunks WHERE path IN ({marks})", group)]
            for ids in chunked(rowids):
                idm = ",".join("?" * len(ids))
                self.conn.execute(f"DELETE FROM chunks_fts WHERE rowid IN ({idm})", ids)
                if has_vec:
                    self.conn.execute(f"DELETE FROM chunks_vec WHERE rowid IN ({idm})", ids)
                self.conn.execute(f"DELETE FROM chunks WHERE rowid IN ({idm})", ids)
        if not has_vec and self._vec_table_exists():
            self._set_meta({VEC_STALE: "1"})

    def apply(
        self, writes: Sequence[FileWrite], removes: Iterable[str] = (), touches: Iterable[FileRecord] = ()
    ) -> None:
        removes = list(removes)
        touches = list(touches)
        if not writes and not removes and not touches:
            return
        now = time.time()
        with self.transaction():
            self._delete_paths([w.record.path for w in writes] + removes)
            if removes:
                for group in chunked(removes):
                    marks = ",".join("?" * len(group))
                    self.conn.execute(f"DELETE FROM files WHERE path IN ({marks})", group)
            next_id = (self.conn.one("SELECT coalesce(max(rowid), 0) FROM chunks") or (0,))[0] + 1
            chunk_rows, fts_rows, vec_rows = [], [], []
            dims = None
            for w in writes:
                for row, vec in zip(w.chunks, w.vectors, strict=False):
                    blob = None if vec is None else to_blob(vec)
                    if vec is not None:
                        dims = len(vec)
                        vec_rows.append((next_id, blob))
                    doc = fts_document(searchable(row.text, row.meta))
                    chunk_rows.append(
                        (next_id, row.id, row.path, row.source, row.start_line, row.end_line,
                         row.hash, row.model, row.text, blob, now, len(doc.split()), row.meta)
                    )
                    fts_rows.append((next_id, doc))
                    next_id += 1
            if self.vec_loaded and self._vec_stale():
                # a process without sqlite-vec wrote since this one opened the index
                self._rebuild_vec_table()
            if dims is not None:
                # before the new rows go in: creating the table back-fills existing chunks
                self._ensure_vec_table(dims)
            self.conn.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", chunk_rows)
            self.conn.executemany("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", fts_rows)
            if vec_rows and self.vec_loaded:
                self.conn.executemany("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)", vec_rows)
            records = [w.record for w in writes] + touches
            self.conn.executemany(
                "INSERT OR REPLACE INTO files(path, source, hash, mtime_ns, size, indexed_at) VALUES (?,?,?,?,?,?)",
                [(r.path, r.source, r.hash, r.mtime_ns, r.size, now) for r in records],
            )

    def file_chunks(self, path: str) -> FileWrite | None:
        """Everything indexed for one file, in the shape ``apply`` takes (None if not indexed
        or not readable)."""
        rec = self.file_records().get(path)
        if rec is None:
            return None
        try:
            rows = self.conn.execute(
                "SELECT id, path, source, start_line, end_line, hash, model, text, meta, embedding FROM chunks "
                "WHERE path = ? ORDER BY start_line, rowid",
                (path,),
            )
        except IndexCorruptError as exc:
            self.mark_damaged(damage_reason(exc))
            return None
        readable = [r for r in rows if text_hash(r[7]) == r[5]]
        if len(readable) < len(rows):
            self.mark_damaged(f"{len(rows) - len(readable)} chunks of {path} do not match their hashes")
        rows = readable
        chunks = [ChunkRow(*r[:9]) for r in rows]
        vectors = [None if r[9] is None else from_blob(r[9]) for r in rows]
        return FileWrite(rec, chunks, vectors)

    def vectors_for_hashes(self, hashes: Iterable[str], model: str) -> dict[str, np.ndarray]:
        rows = self._rows_of("SELECT hash, embedding FROM chunks WHERE model = ? AND embedding IS NOT NULL "
                             "AND hash IN ({marks})", list(dict.fromkeys(hashes)), (model,))
        return {h: from_blob(blob) for h, blob in rows}

    def chunks(self, rowids: Sequence[int]) -> dict[int, StoredChunk]:
        """The chunks by rowid; a chunk whose text no longer matches its hash (a damaged
        page) is left out and the index marked for repair: nothing garbled is returned."""
        out: dict[int, StoredChunk] = {}
        rows = self._rows_of("SELECT rowid, path, source, start_line, end_line, text, hash, meta FROM chunks "
                             "WHERE rowid IN ({marks})", list(rowids))
        for r in rows:
            if text_hash(r[5]) != r[6]:
                self.mark_damaged(f"the text of chunk {r[0]} does not match its hash")
                continue
            out[r[0]] = StoredChunk(*r)
        return out

    def file_heads(self, paths: Iterable[str]) -> dict[str, str]:
        rows = self._rows_of("SELECT path, text, hash FROM chunks WHERE start_line = 1 AND path IN ({marks})",
                             list(dict.fromkeys(paths)))
        return {path: text for path, text, h in rows if text_hash(text) == h}

    def vector_dims(self) -> int | None:
        """The dimension of the vectors the index holds (None while it holds none)."""
        if self.conn.one("SELECT 1 FROM chunks WHERE embedding IS NOT NULL LIMIT 1") is None:
            return None
        dims = self._all_meta().get(DIMS)
        return int(dims) if dims else None

    def counts(self) -> dict[str, int]:
        files = self.conn.scalar("SELECT count(*) FROM files")
        chunks = self.conn.scalar("SELECT count(*) FROM chunks")
        vectors = self.conn.scalar("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL")
        cache = self.conn.scalar("SELECT count(*) FROM embedding_cache")
        return {"files": files, "chunks": chunks, "vectors": vectors, "cacheEntries": cache}

    # -- embedding cache --------------------------------------------------------
    def cache_get(self, key: CacheKey, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        rows = self._rows_of("SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? AND "
                             "provider_key = ? AND hash IN ({marks})", list(dict.fromkeys(hashes)),
                             (key.provider, key.model, key.provider_key))
        return {h: from_blob(blob) for h, blob in rows}

    def cache_put(self, key: CacheKey, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time()
        rows = [(key.provider, key.model, key.provider_key, h, to_blob(v), len(v), now) for h, v in items.items()]
        with self.transaction():
            self.conn.executemany("INSERT OR REPLACE INTO embedding_cache VALUES (?,?,?,?,?,?,?)", rows)

    def cache_prune(self, max_entries: int) -> int:
        total = self.conn.scalar("SELECT count(*) FROM embedding_cache")
        excess = total - max_entries
        if excess <= 0:
            return 0
        with self.transaction():
            self.conn.execute(
                "DELETE FROM embedding_cache WHERE (provider, model, provider_key, hash) IN "
                "(SELECT provider, model, provider_key, hash FROM embedding_cache ORDER BY updated_at LIMIT ?)",
                (excess,),
            )
        return excess

    def cache_items(self, batch: int = 1000) -> Iterator[tuple[CacheKey, dict[str, np.ndarray]]]:
        keys = self.conn.execute("SELECT DISTINCT provider, model, provider_key FROM embedding_cache")
        for provider, model, pkey in keys:
            rows = self.conn.execute("SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? "
                                     "AND provider_key = ? ORDER BY hash", (provider, model, pkey))
            for i in range(0, len(rows), batch):
                yield CacheKey(provider, model, pkey), {h: from_blob(b) for h, b in rows[i : i + batch]}

    def cache_delete(self, hashes: Iterable[str]) -> int:
        """Forget the cached vectors of these chunk texts (every provider and model)."""
        hashes = list(dict.fromkeys(hashes))
        gone = 0
        with self.transaction():
            for group in chunked(hashes):
                marks = ",".join("?" * len(group))
                gone += self.conn.scalar(f"SELECT count(*) FROM embedding_cache WHERE hash IN ({marks})", group)
                self.conn.execute(f"DELETE FROM embedding_cache WHERE hash IN ({marks})", group)
        return gone
