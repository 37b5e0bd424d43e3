"""The ``mnemoclaw`` command. Each command parses, makes one library call, and prints.

Data goes to stdout; progress and logs go to stderr. A ``MnemoclawError`` becomes one
line saying what is wrong and how to fix it; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from . import __version__
from .errors import MnemoclawError
from .search.relevance import DEFAULT_MIN_SCORE
from .tools import MAX_RESULTS, SEARCH


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _emit_json_line(data: Any) -> None:
    """One JSON object on one line (a stream of events a script reads line by line)."""
    click.echo(json.dumps(data, ensure_ascii=False))
    sys.stdout.flush()


class Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, label: str, enabled: bool | None = None, unit: str = "files"):
        self.label = label
        self.unit = unit
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = int(width * done / total)
        bar = "#" * filled + "." * (width - filled)
        sys.stderr.write(f"\r{self.label} [{bar}] {done}/{total} {self.unit}")
        sys.stderr.flush()
        self._drawn = True

    def finish(self) -> None:
        if self._drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


class _Ctx:
    def __init__(self, workspace: str | None, state_dir: str | None, config: str | None, agent: str | None,
                 openclaw: str | None = None):
        self.workspace = workspace
        self.state_dir = state_dir
        self.config = config
        self.agent = agent
        self.openclaw = openclaw  # an OpenClaw state dir to serve read-only

    def settings(self, **overrides: Any):
        from .config import load_settings, openclaw_settings

        if self.openclaw:
            return openclaw_settings(self.openclaw, state_dir=self.state_dir, agent_id=self.agent,
                                     workspace=self.workspace, overrides=overrides or None)
        return load_settings(workspace=self.workspace, state_dir=self.state_dir, config=self.config,
                             agent_id=self.agent, overrides=overrides or None)

    def memory(self, *, background: bool = False, **overrides: Any):
        from .api import Memory

        # a command's process ends with the command: no background writer unless it lives on;
        # its messages are read by the person at this machine: real paths, not the agent's scrubbed ones
        return Memory(self.settings(**overrides), background=background, reader="person")


def _os_error(exc: OSError) -> str:
    what = f" ({exc.filename})" if exc.filename and len(str(exc.filename)) <= 300 else ""
    return f"{exc.strerror or exc}{what}"


def _run(fn):
    """Per-command location options, and library errors as one clean line (exit 1).

    ``--workspace``, ``--state-dir`` and ``--config`` are accepted before the command
    (``mnemoclaw --workspace DIR index``) and after it (``mnemoclaw index --workspace DIR``).
    Tracebacks are kept for real bugs.
    """
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, workspace_: str | None = None, state_dir_: str | None = None,
                config_: str | None = None, openclaw_: str | None = None, **kwargs: Any) -> Any:
        obj = click.get_current_context().find_object(_Ctx)
        if obj is not None:
            obj.workspace = workspace_ or obj.workspace
            obj.state_dir = state_dir_ or obj.state_dir
            obj.config = config_ or obj.config
            obj.openclaw = openclaw_ or obj.openclaw
        try:
            return fn(*args, **kwargs)
        except BrokenPipeError:  # `mnemoclaw search … | head`: the reader stopped reading; nothing is wrong
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except MnemoclawError as exc:
            raise click.ClickException(str(exc)) from None
        except OSError as exc:  # the machine said no (a path, a full disk, permissions): one line, no traceback
            raise click.ClickException(_os_error(exc)) from None

    wrapper = click.option("--openclaw", "openclaw_", is_flag=False, flag_value=DEFAULT_OPENCLAW, default=None,
                           metavar="[DIR]", help=OPENCLAW_HELP)(wrapper)
    for flags, name, metavar, what in ((("--config",), "config_", "FILE", "Config file"),
                                       (("--state-dir",), "state_dir_", "DIR", "State directory"),
                                       (("--workspace", "-w"), "workspace_", "DIR", "Workspace")):
        wrapper = click.option(*flags, name, metavar=metavar, help=f"{what} (same as the global option).")(wrapper)
    return wrapper


DEFAULT_OPENCLAW = "~/.openclaw"
OPENCLAW_HELP = ("Serve an OpenClaw agent's memory read-only: workspace and transcripts from OpenClaw's state "
                 "dir (default ~/.openclaw), mnemoclaw's own index. Same as --config DIR/openclaw.json.")


def _looks_like_dir(token: str) -> bool:
    return os.path.isdir(os.path.expanduser(token)) or token.startswith(("/", "~", ".")) or os.sep in token


class _Group(click.Group):
    """``--openclaw`` takes an optional directory: ``mnemoclaw --openclaw status`` and
    ``mnemoclaw search --openclaw "a query"`` mean the default one, so a following
    token is its value only if it looks like a directory."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out: list[str] = []
        for i, token in enumerate(args):
            out.append(token)
            if token == "--openclaw":
                nxt = args[i + 1] if i + 1 < len(args) else None
                if nxt is not None and not nxt.startswith("-") and not _looks_like_dir(nxt):
                    out.append(DEFAULT_OPENCLAW)
        return super().parse_args(ctx, out)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mnemoclaw")
@click.option("--workspace", "-w", metavar="DIR", help="Agent workspace (default: agents.defaults.workspace, "
              "else $MNEMOCLAW_WORKSPACE, else STATE_DIR/workspace).")
@click.option("--state-dir", metavar="DIR", envvar="MNEMOCLAW_STATE_DIR",
              help="State directory for the index and config (env MNEMOCLAW_STATE_DIR; default ~/.mnemoclaw).")
@click.option("--config", "config_path", metavar="FILE", envvar="MNEMOCLAW_CONFIG",
              help="JSON5 config file, or an OpenClaw openclaw.json (env MNEMOCLAW_CONFIG; "
                   "default STATE_DIR/config.json5).")
