"""Speed and memory of indexing and search, on this machine, with the project's own code.

    python benchmarks/speed.py [--sections keyword,embed,query,resync,search,during-sync,cold]
                               [--scale 10000,100000] [--work-dir bench-results/speed]
                               [--out bench-results/speed.json] [--pg-url postgresql://...]
                               [--busy [--busy-procs 2]]

Sections:
  keyword  keyword-only indexing of the LoCoMo Markdown folders (chunks/s), then a full rebuild of
           it and a re-sync after 50 files were edited (what deleting rows costs)
  embed    the default embedder alone vs a full index with it (chunks/s, ratio), and the
           embedder alone at each BLAS thread count
  query    one query embedding (p50/p95 over distinct questions, warm model), at each thread count
  resync   re-sync of an unchanged 10 000-file workspace, then with one file changed
  search   hybrid search latency in a warm process (p50/p95) and peak RSS, at each --scale
           (synthetic workspaces made from the benchmark texts; the first run embeds them,
           later runs reuse the index in --work-dir); with --pg-url the same index is copied into
           Postgres (`mnemoclaw migrate`'s copy) and measured there too, as search_pg_N;
           then the same in a watching process (file events instead of the walk), new questions;
           the best pass's p50 for the mix's Chinese questions apart (--without-han-names: without
           finding their names, text/names.py, to compare)
  during-sync  searches while the background writer embeds the LoCoMo workspace from nothing
           (search p50 and the sync's chunks/s)
  cold     `mnemoclaw search` from the shell: interpreter start, model load, query (p50)
  nearby   `mnemoclaw search` and `recall` from the shell at 10 000 chunks, asked of a running
           `mnemoclaw watch` over its socket and on their own (p50/p95, process start included)
  fts      the keyword candidates of the search section's workspaces (--scale): FTS5 counting a
           question's matches, ranking them by bm25() in one query, and in two rowid ranges at once
           (store/sqlite.py SPLIT_MIN_CHUNKS), with how many questions got the same candidates

--busy runs every section beside a fixed competing load it starts itself: --busy-procs
CPU-bound processes (2 by default), each ending by itself after --busy-max-s or when this
script ends; figures go to bench-results/speed-busy.json unless --out says otherwise.

Benchmark data is read from ../shared/bench (or MNEMOCLAW_BENCH_DIR) and never copied
into the repository; scratch workspaces live under --work-dir.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

from mnemoclaw.api import Memory
from mnemoclaw.config import load_settings
from mnemoclaw.embeddings.base import cpu_count
from mnemoclaw.embeddings.local import LocalUSE
from mnemoclaw.eval.metrics import percentile
from mnemoclaw.index.embedding import EMBED_BATCH
from mnemoclaw.markdown.chunker import chunk_markdown
from mnemoclaw.text import names as han
from mnemoclaw.text.script import HAN_RUN as HAN


def bench_dir() -> Path:
    here = Path(__file__).resolve().parent
    for c in (os.environ.get("MNEMOCLAW_BENCH_DIR"), here.parent.parent / "shared" / "bench", "/work/shared/bench"):
        if c and Path(c, "README.md").exists():
            return Path(c)
    sys.exit("benchmark data not found: set MNEMOCLAW_BENCH_DIR")


def open_memory(ws: Path, state: Path, **overrides) -> Memory:
    return Memory(load_settings(workspace=ws, state_dir=state, config={}, overrides=overrides or None, env={}))


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def copy_locomo(bench: Path, ws: Path) -> None:
    if ws.exists():
        shutil.rmtree(ws)
    for conv in sorted((bench / "locomo" / "markdown").iterdir()):
        shutil.copytree(conv, ws / "memory" / conv.name)


def locomo_workspace(bench: Path, work: Path) -> Path:
    """The LoCoMo Markdown folders as one workspace's memory/ (copied once into the work dir)."""
    ws = work / "locomo-ws"
    if not ws.exists():
        copy_locomo(bench, ws)
    return ws


