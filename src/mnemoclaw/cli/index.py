"""Commands that set up, index and read memory: init, index, sync, watch, search, get, status."""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import click

from ..errors import MnemoclawError
from ..markdown.provenance import ORIGINS
from ..promote.schedule import nightly
from ..search.relevance import DEFAULT_MIN_SCORE
from ..serve.nearby import Call, Commands, Declined, serving
from ..tools import CORPORA, MAX_RESULTS, SEARCH
from ..tools.wire import search_failed
from .app import Ctx, Progress, cli, emit_json, emit_json_line, json_text, translated
from .hook import DEFAULT_MS as HOOK_DEFAULT_MS
from .hook import MAX_MS as HOOK_MAX_MS
from .hook import OPTION as HOOK_OPTION
from .hook import PREFIX as HOOK_PREFIX
from .hook import Watchdog
from .hook import current as hook_watchdog


# -- init ---------------------------------------------------------------------------------
@cli.command()
@click.option("--set-default", is_flag=True,
              help="If the config file names another workspace, point it at this one.")
@click.pass_obj
@translated
def init(obj: Ctx, set_default: bool) -> None:
    """Create the workspace (MEMORY.md, memory/, AGENTS.md with the memory protocol) and a config file."""
    from ..notes.scaffold import init_workspace

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
    from ..index.preparing import CONTROL_CHARS

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
    for path in r.skipped:
        click.echo(f"  skipped: {path}: a symbolic link, never followed (move or copy what it points at into the "
                   "workspace, or name its real folder in extraPaths)")
    if r.vectors_pending:
        click.echo(f"  vectors: {r.vectors_pending} chunks are searchable by keyword only: the embedding provider "
                   f"failed ({r.vectors_error or 'see above'}). `mnemoclaw index` adds their vectors once it works.")
    if r.chunks_total == 0 and not r.failed:
        click.echo(f"  No memory files yet: write {workspace / 'MEMORY.md'} or "
                   f"{workspace / 'memory' / 'YYYY-MM-DD.md'} (`mnemoclaw init` creates them).")


def _sync_waiting(mem, full: bool, wait: bool, progress=None, retry: bool = False):
    """Sync; if another process is writing, say so and wait for it (or skip: ``None``)."""
    from ..errors import LockTimeoutError

    try:
        return mem.sync(full=full, progress=progress, lock_timeout=0, retry=retry)
    except LockTimeoutError as exc:
        who, where = exc.holder, exc.index
        if not wait:
            click.echo(f"Skipped: {who} is updating the index {where} right now.", err=True)
            return None
        click.echo(f"Waiting for {who}, which is updating the index {where}… (Ctrl-C to stop)", err=True)
        return mem.sync(full=full, progress=progress, lock_timeout=None, retry=retry)


def _index(obj: Ctx, full: bool, as_json: bool, wait: bool = True) -> None:
    with obj.memory() as mem:
        bar = Progress("indexing")
        try:
            report = _sync_waiting(mem, full, wait, bar, retry=True)
        finally:
            bar.finish()
        if report is None:
            return
        if as_json:
            emit_json(report.as_dict())
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
@translated
def index(obj: Ctx, full: bool, as_json: bool, wait: bool) -> None:
    """Bring the index up to date with the Markdown files (incremental; --full rebuilds).

    Exit status 3 means some files were skipped; the report says which and why.
    """
    _index(obj, full, as_json, wait)


@cli.command("sync")
@click.option("--full", is_flag=True, help="Rebuild everything (into a new database, swapped in when done).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--wait/--no-wait", default=True, help="Wait for another writer (default) or skip.")
@click.pass_obj
@translated
def sync_cmd(obj: Ctx, full: bool, as_json: bool, wait: bool) -> None:
    """Same as `index`."""
    _index(obj, full, as_json, wait)


@cli.command()
@click.option("--debounce-ms", type=click.IntRange(0),
              help="Quiet time before a sync (default sync.watchDebounceMs, 1500).")