@click.option("--agent", metavar="ID", envvar="MNEMOCLAW_AGENT", help="Agent id from agents.list (default: main).")
@click.option("--openclaw", "openclaw_dir", is_flag=False, flag_value=DEFAULT_OPENCLAW, default=None, metavar="[DIR]",
              help=OPENCLAW_HELP)
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv for debug).")
@click.pass_context
def cli(ctx: click.Context, workspace, state_dir, config_path, agent, openclaw_dir, verbose) -> None:
    """Long-term memory for AI agents: Markdown files, searched by keywords and meaning.

    Start with `mnemoclaw init`, write notes in MEMORY.md and memory/YYYY-MM-DD.md,
    then `mnemoclaw index` and `mnemoclaw search "..."`.
    """
    level = logging.WARNING - 10 * verbose
    logging.basicConfig(level=max(logging.DEBUG, level), stream=sys.stderr, format="mnemoclaw: %(message)s")
    if not verbose:  # psycopg and its pool log each connection a lost server breaks; the store's error says it once
        logging.getLogger("psycopg").setLevel(logging.ERROR)
    ctx.obj = _Ctx(workspace, state_dir, config_path, agent, openclaw_dir)


# -- init ---------------------------------------------------------------------------------
@cli.command()
@click.option("--set-default", is_flag=True,
              help="If the config file names another workspace, point it at this one.")
@click.pass_obj
@_run
def init(obj: _Ctx, set_default: bool) -> None:
    """Create the workspace (MEMORY.md, memory/, AGENTS.md with the memory protocol) and a config file."""
    from .notes.scaffold import init_workspace

    if obj.openclaw:
        obj.settings().check_writable("init")
    report = init_workspace(workspace=obj.workspace, state_dir=obj.state_dir, config=obj.config, agent_id=obj.agent,
                            set_default=set_default)
    click.echo(f"Workspace: {report.workspace}")
    for path in report.created:
        click.echo(f"  created {path}")
    if report.config_updated:
        click.echo(f"  {report.config} now names this workspace")
    elif not report.created:
        click.echo("  everything was already there; nothing changed")
    if report.default_workspace is not None:
        click.echo(f"Note: {report.config} names the workspace {report.default_workspace}, so commands without "
                   f"--workspace keep using that one. To make {report.workspace} the default, run\n"
                   f"  mnemoclaw init --workspace {report.workspace} --set-default\n"
                   f"or pass --workspace {report.workspace} to each command.", err=True)
    where = f" --workspace {report.workspace}" if report.default_workspace is not None else ""
    click.echo(f"Next: write notes in MEMORY.md or memory/YYYY-MM-DD.md, then run `mnemoclaw{where} index`.")


# -- index --------------------------------------------------------------------------------
def _print_report(report, workspace: Path) -> None:
    from .index.indexer import CONTROL_CHARS

    r = report
    head = "Rebuilt" if r.full_rebuild else "Indexed"
    waited = f" (after waiting {r.waited:.1f}s for another process's sync)" if r.waited >= 0.1 else ""
    click.echo(f"{head} {workspace} in {r.seconds:.2f}s{waited}" + (f" ({r.reason})" if r.reason else ""))
    click.echo(f"  files:  {r.added} added, {r.changed} changed, {r.unchanged} unchanged, "
               f"{r.removed} removed, {len(r.failed)} failed")
    click.echo(f"  chunks: {r.chunks_total} in index, {r.chunks_embedded} embedded, "
               f"{r.chunks_reused} reused from cache")
    for path, why in r.failed:
        shown = path.encode("unicode_escape").decode("ascii") if CONTROL_CHARS.search(path) else path
        click.echo(f"  failed: {shown}: {why}")
    for note in r.notes:  # another host writes this namespace too
        click.echo(f"  note: {note}")
    if r.vectors_pending:
        click.echo(f"  vectors: {r.vectors_pending} chunks are searchable by keyword only: the embedding provider "
                   f"failed ({r.vectors_error or 'see above'}). `mnemoclaw index` adds their vectors once it works.")
    if r.chunks_total == 0 and not r.failed:
        click.echo(f"  No memory files yet: write {workspace / 'MEMORY.md'} or "
                   f"{workspace / 'memory' / 'YYYY-MM-DD.md'} (`mnemoclaw init` creates them).")


def _sync_waiting(mem, full: bool, wait: bool, progress=None, retry: bool = False):
    """Sync; if another process is writing, say so and wait for it (or skip: ``None``)."""
    from .errors import LockTimeoutError

    try:
        return mem.sync(full=full, progress=progress, lock_timeout=0, retry=retry)
    except LockTimeoutError as exc:
        who, where = exc.holder, exc.index
        if not wait:
            click.echo(f"Skipped: {who} is updating the index {where} right now.", err=True)
            return None
        click.echo(f"Waiting for {who}, which is updating the index {where}… (Ctrl-C to stop)", err=True)
        return mem.sync(full=full, progress=progress, lock_timeout=None, retry=retry)


def _index(obj: _Ctx, full: bool, as_json: bool, wait: bool = True) -> None:
    with obj.memory() as mem:
        bar = Progress("indexing")
        try:
            report = _sync_waiting(mem, full, wait, bar, retry=True)
        finally:
            bar.finish()
        if report is None:
            return
        if as_json:
            _emit_json(report.as_dict())
        else:
            _print_report(report, mem.settings.workspace)
    if report.failed:
        sys.exit(3)  # the index is usable; some files were skipped (reasons printed)


@cli.command()
@click.option("--full", is_flag=True, help="Rebuild everything (into a new database, swapped in when done).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--wait/--no-wait", default=True, help="If another process is writing the index: wait for it "
              "(default), or skip with a message.")
@click.pass_obj
@_run
def index(obj: _Ctx, full: bool, as_json: bool, wait: bool) -> None:
    """Bring the index up to date with the Markdown files (incremental; --full rebuilds).

    Exit status 3 means some files were skipped; the report says which and why.
    """
    _index(obj, full, as_json, wait)


@cli.command("sync")
@click.option("--full", is_flag=True, help="Rebuild everything (into a new database, swapped in when done).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--wait/--no-wait", default=True, help="Wait for another writer (default) or skip.")
@click.pass_obj
@_run
def sync_cmd(obj: _Ctx, full: bool, as_json: bool, wait: bool) -> None:
    """Same as `index`."""
    _index(obj, full, as_json, wait)


@cli.command()
@click.option("--debounce-ms", type=click.IntRange(0),
              help="Quiet time before a sync (default sync.watchDebounceMs, 1500).")
