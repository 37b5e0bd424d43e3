"""How fresh the index stays, and what keeping it fresh costs, on this machine.

    python benchmarks/freshness.py [--sections latency,burst,fds,rebuild] [--work-dir bench-results/speed]
                                   [--out bench-results/freshness.json]

Sections:
  latency  a note written into a watched 10 000-chunk workspace: time until a search that
           does not sync itself finds it (the watcher's path: debounce 1 500 ms + sync), and
           the time of a search issued right after the write (the search-side check), p50/p95
  burst    1 000 files written as fast as possible into the watched workspace: watcher
           flushes, syncs, and time from the last write until all are searchable
  fds      open file descriptors (and inotify watches) of a process watching a 20 000-file
           tree, native and polling
  rebuild  memory_search latency p50/p95 while a full rebuild of the 10 000-chunk index
           (a settings change: every chunk re-embedded) runs in the background writer

The default embedder and default configuration throughout. Scratch workspaces are made
from the benchmark texts (see speed.py) under --work-dir and reused between runs.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mnemoclaw.eval.metrics import percentile  # noqa: E402
from speed import _queries, log, make_workspace, open_memory, run_sections  # noqa: E402


def _ws_10k(bench: Path, work: Path) -> tuple[Path, Path]:
    """The 10 000-chunk workspace of speed.py's search section, indexed once."""
    ws, state = work / "ws-10000", work / "ws-10000-state"
    make_workspace(bench, ws, files=10_000 // 9, notes_per_file=18, seed=10_000)
    with open_memory(ws, state) as mem:
        r = mem.sync()
        log(f"10k workspace: {mem.backend.store.counts()['chunks']} chunks ({r.chunks_embedded} embedded now)")
    return ws, state


def _until(cond, timeout: float = 60.0, step: float = 0.02) -> float:
    start = time.perf_counter()
    while not cond():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("condition not reached")
        time.sleep(step)
    return time.perf_counter() - start


def _found(mem, token: str) -> bool:
    return any(token in h.text for h in mem.search(token, sync=False, mode="keyword"))


def section_latency(bench: Path, work: Path) -> dict:
    ws, state = _ws_10k(bench, work)
    inbox = ws / "memory" / "fresh"
    shutil.rmtree(inbox, ignore_errors=True)
    inbox.mkdir()
    watch_ms, search_ms = [], []
    with open_memory(ws, state) as mem:
        mem.sync()
        mem.provider.warm()
        watcher = mem.freshness.watch()
        time.sleep(0.5)
        for i in range(20):
            token = f"zqfresh{i}w"
            (inbox / f"w{i}.md").write_text(f"- watcher note {token}: the kettle is in the shed\n", "utf-8")
            watch_ms.append(_until(lambda token=token: _found(mem, token)) * 1000)
            time.sleep(0.2)
        mem.freshness.background.wait_idle(60)
        for i in range(20):
            token = f"zqfresh{i}s"
            (inbox / f"s{i}.md").write_text(f"- search note {token}: the ladder is in the barn\n", "utf-8")
            t = time.perf_counter()
            hits = mem.tools.memory_search(token)["results"]
            search_ms.append((time.perf_counter() - t) * 1000)
            assert hits and token in hits[0]["snippet"], token
            mem.freshness.background.wait_idle(60)
            time.sleep(0.2)
        debounce = watcher.debounce
    shutil.rmtree(inbox, ignore_errors=True)
    with open_memory(ws, state) as mem:
        mem.sync()
    out = {"debounce_ms": round(debounce * 1000),
           "watcher_p50_ms": round(percentile(watch_ms, 50)), "watcher_p95_ms": round(percentile(watch_ms, 95)),
           "search_side_p50_ms": round(percentile(search_ms, 50), 1),
           "search_side_p95_ms": round(percentile(search_ms, 95), 1)}
    log(f"latency: {out}")
    return out


def section_burst(bench: Path, work: Path) -> dict:
    ws, state = _ws_10k(bench, work)
    inbox = ws / "memory" / "burst"
    shutil.rmtree(inbox, ignore_errors=True)
    inbox.mkdir()
    runs = []
    with open_memory(ws, state) as mem:
        mem.sync()
        mem.provider.warm()
        for run in range(3):
            watcher = mem.freshness.watch()
            time.sleep(0.5)
            flushes0, syncs0 = watcher.flushes, mem.freshness.background.syncs
            files0 = mem.backend.store.counts()["files"]
            t = time.perf_counter()
            for i in range(1000):
                (inbox / f"r{run}-{i:04d}.md").write_text(f"- burst {run} note {i} about the lighthouse\n", "utf-8")
            burst_s = time.perf_counter() - t
            t = time.perf_counter()
            _until(lambda files0=files0: mem.backend.store.counts()["files"] == files0 + 1000, timeout=120)
            settle = time.perf_counter() - t
            time.sleep(2 * watcher.debounce)
            mem.freshness.background.wait_idle(60)
            runs.append({"burst_s": round(burst_s, 2), "flushes": watcher.flushes - flushes0,
                         "syncs": mem.freshness.background.syncs - syncs0, "searchable_after_last_write_s": round(settle, 2)})
    shutil.rmtree(inbox, ignore_errors=True)
    with open_memory(ws, state) as mem:
        mem.sync()
    out = {"runs": runs, "max_syncs": max(r["syncs"] for r in runs)}
    log(f"burst: {out}")
    return out


def _fd_report() -> tuple[int, int]:
    fds = os.listdir("/proc/self/fd")
    watches = 0
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify":
                with open(f"/proc/self/fdinfo/{fd}") as fh:
                    watches += sum(1 for line in fh if line.startswith("inotify wd:"))
        except OSError:
            continue
    return len(fds), watches


def section_fds(bench: Path, work: Path) -> dict:
    ws = work / "ws-20k-files"
    make_workspace(bench, ws, files=20_000, notes_per_file=1)
    state = work / "ws-20k-files-state"
    out = {"files": 20_000}
    with open_memory(ws, state, provider="none") as mem:
        mem.sync()
        before, _ = _fd_report()
        out["fds_before_watch"] = before
        for mode, polling in (("native", False), ("polling", True)):
            watcher = mem.freshness.watch(polling=polling)
            time.sleep(3.0)
            fds, watches = _fd_report()
            out[f"fds_{mode}"] = fds
            out[f"inotify_watches_{mode}"] = watches
            out[f"dirs_watched_{mode}"] = len(watcher.targets)
            # still works: a new note in the big tree is found without a search-side sync
            token = f"zqfd{mode}"
            (ws / "memory" / "000" / f"{token}.md").write_text(f"- {token}\n", "utf-8")
            out[f"found_after_s_{mode}"] = round(_until(lambda token=token: _found(mem, token), timeout=60), 2)
            (ws / "memory" / "000" / f"{token}.md").unlink()
            mem.freshness.stop()
    log(f"fds: {out}")
    return out


def section_rebuild(bench: Path, work: Path) -> dict:
    ws, state = _ws_10k(bench, work)
    queries = _queries(bench, 400)
    idle = []
    with open_memory(ws, state) as mem:
        for q in queries[:100]:
            t = time.perf_counter()
            mem.tools.memory_search(q)
            idle.append((time.perf_counter() - t) * 1000)
    # new chunking: the index must be rebuilt and every chunk embedded again
    lat = []
    with open_memory(ws, state, chunking={"tokens": 300, "overlap": 60}) as mem:
        mem.tools.memory_search("start")  # hands the rebuild to the background writer
        t0 = time.perf_counter()
        i = 0
        while mem.freshness.background.busy:
            t = time.perf_counter()
            mem.tools.memory_search(queries[i % len(queries)])
            lat.append((time.perf_counter() - t) * 1000)
            i += 1
        rebuild_s = time.perf_counter() - t0
        ok = mem.backend.needs_rebuild() == "" and mem.freshness.background.last_error is None
    with open_memory(ws, state) as mem:  # back to the defaults (the cache makes it quick)
        mem.sync()
    out = {"chunks": 10_000, "rebuild_s": round(rebuild_s, 1), "rebuild_ok": ok, "searches": len(lat),
           "idle_p50_ms": round(percentile(idle, 50), 1), "idle_p95_ms": round(percentile(idle, 95), 1),
           "during_rebuild_p50_ms": round(percentile(lat, 50), 1),
           "during_rebuild_p95_ms": round(percentile(lat, 95), 1),
           "during_rebuild_max_ms": round(max(lat), 1)}
    log(f"rebuild: {out}")
    return out


def main() -> None:
    run_sections(__doc__, {"latency": section_latency, "burst": section_burst, "fds": section_fds, "rebuild": section_rebuild}, "bench-results/freshness.json")


if __name__ == "__main__":
    main()
