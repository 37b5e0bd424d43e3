import os

import numpy as np
import pytest

from mnemoclaw.errors import StoreError
from mnemoclaw.markdown.chunker import text_hash
from mnemoclaw.search.keyword import search as keyword_search  # BM25 over the store's candidates
from mnemoclaw.store.base import CacheKey, FileWrite
from mnemoclaw.store.sqlite import SQLiteStore
from mnemoclaw.store.sqlite_schema import VEC_STALE
from mnemoclaw.text.tokenize import keyword_query
from mnemoclaw.types import ChunkRow, FileRecord

DRIVERS = ["sqlite3", "pysqlite3", "apsw"]


def _available(name):
    try:
        __import__({"sqlite3": "sqlite3", "pysqlite3": "pysqlite3.dbapi2", "apsw": "apsw"}[name])
        return True
    except ImportError:
        return False


@pytest.fixture(params=[d for d in DRIVERS if _available(d)])
def store(request, tmp_path, monkeypatch):
    monkeypatch.setenv("MNEMOCLAW_SQLITE_DRIVER", request.param)
    s = SQLiteStore(str(tmp_path / "index.sqlite"))
    assert s.driver.name == request.param
    yield s
    s.close()


def vec(*xs):
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def file_write(path, texts, vectors=None, source="memory"):
    # a chunk's hash is the sha256 of its text: the store checks it on every read
    rows = [ChunkRow(f"{path}:{i}", path, source, i + 1, i + 1, text_hash(t), "m", t) for i, t in enumerate(texts)]
    return FileWrite(FileRecord(path, source, "fh", 1, 1), rows, vectors or [None] * len(rows))


def test_keyword_search_english_and_chinese_any_length(store):
    store.apply([file_write("a.md", ["The deploy key rotation happens every 90 days", "用户喜欢喝乌龙茶"]),
                 file_write("b.md", ["我们决定用数据库作为默认索引", "Tea is nice"])])
    def top(q):
        return [store.chunks([r])[r].text for r, _ in keyword_search(store, keyword_query(q), 5)]
    assert top("rotating keys")[0].startswith("The deploy key")  # stemming
    assert top("茶")[0] == "用户喜欢喝乌龙茶"  # one character
    assert top("乌龙")[0] == "用户喜欢喝乌龙茶"  # two characters
    assert top("默认索引")[0] == "我们决定用数据库作为默认索引"
    assert top("AND OR NOT") == []  # operators are words, and not in any note
    assert keyword_search(store, keyword_query("?!"), 5) == []


def test_keyword_scores_are_positive_and_sorted(store):
    store.apply([file_write("a.md", ["alpha beta", "alpha", "gamma alpha alpha"])])
    hits = keyword_search(store, keyword_query("alpha beta"), 10)
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    assert store.chunks([hits[0][0]])[hits[0][0]].text == "alpha beta"


def test_vector_search_finds_nearest(store):
    store.apply([file_write("a.md", ["x", "y", "z"], [vec(1, 0, 0), vec(0, 1, 0), vec(1, 1, 0)])])
    hits = store.vector_search(vec(1, 0.1, 0), 2)
    texts = [store.chunks([r])[r].text for r, _ in hits]
    assert texts == ["x", "z"]
    assert hits[0][1] == pytest.approx(float(vec(1, 0.1, 0) @ vec(1, 0, 0)), abs=1e-5)


def test_vector_path_is_described(store):
    path = store.vector_path()
    if store.vec_loaded:
        assert path.startswith("sqlite-vec") and store.driver.name in path
    else:
        assert path.startswith("numpy brute-force")


def test_replacing_a_file_replaces_its_chunks_everywhere(store):
    store.apply([file_write("a.md", ["old text here"], [vec(1, 0)])])
    store.apply([file_write("a.md", ["new words now"], [vec(0, 1)])])
    assert keyword_search(store, keyword_query("old"), 5) == []
    assert len(keyword_search(store, keyword_query("new"), 5)) == 1
    hits = store.vector_search(vec(1, 0), 5)
    assert len(hits) == 1 and store.chunks([hits[0][0]])[hits[0][0]].text == "new words now"
    store.apply([], removes=["a.md"])
    assert store.counts()["chunks"] == 0 and store.file_records() == {}
    assert store.vector_search(vec(1, 0), 5) == []