@click.option("--poll", is_flag=True, help="Poll instead of native notifications (network or container filesystems).")
@click.option("--json", "as_json", is_flag=True, help="One JSON line per sync.")
@click.pass_obj
@_run
def watch(obj: _Ctx, debounce_ms, poll: bool, as_json: bool) -> None:
    """Keep the index fresh: sync now, then after every burst of changes, until Ctrl-C."""
    with obj.memory(background=True) as mem:
        bar = Progress("indexing")
        try:
            report = _sync_waiting(mem, False, True, bar)
        finally:
            bar.finish()
        if report is not None and as_json:
            _emit_json_line({"event": "sync", "reasons": ["start"], **report.as_dict()})
        elif report is not None:
            _print_report(report, mem.settings.workspace)

        def show(report, reasons) -> None:
            if as_json:
                _emit_json_line({"event": "sync", "reasons": sorted(reasons), **report.as_dict()})
                return
            r = report
            stamp = time.strftime("%H:%M:%S")
            click.echo(f"{stamp} synced ({', '.join(sorted(reasons))}): {r.added} added, {r.changed} changed, "
                       f"{r.removed} removed, {len(r.failed)} failed, {r.chunks_embedded} embedded, {r.seconds:.2f}s")
            for path, why in r.failed:
                click.echo(f"  failed: {path}: {why}")

        mem.freshness.listeners.append(show)
        stop = _stop_on_signals()
        watcher = mem.freshness.watch(debounce_ms=debounce_ms, polling=True if poll else None)
        mem.start_background(watch=True)
        if as_json:
            _emit_json_line({"event": "watching", "mode": watcher.mode, "debounceMs": round(watcher.debounce * 1000),
                             "targets": [{"path": t.path, "recursive": t.recursive} for t in watcher.targets]})
        else:
            where = ", ".join(f"{t.path}{'/**' if t.recursive else ''}" for t in watcher.targets)
            click.echo(f"Watching {where} ({watcher.mode}, debounce {watcher.debounce * 1000:.0f} ms). Ctrl-C stops.",
                       err=True)
        while not stop.wait(1.0):
            pass
        click.echo("Stopped.", err=True)


def _stop_on_signals():
    """An event Ctrl-C (or SIGTERM) sets, so a long-running command stops between two steps
    and closes cleanly, whatever it was doing; a second Ctrl-C stops it at once."""
    import signal
    import threading

    stop = threading.Event()

    def handler(signum, frame) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    return stop


# -- search / get -------------------------------------------------------------------------
def _print_results(result: dict[str, Any], floor: float | None = None) -> None:
    if result.get("disabled"):
        # the action is for an agent; a message that already names the command to run needs none
        action = "" if "`mnemoclaw " in result["error"] else f"\n  {result['action']}"
        click.echo(f"Search unavailable: {result['error']}{action}", err=True)
        return
    if result.get("error"):
        click.echo(f"Not searched: {result['error']}; {result.get('action', '')}", err=True)
        return
    if result.get("warning"):
        click.echo(f"Note: {result['warning']}", err=True)
    indexing = result.get("indexing")
    if not result["results"]:
        if indexing and indexing.get("kind") == "sync":
            click.echo(f"Nothing found in what is indexed so far ({indexing['filesDone']} of "
                       f"{indexing['filesTotal']} changed files).")
        elif result.get("note"):  # searched, and nothing was about the query
            scored = f"{floor:g}" if floor is not None else "minScore"
            click.echo(f"Nothing in memory matches this: no result scored {scored} or more "
                       "(--min-score 0 lists the nearest chunks anyway).")
        else:
            click.echo("No results.")
        return
    for i, r in enumerate(result["results"], 1):
        click.echo(f"{i}. {r['path']}#L{r['startLine']}-L{r['endLine']}  score {r['score']:.3f}  [{r['source']}]")
        body = r["snippet"].split("\n\nSource: ")[0]
        for line in body.strip().splitlines()[:8]:
            click.echo(f"     {line}")


@cli.command()
@click.argument("query")
@click.option("-n", "--max-results", type=click.IntRange(1, MAX_RESULTS), help="How many results (default 6).")
@click.option("--min-score", type=click.FloatRange(SEARCH.param("minScore").minimum, SEARCH.param("minScore").maximum),
              help=f"Drop results scoring below this (default {DEFAULT_MIN_SCORE:g}).")
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "vector"]), help="Override the search mode.")
@click.option("--type", "kind", help="Only entries annotated with this type (fact, preference, task, summary, ...).")
@click.option("--history", is_flag=True, help="Also expired entries and the older values of keyed entries.")
@click.option("--json", "as_json", is_flag=True, help="Print the memory_search result as JSON.")
@click.pass_obj
@_run
def search(obj: _Ctx, query: str, max_results, min_score, mode, kind, history, as_json) -> None:
    """Search memory (memory_search semantics): ranked chunks with path#Lx-Ly citations."""
    if not query.strip():
        raise click.UsageError("the query is empty: give the words of what you are looking for")
    with obj.memory() as mem:
        result = mem.memory_search(query, max_results, min_score, mode=mode, kind=kind, history=history or None)
        floor = mem.settings.query_options().min_score if min_score is None else min_score
    if as_json:
        _emit_json(result)
    else:
        _print_results(result, floor)
    if result.get("disabled"):
        sys.exit(1)


@cli.command()
@click.argument("path")
@click.option("--from", "from_line", type=click.IntRange(1), help="First line (1-based).")
@click.option("--lines", type=click.IntRange(0), help="How many lines.")
@click.option("--json", "as_json", is_flag=True, help="Print {path, text} as JSON.")
@click.pass_obj
@_run
def get(obj: _Ctx, path: str, from_line, lines, as_json) -> None:
    """Read a memory file or a line range of it (memory_get semantics)."""
    with obj.memory() as mem:
        shown, text = mem.read(path, from_line, lines)
    if text is None:
        click.echo(f"{shown} does not exist (yet); nothing to show.", err=True)
    result = {"path": shown, "text": text or ""}
    if as_json:
        _emit_json(result)
    elif result["text"]:
        click.echo(result["text"], nl=not result["text"].endswith("\n"))


# -- status -------------------------------------------------------------------------------
@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option("--fast", is_flag=True, help="Skip reading every page and chunk of the index for damage (about "
              "0.5 s per 10 000 chunks).")
