"""A cold `mnemoclaw search` with the bundled model, against `mnemoclaw --version`, whole processes.

    python benchmarks/cold_start.py [--cmd "PATH/TO/mnemoclaw" [--cmd "ANOTHER"]] [--runs 20]
                                    [--work-dir bench-results/cold]

Builds a small workspace (21 files, English and Chinese lines), indexes it with the local
provider for each command, runs one search to write the model cache, then starts `search`
and `--version` of each command in turn (A search, A --version, B search, ...), RUNS rounds,
and prints the median, min and max of each one's wall time, CPU time (user + system, the
kernel's accounting of the finished child) and peak RSS, and medians of paired ratios
(pairing keeps a ratio meaningful when the machine's speed drifts): search / --version for
each command, and each command's search / the first one's. `--version` is the yardstick:
interpreter start and the CLI's imports, no model. --cmd is how to start mnemoclaw (split as
a shell splits words); to compare two versions with one interpreter, give each its source
folder: --cmd "env PYTHONPATH=OLD/src .venv/bin/python -m mnemoclaw.cli". Each command
gets its own state folder under --work-dir.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("- the walrus sings at dawn\n", encoding="utf-8")
    for i in range(1, 21):
        (ws / "memory" / f"2026-01-{i:02d}.md").write_text(
            f"- note {i}: the harbour master moved the boats on day {i}\n"
            f"- 第{i}天，我们在东京吃了寿司\n"
            f"- meeting with Alice about the budget, item {i}\n", encoding="utf-8")
    return ws


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one whole process."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{shlex.join(cmd)} exited with {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _row(name: str, values: list[float], unit: str) -> str:
    return (f"{name:<16} median {statistics.median(values):7.3f} {unit}   min {min(values):7.3f}   "
            f"max {max(values):7.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cmd", action="append", help="how to start mnemoclaw (repeat to compare; default: "
                    "this interpreter's mnemoclaw)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--work-dir", default="bench-results/cold")
    args = ap.parse_args()
    cmds = args.cmd or [str(Path(sys.executable).with_name("mnemoclaw"))]
    root = Path(args.work_dir).resolve()
    ws = _workspace(root)
    env = {**os.environ, "MNEMOCLAW_PROVIDER": "local"}
    env.pop("MNEMOCLAW_CONFIG", None)
    env.pop("MNEMOCLAW_MODEL_CACHE", None)
    runs: dict[str, list[tuple[float, float, float]]] = {}
    starts: dict[str, list[str]] = {}
    for i, cmd in enumerate(cmds):
        state = root / ("state-" + hashlib.sha1(cmd.encode()).hexdigest()[:8])
        shutil.rmtree(state, ignore_errors=True)
        exe = shlex.split(cmd)
        starts[f"{i}:search"] = [*exe, "--workspace", str(ws), "--state-dir", str(state), "search", "harbour boats"]
        starts[f"{i}:version"] = [*exe, "--version"]
        subprocess.run([*exe, "--workspace", str(ws), "--state-dir", str(state), "index"], env=env, check=True,
                       capture_output=True)
    for _ in range(2):  # the first writes the model cache; both warm the page cache
        for start in starts.values():
            _run(start, env)
    for _ in range(args.runs):
        for key, start in starts.items():
            runs.setdefault(key, []).append(_run(start, env))
    print(f"{args.runs} rounds, load average {os.getloadavg()[0]:.1f} at the end")
    for i, cmd in enumerate(cmds):
        print(f"[{i}] {cmd}")
        for what in ("search", "version"):
            walls, cpus, peaks = zip(*runs[f"{i}:{what}"], strict=True)
            print(_row(f"  {what} wall", list(walls), "s"))
            print(_row(f"  {what} cpu", list(cpus), "s"))
            print(_row(f"  {what} peak", list(peaks), "MB"))
        for k, unit in ((0, "wall"), (1, "cpu")):
            print(f"  search/--version {unit}: median {_paired(runs[f'{i}:search'], runs[f'{i}:version'], k):.2f}")
        if i:
            for k, unit in ((0, "wall"), (1, "cpu")):
                print(f"  search/[0] search {unit}: median {_paired(runs[f'{i}:search'], runs['0:search'], k):.2f}")


def _paired(a: list[tuple[float, float, float]], b: list[tuple[float, float, float]], k: int) -> float:
    return statistics.median(x[k] / y[k] for x, y in zip(a, b, strict=True))


if __name__ == "__main__":
    main()