def test_source_filter(store):
    store.apply([file_write("a.md", ["shared word"], [vec(1, 0)]),
                 file_write("s.jsonl", ["shared word"], [vec(1, 0)], source="sessions")])
    assert len(keyword_search(store, keyword_query("shared"), 5)) == 2
    only = keyword_search(store, keyword_query("shared"), 5, sources=["sessions"])
    assert [store.chunks([r])[r].source for r, _ in only] == ["sessions"]
    only = store.vector_search(vec(1, 0), 5, sources=["memory"])
    assert [store.chunks([r])[r].source for r, _ in only] == ["memory"]


def test_embedding_cache_roundtrip_and_prune(store):
    key = CacheKey("p", "m", "k")
    store.cache_put(key, {"h1": vec(1, 0), "h2": vec(0, 1)})
    got = store.cache_get(key, ["h1", "h2", "h3"])
    assert set(got) == {"h1", "h2"} and np.allclose(got["h1"], vec(1, 0))
    assert store.cache_get(CacheKey("p", "m", "other"), ["h1"]) == {}
    assert store.cache_prune(1) == 1
    assert len(store.cache_get(key, ["h1", "h2"])) == 1


def test_migrations_are_named_and_recorded(store):
    names = [r[0] for r in store.conn.execute("SELECT name FROM schema_migrations")]
    assert names == ["0001_base", "0002_chunk_meta", "0003_own_meta"]
    # reopening does not re-run them
    path = store.path
    store.close()
    again = SQLiteStore(path)
    assert [r[0] for r in again.conn.execute("SELECT name FROM schema_migrations")] == names
    again.close()


def test_the_stores_own_metadata_is_kept_apart_and_an_older_index_is_moved_there(store):
    """meta() is what was indexed; how wide the vector table is belongs to the store (a copy to
    another store, `mnemoclaw migrate`, takes meta() and must not take it)."""
    store.apply([file_write("MEMORY.md", ["a note"], [np.ones(8, dtype=np.float32) / np.sqrt(8)])])
    store.set_meta({"fingerprint": "f"})
    assert store.meta() == {"fingerprint": "f"} and store.vector_dims() == 8
    path = store.path
    with store.transaction():  # as an index written before the store kept its keys apart
        store.conn.execute("UPDATE meta SET key = substr(key, 7) WHERE key LIKE 'store:%'")
        store.conn.execute("DELETE FROM schema_migrations WHERE name = '0003_own_meta'")
    store.close()
    again = SQLiteStore(path)
    try:
        assert again.meta() == {"fingerprint": "f"} and again.vector_dims() == 8
        keys = {r[0] for r in again.conn.execute("SELECT key FROM meta")}
        assert "fingerprint" in keys and "store:vector_dims" in keys and "vector_dims" not in keys, keys
    finally:
        again.close()


def test_an_index_made_before_annotations_gains_their_column(store):
    store.apply([file_write("MEMORY.md", ["kept through the upgrade"])])
    path = store.path
    with store.transaction():  # back to the first schema
        store.conn.execute("DROP INDEX chunks_annotated")
        store.conn.execute("ALTER TABLE chunks DROP COLUMN meta")
        store.conn.execute("DELETE FROM schema_migrations WHERE name = '0002_chunk_meta'")
    store.close()
    again = SQLiteStore(path)
    assert again.annotations() == {}
    (row,) = again.chunks([1]).values()
    assert row.text == "kept through the upgrade" and row.meta == ""
    again.close()


def test_wal_mode(store):
    assert store.conn.one("PRAGMA journal_mode")[0].lower() == "wal"


def test_corrupt_index_file_is_moved_aside_and_recreated(tmp_path):
    path = tmp_path / "index.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    s = SQLiteStore(str(path))
    aside = s.take_recovery()
    assert aside and os.path.exists(aside) and s.take_recovery() is None
    assert s.counts()["chunks"] == 0
    s.close()


def test_an_index_from_a_newer_version_is_refused_and_left_alone(tmp_path):
    path = str(tmp_path / "index.sqlite")
    s = SQLiteStore(path)
    s.conn.execute("INSERT INTO schema_migrations VALUES ('9999_future', 0)")
    s.close()
    with pytest.raises(StoreError, match="newer mnemoclaw.*upgrade"):
        SQLiteStore(path)
    assert os.path.exists(path) and not [p for p in os.listdir(tmp_path) if "corrupt" in p]