@click.option("--deep", is_flag=True, help="Also check the keyword index against the chunk texts.")
@click.pass_obj
@_run
def status(obj: _Ctx, as_json: bool, fast: bool, deep: bool) -> None:
    """Show the workspace, index, provider, vector path, tokenizer, damage and whether a sync is due."""
    with obj.memory() as mem:
        st = mem.status(check_integrity=not fast, deep=deep)
    if as_json:
        _emit_json(st)
        return
    rows = [
        ("agent", st["agent"]),
        ("workspace", st["workspace"] + ("" if st["workspaceExists"] else "  (missing: run `mnemoclaw init`)")),
        ("config", st["config"] or "(none; defaults)"),
        ("backend", st["backend"]),
        ("index", st["index"]),
        ("files / chunks", f"{_n(st['files'])} / {_n(st['chunks'])} ({_n(st['vectors'])} with vectors)"
                           + (f"; {st['vectorsPending']} wait for vectors (keyword only until the provider works)"
                              if st["vectorsPending"] else "")),
        ("provider / model", f"{st['provider']} / {st['model'] or '-'}"
                             + (f"  at {st['endpoint']}" if st.get("endpoint") else "")),
        ("search mode", st["mode"]),
        ("ranking", st["ranking"]),
        ("minScore", st["minScore"]),
        ("vector search", st["vectorSearch"]),
        ("store", st.get("store") or st["sqlite"]),
        *([("namespace", st["namespace"])] if st.get("namespace") else []),
        ("fts tokenizer", st["ftsTokenizer"]),
        ("embedding cache", _cache_line(st["cache"])),
        *([("model cache", f"{mc['path']} ({mc['bytes'] / 1e6:.0f} MB; local.modelCacheDir or "
                           "MNEMOCLAW_MODEL_CACHE moves it, \"off\" turns it off)" if mc["path"] else mc["note"])]
          if (mc := st.get("modelCache")) else []),
        ("fingerprint", st["fingerprint"] or "(not indexed yet)"),
        ("state", _state_line(st)),
    ]
    if st.get("fallback"):
        fb = st["fallback"]
        rows.append(("FALLBACK", f"using {fb['to']} because {fb['from']} failed: {fb['reason']} "
                                  "(`mnemoclaw index` retries the primary)"))
    if st.get("qmd"):
        rows.extend(_qmd_rows(st["qmd"]))
    if st.get("rebuildReason"):
        rows.append(("rebuild due", st["rebuildReason"]))
    for note in st["ignoredSettings"]:
        rows.append(("NOT IN EFFECT", note))
    for warning in st["warnings"]:
        rows.append(("warning", warning))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        click.echo(f"{k.ljust(width)}  {v}")


def _qmd_rows(q: dict[str, Any]) -> list[tuple[str, str]]:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(q["lastUpdate"])) if q.get("lastUpdate") else "not yet"
    rows = [("qmd", f"{q['version'] or 'not usable'} ({q['command']}), searchMode {q['searchMode']}, vectors "
                    f"{'yes' if q['vectors'] else 'no'}, last update {when}, builtin keywords merged "
                    f"{'yes' if q['mergeBuiltin'] else 'no'}")]
    for c in q.get("collections") or []:
        rows.append(("qmd collection", f"{c['name']}: {_n(c['files'])} files in {c['path']} ({c['pattern']})"))
    if q.get("fallback"):
        fb = q["fallback"]
        since, retry = (time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(fb[k])) for k in ("since", "retryAt"))
        rows.append(("QMD FALLBACK", f"the builtin index answers because qmd failed: {fb['reason']} (since {since}; "
                                     f"every process of this agent until qmd is tried again at {retry}, or now by "
                                     "`mnemoclaw index`)"))
    return rows


def _n(value: Any) -> str:
    return "?" if value is None else str(value)


def _state_line(st: dict[str, Any]) -> str:
    if st.get("damaged"):
        return (f"DAMAGED ({st['damaged']}): searches answer from what can still be read; "
                "`mnemoclaw index` rebuilds it from the Markdown files")
    if st.get("indexReadOnly"):
        return (f"READ-ONLY ({st['indexReadOnly']}): served as it is, not synced"
                + ("; files changed since its last sync are not in it" if st.get("dirty") else ""))
    if st.get("indexing"):
        i = st["indexing"]
        return f"{i['kind']} under way by {i['by']}: {i['filesDone']} of {i['filesTotal']} files"
    if st.get("dirty"):
        return "dirty (run `mnemoclaw index`)"
    return "clean" if st.get("integrityChecked") else "clean (pages not checked: run `mnemoclaw status` without --fast)"


def _cache_line(cache: dict[str, Any]) -> str:
    if not cache["enabled"]:
        return "off"
    line = f"{cache['entries']} entries" + (f" (max {cache['maxEntries']})" if cache["maxEntries"] else "")
    if cache["hitRate"] is not None:
        line += (f", hit rate {cache['hitRate']:.0%} ({cache['vectorsReused']} vectors reused, "
                 f"{cache['vectorsEmbedded']} embedded)")
    return line


# -- mcp ----------------------------------------------------------------------------------
@cli.command()
@click.option("--http", "http_bind", metavar="HOST:PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (loopback unless you pass a token).")
@click.option("--token", envvar="MNEMOCLAW_MCP_TOKEN", metavar="TOKEN",
              help="Bearer token every HTTP request must carry (env MNEMOCLAW_MCP_TOKEN); required off loopback.")
@click.option("--no-watch", is_flag=True, help="Do not watch the files (a search still indexes what changed).")
@click.pass_obj
@_run
def mcp(obj: _Ctx, http_bind, token, no_watch: bool) -> None:
    """Run an MCP server: memory_search, memory_get, memory_append, memory_status.

    stdio by default (what Claude Code, Cursor and OpenClaw launch); --http HOST:PORT for
    streamable HTTP. Logs go to stderr; stdout carries only protocol frames.
    """
    from .api import Memory
    from .mcp_server import MemoryService, parse_bind, run_http, run_stdio

    settings = obj.settings(**({"sync": {"watch": False}} if no_watch else {}))
    read_only = settings.openclaw_dir is not None
    service = MemoryService(lambda: Memory(settings), forget_tool=bool(settings.memory["forget"]["tool"]))
    if http_bind:
        host, port = parse_bind(http_bind)

        def ready(url: str) -> None:
            click.echo(f"mnemoclaw MCP server for {settings.workspace} at {url}"
                       + (" (bearer token required)" if token else "") + (" [read-only]" if read_only else ""),
                       err=True)

        run_http(service, host, port, token, read_only=read_only, on_ready=ready)
    else:
        run_stdio(service, read_only=read_only)