def section_keyword(bench: Path, work: Path) -> dict:
    ws = work / "locomo-ws"
    copy_locomo(bench, ws)
    runs = []
    from mnemoclaw.text import tokenize

    rebuilds, edits = [], []
    days = sorted(ws.rglob("*.md"))[:50]
    for n in range(3):
        state = work / "kw-state"
        shutil.rmtree(state, ignore_errors=True)
        tokenize._TERMS.clear()  # as in a fresh process: every word stemmed again
        with open_memory(ws, state, provider="none") as mem:
            t = time.perf_counter()
            report = mem.sync()
            runs.append((time.perf_counter() - t, report.chunks_total, report.added))
            # what deleting rows costs (SQLite's secure_delete zeroes each one): a full rebuild
            # replaces every row; editing 50 files replaces theirs
            t = time.perf_counter()
            mem.sync(full=True)
            rebuilds.append(time.perf_counter() - t)
            for path in days:
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(f"\n- edited in run {n}\n")
            t = time.perf_counter()
            mem.sync()
            edits.append(time.perf_counter() - t)
    copy_locomo(bench, ws)  # the edits undone
    secs, chunks, files = min(runs)
    out = {"files": files, "chunks": chunks, "seconds": round(secs, 3), "chunks_per_s": round(chunks / secs),
           "full_rebuild_s": round(min(rebuilds), 3), "fifty_edited_resync_s": round(min(edits), 3)}
    log(f"keyword-only indexing of LoCoMo: {out}")
    return out


def section_embed(bench: Path, work: Path) -> dict:
    ws = locomo_workspace(bench, work)
    texts = []
    for path in sorted(ws.rglob("*.md")):
        texts.extend(c.text for c in chunk_markdown(path.read_text("utf-8")))
    texts = list(dict.fromkeys(texts))
    state = work / "embed-state"
    shutil.rmtree(state, ignore_errors=True)
    mem = open_memory(ws, state)
    mem.provider.warm()  # model load is not part of either figure
    t = time.perf_counter()
    for i in range(0, len(texts), EMBED_BATCH):
        mem.provider.embed(texts[i : i + EMBED_BATCH])
    raw = len(texts) / (time.perf_counter() - t)
    t = time.perf_counter()
    report = mem.sync()
    secs = time.perf_counter() - t
    mem.close()
    indexed = report.chunks_embedded / secs
    by_threads = {}
    for threads in range(1, cpu_count() + 1):  # worker threads, one BLAS thread each
        model = LocalUSE(threads=threads, cache_dir=str(state / "models"))
        model.warm()
        t = time.perf_counter()
        for i in range(0, len(texts), EMBED_BATCH):
            model.embed(texts[i : i + EMBED_BATCH])
        by_threads[f"threads_{threads}_chunks_per_s"] = round(len(texts) / (time.perf_counter() - t), 1)
    # what one call on several BLAS threads does instead (the earlier default)
    encoder = model._load()
    with threadpool_limits(limits=cpu_count(), user_api="blas"):
        t = time.perf_counter()
        for i in range(0, len(texts), EMBED_BATCH):
            encoder.encode(texts[i : i + EMBED_BATCH])
        by_threads[f"blas_{cpu_count()}_threads_chunks_per_s"] = round(len(texts) / (time.perf_counter() - t), 1)
    out = {"chunks": len(texts), "embedder_chunks_per_s": round(raw, 1), "index_chunks_per_s": round(indexed, 1),
           "ratio": round(indexed / raw, 3), "threads": mem.provider.threads, **by_threads}
    log(f"default embedder vs indexing: {out}")
    return out


def section_query(bench: Path, work: Path) -> dict:
    """One question embedded, as a search does (no cache: a new question each time); and the
    same on as many BLAS threads as cores (the earlier default)."""
    queries = _queries(bench, 320)
    model = LocalUSE(cache_dir=str(work / "query-models"))
    model.warm()
    out: dict = {"queries": 300}
    for label, blas in (("", None), (f"blas_{cpu_count()}_threads_", cpu_count())):
        limit = threadpool_limits(limits=blas, user_api="blas") if blas else contextlib.nullcontext()
        with limit:
            embed = (lambda q: model._load().encode([q])) if blas else (lambda q: model.embed([q], query=True))
            for q in queries[:20]:
                embed(q)
            lat = []
            for q in queries[20:]:
                t = time.perf_counter()
                embed(q)
                lat.append((time.perf_counter() - t) * 1000)
        out[f"{label}p50_ms"] = round(percentile(lat, 50), 2)
        out[f"{label}p95_ms"] = round(percentile(lat, 95), 2)
    log(f"one query embedding: {out}")
    return out