def _vec_store(path, monkeypatch):
    """A store with sqlite-vec loaded (through pysqlite3), or skip."""
    if not _available("pysqlite3"):
        pytest.skip("needs a sqlite module that can load sqlite-vec")
    monkeypatch.setenv("MNEMOCLAW_SQLITE_DRIVER", "pysqlite3")
    s = SQLiteStore(path)
    if not s.vec_loaded:
        s.close()
        pytest.skip("sqlite-vec not loadable here")
    return s


def test_a_long_lived_process_repairs_vectors_a_plain_process_left_stale(tmp_path, monkeypatch):
    path = str(tmp_path / "index.sqlite")
    with_vec = _vec_store(path, monkeypatch)
    with_vec.apply([file_write("a.md", ["a"], [vec(1, 0)]), file_write("b.md", ["b"], [vec(0, 1)])])
    monkeypatch.setenv("MNEMOCLAW_SQLITE_DRIVER", "sqlite3")
    plain = SQLiteStore(path, vector_enabled=False)
    plain.apply([], removes=["b.md"])  # frees the highest rowid, leaves chunks_vec behind
    plain.close()
    # the long-lived process reuses that rowid: its write must not collide
    with_vec.apply([file_write("c.md", ["c"], [vec(1, 1)])])
    texts = [with_vec.chunks([r])[r].text for r, _ in with_vec.vector_search(vec(0, 1), 3)]
    assert "b" not in texts and set(texts) == {"a", "c"}
    with_vec.close()


def test_vectors_written_without_sqlite_vec_are_repaired_when_it_loads(tmp_path, monkeypatch):
    path = str(tmp_path / "index.sqlite")
    s = _vec_store(path, monkeypatch)
    s.apply([file_write("a.md", ["a"], [vec(1, 0)])])
    s.close()
    monkeypatch.setenv("MNEMOCLAW_SQLITE_DRIVER", "sqlite3")  # this one cannot load extensions here
    plain = SQLiteStore(path, vector_enabled=False)
    plain.apply([file_write("b.md", ["b"], [vec(0, 1)])])
    assert [plain.chunks([r])[r].text for r, _ in plain.vector_search(vec(0, 1), 1)] == ["b"]  # numpy path
    plain.close()
    monkeypatch.setenv("MNEMOCLAW_SQLITE_DRIVER", "pysqlite3")
    s = SQLiteStore(path)
    assert s.vec_loaded and s.conn.one("SELECT value FROM meta WHERE key = ?", (VEC_STALE,))[0] == "0"
    assert [s.chunks([r])[r].text for r, _ in s.vector_search(vec(0, 1), 1)] == ["b"]  # via sqlite-vec
    s.close()


def test_disk_full_is_reported_and_the_index_keeps_serving(tmp_path):
    path = str(tmp_path / "index.sqlite")
    s = SQLiteStore(path)
    s.apply([file_write("a.md", ["kept note"])])
    s.conn.execute(f"PRAGMA max_page_count = {s.conn.one('PRAGMA page_count')[0]}")
    with pytest.raises(StoreError, match="disk full"):
        s.apply([file_write("b.md", ["x " * 5000 + str(i) for i in range(50)])])
    assert len(keyword_search(s, keyword_query("kept"), 5)) == 1
    s.close()


def test_warm_in_memory_vectors_follow_every_change(store):
    store.apply([file_write("a.md", ["a"], [vec(1, 0, 0)]), file_write("b.md", ["b"], [vec(0, 1, 0)])])
    cold = store.vector_search(vec(1, 0.2, 0), 2)
    for _ in range(5):  # past the warm-up: now served from memory
        warm = store.vector_search(vec(1, 0.2, 0), 2)
    assert [r for r, _ in warm] == [r for r, _ in cold]
    assert [s for _, s in warm] == pytest.approx([s for _, s in cold], abs=1e-5)
    store.apply([file_write("c.md", ["c"], [vec(1, 0.2, 0)])], removes=["a.md"])
    hits = store.vector_search(vec(1, 0.2, 0), 3)
    assert [store.chunks([r])[r].text for r, _ in hits] == ["c", "b"]