# -- ui -----------------------------------------------------------------------------------
@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on (loopback unless you pass a token).")
@click.option("--port", default=7420, show_default=True, type=int, help="Port (0: any free one).")
@click.option("--token", envvar="MNEMOCLAW_UI_TOKEN", metavar="TOKEN",
              help="Token a browser gives once as ?token=… (env MNEMOCLAW_UI_TOKEN); required off loopback.")
@click.option("--open", "open_browser", is_flag=True, help="Open the app in the default browser.")
@click.pass_obj
@_run
def ui(obj: _Ctx, host: str, port: int, token, open_browser: bool) -> None:
    """Serve a web app for looking inside this agent's memory: search with why each result
    ranked, the memory files with their lines, and the index's health."""
    from .serving import listen
    from .ui.app import serve

    sock = listen(host, port, option="--port")  # before the first sync: a busy port is said at once
    with obj.memory(background=True) as mem:
        mem.sync()
        if mem.settings.openclaw_dir is None:
            mem.freshness.watch()  # a long-running process: file events instead of a walk before each search

        def ready(url: str) -> None:
            click.echo(f"mnemoclaw ui for {mem.settings.workspace} at {url}"
                       + (" (token required: open ?token=…)" if token else ""), err=True)
            if open_browser:
                import webbrowser

                webbrowser.open(url + (f"?token={token}" if token else ""))

        serve(mem, host, sock, token, on_ready=ready)


# -- chat / hygiene -------------------------------------------------------------------------
@cli.command()
@click.option("--session", "session_id", metavar="ID", help="Resume this session (default: the latest, unless reset).")
@click.pass_obj
@_run
def chat(obj: _Ctx, session_id) -> None:
    """Chat with an agent that has the memory tools (llm.baseUrl, llm.model, llm.apiKey).

    Slash commands: /context list|detail, /compact [focus], /status, /new, /reset, /verbose.
    The agent searches memory before answering about the past, writes what must last,
    flushes notes before compaction and never loses the transcript.
    """
    from .api import Memory
    from .runtime.agent import AgentSession

    settings = obj.settings()
    settings.check_writable("chat (its transcript)")
    with Memory(settings) as mem:
        mem.start_background()
        agent = AgentSession(mem, session_id=session_id)
        click.echo(f"mnemoclaw chat: session {agent.session_id}, model {agent.chat.model} at {agent.chat.base_url}. "
                   "/status, /context list, /new; Ctrl-D quits.", err=True)
        while True:
            try:
                line = click.prompt("you", prompt_suffix="> ", default="", show_default=False)
            except (EOFError, click.Abort):
                click.echo("", err=True)
                break
            if not line.strip():
                continue
            reply = agent.send(line)
            if agent.verbose:
                for call in reply.tool_calls:
                    click.echo(f"  [tool {call['name']}] {call['result']}", err=True)
                if reply.flushed:
                    click.echo("  [memory flushed before compaction]", err=True)
                if reply.compacted:
                    click.echo("  [conversation compacted]", err=True)
            if reply.text:
                click.echo(reply.text)


def _agent_session(session_id: str | None, mem):
    from .runtime.agent import AgentSession
    from .runtime.transcript import SessionStore

    store = SessionStore(mem.settings.sessions_dir, read_only=mem.settings.openclaw_dir is not None)
    sid = session_id or store.latest()
    if sid is None:
        raise MnemoclawError(f"no sessions yet in {store.dir}; start one with `mnemoclaw chat`")
    if session_id and not store.path(session_id).exists():
        raise MnemoclawError(f"no session {session_id!r} in {store.dir}; `mnemoclaw sessions` lists them")
    return AgentSession(mem, session_id=sid)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
@click.pass_obj
@_run
def sessions(obj: _Ctx, as_json: bool) -> None:
    """List the agent's chat sessions: tokens, compactions, last memory flush."""
    from .runtime.transcript import SessionStore, epoch_seconds

    settings = obj.settings()
    store = SessionStore(settings.sessions_dir, read_only=settings.openclaw_dir is not None)
    data = store.all_meta()
    rows = sorted((m for m in data.values() if isinstance(m, dict)), key=lambda m: epoch_seconds(m.get("updatedAt")),
                  reverse=True)
    if as_json:
        _emit_json(rows)
        return
    if not rows:
        click.echo(f"No sessions in {store.dir} yet.")
        return
    for m in rows:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch_seconds(m.get("updatedAt"))))
        flush = m.get("memoryFlushAt")
        flushed = time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch_seconds(flush))) if flush else "never"
        click.echo(f"{m.get('sessionId')}  updated {when}  ~{m.get('totalTokens', 0)} tokens  "
                   f"{m.get('compactionCount', 0)} compactions  memory flush {flushed}")


@cli.command()
@click.argument("what", type=click.Choice(["list", "detail"]), default="list")
@click.option("--session", "session_id", metavar="ID", help="Session (default: the latest).")
@click.option("--json", "as_json", is_flag=True, help="Print the breakdown as JSON.")
@click.pass_obj
@_run
def context(obj: _Ctx, what: str, session_id, as_json: bool) -> None:
    """What the next request of a chat session holds (the /context report)."""
    from .api import Memory

    with Memory(obj.settings(), background=False) as mem:
        agent = _agent_session(session_id, mem)
        if as_json:
            _emit_json(agent.context_breakdown(detail=what == "detail"))
        else:
            click.echo(agent.context_report(detail=what == "detail"))


@cli.command()
@click.argument("focus", required=False)
@click.option("--session", "session_id", metavar="ID", help="Session (default: the latest).")
@click.option("--json", "as_json", is_flag=True, help="Print {session, compacted, tokensBefore, tokensAfter} as JSON.")
@click.pass_obj
@_run
def compact(obj: _Ctx, focus, session_id, as_json: bool) -> None:
    """Compact a chat session now (the /compact command), optionally with a focus."""
    from .api import Memory

    settings = obj.settings()
    settings.check_writable("compact (the session transcript)")
    with Memory(settings, background=False) as mem:
        agent = _agent_session(session_id, mem)
        before = agent.session_tokens()
        done = agent.compact(focus, reason="command")
        after = agent.session_tokens()
    if as_json:
        _emit_json({"session": agent.session_id, "compacted": done, "tokensBefore": before, "tokensAfter": after})
    else:
        click.echo(f"Compacted session {agent.session_id}: ~{before} -> ~{after} tokens."
                   if done else f"Nothing to compact in session {agent.session_id} yet.")


