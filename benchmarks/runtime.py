"""The session runtime's own cost, and what compaction saves.

    python benchmarks/runtime.py [--out bench-results/runtime.json]

overhead    time per turn spent in the runtime (transcript, bootstrap, token accounting,
            request building, memory tools), excluding the model: a local chat server
            answers at once and the time inside the HTTP call is subtracted. Sessions
            resumed with 10, 1 000 and 10 000 transcript lines.
compaction  a 200-turn tool-heavy scripted session (the test suite's scenario): tokens
            before and after each compaction.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from mnemoclaw.api import Memory  # noqa: E402
from mnemoclaw.config import load_settings  # noqa: E402
from mnemoclaw.runtime.agent import AgentSession  # noqa: E402
from mnemoclaw.runtime.llm import ChatClient  # noqa: E402
from mnemoclaw.runtime.settings import runtime_settings  # noqa: E402
from mnemoclaw.runtime.transcript import SessionStore  # noqa: E402
from speed import load_results, log, save_results  # noqa: E402

from chat_server import ChatServer  # noqa: E402


class TimedClient(ChatClient):
    spent = 0.0

    def complete(self, *a, **kw):
        t = time.perf_counter()
        try:
            return super().complete(*a, **kw)
        finally:
            TimedClient.spent += time.perf_counter() - t


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("# AGENTS\n\n## Red lines\n\n- Ask before deleting anything.\n" + "rule text\n" * 300)
    (ws / "MEMORY.md").write_text("# Memory\n\n" + "- a durable fact about the user\n" * 200)
    for d in range(30):
        (ws / "memory" / f"2026-10-{d + 1:02d}.md").write_text("- note about the project\n" * 40)
    return ws


def section_overhead() -> dict:
    out = {}
    for lines in (10, 1_000, 10_000):
        root = Path(tempfile.mkdtemp(prefix="mnemoclaw-rt-"))
        try:
            ws = _workspace(root)
            with ChatServer(lambda body: {"content": "ok"}) as srv:
                cfg = {"agents": {"defaults": {"contextTokens": 10_000_000, "memorySearch": {"provider": "none"}}}}
                settings = load_settings(workspace=ws, state_dir=root / "state", config=cfg, env={})
                store = SessionStore(settings.sessions_dir)
                sid = store.new_id()
                for i in range(lines):
                    role = "user" if i % 2 == 0 else "assistant"
                    store.append(sid, {"type": "message", "at": 0, "message": {"role": role,
                                                                             "content": f"message {i} " + "word " * 20}})
                store.update_meta(sid, sessionId=sid, updatedAt=time.time(), compactionCount=0)
                with Memory(settings, background=False) as mem:
                    mem.sync()
                    t = time.perf_counter()
                    agent = AgentSession(mem, runtime=runtime_settings(settings), session_id=sid,
                                         chat=TimedClient(srv.base_url, "bench"))
                    open_s = time.perf_counter() - t
                    per_turn = []
                    for i in range(30):
                        TimedClient.spent = 0.0
                        t = time.perf_counter()
                        agent.send(f"question {i}")
                        per_turn.append((time.perf_counter() - t - TimedClient.spent) * 1000)
            out[str(lines)] = {"open_ms": round(open_s * 1000, 1), "turn_ms_median": round(statistics.median(per_turn), 2),
                               "turn_ms_max": round(max(per_turn), 2)}
            log(f"overhead at {lines} lines: {out[str(lines)]}")
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return out


def section_compaction() -> dict:
    from test_runtime import RULE, assistant_brain  # the scripted model of the test suite

    root = Path(tempfile.mkdtemp(prefix="mnemoclaw-rt-"))
    try:
        ws = _workspace(root)
        for i in range(5):
            (ws / "data").mkdir(exist_ok=True)
            (ws / "data" / f"part-{i}.txt").write_text(f"part {i}: " + ("log line with details " * 60 + "\n") * 8)
        with ChatServer(assistant_brain) as srv:
            cfg = {"agents": {"defaults": {"contextTokens": 32_000, "memorySearch": {"provider": "none"},
                                           "compaction": {"reserveTokensFloor": 8_000, "keepRecentTokens": 6_000}}},
                   "llm": {"baseUrl": srv.base_url, "model": "scripted"}}
            settings = load_settings(workspace=ws, state_dir=root / "state", config=cfg, env={})
            with Memory(settings, background=False) as mem:
                agent = AgentSession(mem, runtime=runtime_settings(settings), chat=ChatClient(srv.base_url, "scripted"))
                agent.send(f"Important: {RULE}.")
                for i in range(1, 201):
                    agent.send(f"Now do step {i}")
                entries = [json.loads(x) for x in agent.store.path(agent.session_id).read_text().splitlines()]
        comps = [e for e in entries if e.get("type") == "compaction"]
        saved = [1 - e["tokensAfter"] / e["tokensBefore"] for e in comps if e["tokensBefore"]]
        out = {"turns": 201, "compactions": len(comps), "flushes": sum(e.get("type") == "memory_flush" for e in entries),
               "tokens_before_median": int(statistics.median(e["tokensBefore"] for e in comps)),
               "tokens_after_median": int(statistics.median(e["tokensAfter"] for e in comps)),
               "saved_median": round(statistics.median(saved), 3),
               "rule_kept_in_summary": RULE in (comps[-1]["summary"] if comps else "")}
        log(f"compaction: {out}")
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default="overhead,compaction")
    ap.add_argument("--out", default="bench-results/runtime.json")
    args = ap.parse_args()
    results = load_results(args.out)
    for name in args.sections.split(","):
        results[name] = globals()[f"section_{name}"]()
        save_results(results, args.out)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
