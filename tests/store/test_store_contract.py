"""What every ``Store`` must do, through the protocol only (store/base.py).

A new store joins by adding a factory to STORES; nothing here may reach past the
protocol (no SQL, no ``conn``), so two stores that pass it can serve the same engine.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from mnemoclaw.errors import LockTimeoutError
from mnemoclaw.markdown.chunker import text_hash
from mnemoclaw.search.keyword import search as keyword_search
from mnemoclaw.store import StoreOptions, open_store
from mnemoclaw.store.base import CacheKey, FileWrite, KeywordCandidates, Store
from mnemoclaw.text.tokenize import keyword_query
from mnemoclaw.types import ChunkRow, FileRecord


def _sqlite(driver):
    def make(tmp_path, monkeypatch) -> Store:
        pytest.importorskip({"sqlite3": "sqlite3", "pysqlite3": "pysqlite3.dbapi2", "apsw": "apsw"}[driver])
        monkeypatch.setenv("MNEMOCLAW_SQLITE_DRIVER", driver)
        return open_store(StoreOptions("sqlite", str(tmp_path / "index.sqlite"), state_dir=str(tmp_path / "state")))
    return make


def _postgres(tmp_path, monkeypatch) -> Store:
    from conftest import postgres_url

    # a database of its own per test (one server serves the whole run)
    return open_store(StoreOptions("postgres", "", url=postgres_url(fresh=True), namespace="main"))


STORES = {"sqlite3": _sqlite("sqlite3"), "pysqlite3": _sqlite("pysqlite3"), "apsw": _sqlite("apsw"),
          "postgres": _postgres}


@pytest.fixture(params=sorted(STORES))
def store(request, tmp_path, monkeypatch):
    s = STORES[request.param](tmp_path, monkeypatch)
    yield s
    s.close()


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def write(path: str, texts: list[str], vectors=None, source: str = "memory", model: str = "m") -> FileWrite:
    rows = [ChunkRow(f"{path}:{i}", path, source, i + 1, i + 1, text_hash(t), model, t) for i, t in enumerate(texts)]
    return FileWrite(FileRecord(path, source, "h-" + path, 1, len(texts)), rows, vectors or [None] * len(rows))


def ids_of(store: Store, hits) -> list[str]:
    found = store.chunks([r for r, _ in hits])
    return [found[r].text for r, _ in hits]


def test_meta_is_set_read_and_deleted(store):
    store.set_meta({"a": "1", "b": "2"})
    assert store.meta()["a"] == "1"
    store.delete_meta(["a"])
    assert "a" not in store.meta() and store.meta()["b"] == "2"


def test_a_batch_replaces_a_file_and_every_read_follows(store):
    store.apply([write("a.md", ["alpha one", "alpha two"], [unit(1, 0), unit(0, 1)]), write("b.md", ["beta"])])
    assert set(store.file_records()) == {"a.md", "b.md"}
    assert store.counts()["files"] == 2 and store.counts()["chunks"] == 3 and store.counts()["vectors"] == 2
    assert store.vector_dims() == 2
    got = store.file_chunks("a.md")
    assert [c.text for c in got.chunks] == ["alpha one", "alpha two"] and got.vectors[0] is not None
    assert store.file_heads(["a.md", "b.md"]) == {"a.md": "alpha one", "b.md": "beta"}
    assert set(store.vectors_for_hashes([text_hash("alpha two")], "m")) == {text_hash("alpha two")}
    assert store.vectors_for_hashes([text_hash("alpha two")], "another-model") == {}
    store.apply([write("a.md", ["alpha three"])], removes=["b.md"])
    assert set(store.file_records()) == {"a.md"} and store.counts()["chunks"] == 1
    assert store.file_chunks("b.md") is None
    assert ids_of(store, keyword_search(store, keyword_query("alpha"), 5)) == ["alpha three"]


def test_touching_a_record_changes_no_chunk(store):
    store.apply([write("a.md", ["kept"])])
    record = store.file_records()["a.md"]
    store.apply([], touches=[FileRecord("a.md", "memory", record.hash, 99, 7)])
    assert store.file_records()["a.md"].mtime_ns == 99 and store.counts()["chunks"] == 1


def test_keyword_candidates_carry_what_bm25_needs(store):
    store.apply([write("a.md", ["the walrus sings", "a quiet harbour\nwith a walrus"]), write("b.md", ["nothing"])])
    query = keyword_query("walrus")
    cands = store.keyword_candidates(query, 10)
    assert isinstance(cands, KeywordCandidates) and len(cands.lines) == 2
    assert cands.n_docs == 3 and cands.avgdl > 0 and cands.df[query.terms[0]] == 2
    assert all(isinstance(line, list) for lines in cands.lines.values() for line in lines)
    assert len(next(lines for lines in cands.lines.values() if len(lines) == 2)) == 2  # one analysed line per line
    assert store.keyword_candidates(keyword_query("?!"), 10) == KeywordCandidates()
    assert store.keyword_candidates(query, 10, sources=["sessions"]).lines == {}


def test_terms_starting_reads_the_index_terms_by_first_letter_and_length(store):
    store.apply([write("a.md", ["Muhhamed sailed to Kyoto", "a quiet harbour"]), write("b.md", ["Akib met Mara"])])
    assert sorted(store.terms_starting("m", 4, 8)) == ["mara", "meet", "muhham"]  # as the index holds them (met: meet)
    assert sorted(store.terms_starting("kq", 1, 10)) == ["kyoto", "quiet"]
    assert sorted(store.terms_starting("a", 1, 4)) == ["a", "akib"]
    assert store.terms_starting("z", 1, 20) == []


def test_doc_freqs_counts_the_chunks_holding_each_term(store):
    store.apply([write("a.md", ["特斯拉在纽约去世", "a quiet harbour"]), write("b.md", ["特斯拉 sailed"])])
    assert store.doc_freqs(["特斯", "斯拉", "纽约", "思拉", "sail", "harbour"]) == {
        "特斯": 2, "斯拉": 2, "纽约": 1, "思拉": 0, "sail": 1, "harbour": 1}
    store.apply([], removes=["b.md"])
    assert store.doc_freqs(["特斯", "sail"]) == {"特斯": 1, "sail": 0}  # as the index is now


def test_file_candidates_are_the_chunks_of_those_files_holding_a_term(store):
    store.apply([write("a.md", ["the walrus sings", "a quiet harbour"]), write("b.md", ["a walrus too"]),
                 write("c.md", ["walrus three"], source="sessions")])
    query = keyword_query("walrus harbour")
    every = store.keyword_candidates(query, 10)
    got = store.file_candidates(query, ["a.md", "missing.md"])
    assert sorted(ids_of(store, [(r, 0) for r in got.lines])) == ["a quiet harbour", "the walrus sings"]
    assert (got.df, got.n_docs, got.avgdl) == (every.df, every.n_docs, every.avgdl)
    assert all(got.lines[r] == every.lines[r] for r in got.lines)  # analysed alike
    assert store.file_candidates(query, ["a.md", "c.md"], sources=["sessions"]).lines.keys() == \
        {r for r in every.lines if ids_of(store, [(r, 0)]) == ["walrus three"]}
    assert store.file_candidates(query, []).lines == {}
    assert store.file_candidates(keyword_query("nothing-like-it"), ["a.md"]).lines == {}


def test_chinese_of_any_length_is_found_by_keyword(store):
    store.apply([write("a.md", ["用户喜欢喝乌龙茶", "我们决定用数据库作为默认索引"])])
    for q, want in (("茶", "用户喜欢喝乌龙茶"), ("乌龙", "用户喜欢喝乌龙茶"), ("默认索引", "我们决定用数据库作为默认索引")):
        assert ids_of(store, keyword_search(store, keyword_query(q), 5))[0] == want, q


def test_vector_search_is_cosine_best_first_and_filters_sources(store):
    store.apply([write("a.md", ["east", "north"], [unit(1, 0), unit(0, 1)]),
                 write("s.jsonl", ["north-east"], [unit(1, 1)], source="sessions")])
    for _ in range(4):  # cold and warm paths alike
        hits = store.vector_search(unit(1, 0.1), 3)
        assert ids_of(store, hits) == ["east", "north-east", "north"]
        assert hits[0][1] == pytest.approx(float(unit(1, 0.1) @ unit(1, 0)), abs=1e-5)
    assert ids_of(store, store.vector_search(unit(1, 1), 3, sources=["memory"])) == ["east", "north"]


def test_the_vector_reference_is_a_fixed_sample_and_none_below_its_minimum(store):
    rng = np.random.default_rng(7)
    assert store.vector_reference(unit(1, 0, 0)) is None  # an empty index has no reference
    few = [unit(*rng.normal(size=3)) for _ in range(4)]
    store.apply([write("few.md", [f"t{i}" for i in range(4)], few)])
    assert store.vector_reference(unit(1, 0, 0)) is None  # too few vectors to say what is typical
    many = [unit(*rng.normal(size=3)) for _ in range(60)]
    store.apply([write("many.md", [f"m{i}" for i in range(60)], many)])
    q = unit(1, 0.5, 0)
    ref = store.vector_reference(q)
    vectors = np.stack(few + many)
    sims, pairs = vectors @ q, (vectors @ vectors.T)[np.triu_indices(len(vectors), k=1)]
    # every vector is in a sample this small: its statistics are the whole index's
    assert ref.mean == pytest.approx(float(sims.mean()), abs=1e-5)
    assert ref.sd == pytest.approx(float(sims.std()), abs=1e-5)
    assert ref.pair_mean == pytest.approx(float(pairs.mean()), abs=1e-5)
    assert ref.pair_sd == pytest.approx(float(pairs.std()), abs=1e-5)
    assert store.vector_reference(q) == ref  # the same sample every time
    assert store.vector_reference(unit(1, 0)) is None  # another model's dimensions


def test_the_embedding_cache_puts_gets_and_prunes_the_oldest(store):
    key = CacheKey("p", "m", "k")
    store.cache_put(key, {"h1": unit(1, 0)})
    time.sleep(0.01)
    store.cache_put(key, {"h2": unit(0, 1)})
    assert set(store.cache_get(key, ["h1", "h2", "h3"])) == {"h1", "h2"}
    assert store.cache_get(CacheKey("p", "m", "other"), ["h1"]) == {}
    assert store.cache_prune(1) == 1 and set(store.cache_get(key, ["h1", "h2"])) == {"h2"}


def test_chunks_without_vectors_get_them_later(store):
    store.apply([write("a.md", ["one", "two"], [unit(1, 0), None])])
    assert store.count_without_vectors() == 1
    (rid, h, text), = store.chunks_without_vectors(10)
    assert text == "two" and h == text_hash("two")
    store.add_vectors([(rid, unit(0, 1))])
    assert store.count_without_vectors() == 0
    assert ids_of(store, store.vector_search(unit(0, 1), 1)) == ["two"]


def test_one_writer_at_a_time_and_who_it_is(store):
    assert not store.lock_busy()
    with store.write_lock(timeout=1):
        assert store.lock_busy() and store.lock_holder() == __import__("os").getpid()
        failed = []

        def second():
            try:
                with store.write_lock(timeout=0.1):
                    pass
            except LockTimeoutError as exc:
                failed.append(exc)

        t = threading.Thread(target=second)
        t.start()
        t.join()
        assert failed, "a second writer got the lock"
    assert not store.lock_busy()


def test_a_rebuild_is_built_aside_and_swapped_in_at_once(store):
    store.apply([write("old.md", ["the old note"], [unit(1, 0)])])
    build = store.begin_rebuild()
    build.apply([write("new.md", ["the new note"], [unit(0, 1)])])
    build.set_meta({"fingerprint": "new"})
    assert set(store.file_records()) == {"old.md"}  # readers see the old index until the commit
    store.commit_rebuild(build)
    assert set(store.file_records()) == {"new.md"} and store.meta()["fingerprint"] == "new"
    assert ids_of(store, store.vector_search(unit(0, 1), 1)) == ["the new note"]
    assert ids_of(store, keyword_search(store, keyword_query("new"), 3)) == ["the new note"]
    aside = store.begin_rebuild()
    store.discard_rebuild(aside)
    store.remove_stale_builds()
    assert set(store.file_records()) == {"new.md"}


def test_a_repair_replaces_everything(store):
    store.apply([write("old.md", ["the old note"])])
    store.mark_damaged("a test says so")
    assert store.damaged() == "a test says so"
    build = store.begin_rebuild()
    build.apply([write("fresh.md", ["a fresh note"])])
    store.commit_rebuild(build, repair=True)
    assert store.damaged() is None and set(store.file_records()) == {"fresh.md"}


def test_a_sound_store_checks_clean_and_describes_itself(store):
    store.apply([write("a.md", ["x"], [unit(1, 0)])])
    assert store.check() == [] and store.check(deep=True) == []
    assert store.read_only is False and store.take_recovery() is None
    info = store.describe()
    assert info.path == store.path and info.driver and info.vector and info.fts_tokenizer
    store.clear_damaged()
    assert store.damaged() is None


def test_annotations_travel_with_their_chunks_and_are_searchable_by_key(store):
    meta = '{"importance":8,"key":"db-host"}'
    rows = [ChunkRow("m:1", "MEMORY.md", "memory", 3, 3, text_hash(t := "- db on pg2 <!-- key: db-host -->"), "m", t,
                     meta),
            ChunkRow("m:2", "MEMORY.md", "memory", 5, 5, text_hash("- lunch at noon"), "m", "- lunch at noon")]
    store.apply([FileWrite(FileRecord("MEMORY.md", "memory", "h", 1, 2), rows, [None, None])])
    (rid, (path, start, end, got)), = store.annotations().items()
    assert (path, start, end, got) == ("MEMORY.md", 3, 3, meta)
    assert store.chunks([rid])[rid].meta == meta and store.file_chunks("MEMORY.md").chunks[0].meta == meta
    # the key's words are indexed, the comment's other words are not
    assert ids_of(store, keyword_search(store, keyword_query("db host"), 5))[0].startswith("- db on pg2")
    assert keyword_search(store, keyword_query("importance"), 5) == []


def test_forgotten_text_can_be_scrubbed_from_the_cache_and_the_files(store):
    key = CacheKey("p", "m", "k")
    gone = "the vault combination is 31-41-59"
    store.apply([write("a.md", [gone, "kept line"], [unit(1, 0), unit(0, 1)])])
    store.cache_put(key, {text_hash(gone): unit(1, 0), text_hash("kept line"): unit(0, 1)})
    store.apply([write("a.md", ["kept line"], [unit(0, 1)])])
    assert store.cache_delete([text_hash(gone)]) == 1
    assert store.cache_get(key, [text_hash(gone), text_hash("kept line")]).keys() == {text_hash("kept line")}
    store.scrub()
    assert ids_of(store, keyword_search(store, keyword_query("vault combination"), 5)) == []
    assert ids_of(store, keyword_search(store, keyword_query("kept"), 5)) == ["kept line"]


def test_a_store_says_which_texts_it_still_holds(store):
    store.apply([write("a.md", ["the otter is called Pip", "another line"])])
    assert store.holds(["otter is called Pip", "never written"]) == ["otter is called Pip"]
    store.apply([write("a.md", ["another line"])])
    store.scrub()
    assert store.holds(["otter is called Pip"]) == []