@cli.command()
@click.option("--days", type=click.IntRange(1, 365), default=7, show_default=True, help="How many recent days of logs.")
@click.option("--apply", "apply_", is_flag=True, help="Append the proposal to MEMORY.md without asking.")
@click.option("--json", "as_json", is_flag=True, help="Print {additions, diff, sources, applied} as JSON.")
@click.pass_obj
@_run
def hygiene(obj: _Ctx, days: int, apply_: bool, as_json: bool) -> None:
    """Distil the last days of daily logs into proposed MEMORY.md additions (shown as a diff).

    Needs a chat model: llm.baseUrl and llm.model in the config (or MNEMOCLAW_LLM_BASE_URL and
    MNEMOCLAW_LLM_MODEL), any OpenAI-compatible endpoint.
    """
    from .runtime import hygiene as hy

    settings = obj.settings()
    if apply_:
        settings.check_writable("hygiene --apply (MEMORY.md)")
    proposal = hy.distil(settings, days)
    ask = proposal.additions and not apply_ and not as_json and settings.openclaw_dir is None and sys.stdin.isatty()
    if not as_json:
        if not proposal.additions:
            click.echo(f"Nothing new to add to MEMORY.md from {len(proposal.sources)} daily logs.")
        else:
            click.echo(proposal.diff)
    applied = False
    if proposal.additions and (apply_ or (ask and click.confirm("Append these lines to MEMORY.md?", default=False))):
        hy.accept(settings, proposal)
        applied = True
    if as_json:
        _emit_json({"additions": proposal.additions, "diff": proposal.diff, "sources": proposal.sources,
                    "applied": applied})
    elif applied:
        click.echo(f"MEMORY.md: {len(proposal.additions)} lines added.")
    elif proposal.additions:
        click.echo("Not applied (run with --apply, or answer yes).", err=True)


def _say_what_still_holds(done: dict) -> None:
    """Where the removed text still is, outside the files and the index."""
    if done.get("undoCopy"):
        click.echo(f"An undo copy of the old files is in {done['undoCopy']} until {done['undoUntil']} (deleted "
                   "then; delete it now to forget there too).")
    if "gitCommit" in done:
        click.echo(f"The removal is committed ({done['gitCommit']})." if done["gitCommit"]
                   else "The removal is not committed: git refused (commit it yourself).")
    held = done.get("gitHistory")
    if held:
        click.echo(f"Git history still holds the removed text (commit{'s' if len(held) > 1 else ''} "
                   f"{', '.join(held[:5])}{' …' if len(held) > 5 else ''}): it is gone from the files and the "
                   "index, not from the repository or its clones. To remove it there, rewrite history "
                   "(e.g. `git filter-repo --replace-text`).", err=True)


@cli.command()
@click.argument("target")
@click.option("--yes", is_flag=True, help="Remove without asking (after printing what is removed).")
@click.option("--keep-copy", is_flag=True,
              help="Keep an undo copy of the old files under the state directory for 7 days (none by default).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan (and, with --yes, the result) as JSON.")
@click.pass_obj
@_run
def forget(obj: _Ctx, target: str, yes: bool, keep_copy: bool, as_json: bool) -> None:
    """Remove from memory for good: the lines holding all of TARGET's words (each with its list
    item or paragraph, and transcript lines when sessions are indexed), or the lines TARGET
    cites (memory/2026-03-01.md#L3-L5). Shows them first; removes only on confirmation.

    No copy of what is forgotten is kept (the preview is the safety net; --keep-copy keeps one
    for 7 days). In a git workspace the removal is committed and the commits that still hold the
    text are named. Then the chunks, vectors and cached vectors that held the lines are purged,
    the index vacuumed, and the index file checked for the text.
    """
    with obj.memory() as mem:
        plan = mem.notes.forget_plan(target)
        if not as_json:
            click.echo(f"forget {target!r}: {plan.line_count} line(s) in {len(plan.files())} file(s)")
            for r in plan.removals:
                where = f"{r.path}#L{r.start}" + (f"-L{r.end}" if r.end != r.start else "")
                click.echo(f"  {where}" + ("  (session transcript)" if r.source == "sessions" else ""))
                for line in r.lines:
                    click.echo(f"    - {line[:200]}")
        ask = not yes and not as_json and sys.stdin.isatty()
        if not (yes or (ask and click.confirm("Remove these lines?", default=False))):
            if as_json:
                _emit_json({"plan": plan.as_dict(), "applied": False})
            else:
                click.echo("Nothing removed (answer yes, or run with --yes).", err=True)
            return
        mem.settings.check_writable("forget")
        done = mem.notes.forget(plan, keep_copy=keep_copy)
    if as_json:
        _emit_json({"plan": plan.as_dict(), "applied": True, **done})
        return
    click.echo(f"Removed {plan.line_count} line(s) from {len(plan.files())} file(s).")
    _say_what_still_holds(done)
    click.echo(f"Index: {done['chunksReplaced']} chunk(s) replaced, {done['cachedVectorsDeleted']} cached "
               "vector(s) deleted, vacuumed.")
    if done["verified"]:
        click.echo("Checked: the index file no longer holds the removed lines.")
    else:
        click.echo(f"Warning: the index file still holds {len(done['stillInIndex'])} removed line(s); run "
                   "`mnemoclaw index --full`.", err=True)
        sys.exit(1)


@cli.command()
@click.option("--older-than", default="180d", show_default=True,
              help="Archive daily logs older than this (180d, 26w, 6m, 1y; 0 or 'never' archives none).")
@click.option("--below-importance", type=click.IntRange(2, 10),
              help="Remove entries annotated with an importance below this.")