@click.option("--poll", is_flag=True, help="Poll instead of native notifications (network or container filesystems).")
@click.option("--json", "as_json", is_flag=True, help="One JSON line per sync.")
@click.pass_obj
@translated
def watch(obj: Ctx, debounce_ms, poll: bool, as_json: bool) -> None:
    """Keep the index fresh: sync now, then after every burst of changes, until Ctrl-C.

    While it runs, `mnemoclaw search` and `mnemoclaw recall` for this agent are answered by it.
    """
    with obj.memory(background=True) as mem:
        bar = Progress("indexing")
        try:
            report = _sync_waiting(mem, False, True, bar)
        finally:
            bar.finish()
        if report is not None and as_json:
            emit_json_line({"event": "sync", "reasons": ["start"], **report.as_dict()})
        elif report is not None:
            _print_report(report, mem.settings.workspace)

        def show(report, reasons) -> None:
            if as_json:
                emit_json_line({"event": "sync", "reasons": sorted(reasons), **report.as_dict()})
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
            emit_json_line({"event": "watching", "mode": watcher.mode, "debounceMs": round(watcher.debounce * 1000),
                             "targets": [{"path": t.path, "recursive": t.recursive} for t in watcher.targets]})
        else:
            where = ", ".join(f"{t.path}{'/**' if t.recursive else ''}" for t in watcher.targets)
            click.echo(f"Watching {where} ({watcher.mode}, debounce {watcher.debounce * 1000:.0f} ms). Ctrl-C stops.",
                       err=True)
        with serving(mem.settings, "watch", lambda: mem.provider, SERVED), \
                nightly(mem.settings, lambda: obj.memory(settings=mem.settings)):
            while not stop.wait(1.0):
                pass
        click.echo("Stopped.", err=True)


def _stop_on_signals():
    """An event Ctrl-C (or SIGTERM) sets, so a long-running command stops between two steps
    and closes cleanly, whatever it was doing; a second Ctrl-C stops it at once."""
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
# search and recall write through an ``echo`` (``click.echo``'s signature), so a process that
# already serves this agent answers them for a command line that asks it (serve/nearby.py,
# from the table SERVED at the end) with the same text, written into the reply instead of its
# own stdout.
Echo = Callable[..., Any]


def origin_label(r: dict[str, Any]) -> str:
    """Where a result came from, when it is not simply the owner's file: ", agent, session X"."""
    origin = r.get("origin")
    if origin in (None, "owner"):
        return ""
    if origin == "imported":
        return f", imported from {r.get('importedFrom', '?')}"
    said = [f"session {r['session']}" if r.get("session") else "",
            " ".join(str(r[k]) for k in ("channel", "chat") if r.get(k))]
    return ", ".join(["", *([] if origin == "transcript" else [origin]), *(s for s in said if s)])


def print_results(result: dict[str, Any], floor: float | None = None, echo: Echo = click.echo) -> None:
    if result.get("disabled"):
        # the action is for an agent; a message that already names the command to run needs none
        action = "" if "`mnemoclaw " in result["error"] else f"\n  {result['action']}"
        echo(f"Search unavailable: {result['error']}{action}", err=True)
        return
    if result.get("error"):
        echo(f"Not searched: {result['error']}; {result.get('action', '')}", err=True)
        return
    if result.get("warning"):
        echo(f"Note: {result['warning']}", err=True)
    indexing = result.get("indexing")
    if not result["results"]:
        if indexing and indexing.get("kind") == "sync":
            echo(f"Nothing found in what is indexed so far ({indexing['filesDone']} of "
                 f"{indexing['filesTotal']} changed files).")
        elif result.get("note"):  # searched, and nothing was about the query
            scored = f"{floor:g}" if floor is not None else "minScore"
            echo(f"Nothing in memory matches this: no result scored {scored} or more "
                 "(--min-score 0 lists the nearest chunks anyway).")
        else:
            echo("No results.")
        return
    if result["results"][0].get("weak"):
        scored = f"{floor:g}" if floor is not None else "minScore"
        echo(f"Only a weak match: nothing scored {scored} or more, but this holds most of the query's words "
             "(it may not be the answer).", err=True)
    for i, r in enumerate(result["results"], 1):
        weak = "  weak" if r.get("weak") else ""
        echo(f"{i}. {r['path']}#L{r['startLine']}-L{r['endLine']}  score {r['score']:.3f}{weak}  "
             f"[{r['source']}{origin_label(r)}]")
        body = r["snippet"].split("\n\nSource: ")[0]
        for line in body.strip().splitlines()[:8]:
            echo(f"     {line}")