def _sentences(bench: Path) -> list[str]:
    """Sentences from the benchmark texts, English and Chinese, for synthetic notes."""
    out = []
    for rel in ("locomo/turns/corpus.jsonl", "scifact/beir-test/corpus.jsonl", "xquad/zh-sentence/corpus.jsonl",
                "cmrc2018/dev-paragraph/corpus.jsonl"):
        with open(bench / rel, encoding="utf-8") as fh:
            for line in fh:
                text = json.loads(line)["text"]
                out.extend(s.strip() for s in text.replace("。", "。\n").replace(". ", ".\n").split("\n") if len(s.strip()) > 20)
    return out


def make_workspace(bench: Path, ws: Path, files: int, notes_per_file: int, seed: int = 7) -> None:
    """Daily-log-like files: '# date', then notes of 2-6 sentences as list items."""
    marker = ws / ".complete"
    if marker.exists():
        return
    shutil.rmtree(ws, ignore_errors=True)
    rng = random.Random(seed)
    pool = _sentences(bench)
    for i in range(files):
        day = f"20{20 + i % 7}-{1 + i % 12:02d}-{1 + i % 28:02d}"
        lines = [f"# {day} ({i})", ""]
        for n in range(notes_per_file):
            lines.append(f"- note {i}.{n}: " + " ".join(rng.choice(pool) for _ in range(rng.randint(2, 6))))
        path = ws / "memory" / f"{i // 1000:03d}" / f"{day}-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    marker.write_text("ok")


def section_resync(bench: Path, work: Path) -> dict:
    ws = work / "ws-10k-files"
    make_workspace(bench, ws, files=10_000, notes_per_file=1)
    state = work / "ws-10k-files-state"
    with open_memory(ws, state) as mem:
        t = time.perf_counter()
        first = mem.sync()
        first_s = time.perf_counter() - t
    times = []
    for _ in range(5):
        with open_memory(ws, state) as mem:
            t = time.perf_counter()
            r = mem.sync()
            times.append(time.perf_counter() - t)
            assert r.unchanged == 10_000 and r.chunks_embedded == 0, r
    target = next(iter(sorted((ws / "memory").rglob("*.md"))))
    changed = []
    for n in range(3):
        with target.open("a", encoding="utf-8") as fh:
            fh.write(f"- appended note {time.time()} number {n}\n")
        with open_memory(ws, state) as mem:
            mem.provider.warm()
            t = time.perf_counter()
            r = mem.sync()
            changed.append(time.perf_counter() - t)
            assert r.changed == 1 and r.chunks_embedded >= 1, r
    out = {"files": 10_000, "first_index_s": round(first_s, 1), "first_chunks": first.chunks_total,
           "unchanged_resync_s_median": round(statistics.median(times), 3),
           "one_changed_resync_s_median": round(statistics.median(changed), 3)}
    log(f"re-sync: {out}")
    return out


def _queries(bench: Path, n: int) -> list[str]:
    qs = []
    for rel in ("locomo/turns/queries.jsonl", "scifact/beir-test/queries.jsonl", "xquad/zh-sentence/queries.jsonl"):
        with open(bench / rel, encoding="utf-8") as fh:
            qs.extend(json.loads(line)["text"] for line in fh)
    random.Random(3).shuffle(qs)
    return qs[:n]


PASSES = 4  # passes over the queries without the dirty check