@click.option("--expired/--no-expired", default=True, show_default=True, help="Remove entries past their expires date.")
@click.option("--apply", "apply_", is_flag=True, help="Do it (the default is to show what would be done).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan (and what was done) as JSON.")
@click.pass_obj
@_run
def cleanup(obj: _Ctx, older_than: str, below_importance: int | None, expired: bool, apply_: bool,
            as_json: bool) -> None:
    """Propose, then with --apply perform, a clean-up of memory: expired entries and entries
    below an importance removed (as `forget` removes them: no copy kept, index purged), daily
    logs older than a cut-off moved to memory/archive/ (still searched, ranked below live notes;
    query.archive false leaves them out)."""
    from .notes.cleanup import parse_age

    days = None if older_than.strip().lower() in ("never", "0", "0d") else parse_age(older_than)
    with obj.memory() as mem:
        plan = mem.notes.cleanup_plan(older_than_days=days, below_importance=below_importance, expired=expired)
        shown = plan.as_dict()
        if not as_json:
            if plan.empty:
                click.echo("Nothing to clean up.")
            for r in shown["remove"]:
                click.echo(f"remove {r['path']}#L{r['startLine']}-L{r['endLine']} ({r['why']})")
                for line in r["lines"]:
                    click.echo(f"    - {line[:200]}")
            for m in shown["archive"]:
                click.echo(f"archive {m['path']} -> {m['to']}")
        done: dict = {}
        if apply_ and not plan.empty:
            done = mem.notes.cleanup(plan)
    if as_json:
        _emit_json({"plan": shown, "applied": bool(apply_ and not plan.empty), **done})
        return
    if plan.empty:
        return
    if not apply_:
        click.echo("Nothing changed: this was a dry run (run with --apply).", err=True)
        return
    forgot = done.get("forget")
    if forgot:
        state = "no longer holds them." if forgot["verified"] else "still holds some: run `mnemoclaw index --full`."
        click.echo(f"Removed {plan.removals.line_count} line(s); the index {state}")
        _say_what_still_holds(forgot)
    if done.get("archived"):
        click.echo(f"Archived {len(done['archived'])} daily log(s) to memory/archive/.")


def _skipped_links(links: list[str]) -> None:
    if links:
        click.echo(f"skipped {len(links)} symbolic link(s), never followed (copy the file itself in to import it): "
                   + ", ".join(links[:5]) + (f" and {len(links) - 5} more" if len(links) > 5 else ""), err=True)


@cli.command("import")
@click.argument("source", type=click.Choice(["chatgpt", "claude", "claude-code", "codex"]))
@click.argument("path", type=click.Path(path_type=str))
@click.option("--yes", is_flag=True, help="Import without asking (after printing the preview).")
@click.option("--no-index", is_flag=True, help="Write the files only; the next sync indexes them.")
@click.option("--json", "as_json", is_flag=True, help="Print the preview (and the report) as JSON.")
@click.pass_obj
@_run
def import_(obj: _Ctx, source: str, path: str, yes: bool, no_index: bool, as_json: bool) -> None:
    """Import another assistant's memory into memory/imports/SOURCE/: a ChatGPT or Claude.ai data
    export (the zip, its folder or conversations.json) as one dated Markdown file per
    conversation, or Claude Code's memory (~/.claude, a project's memory folder, CLAUDE.md) and
    Codex's memories folder as they are. Secrets are redacted; importing twice adds nothing; a
    file edited since an earlier import is kept. MEMORY.md is never touched."""
    with obj.memory() as mem:
        bar = Progress("reading", enabled=None if not as_json else False, unit="conversations")
        try:
            planned, preview = mem.notes.import_preview(source, path, bar)
        finally:
            bar.finish()
        shown = preview.as_dict()
        if not as_json:
            click.echo(f"{source}: {preview.found} found in {path}; {len(preview.added)} to add, "
                       f"{len(preview.updated)} to update, {preview.unchanged} unchanged"
                       + (f", {len(preview.kept_edits)} edited since the last import (kept)" if preview.kept_edits
                          else "") + (f", {preview.empty} empty (skipped)" if preview.empty else "")
                       + (f"; {preview.redacted} secret(s) will be redacted" if preview.redacted else ""))
            for rel in (preview.added + preview.updated)[:8]:
                click.echo(f"  {rel}")
            if len(preview.added) + len(preview.updated) > 8:
                click.echo(f"  ... and {len(preview.added) + len(preview.updated) - 8} more")
            _skipped_links(preview.links)
        todo = bool(preview.added or preview.updated)
        ask = todo and not yes and not as_json and sys.stdin.isatty()
        if not todo or not (yes or (ask and click.confirm("Import these?", default=True))):
            if as_json:
                _emit_json({"preview": shown, "applied": False})
            elif todo:
                click.echo("Nothing imported (answer yes, or run with --yes).", err=True)
            return
        bar = Progress("writing", enabled=None if not as_json else False, unit="files")
        try:
            report = mem.notes.import_files(planned, preview, bar)
        finally:
            bar.finish()
        index = None
        if not no_index:
            bar = Progress("indexing", enabled=None if not as_json else False)
            try:
                index = mem.sync(progress=bar)
            finally:
                bar.finish()
    if as_json:
        _emit_json({"preview": shown, "applied": True, "report": report.as_dict(),
                    "index": index.as_dict() if index else None})
        return
    click.echo(f"Imported into memory/imports/{source}/: {len(report.added)} added, {len(report.updated)} updated, "
               f"{report.unchanged} unchanged" + (f", {len(report.kept_edits)} kept with your edits"
                                                   if report.kept_edits else "")
               + (f"; {report.redacted} secret(s) redacted" if report.redacted else "") + ".")
    if index is not None:
        click.echo(f"Indexed: {index.chunks_total} chunks in the index ({index.added} new files) in "
                   f"{index.seconds:.1f} s.")