def test_dense_vectors_refresh_in_place_matches_a_fresh_load():
    from mnemoclaw.store.dense import DenseVectors

    rng = np.random.default_rng(0)
    table = {i: rng.normal(size=16).astype(np.float32) for i in range(1, 9001)}

    def refresh(d, version):
        d.refresh(version, lambda: sorted(table), lambda ids: [(i, "memory", table[i].tobytes()) for i in ids])

    dense = DenseVectors()
    refresh(dense, 1)
    for i in list(table)[::2]:  # drop half, add some
        del table[i]
    for i in range(20000, 25000):
        table[i] = rng.normal(size=16).astype(np.float32)
    refresh(dense, 2)
    fresh = DenseVectors()
    refresh(fresh, 3)
    q = rng.normal(size=16).astype(np.float32)
    assert sorted(dense.ids.tolist()) == sorted(table)
    a, b = dense.search(q, 20), fresh.search(q, 20)
    assert [i for i, _ in a] == [i for i, _ in b]
    assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-6)
    mat = np.stack([table[i] / np.linalg.norm(table[i]) for i in sorted(table)])
    best = np.array(sorted(table))[np.argsort(-(mat @ (q / np.linalg.norm(q))))[:20]]
    assert [i for i, _ in dense.search(q, 20)] == best.tolist()


def test_a_big_index_ranks_two_rowid_ranges_at_once_and_finds_the_same_candidates(store, monkeypatch):
    import random

    import mnemoclaw.store.sqlite as sqlite_mod

    rnd = random.Random(5)
    words = "walrus harbour tide lantern 乌龙茶 数据库 索引 deploy key rotation quiet north".split()
    store.apply([file_write(f"f{i}.md", [" ".join(rnd.choice(words) for _ in range(rnd.randint(3, 12)))
                                         for _ in range(6)], source="sessions" if i % 3 == 0 else "memory")
                 for i in range(60)])
    queries = ["walrus tide", "乌龙茶 数据库", "deploy key rotation north", "lantern"]
    one = {(q, s): store.keyword_candidates(keyword_query(q), 25, s) for q in queries for s in (None, ("memory",))}
    assert store._reader is None  # a small index: one query
    monkeypatch.setattr(sqlite_mod, "SPLIT_MIN_CHUNKS", 1)
    for (q, s), want in one.items():
        got = store.keyword_candidates(keyword_query(q), 25, s)
        assert got.lines == want.lines and got.df == want.df, q
    assert store._reader is not None  # the second range was read on the second connection
    # the second connection sees what is written after it opened
    store.apply([file_write("late.md", ["walrus walrus walrus tide tide"] * 2)])
    late = store.keyword_candidates(keyword_query("walrus tide"), 25)
    texts = {store.chunks([r])[r].path for r in late.lines}
    assert "late.md" in texts
    assert late.lines.keys() == {r for r, _ in sqlite_mod._fts_top(store.conn, sqlite_mod.fts_match(
        keyword_query("walrus tide")), 25, None)}


def test_a_detached_vector_search_answers_without_the_connection(store):
    store.apply([file_write("a.md", ["east", "north", "west"], [vec(1, 0, 0), vec(0, 1, 0), vec(-1, 0.2, 0)]),
                 file_write("s.jsonl", ["north-east"], [vec(1, 1, 0)], source="sessions")])
    q = vec(1, 0.3, 0)
    want = [store.vector_search(q, 3) for _ in range(4)][-1]
    search = store.detached_vector_search()
    assert search is not None  # warm: the in-memory vectors

    class NoConnection:
        def __getattr__(self, name):
            raise AssertionError(f"the connection was used ({name})")

    conn, store.conn = store.conn, NoConnection()
    try:
        assert search(q, 3, None) == want
        assert [r for r, _ in search(q, 4, ["memory"])] == [r for r, _ in store._dense.search(q, 4, ["memory"])]
        assert search(q, 0, None) == []
    finally:
        store.conn = conn
    # a write after it: the next one found is brought up to date first
    store.apply([file_write("b.md", ["due east"], [vec(1, 0.3, 0)])])
    assert store.chunks([store.detached_vector_search()(q, 1, None)[0][0]]).popitem()[1].text == "due east"