@cli.command()
@click.argument("query")
@click.option("-n", "--max-results", type=click.IntRange(1, MAX_RESULTS), help="How many results (default 6).")
@click.option("--min-score", type=click.FloatRange(SEARCH.param("minScore").minimum, SEARCH.param("minScore").maximum),
              help=f"Drop results scoring below this (default {DEFAULT_MIN_SCORE:g}).")
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "vector"]), help="Override the search mode.")
@click.option("--type", "kind", help="Only entries annotated with this type (fact, preference, task, summary, ...).")
@click.option("--history", is_flag=True, help="Also expired entries and the older values of keyed entries.")
@click.option("--corpus", type=click.Choice(CORPORA), help="memory (default), sessions (indexed transcripts) or all.")
@click.option("--project", help="The project the work is in: entries annotated with another project come after "
              "this one's (env MNEMOCLAW_PROJECT).", envvar="MNEMOCLAW_PROJECT")
@click.option("--origin", type=click.Choice(ORIGINS), help="Only results from there: owner, agent (what an agent "
              "wrote), imported, transcript or untrusted.")
@click.option("--json", "as_json", is_flag=True, help="Print the memory_search result as JSON.")
@click.pass_obj
@translated
def search(obj: Ctx, query: str, **params: Any) -> None:
    """Search memory (memory_search semantics): ranked chunks with path#Lx-Ly citations.

    When a `watch`, `mcp`, `ui` or `chat` of this agent runs, it answers over a local socket
    (owner-only) instead of this process loading the model; MNEMOCLAW_NEARBY=off never asks.
    """
    if not query.strip():
        raise click.UsageError("the query is empty: give the words of what you are looking for")
    try:
        with obj.memory() as mem:
            code = run_search(mem, query, **params)
    except (MnemoclawError, OSError) as exc:
        if not params.get("as_json"):
            raise
        # what reads --json reads stdout: it gets memory_search's own answer for a failure
        emit_json(search_failed(exc, lambda said: said))
        code = 1
    if code:
        sys.exit(code)


def run_search(mem, query: str, *, max_results=None, min_score=None, mode=None, kind=None, history=False,
               corpus=None, project=None, origin=None, as_json=False, echo: Echo = click.echo) -> int:
    """One `mnemoclaw search` on ``mem``, printed; its exit code."""
    result = mem.tools.for_person().memory_search(query, max_results, min_score, mode=mode, kind=kind,
                                                  history=history or None, corpus=corpus, project=project,
                                                  origin=origin)
    floor = mem.settings.query_options().min_score if min_score is None else min_score
    if as_json:
        emit_json(result, echo)
    else:
        print_results(result, floor, echo)
    return 1 if result.get("disabled") else 0


@cli.command()
@click.argument("message", required=False)
@click.option("--last-turn", help="What was said just before the message (a short message is searched with it).")
@click.option("--hook", is_flag=True, help="Run as a per-prompt hook (Claude Code, Codex UserPromptSubmit): read "
              "the hook's JSON from stdin, print only what to add to the context, always exit 0.")
@click.option(HOOK_OPTION, "timeout_ms", type=click.IntRange(1, HOOK_MAX_MS), default=HOOK_DEFAULT_MS, metavar="MS",
              help=f"With --hook: the run's one deadline (default {HOOK_DEFAULT_MS}), from start to answer: asking a "
              "running mnemoclaw, opening the index, embedding, searching. When it passes, nothing is recalled, one "
              "line says so, exit 0.")
@click.option("--json", "as_json", is_flag=True, help="Print the entries, scores and block as JSON.")
@click.pass_obj
@translated
def recall(obj: Ctx, message: str | None, last_turn: str | None, hook: bool, timeout_ms: int, as_json: bool) -> None:
    """What memory would put before the reply to MESSAGE ("-": read it from stdin): the entries
    that score high enough and share specific words with it, at most memory.recall.maxEntries.

    Like search, asks a running `watch`, `mcp`, `ui` or `chat` of this agent when there is one.
    """
    if hook:  # timeout_ms is kept by cli/hook.py's watchdog, armed from the command line before this runs
        hook_recall(obj.settings, lambda s: obj.memory(settings=s), sys.stdin.read(), as_json,
                    watchdog=hook_watchdog())
        return
    if message is None or message == "-":
        message = sys.stdin.read()
    if not message.strip():
        raise click.UsageError("the message is empty: give the message the agent is about to answer")
    with obj.memory() as mem:
        run_recall(mem, message, last_turn, as_json)


