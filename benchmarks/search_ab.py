"""The same warm searches with two versions of the code, in alternating processes.

    git worktree add /tmp/before <commit>
    python benchmarks/search_ab.py --src /tmp/before/src --src src [--scale 100000] [--rounds 2]

Each round runs one process per ``--src`` (that tree's ``mnemoclaw`` first on sys.path) over
the search section's workspace of benchmarks/speed.py (built there first): 50 warm-up
questions, then three passes over 300, `sync.onSearch` off (search and ranking alone).
Prints the p50 of each pass per version: on a machine whose speed drifts, versions measured
minutes apart in turns compare where two tables from different days cannot.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def one(src: str, scale: int) -> list[float]:
    sys.path.insert(0, src)
    sys.path.insert(1, str(HERE))
    import mnemoclaw
    import speed

    if not Path(mnemoclaw.__file__).resolve().is_relative_to(Path(src).resolve()):
        sys.exit(f"{src} did not provide mnemoclaw ({mnemoclaw.__file__})")
    work = Path("bench-results/speed").resolve()
    # each version its own index: one with a newer schema is refused by an older mnemoclaw
    tag = hashlib.sha256(str(Path(src).resolve()).encode()).hexdigest()[:8]
    with speed.open_memory(work / f"ws-{scale}", work / f"ws-{scale}-state-{tag}") as mem:
        mem.sync()
        mem.settings.memory_search["sync"]["onSearch"] = False
        qs = speed._queries(speed.bench_dir(), 600)[:300]
        for q in qs[:50]:
            mem.tools.memory_search(q)
        passes = []
        for _ in range(3):
            lat = []
            for q in qs:
                t = time.perf_counter()
                mem.tools.memory_search(q)
                lat.append((time.perf_counter() - t) * 1000)
            passes.append(round(statistics.median(lat), 1))
    return passes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", action="append", required=True, help="a source tree (its src/ folder); twice or more")
    ap.add_argument("--scale", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.src[0], args.scale)))
        return
    out: dict[str, list[list[float]]] = {s: [] for s in args.src}
    for _ in range(args.rounds):
        for src in args.src:
            done = subprocess.run([sys.executable, __file__, "--one", "--src", src, "--scale", str(args.scale)],
                                  check=True, capture_output=True, text=True)
            out[src].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"{src}: p50 of each pass {out[src][-1]} ms", file=sys.stderr, flush=True)
    print(json.dumps({"scale": args.scale, "p50_ms_by_pass": out}, indent=2))


if __name__ == "__main__":
    main()
