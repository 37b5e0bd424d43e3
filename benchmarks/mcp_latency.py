"""Round-trip latency of memory_search through the MCP server, stdio and HTTP.

    python benchmarks/mcp_latency.py [--work-dir bench-results/speed] [--out bench-results/mcp.json] [--queries 200]

Starts `mnemoclaw mcp` as a real subprocess over the 10 000-chunk workspace of
speed.py (default embedder, index built once), connects the MCP SDK's client, and
times each `memory_search` call from request to parsed result.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mnemoclaw.eval.metrics import percentile  # noqa: E402
from speed import _queries, bench_dir, load_results, log, make_workspace, open_memory, save_results  # noqa: E402


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work-dir", default="bench-results/speed")
    ap.add_argument("--out", default="bench-results/mcp.json")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    from mcp import Client, StdioServerParameters

    bench = bench_dir()
    work = Path(args.work_dir).resolve()
    ws, state = work / "ws-10000", work / "ws-10000-state"
    make_workspace(bench, ws, files=10_000 // 9, notes_per_file=18, seed=10_000)
    with open_memory(ws, state) as mem:
        mem.sync()
        chunks = mem.store.counts()["chunks"]
    queries = _queries(bench, args.queries + 10)
    base = ["-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir", str(state), "mcp", "--no-watch"]
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV")}
    results = load_results(args.out)

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