def run_recall(mem, message: str, last_turn: str | None, as_json: bool, echo: Echo = click.echo) -> int:
    found = mem.tools.for_person().recall(message, last_turn=last_turn)
    if as_json:
        emit_json(found.wire(), echo)
    elif found.entries:
        echo(found.block())
    else:
        echo(f"Nothing recalled: {found.why_none}.", err=True)
    return 0


def hook_recall(settings_of: Callable[[], Any], open_memory: Callable[[Any], Any], raw: str, as_json: bool,
                echo: Echo = click.echo, watchdog: Watchdog | None = None) -> int:
    """A hook's run: its JSON in (``prompt``), the block out, exit 0 whatever happens, so a
    memory problem never stops the user's prompt; what went wrong is one line on stderr, and
    nothing is created for a workspace that does not exist. ``watchdog`` (a run of its own)
    ends the process at its deadline unless the answer is being written."""
    said, why = _hook_answer(settings_of, open_memory, raw, as_json, watchdog)
    if watchdog is not None:
        watchdog.claim()
    if why:
        echo(f"{HOOK_PREFIX}{why}", err=True)
    if said:
        echo(said)
    return 0


def _hook_answer(settings_of: Callable[[], Any], open_memory: Callable[[Any], Any], raw: str, as_json: bool,
                 watchdog: Watchdog | None) -> tuple[str, str]:
    """(what to print, what went wrong): one of them, or neither when nothing came."""
    def doing(what: str) -> None:
        if watchdog is not None:
            watchdog.doing = what

    try:
        event = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return "", ("the input is not the hook's JSON (an object with a \"prompt\", which a UserPromptSubmit hook "
                    "sends); for plain text run `mnemoclaw recall -`; nothing recalled")
    prompt = event.get("prompt") if isinstance(event, dict) else None
    if not isinstance(prompt, str) or not prompt.strip():
        return "", ("the hook's input has no prompt (run it as a UserPromptSubmit hook, which sends "
                    "{\"prompt\": ...}); nothing recalled")
    try:
        doing("reading the settings")
        settings = settings_of()
        if not settings.workspace.is_dir():  # before anything opens an index or a state folder for it
            return "", _no_workspace(settings)
        doing("opening the index")
        with open_memory(settings) as mem:
            doing("searching memory")
            found = mem.tools.for_person().recall(prompt)
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the prompt
        return "", f"nothing recalled ({exc})"
    if as_json:
        return json_text(found.wire()), ""
    if found.failed:
        return "", f"nothing recalled: {found.why_none}"
    return found.block(), ""


def _no_workspace(settings) -> str:
    from ..config import DEFAULT_CONFIG_NAME

    ws = settings.workspace
    if settings.config_path is None and settings.openclaw_dir is None and ws == settings.state_dir / "workspace":
        return (f"no config file ({settings.state_dir / DEFAULT_CONFIG_NAME}) names a workspace and the default one, "
                f"{ws}, does not exist: give the hook's command --workspace DIR (the folder of your memory files), "
                "or create one with `mnemoclaw init`; nothing recalled")
    create = "" if settings.openclaw_dir is not None else f", or create it with `mnemoclaw init --workspace {ws}`"
    return (f"the workspace {ws} does not exist: give the hook's command --workspace DIR (the folder of your memory "
            f"files){create}; nothing recalled")