def section_search(bench: Path, work: Path, scale: int, pg_url: str | None = None) -> dict:
    # ~9 chunks a file: 18 notes of 2-6 sentences (measured: 2 000 files made 18 184 chunks)
    files = max(1, scale // 9)
    ws = work / f"ws-{scale}"
    make_workspace(bench, ws, files=files, notes_per_file=18, seed=scale)
    state = work / f"ws-{scale}-state"
    overrides: dict = {}
    if pg_url:  # the same index in Postgres: copied from the SQLite one, nothing embedded again
        from mnemoclaw.store import StoreOptions, open_store
        from mnemoclaw.store.migrate import copy_index

        with open_memory(ws, state) as lite:
            lite.sync()
            target = open_store(StoreOptions("postgres", "", url=pg_url, namespace=f"speed-{scale}"))
            log(f"copied into Postgres: {copy_index(lite.store, target)}")
            target.close()
        overrides = {"store": {"driver": "postgres", "url": pg_url, "namespace": f"speed-{scale}"}}
    with open_memory(ws, state, **overrides) as mem:
        t = time.perf_counter()
        last = [0.0]

        def progress(done: int, total: int) -> None:
            if time.monotonic() - last[0] > 30:
                last[0] = time.monotonic()
                log(f"  indexing {done}/{total} files")

        report = mem.sync(progress=progress)
        index_s = time.perf_counter() - t
        chunks = mem.backend.store.counts()["chunks"]
        queries, fresh = _queries(bench, 600)[:300], _queries(bench, 600)[300:]
        for q in queries[:20]:
            mem.tools.memory_search(q)  # warm caches
        lat, lat_nosync = [], []
        for q in queries:
            t = time.perf_counter()
            mem.tools.memory_search(q)
            lat.append((time.perf_counter() - t) * 1000)
        # a watching process: the kernel's file events tell a search nothing changed
        mem.freshness.watch()
        check = mem.status(check_dirty=False)["background"]["searchCheck"]
        lat_watched = []
        for q in fresh:
            t = time.perf_counter()
            mem.tools.memory_search(q)
            lat_watched.append((time.perf_counter() - t) * 1000)
        spared = mem.status(check_dirty=False)["background"]["searchCheck"]["walksSpared"]
        mem.freshness.stop()
        mem.settings.memory_search["sync"]["onSearch"] = False
        passes, passes_zh = [], []  # the query vectors are cached by now: this is search and ranking alone
        for _ in range(PASSES):
            one, one_zh = [], []
            for q in queries:
                t = time.perf_counter()
                mem.tools.memory_search(q)
                one.append((time.perf_counter() - t) * 1000)
                if HAN.search(q):
                    one_zh.append(one[-1])
            passes.append(percentile(one, 50))
            passes_zh.append(percentile(one_zh, 50))
            lat_nosync.extend(one)
        vector_path = mem.backend.store.describe().vector
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"chunks": chunks, "files": files, "index_s": round(index_s, 1), "embedded": report.chunks_embedded,
           "p50_ms": round(percentile(lat, 50), 1), "p95_ms": round(percentile(lat, 95), 1),
           "p50_ms_watched": round(percentile(lat_watched, 50), 1),
           "p95_ms_watched": round(percentile(lat_watched, 95), 1),
           "watched_search_check": check["mode"], "watched_walks_spared": spared,
           "p50_ms_no_dirty_check": round(percentile(lat_nosync, 50), 1),
           "p95_ms_no_dirty_check": round(percentile(lat_nosync, 95), 1),
           # the quietest of the passes: what the code costs, with less of the machine's noise
           "p50_ms_no_dirty_check_best_pass": round(min(passes), 1),
           # the same for the Chinese questions of the mix alone (their names are tagged: text/names.py)
           "p50_ms_zh_best_pass": round(min(passes_zh), 1), "zh_queries": len(one_zh),
           "han_names": han.enabled,
           "peak_rss_mb": round(rss), "vector_path": vector_path}
    log(f"search at {scale}: {out}")
    return out


def section_during_sync(bench: Path, work: Path) -> dict:
    """Searches while the background writer embeds the LoCoMo workspace from nothing: what a
    search costs beside indexing, and what indexing costs beside searches."""
    ws = locomo_workspace(bench, work)
    queries = _queries(bench, 400)
    out: dict = {}
    for threads in [LocalUSE().threads] + [n for n in range(1, cpu_count() + 1) if n != LocalUSE().threads]:
        state = work / "during-sync-state"
        shutil.rmtree(state, ignore_errors=True)
        with Memory(load_settings(workspace=ws, state_dir=state, env={},
                                  config={"agents": {"defaults": {"memorySearch": {"local": {"threads": threads}}}}})) as mem:
            mem.provider.warm()
            mem.search("warm up", sync=False)
            t0 = time.perf_counter()
            mem.freshness.request("bench")
            time.sleep(0.5)
            lat = []
            while mem.freshness.background.busy and len(lat) < len(queries):
                t = time.perf_counter()
                mem.search(queries[len(lat)], sync=False)  # the search alone, not its wait for the writer
                lat.append((time.perf_counter() - t) * 1000)
            mem.freshness.background.wait_idle(600)
            secs = time.perf_counter() - t0
            chunks = mem.backend.store.counts()["chunks"]
        key = "" if threads == LocalUSE().threads else f"threads_{threads}_"
        out[f"{key}search_p50_ms"] = round(percentile(lat, 50), 1) if lat else None
        out[f"{key}searches"] = len(lat)
        out[f"{key}sync_chunks_per_s"] = round(chunks / secs, 1)
        if not key:
            out["threads"] = threads
    log(f"search during a background sync: {out}")
    return out


