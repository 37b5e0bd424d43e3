"""What the web UI costs over the library, on this machine.

    python benchmarks/ui_speed.py [--scale 10000] [--work-dir bench-results/speed]
                                  [--out bench-results/ui-speed.json]

Serves `mnemoclaw ui`'s app (a real uvicorn server on 127.0.0.1) over the search section's
synthetic workspace of benchmarks/speed.py (built there on first use; run that first for a
fresh machine), in a watching process as `mnemoclaw ui` runs, and measures:

  search   the search page's server time (its Server-Timing header) against the library's own
           `Memory.search` for the same questions, alternating, p50 of each and the difference
  file     a memory file page's server time (a daily log of the workspace), p50
  assets   the bytes of the app's own JavaScript and CSS

Targets (issue: the web UI): search page within 5 ms of the library's search at 10 000
chunks, a file page < 20 ms, JS + CSS < 50 KB.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import uvicorn

from mnemoclaw.eval.metrics import percentile
from mnemoclaw.ui.app import create_app

sys.path.insert(0, str(Path(__file__).resolve().parent))
import speed  # noqa: E402  (the workspaces and questions of the search section)


def server_ms(url: str) -> float:
    with urllib.request.urlopen(url, timeout=60) as resp:
        resp.read()
        timing = resp.headers["server-timing"]
    return float(re.fullmatch(r"app;dur=([\d.]+)", timing).group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=10000)
    ap.add_argument("--work-dir", default="bench-results/speed")
    ap.add_argument("--out", default="bench-results/ui-speed.json")
    args = ap.parse_args()
    bench = speed.bench_dir()
    work = Path(args.work_dir).resolve()
    ws, state = work / f"ws-{args.scale}", work / f"ws-{args.scale}-state"
    if not (ws.exists() and state.exists()):
        speed.log(f"building the {args.scale}-chunk workspace (benchmarks/speed.py --sections search)")
        speed.section_search(bench, work, args.scale)
    with speed.open_memory(ws, state) as mem:
        mem.sync()
        mem.freshness.watch()  # as `mnemoclaw ui` runs: file events, not a walk, before each search
        server = uvicorn.Server(uvicorn.Config(create_app(mem), host="127.0.0.1", port=0, log_level="warning",
                                               access_log=False, lifespan="off"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        queries = speed._queries(bench, 320)
        for q in queries[:20]:  # warm: the model, the in-memory vectors, the templates
            mem.search(q)
            server_ms(f"{base}/search?{urllib.parse.urlencode({'q': q})}")
        lib, page = [], []
        for q in queries[20:]:
            t = time.perf_counter()
            mem.search(q, max_results=20)
            lib.append((time.perf_counter() - t) * 1000)
            page.append(server_ms(f"{base}/search?{urllib.parse.urlencode({'q': q})}"))
        daily = sorted(p.relative_to(ws).as_posix() for p in (ws / "memory").rglob("*.md"))[:50]
        assert daily, f"no memory files under {ws}"
        files = [server_ms(f"{base}/file/{urllib.parse.quote(p)}") for p in daily * 4]
        server.should_exit = True
        thread.join(10)
        chunks = mem.backend.store.counts()["chunks"]
    static = Path(__file__).resolve().parents[1] / "src" / "mnemoclaw" / "ui" / "static"
    out = {
        "chunks": chunks, "searches": len(lib),
        "library_search_p50_ms": round(percentile(lib, 50), 2),
        "search_page_p50_ms": round(percentile(page, 50), 2),
        "search_page_minus_library_p50_ms": round(percentile(page, 50) - percentile(lib, 50), 2),
        "file_page_p50_ms": round(percentile(files, 50), 2), "file_page_p95_ms": round(percentile(files, 95), 2),
        "js_css_bytes": sum(p.stat().st_size for p in static.iterdir()),
    }
    speed.log(f"ui: {out}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
