"""Measuring and showing: eval over benchmark data, the demo workspace."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from .app import Ctx, Progress, cli, emit_json, translated
from .index import print_results


# -- eval ---------------------------------------------------------------------------------
@cli.command("eval")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--scope-field", metavar="F",
              help="Search only among documents sharing the query's metadata.F (LoCoMo: conv).")
@click.option("--queries", "queries_dir", metavar="DIR2", type=click.Path(exists=True, file_okay=False),
              help="Take queries.jsonl and qrels.tsv from DIR2 (cross-lingual runs; workspace mode).")
@click.option("--mode", type=click.Choice(["keyword", "vector", "hybrid"]), help="Search mode (default: configured).")
@click.option("--min-score", type=click.FloatRange(0, 1), help="Override query.minScore.")
@click.option("--limit", "limit_queries", type=click.IntRange(1), help="Evaluate only the first N queries.")
@click.option("--out-of-scope", "foreign", metavar="DIR3", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Also ask every workspace (every scope, in BEIR mode) the queries.jsonl of DIR3, which nothing "
                   "in it answers (up to 300, spread over the file), and report the share answered with nothing. "
                   "Repeatable.")
@click.option("--others", type=click.IntRange(0), default=0,
              help="Workspace mode: also ask each workspace N questions about the other workspaces.")
@click.option("--together", type=click.IntRange(0), default=0, metavar="N",
              help="Workspace mode: index N folders in one workspace (a memory of many people); --others then "
                   "asks about the folders left out.")
@click.option("--leave-half-out", "absent", is_flag=True,
              help="BEIR mode: index half of the documents (whole titles) and also ask the questions on the other "
                   "half, which nothing indexed answers (up to 300), reporting the share answered with nothing.")
@click.option("--work-dir", type=click.Path(file_okay=False),
              help="Keep scratch workspaces and indexes here to reuse them.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
@translated
def eval_cmd(obj: Ctx, directory, scope_field, queries_dir, mode, min_score, limit_queries, foreign, others,
             together, absent, work_dir, as_json) -> None:
    """Measure retrieval on a BEIR directory (or a folder of Markdown workspaces) with the real index.

    Prints recall@1/5/10, MRR@10, nDCG@10 and latency percentiles (plus by_category),
    all with minScore in force: the share of queries answered with nothing, and how the
    best relevant result of each query scored.
    A directory without corpus.jsonl whose sub-folders hold Markdown files runs in
    workspace mode: each folder is indexed as a workspace and a hit is a chunk whose
    line range holds an evidence id such as (D1:3) from --queries.
    """
    from ..eval.runner import EvalOptions, evaluate

    config: Any = obj.config  # --config, or MNEMOCLAW_CONFIG through click
    if config:
        from ..config import load_file

        config = load_file(config)
    opts = EvalOptions(mode=mode, scope_field=scope_field, queries_dir=queries_dir, min_score=min_score,
                       work_dir=work_dir, config=config, limit_queries=limit_queries, foreign_dirs=tuple(foreign),
                       others=others, together=together, absent=absent)
    last = [0.0]

    def progress(phase: str, done: int, total: int) -> None:
        if sys.stderr.isatty() and time.monotonic() - last[0] > 0.2:
            last[0] = time.monotonic()
            sys.stderr.write(f"\r{phase}: {done}/{total}".ljust(60))
            sys.stderr.flush()

    result = evaluate(directory, opts, progress)
    if sys.stderr.isatty():
        sys.stderr.write("\r" + " " * 60 + "\r")
    if as_json:
        emit_json(result)
        return
    click.echo(f"{result['dataset']}: {result['queries']} queries, mode {result['mode']}, "
               f"{result['provider']}/{result['model'] or '-'}, fusion {result['fusion']}, "
               f"minScore {result['min_score']:g}")
    keys = [k for k in ("recall@1", "recall@5", "recall@10", "hit@5", "snippet_recall@5", "snippet_recall_lines@5",
                          "mrr@10", "ndcg@10")
            if k in result]
    click.echo("  " + "  ".join(f"{k} {result[k]:.3f}" for k in keys))
    if "snippet_answer@5" in result:
        shown = result["snippet_answer@5"]
        click.echo(f"  of the answer's words the first five results hold, their snippets show {shown['shown']:.3f} "
                   f"(questions with an answer: {shown['queries']})")
    click.echo(f"  answered with nothing: {result['empty']:.3f} of these queries (each has an answer); "
               f"with only a weak result: {result.get('weak', 0):.3f}")
    for kind, row in result.get("out_of_scope", {}).items():
        answered = 1 - row["empty"]
        click.echo(f"  out of scope, {kind}: {row['queries']} queries (none has an answer), answered with something "
                   f"{answered:.3f} (weak {row.get('weak', 0):.3f}), with nothing {row['empty']:.3f}")
    histogram = result["score_histogram"]
    for key, label in (("relevant_top", "best relevant result"), ("out_of_scope_top", "best out-of-scope result")):
        if key in histogram:
            click.echo(f"  score of the {label}, per tenth 0-1: " + " ".join(str(n) for n in histogram[key]))
    click.echo(f"  latency p50 {result['latency_ms_p50']} ms, p95 {result['latency_ms_p95']} ms "
               f"({result['cores']} cores); indexing {result['index_seconds']} s for {result['chunks']} chunks")
    for cat, row in result["by_category"].items():
        click.echo(f"  category {cat}: {row['queries']} queries, recall@5 {row['recall@5']:.3f}")


# -- demo ---------------------------------------------------------------------------------
@cli.command()
@click.option("--keep", is_flag=True, help="Keep the sample workspace and index (printed at the end).")
@click.pass_obj
@translated
def demo(obj: Ctx, keep: bool) -> None:
    """Build a small English + Chinese workspace, index it offline and run four searches."""
    from ..api import Memory
    from ..config import load_settings
    from .demo import SAMPLE_QUERIES, write_sample_workspace

    tmp = None
    if obj.workspace:
        ws = Path(obj.workspace).expanduser().absolute()
        state = Path(obj.state_dir).expanduser().absolute() if obj.state_dir else ws.parent / (ws.name + "-state")
    else:
        tmp = tempfile.mkdtemp(prefix="mnemoclaw-demo-")
        ws, state = Path(tmp) / "workspace", Path(tmp) / "state"
    ws.mkdir(parents=True, exist_ok=True)
    written = write_sample_workspace(ws)
    click.echo(f"Sample workspace: {ws} ({len(written)} files written)")
    # without a config file the demo stays offline, even where an API key is in the environment
    settings = load_settings(workspace=ws, state_dir=state, config=obj.config or {}, agent_id=obj.agent,
                             overrides=None if obj.config else {"provider": "local"})
    with Memory(settings) as mem:
        bar = Progress("indexing")
        t = time.monotonic()
        report = mem.sync(progress=bar)
        bar.finish()
        st = mem.status(check_dirty=False)
        files = report.added + report.changed + report.unchanged
        click.echo(f"Indexed {report.chunks_total} chunks from {files} files "
                   f"in {time.monotonic() - t:.2f}s with {st['provider']}/{st['model']} "
                   f"(vector search: {st['vectorSearch']})")
        for label, query in SAMPLE_QUERIES:
            click.echo(f"\n[{label}] {query}")
            print_results(mem.tools.memory_search(query, 3))
    if keep or obj.workspace:
        click.echo(f"\nWorkspace kept at {ws}; try: mnemoclaw --workspace {ws} --state-dir {state} search \"...\"")
    elif tmp:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