# -- search and recall answered by a serving process ---------------------------------------
def _served(call: Call) -> tuple[dict[str, Any], Any, Any]:
    """The caller's command line read as this one reads it: its command's own options, the
    settings it names and the server's memory for them (``Declined``: other settings)."""
    group, command = cli.read_command_line(call.argv)
    g, p = group.params, dict(command.params)
    where = Ctx(g["workspace"], g["state_dir"], g["config_path"], g["agent"], g["openclaw_dir"], cwd=call.cwd)
    settings = where.locate(**{k: p.pop(k) for k in ("workspace_", "state_dir_", "config_", "openclaw_")}).settings()
    mem = call.memory(settings)
    for warning in settings.warnings:  # what the command line logs when it reads them
        call.echo(f"mnemoclaw: {warning}", err=True)
    return p, settings, mem


def _answer_search(call: Call) -> int:
    p, _, mem = _served(call)
    if not str(p["query"]).strip():
        raise Declined("usage")
    return run_search(mem, p.pop("query"), echo=call.echo, **p)


def _answer_recall(call: Call) -> int:
    p, settings, mem = _served(call)
    if p["hook"]:
        return hook_recall(lambda: settings, lambda _: nullcontext(mem), call.stdin or "", p["as_json"], call.echo)
    message = call.stdin if p["message"] == "-" else p["message"]
    if not isinstance(message, str) or not message.strip():
        raise Declined("usage")
    return run_recall(mem, message, p["last_turn"], p["as_json"], call.echo)


SERVED = Commands(lambda argv: cli.read_command_line(argv)[1].info_name,
                  {"search": _answer_search, "recall": _answer_recall})


def _promote_line(p: dict) -> str:
    """Promotion in one line: the schedule, the last run, what the next would promote."""
    if p.get("error"):
        return f"dreaming settings refused: {p['error']}"
    when = f"nightly at {p['frequency']} (next {p['nextRun']})" if p["enabled"] else \
        "by hand (`mnemoclaw promote`; dreaming.enabled runs it on a schedule)"
    last = p["lastRun"]
    said = f"last run {last['at']}: {last['promoted']} promoted" if last else "never run"
    nxt = f"{len(p['candidates'])} of {p['recalledEntries']} recalled entries would be promoted now"
    unknown = f"; not applied: {', '.join(p['unknownKeys'])}" if p["unknownKeys"] else ""
    return f"{when}; {said}; {nxt}{unknown}"


@cli.command()
@click.argument("path")
@click.option("--from", "from_line", type=click.IntRange(1), help="First line (1-based).")
@click.option("--lines", type=click.IntRange(0), help="How many lines.")
@click.option("--json", "as_json", is_flag=True, help="Print {path, text} as JSON.")
@click.pass_obj
@translated
def get(obj: Ctx, path: str, from_line, lines, as_json) -> None:
    """Read a memory file or a line range of it (memory_get semantics)."""
    with obj.memory() as mem:
        shown, text = mem.read(path, from_line, lines)
    if text is None:
        click.echo(f"{shown} does not exist (yet); nothing to show.", err=True)
    result = {"path": shown, "text": text or ""}
    if as_json:
        emit_json(result)
    elif result["text"]:
        click.echo(result["text"], nl=not result["text"].endswith("\n"))


# -- status -------------------------------------------------------------------------------
@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option("--fast", is_flag=True, help="Skip reading every page and chunk of the index for damage (about "
              "0.5 s per 10 000 chunks).")
@click.option("--deep", is_flag=True, help="Also check the keyword index against the chunk texts.")
@click.pass_obj
@translated
def status(obj: Ctx, as_json: bool, fast: bool, deep: bool) -> None:
    """Show the workspace, index, provider, vector path, tokenizer, damage and whether a sync is due."""
    from ..embeddings.base import broken_plugins
    from ..promote.run import summary

    with obj.memory() as mem:
        st = mem.status(check_integrity=not fast, deep=deep)
        try:
            st["promote"] = summary(mem)
        except MnemoclawError as exc:  # a bad dreaming setting: said here, the rest of status still shown
            st["promote"] = {"error": str(exc)}
    st["warnings"] = [*st["warnings"], *broken_plugins()]  # status alone imports every plugin to check it
    if as_json:
        emit_json(st)
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
        ("promote", _promote_line(st["promote"])),
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
    if st.get("forgetUnfinished"):
        f = st["forgetUnfinished"]
        return (f"a forget is unfinished (since {f['since']}, {f['files']} file(s)): the index may still hold what "
                "it removed; the next `mnemoclaw index`, sync or search finishes it")
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