def section_fts(bench: Path, work: Path, scales: list[int]) -> dict:
    import mnemoclaw.store.sqlite as sqlite_store
    from mnemoclaw.store.sqlite_schema import fts_match
    from mnemoclaw.text.tokenize import keyword_query

    out: dict = {}
    queries = _queries(bench, 600)[:200]
    for scale in scales:
        ws, state = work / f"ws-{scale}", work / f"ws-{scale}-state"
        if not state.exists():
            section_search(bench, work, scale)  # builds (and embeds) the workspace once
        with open_memory(ws, state) as mem:
            store = mem.backend.store
            kq = [keyword_query(q) for q in queries]
            for q in kq[:20]:
                store.keyword_candidates(q, 100)  # warm: pages, caches, the reader connection
            t = time.perf_counter()
            for q in kq:
                store.conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (fts_match(q),))
            count_ms = (time.perf_counter() - t) * 1000 / len(kq)
            got, ms = {}, {}
            saved = sqlite_store.SPLIT_MIN_CHUNKS
            try:
                for name, threshold in (("one", 1 << 62), ("split", 1), ("one_again", 1 << 62), ("split_again", 1)):
                    sqlite_store.SPLIT_MIN_CHUNKS = threshold
                    t = time.perf_counter()
                    got[name] = [set(store.keyword_candidates(q, 100).lines) for q in kq]
                    ms[name] = (time.perf_counter() - t) * 1000 / len(kq)
            finally:
                sqlite_store.SPLIT_MIN_CHUNKS = saved
            same = sum(a == b for a, b in zip(got["one"], got["split"], strict=True))
            out[str(scale)] = {"chunks": store.counts()["chunks"], "questions": len(kq),
                               "count_matches_ms": round(count_ms, 1),
                               "one_query_ms": round(min(ms["one"], ms["one_again"]), 1),
                               "two_ranges_ms": round(min(ms["split"], ms["split_again"]), 1),
                               "same_candidates": same}
        log(f"keyword candidates at {scale}: {out[str(scale)]}")
    return out


def section_cold(bench: Path, work: Path) -> dict:
    ws = locomo_workspace(bench, work)
    state = work / "cold-state"
    exe = str(Path(sys.executable).with_name("mnemoclaw"))
    base = [exe, "--workspace", str(ws), "--state-dir", str(state)]
    subprocess.run(base + ["index"], check=True, capture_output=True)
    subprocess.run(base + ["search", "warm the model cache"], check=True, capture_output=True)
    out: dict = {}
    # a question in Chinese also loads the tagger that finds its names (text/names.py)
    for label, queries in (("", _queries(bench, 7)), ("_zh", _zh_queries(bench, 7))):
        times, peak = [], 0
        for q in queries:
            t = time.perf_counter()
            run = subprocess.run(["/usr/bin/time", "-f", "%M", *base, "search", q] if os.path.exists("/usr/bin/time")
                                 else base + ["search", q], check=True, capture_output=True, text=True)
            times.append(time.perf_counter() - t)
            last = run.stderr.strip().splitlines()[-1:] if os.path.exists("/usr/bin/time") else []
            peak = max(peak, int(last[0]) if last and last[0].isdigit() else 0)
        out.update({f"runs{label}": len(times), f"p50{label}_s": round(statistics.median(times), 3),
                    f"max{label}_s": round(max(times), 3), f"peak_rss{label}_mb": round(peak / 1024, 1)})
    log(f"cold CLI search: {out}")
    return out