@cli.command("migrate-from-qmd")
@click.option("--write", is_flag=True, help="Change the config file (a copy of it is kept as <file>.bak).")
@click.pass_obj
@_run
def migrate_from_qmd(obj: _Ctx, write: bool) -> None:
    """Use the builtin engine instead of qmd: memory.qmd.paths become memorySearch.extraPaths and
    memory.backend becomes "builtin". Without --write, shows the change."""
    import json5

    from .atomic import write_atomic
    from .backends.qmd import QmdConfig, as_extra_paths
    from .text import parse

    settings = obj.settings()
    qmd = QmdConfig.parse(settings.qmd_config)
    moved = as_extra_paths(qmd)
    have = [str(p) for p in settings.memory_search["extraPaths"]]
    added = [m["path"] for m in moved if m["path"] not in have]
    click.echo(f'memory.backend: "builtin" (was {settings.memory["backend"]!r})')
    click.echo(f"memorySearch.extraPaths: {json.dumps(have + added, ensure_ascii=False)}")
    for m in moved:
        if m["pattern"] not in ("**/*.md", "*.md"):
            click.echo(f"note: qmd collection {m['name']!r} used the pattern {m['pattern']!r}; an extra path "
                       f"indexes every .md file under {m['path']}")
    if not write:
        click.echo("(nothing changed: run again with --write to change the config file)")
        return
    if settings.config_path is None:
        raise click.ClickException("no config file to change: give --config FILE (or write the lines above "
                                   "into your config yourself)")
    path = Path(settings.config_path)
    raw = path.read_text(encoding="utf-8")
    try:
        doc = parse.loads(raw, json5.loads)
    except ValueError as exc:
        raise click.ClickException(f"config file {path} is not valid JSON5: {exc}") from None
    memory = doc.setdefault("memory", {})
    memory["backend"] = "builtin"
    memory.pop("qmd", None)
    search = doc.setdefault("agents", {}).setdefault("defaults", {}).setdefault("memorySearch", {})
    search["extraPaths"] = list(dict.fromkeys([*search.get("extraPaths", []), *added]))
    write_atomic(str(path) + ".bak", raw)
    write_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    click.echo(f"Changed {path} (the old one is {path}.bak; comments in it were not kept). "
               "`mnemoclaw index` indexes the new paths.")


@cli.command()
@click.option("--to", "to_url", metavar="URL", help="Copy this agent's SQLite index into Postgres at URL.")
@click.option("--from", "from_url", metavar="URL", help="Copy this agent's namespace at URL into its SQLite index.")
@click.option("--namespace", help="The Postgres namespace (default: store.namespace, the agent id).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
@_run
def migrate(obj: _Ctx, to_url: str | None, from_url: str | None, namespace: str | None, as_json: bool) -> None:
    """Copy the index between SQLite and Postgres without embedding anything again: files,
    chunks, vectors, annotations and the embedding cache. The target keeps answering from what
    it held until the copy is swapped in; the source is only read. Then point
    memorySearch.store at the target."""
    from .migrate import migrate as copy
    from .text.secrets import redact_url

    if bool(to_url) == bool(from_url):
        raise click.UsageError("give one of --to URL (SQLite -> Postgres) or --from URL (Postgres -> SQLite)")
    bar = Progress("copying")
    try:
        report = copy(obj.settings().store_options(), str(to_url or from_url), to_postgres=bool(to_url),
                      namespace=namespace, progress=bar)
    finally:
        bar.finish()
    if as_json:
        _emit_json(report)
        return
    click.echo(f"Copied {report['files']} files, {report['chunks']} chunks ({report['vectors']} with vectors) and "
               f"{report['cacheEntries']} cached vectors from {report['from']} to {report['to']} in "
               f"{report['seconds']:.1f} s; nothing was embedded again.")
    where = f'{{driver: "postgres", url: "{redact_url(to_url)}", namespace: "{report["namespace"]}"}}' if to_url \
        else '{driver: "sqlite"}'
    click.echo(f"To use it: memorySearch.store = {where}")


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
              help="Workspace mode: also ask every workspace the queries.jsonl of DIR3, which nothing in it "
                   "answers (up to 300, spread over the file), and report the share answered with nothing. "
                   "Repeatable.")
@click.option("--others", type=click.IntRange(0), default=0,
              help="Workspace mode: also ask each workspace N questions about the other workspaces.")
@click.option("--work-dir", type=click.Path(file_okay=False),
              help="Keep scratch workspaces and indexes here to reuse them.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
@_run
def eval_cmd(obj: _Ctx, directory, scope_field, queries_dir, mode, min_score, limit_queries, foreign, others,
             work_dir, as_json) -> None:
    """Measure retrieval on a BEIR directory (or a folder of Markdown workspaces) with the real index.

    Prints recall@1/5/10, MRR@10, nDCG@10 and latency percentiles (plus by_category),
    all with minScore in force: the share of queries answered with nothing, and how the
    best relevant result of each query scored.
    A directory without corpus.jsonl whose sub-folders hold Markdown files runs in
    workspace mode: each folder is indexed as a workspace and a hit is a chunk whose
    line range holds an evidence id such as (D1:3) from --queries.
    """
    from .eval.runner import EvalOptions, evaluate

    config: Any = obj.config  # --config, or MNEMOCLAW_CONFIG through click
    if config:
        from .config import load_file

        config = load_file(config)
    opts = EvalOptions(mode=mode, scope_field=scope_field, queries_dir=queries_dir, min_score=min_score,
                       work_dir=work_dir, config=config, limit_queries=limit_queries, foreign_dirs=tuple(foreign),
                       others=others)
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
        _emit_json(result)
        return
    click.echo(f"{result['dataset']}: {result['queries']} queries, mode {result['mode']}, "
               f"{result['provider']}/{result['model'] or '-'}, fusion {result['fusion']}, "
               f"minScore {result['min_score']:g}")
    keys = [k for k in ("recall@1", "recall@5", "recall@10", "hit@5", "snippet_recall@5", "mrr@10", "ndcg@10")
            if k in result]
    click.echo("  " + "  ".join(f"{k} {result[k]:.3f}" for k in keys))
    click.echo(f"  answered with nothing: {result['empty']:.3f} of these queries")
    for kind, row in result.get("out_of_scope", {}).items():
        click.echo(f"  out of scope, {kind}: {row['queries']} queries, answered with nothing {row['empty']:.3f}")
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
@_run
def demo(obj: _Ctx, keep: bool) -> None:
    """Build a small English + Chinese workspace, index it offline and run four searches."""
    from .api import Memory
    from .config import load_settings
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
            _print_results(mem.memory_search(query, 3))
    if keep or obj.workspace:
        click.echo(f"\nWorkspace kept at {ws}; try: mnemoclaw --workspace {ws} --state-dir {state} search \"...\"")
    elif tmp:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    cli(prog_name="mnemoclaw")


if __name__ == "__main__":
    main()
