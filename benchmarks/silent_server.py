"""What a stopped `mnemoclaw watch` costs `search` and `recall --hook` from the shell.

    python benchmarks/silent_server.py [--runs 10] [--work-dir bench-results/silent-server]

A keyword-only workspace of synthetic notes is indexed and served by a real `mnemoclaw watch`.
Each command is timed from the shell (process start included): on its own
(MNEMOCLAW_NEARBY=off), asked of the running watch, asked of the same watch stopped with
SIGSTOP (as Ctrl-Z stops it: its socket still accepts, nothing answers), and asked of a hung
one (a live process whose socket accepts and never answers). Prints the medians as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

TOPICS = ["deploy", "billing", "staging", "backup", "invoice", "router", "cluster", "pager", "vault", "ledger"]


def make_workspace(ws: Path, files: int = 200) -> None:
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- The deploy server is atlas-7, in rack 12.\n", encoding="utf-8")
    for i in range(files):
        topic = TOPICS[i % len(TOPICS)]
        lines = [f"- {topic} note {i}.{j}: host h{i * 7 + j} in rack {j}, owner team {i % 13}." for j in range(12)]
        (ws / "memory" / f"2026-01-{i:03d}.md").write_text(f"# Day {i}\n\n" + "\n".join(lines) + "\n", "utf-8")


def timed(argv: list[str], env: dict[str, str], stdin: str | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    run = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, timeout=120)
    if run.returncode != 0:
        raise SystemExit(f"{argv} failed: {run.stderr}")
    return (time.perf_counter() - started) * 1000, run.stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--work-dir", default="bench-results/silent-server")
    args = ap.parse_args()
    work = Path(args.work_dir).resolve()
    shutil.rmtree(work, ignore_errors=True)
    ws, state = work / "ws", work / "state"
    make_workspace(ws)
    exe = str(Path(sys.executable).with_name("mnemoclaw"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOCLAW_", "OPENCLAW_"))}
    env.update({"MNEMOCLAW_STATE_DIR": str(state), "MNEMOCLAW_PROVIDER": "none"})
    alone_env = {**env, "MNEMOCLAW_NEARBY": "off"}
    base = [exe, "--workspace", str(ws)]
    # compiled as an install compiles it (and as a first run does, unless PYTHONDONTWRITEBYTECODE)
    import mnemoclaw

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(mnemoclaw.__file__).parent)], check=True)
    subprocess.run(base + ["index"], check=True, capture_output=True, env=env)
    hook_in = json.dumps({"prompt": "which rack is the deploy server atlas-7 in?"})
    commands = {"search": (base + ["search", "deploy server rack"], None),
                "recall --hook": (base + ["recall", "--hook"], hook_in)}

    def medians(run_env: dict[str, str], expect: str | None) -> dict[str, float]:
        out = {}
        for name, (argv, stdin) in commands.items():
            runs = [timed(argv, run_env, stdin) for _ in range(args.runs)]
            for _, err in runs:
                if expect is not None and expect not in err:
                    raise SystemExit(f"{name}: expected {expect!r} on stderr, got {err!r}")
            out[name] = round(statistics.median(ms for ms, _ in runs))
        return out

    results: dict = {"runs": args.runs, "alone_ms": medians(alone_env, None)}
    watch = subprocess.Popen(base + ["watch"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 120
        while not list((state / "serving").glob("*.server")):
            if time.monotonic() > deadline or watch.poll() is not None:
                raise SystemExit("mnemoclaw watch did not start serving")
            time.sleep(0.1)
        commands = {name: ([argv[0], "-v", *argv[1:]], stdin) for name, (argv, stdin) in commands.items()}
        results["asked_ms"] = medians(env, "answered by process")
        os.kill(watch.pid, signal.SIGSTOP)
        results["asked_stopped_ms"] = medians(env, "is stopped")
    finally:
        os.kill(watch.pid, signal.SIGCONT)
        watch.terminate()
        watch.wait(timeout=30)
    mute = socket.socket(socket.AF_UNIX)
    mute.bind(str(work / "mute.sock"))
    mute.listen(16)
    (state / "serving" / f"{os.getpid()}.server").write_text(
        f"pid={os.getpid()}\nsocket={work / 'mute.sock'}\ncommand=watch\n", encoding="utf-8")
    try:
        results["asked_hung_ms"] = medians(env, "did not answer within 1 s")
    finally:
        mute.close()
    results["load_average_1min"] = round(os.getloadavg()[0], 1)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
