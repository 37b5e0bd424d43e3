"""Round-trip latency of memory_search through the MCP server, stdio and HTTP.

    python benchmarks/mcp_latency.py [--work-dir bench-results/speed] [--out bench-results/mcp.json] [--queries 200]
    python benchmarks/mcp_latency.py --startup-only [--startup-runs 5] [--new-notes 3] [--busy]

Starts `mnemoclaw mcp` as a real subprocess over the 10 000-chunk workspace of
speed.py (default embedder, index built once), connects the MCP SDK's client, and
times each `memory_search` call from request to parsed result.

Start-up: over a copy of that workspace and its index, ``--new-notes`` notes are written
while the server is off, then `mnemoclaw mcp` (stdio, watching, as a client launches it) is
started: the time until the client's handshake is done, the first `memory_search` (for one
of those notes, so the session-start sync has work) and whether it found the note.
``--busy`` runs it beside ``--busy-procs`` CPU-bound processes, each in a session of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mnemoclaw.eval.metrics import percentile  # noqa: E402
from speed import (  # noqa: E402
    BusyMachine,
    _queries,
    bench_dir,
    load_results,
    log,
    make_workspace,
    open_memory,
    save_results,
)


def _stats(lat: list[float]) -> dict:
    return {"calls": len(lat), "p50_ms": round(percentile(lat, 50), 1), "p95_ms": round(percentile(lat, 95), 1)}


async def _run(client, queries: list[str]) -> list[float]:
    for q in queries[:10]:  # warm: model loaded, caches filled
        await client.call_tool("memory_search", {"query": q})
    lat = []
    for q in queries:
        t = time.perf_counter()
        r = await client.call_tool("memory_search", {"query": q + " "})
        lat.append((time.perf_counter() - t) * 1000)
        assert not r.is_error and "results" in r.structured_content
    return lat


def _startup(ws_src: Path, state_src: Path, scratch: Path, runs: int, new_notes: int, env: dict) -> dict:
    from mcp import Client, StdioServerParameters

    shutil.rmtree(scratch, ignore_errors=True)
    ws, state = scratch / "ws", scratch / "state"
    shutil.copytree(ws_src, ws)
    shutil.copytree(state_src, state)
    args = ["-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir", str(state), "mcp"]
    ready, first, found = [], [], 0
    for i in range(runs):
        for k in range(new_notes):  # written while no server runs: the session-start sync's work
            (ws / "memory" / f"started-{i}-{k}.md").write_text(
                f"# run {i}\n\n- the courier left parcel marmalade{i}x{k} at the side gate\n", encoding="utf-8")

        async def one(i: int) -> tuple[float, float, dict]:
            began = time.perf_counter()
            async with Client(StdioServerParameters(command=sys.executable, args=args, env=env),
                              read_timeout_seconds=120) as c:
                up = time.perf_counter()
                r = await c.call_tool("memory_search", {"query": f"parcel marmalade{i}x0"})
                return (up - began) * 1000, (time.perf_counter() - up) * 1000, r.structured_content

        up_ms, first_ms, out = anyio.run(one, i)
        hits = out.get("results") or []
        hit = bool(hits) and hits[0]["path"] == f"memory/started-{i}-0.md"
        found += hit
        ready.append(up_ms)
        first.append(first_ms)
        log(f"start {i + 1}/{runs}: handshake {up_ms:.0f} ms, first search {first_ms:.0f} ms, "
            f"{'found' if hit else 'NOT found'} the note written while the server was off")
    shutil.rmtree(scratch, ignore_errors=True)
    return {"runs": runs, "new_notes": new_notes, "handshake_p50_ms": round(percentile(ready, 50)),
            "first_search_p50_ms": round(percentile(first, 50)), "first_search_max_ms": round(max(first)),
            "found": found, "load_1min": round(os.getloadavg()[0], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work-dir", default="bench-results/speed")
    ap.add_argument("--out", default="bench-results/mcp.json")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--startup-runs", type=int, default=5, help="server starts to time (0: none)")
    ap.add_argument("--new-notes", type=int, default=3, help="notes written before each start")
    ap.add_argument("--startup-only", action="store_true", help="only the start-up section")
    ap.add_argument("--busy", action="store_true", help="the start-up section beside a competing CPU load")
    ap.add_argument("--busy-procs", type=int, default=4)
    args = ap.parse_args()
    from mcp import Client, StdioServerParameters

    bench = bench_dir()
    work = Path(args.work_dir).resolve()
    ws, state = work / "ws-10000", work / "ws-10000-state"
    make_workspace(bench, ws, files=10_000 // 9, notes_per_file=18, seed=10_000)
    with open_memory(ws, state) as mem:
        mem.sync()
        chunks = mem.backend.store.counts()["chunks"]
    queries = _queries(bench, args.queries + 10)
    base = ["-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir", str(state), "mcp", "--no-watch"]
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV")}
    results = load_results(args.out)

    if args.startup_runs:
        scratch = work / "mcp-startup"
        if args.busy:
            with BusyMachine(args.busy_procs, 600.0, apart=True):
                results["startup_busy"] = _startup(ws, state, scratch, args.startup_runs, args.new_notes, env)
        else:
            results["startup"] = _startup(ws, state, scratch, args.startup_runs, args.new_notes, env)
        save_results(results, args.out)
    if args.startup_only:
        print(json.dumps(results, indent=2))
        return

    async def stdio() -> list[float]:
        async with Client(StdioServerParameters(command=sys.executable, args=base, env=env),
                          read_timeout_seconds=120) as c:
            return await _run(c, queries)

    results["stdio"] = {"chunks": chunks, **_stats(anyio.run(stdio))}
    log(f"stdio: {results['stdio']}")

    proc = subprocess.Popen([sys.executable, *base, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = None
        while url is None:
            line = proc.stderr.readline()
            if not line:
                raise SystemExit("the HTTP server did not start")
            m = re.search(r"at (http://\S+/mcp)", line)
            url = m.group(1) if m else None

        async def http() -> list[float]:
            async with Client(url, read_timeout_seconds=120) as c:
                return await _run(c, queries)

        results["http"] = {"chunks": chunks, **_stats(anyio.run(http))}
        log(f"http: {results['http']}")
    finally:
        proc.terminate()
        proc.wait(30)
    save_results(results, args.out)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