def _zh_queries(bench: Path, n: int) -> list[str]:
    with open(bench / "xquad/zh-paragraph/queries.jsonl", encoding="utf-8") as fh:
        qs = [json.loads(line)["text"] for line in fh]
    random.Random(3).shuffle(qs)
    return qs[:n]


def _shell_ms(argv: list[str], env: dict[str, str], check_nearby: bool) -> tuple[float, str]:
    t = time.perf_counter()
    run = subprocess.run(argv, capture_output=True, text=True, env=env)
    ms = (time.perf_counter() - t) * 1000
    if run.returncode != 0:
        raise SystemExit(f"{argv} failed: {run.stderr}")
    if check_nearby and "answered by process" not in run.stderr:
        raise SystemExit(f"{argv} was not answered by the running process: {run.stderr}")
    return ms, run.stdout


def section_nearby(bench: Path, work: Path) -> dict:
    """`mnemoclaw search` and `mnemoclaw recall` from the shell on the 10 000-chunk workspace:
    asked of a running `mnemoclaw watch` over its socket, and on their own, in one run
    (interpreter start included; distinct questions, so no query vector is cached)."""
    scale = 10_000
    ws, state = work / f"ws-{scale}", work / f"ws-{scale}-state"
    make_workspace(bench, ws, files=max(1, scale // 9), notes_per_file=18, seed=scale)
    exe = str(Path(sys.executable).with_name("mnemoclaw"))
    base = [exe, "--workspace", str(ws), "--state-dir", str(state)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOCLAW_")}
    # compiled as an install compiles it (and as a first run does, unless PYTHONDONTWRITEBYTECODE)
    import mnemoclaw

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(mnemoclaw.__file__).parent)], check=True)
    subprocess.run(base + ["index"], check=True, capture_output=True, env=env)
    chunks = json.loads(subprocess.run(base + ["status", "--json"], check=True, capture_output=True,
                                       env=env).stdout)["chunks"]
    questions = _queries(bench, 200)
    watch = subprocess.Popen(base + ["watch"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 300
        while not list((state / "serving").glob("*.server")):
            if time.monotonic() > deadline or watch.poll() is not None:
                raise SystemExit("mnemoclaw watch did not start serving")
            time.sleep(0.2)
        asked = [*base, "-v"]
        for q in questions[-10:]:  # the watch's own start (its first sync) is over by then
            _shell_ms(asked + ["search", q], env, True)
        out: dict = {"chunks": chunks}
        for name, argv_of, n_near, n_alone in (
                ("search", lambda q: ["search", q], 60, 5),
                ("recall", lambda q: ["recall", q], 60, 5)):
            qs = questions[:n_near + n_alone] if name == "search" else questions[100:100 + n_near + n_alone]
            near = [_shell_ms(asked + argv_of(q), env, True) for q in qs[:n_near]]
            alone_env = {**env, "MNEMOCLAW_NEARBY": "off"}
            alone = [_shell_ms(base + argv_of(q), alone_env, False) for q in qs[n_near:]]
            # the same text either way
            same = sum(_shell_ms(asked + argv_of(q), env, True)[1] == _shell_ms(base + argv_of(q), alone_env, False)[1]
                       for q in qs[n_near:])
            near_ms = [ms for ms, _ in near]
            out[name] = {"asked_runs": len(near_ms), "asked_p50_ms": round(percentile(near_ms, 50), 1),
                         "asked_p95_ms": round(percentile(near_ms, 95), 1),
                         "alone_runs": len(alone), "alone_p50_ms": round(statistics.median(ms for ms, _ in alone)),
                         "same_output": f"{same}/{n_alone}"}
        bare = [_shell_ms([sys.executable, "-c", "pass"], env, False)[0] for _ in range(20)]
        out["python_start_p50_ms"] = round(percentile(bare, 50), 1)
    finally:
        watch.terminate()
        watch.wait(timeout=30)
    log(f"nearby: {out}")
    return out


def load_results(out: str) -> dict:
    """Earlier results in ``out`` (sections not re-run keep their figures)."""
    results: dict = {"cores": cpu_count(), "python": sys.version.split()[0]}
    if os.path.exists(out):
        with open(out) as fh:
            results.update(json.load(fh))
    return results


def save_results(results: dict, out: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as fh:
        json.dump(results, fh, indent=2)


def run_sections(doc: str, sections: dict, default_out: str) -> None:
    """The command line of a benchmark script made of ``section_<name>(bench, work)`` functions."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--sections", default=",".join(sections))
    ap.add_argument("--work-dir", default="bench-results/speed")
    ap.add_argument("--out", default=default_out)
    args = ap.parse_args()
    bench = bench_dir()
    work = Path(args.work_dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    results = load_results(args.out)
    for name in args.sections.split(","):
        results[name] = sections[name](bench, work)
        save_results(results, args.out)
    print(json.dumps(results, indent=2))


# A competing CPU-bound process: spins until its deadline or until the benchmark that
# started it is gone (its parent changes), whichever comes first.
_BURNER = """
import os, sys, time
end, parent = time.monotonic() + float(sys.argv[1]), os.getppid()
while time.monotonic() < end and os.getppid() == parent:
    for _ in range(200_000):
        pass
"""


class BusyMachine:
    """``procs`` CPU-bound processes beside the benchmark, for at most ``max_s`` seconds.
    ``apart``: each in a session of its own, as other people's programs are; with the kernel's
    autogroup scheduling on, burners in the benchmark's session compete with the benchmark but
    hardly with a server it starts in a new session (as the MCP client does)."""

    def __init__(self, procs: int, max_s: float, *, apart: bool = False):
        self.procs, self.max_s, self.apart = procs, max_s, apart
        self._running: list[subprocess.Popen] = []

    def __enter__(self) -> BusyMachine:
        self._running = [subprocess.Popen([sys.executable, "-c", _BURNER, str(self.max_s)],
                                          start_new_session=self.apart)
                         for _ in range(self.procs)]
        time.sleep(1.0)  # let them take their share of the cores
        log(f"busy: {self.procs} competing CPU-bound processes for at most {self.max_s:.0f} s")
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self._running:
            p.kill()
        for p in self._running:
            p.wait()
        log(f"busy load stopped; 1-minute load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default="keyword,embed,query,resync,search,during-sync,cold")
    ap.add_argument("--scale", default="10000,100000")
    ap.add_argument("--work-dir", default="bench-results/speed")
    ap.add_argument("--out")
    ap.add_argument("--pg-url", help="search sections also on the Postgres store at this URL (search_pg_N)")
    ap.add_argument("--busy", action="store_true", help="measure beside a competing CPU load this script starts")
    ap.add_argument("--without-han-names", action="store_true",
                    help="search without finding a Chinese question's names (text/names.py), to compare")
    ap.add_argument("--busy-procs", type=int, default=2)
    ap.add_argument("--busy-max-s", type=float, default=3600.0)
    args = ap.parse_args()
    args.out = args.out or ("bench-results/speed-busy.json" if args.busy else "bench-results/speed.json")
    if args.busy:
        with BusyMachine(args.busy_procs, args.busy_max_s):
            run_main(args)
    else:
        run_main(args)


def run_main(args: argparse.Namespace) -> None:
    han.enabled = not args.without_han_names
    bench = bench_dir()
    work = Path(args.work_dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    results = load_results(args.out)
    if args.busy:
        results["busy"] = {"competing_processes": args.busy_procs}
    for name in args.sections.split(","):
        if name == "search":
            for scale in (int(s) for s in args.scale.split(",")):
                # one process per scale, so peak RSS is that scale's alone
                cmd = [sys.executable, __file__, "--sections", "search-one", "--scale", str(scale),
                       "--work-dir", str(work), "--out", args.out] + (["--without-han-names"] if not han.enabled else [])
                subprocess.run(cmd, check=True)
                if args.pg_url:
                    subprocess.run([*cmd, "--pg-url", args.pg_url], check=True)
                with open(args.out) as fh:
                    results.update(json.load(fh))
            continue
        if name == "fts":
            results["fts"] = section_fts(bench, work, [int(x) for x in args.scale.split(",")])
            save_results(results, args.out)
            continue
        if name == "search-one":
            scale = int(args.scale)
            results[f"search_pg_{scale}" if args.pg_url else f"search_{scale}"] = section_search(
                bench, work, scale, args.pg_url)
        else:
            results[name] = globals()[f"section_{name.replace('-', '_')}"](bench, work)
        save_results(results, args.out)
    if "search-one" not in args.sections:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
