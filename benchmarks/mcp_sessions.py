"""Memory of `mnemoclaw mcp --http` while clients open sessions and never close them.

    python benchmarks/mcp_sessions.py [--sessions 10000] [--every 1000] [--max-sessions N]
                                      [--session-idle MINUTES] [--src DIR] [--out FILE]

Starts `mnemoclaw mcp --http 127.0.0.1:0` as a real subprocess over a small workspace
(keyword-only, so no model is loaded and what grows is the sessions), then sends
``--sessions`` MCP ``initialize`` requests over real HTTP, one after another on one
keep-alive connection, each opening a session that is never closed (no DELETE), as a
careless or hostile client does. The server's resident memory (VmRSS of /proc/PID/status)
is read before the first and after every ``--every`` sessions, with how many were refused
(503). At the end the first session's id is asked again: 404 means the server let it go.

``--max-sessions`` and ``--session-idle`` are passed to the server as they are (its defaults
otherwise); ``--src`` runs the server from another source tree (``PYTHONPATH``), e.g. the
code before sessions were bounded, to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

SRC = Path(__file__).resolve().parents[1] / "src"
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "mcp_sessions", "version": "1"}}})
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def start_server(work: Path, src: Path, extra: list[str]) -> tuple[subprocess.Popen, str]:
    ws = work / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("- the spare key is under the blue flowerpot\n", encoding="utf-8")
    (ws / "memory" / "2026-01-05.md").write_text("- the plumber comes on Friday at 9\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(src), "MNEMOCLAW_PROVIDER": "none"}
    cmd = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir", str(work / "state"),
           "mcp", "--http", "127.0.0.1:0", *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        found = re.search(r"at (http://\S+/mcp)", line)
        if found:
            return proc, found.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    sys.exit("the server did not start: " + proc.stderr.read())


def initialize(client: httpx2.Client, url: str) -> str | None:
    """A new session's id, or None when the server refused to open one (503: too many open)."""
    r = client.post(url, content=INITIALIZE, headers=HEADERS)
    if r.status_code == 503:
        return None
    if r.status_code != 200 or "mcp-session-id" not in r.headers:
        sys.exit(f"initialize answered {r.status_code}: {r.text[:200]}")
    return r.headers["mcp-session-id"]


def still_open(client: httpx2.Client, url: str, session: str) -> int:
    """The status a request in ``session`` gets (200: open; 404: the server let it go)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    return client.post(url, content=body, headers={**HEADERS, "mcp-session-id": session,
                                                   "mcp-protocol-version": "2025-06-18"}).status_code


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--every", type=int, default=1_000)
    ap.add_argument("--max-sessions", type=int)
    ap.add_argument("--session-idle", type=float, metavar="MINUTES")
    ap.add_argument("--src", type=Path, default=SRC, help="the source tree the server runs from")
    ap.add_argument("--out", help="write the series here as JSON")
    args = ap.parse_args()
    extra = [*(["--max-sessions", str(args.max_sessions)] if args.max_sessions else []),
             *(["--session-idle", str(args.session_idle)] if args.session_idle else [])]

    with tempfile.TemporaryDirectory(prefix="mcp-sessions-") as tmp:
        proc, url = start_server(Path(tmp), args.src.resolve(), extra)
        try:
            with httpx2.Client(timeout=60) as client:
                initialize(client, url)  # the server warmed up (first request, the index opened) before the base
                time.sleep(1)
                series = [{"sessions": 0, "rss_mb": round(rss_mb(proc.pid), 1)}]
                log(f"server pid {proc.pid} {' '.join(extra) or '(defaults)'}: {series[0]['rss_mb']} MB")
                began = time.perf_counter()
                first, refused = None, 0
                for n in range(1, args.sessions + 1):
                    session = initialize(client, url)
                    first = first or session
                    refused += session is None
                    if n % args.every == 0:
                        series.append({"sessions": n, "rss_mb": round(rss_mb(proc.pid), 1), "refused": refused})
                        log(f"{n:>6} sessions: {series[-1]['rss_mb']} MB" + (f", {refused} refused" if refused else ""))
                seconds = time.perf_counter() - began
                first_status = still_open(client, url, first) if first else None
        finally:
            proc.terminate()
            proc.wait(30)
    result = {"server_args": extra, "src": str(args.src), "sessions": args.sessions, "seconds": round(seconds, 1),
              "first_session_status": first_status, "refused": refused, "series": series,
              "growth_mb": round(series[-1]["rss_mb"] - series[0]["rss_mb"], 1)}
    log(f"{args.sessions} sessions in {result['seconds']} s; RSS {series[0]['rss_mb']} -> {series[-1]['rss_mb']} MB; "
        f"the first session now answers {first_status}; {refused} initialize requests refused")
    print(json.dumps(result))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
