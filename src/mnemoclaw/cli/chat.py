"""The chat runtime from the shell: chat, sessions, context, compact, hygiene."""

from __future__ import annotations

import sys
import time

import click

from ..errors import MnemoclawError
from ..serve.nearby import serving
from .app import Ctx, cli, emit_json, translated
from .index import SERVED


# -- chat / hygiene -------------------------------------------------------------------------
@cli.command()
@click.option("--session", "session_id", metavar="ID", help="Resume this session (default: the latest, unless reset).")
@click.pass_obj
@translated
def chat(obj: Ctx, session_id) -> None:
    """Chat with an agent that has the memory tools (llm.baseUrl, llm.model, llm.apiKey).

    Slash commands: /context list|detail, /compact [focus], /status, /new, /reset, /verbose, /recall [on|off].
    The agent searches memory before answering about the past, writes what must last,
    flushes notes before compaction and never loses the transcript.
    """
    from ..api import Memory
    from ..runtime.agent import AgentSession

    settings = obj.settings()
    settings.check_writable("chat (its transcript)")
    with Memory(settings) as mem, serving(settings, "chat", lambda: mem.provider, SERVED):
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
                for entry in reply.recalled:
                    click.echo(f"  [recalled {entry['citation']} score {entry['score']:.2f}] {entry['text'][:120]}",
                               err=True)
                for call in reply.tool_calls:
                    click.echo(f"  [tool {call['name']}] {call['result']}", err=True)
                if reply.flushed:
                    click.echo("  [memory flushed before compaction]", err=True)
                if reply.compacted:
                    click.echo("  [conversation compacted]", err=True)
            if reply.text:
                click.echo(reply.text)


def _agent_session(session_id: str | None, mem):
    from ..runtime.agent import AgentSession
    from ..runtime.transcript import SessionStore

    store = SessionStore(mem.settings.sessions_dir, read_only=mem.settings.openclaw_dir is not None)
    sid = session_id or store.latest()
    if sid is None:
        raise MnemoclawError(f"no sessions yet in {store.dir}; start one with `mnemoclaw chat`")
    if session_id and not store.path(session_id).exists():
        raise MnemoclawError(f"no session {session_id!r} in {store.dir}; `mnemoclaw sessions` lists them")
    return AgentSession(mem, session_id=sid)


@cli.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
@click.pass_context
def sessions(ctx: click.Context, as_json: bool) -> None:
    """List the agent's chat sessions: tokens, compactions, last memory flush.
    `mnemoclaw sessions search QUERY` searches what was said in them."""
    if ctx.invoked_subcommand is None:
        _list_sessions(ctx.obj, as_json)


@sessions.command("search")
@click.argument("query")
@click.option("--role", type=click.Choice(["user", "assistant"]), help="Only messages of this role.")
@click.option("--since", metavar="YYYY-MM-DD", help="Only messages from this day on.")
@click.option("--until", metavar="YYYY-MM-DD", help="Only messages up to this day.")
@click.option("-n", "--max-results", type=click.IntRange(1, 50), default=10, show_default=True,
              help="How many messages.")
@click.option("--json", "as_json", is_flag=True, help="Print sessions_search's JSON.")
@click.pass_obj
@translated
def sessions_search(obj: Ctx, query: str, role, since, until, max_results: int, as_json: bool) -> None:
    """Search past sessions word for word (the sessions_search tool): what the user and the
    assistant said, newest first, secrets redacted; every word must appear ("quoted" phrases
    as written), Chinese in either script and by single characters."""
    from ..api import Memory

    with Memory(obj.settings(), provider=None, background=False) as mem:  # no model needed
        found = mem.tools.for_person().sessions_search(query, role=role, since=since, until=until,
                                                       max_results=max_results)
    if as_json:
        emit_json(found)
        return
    if "error" in found:
        raise click.ClickException(found["error"])
    for bad in found.get("unreadable", []):
        click.echo(f"skipped session {bad['session']}: {bad['why']}", err=True)
    if not found["results"]:
        click.echo(found["note"])
        return
    for r in found["results"]:
        when = (r["timestamp"] or "")[:16].replace("T", " ") or "(no time)"
        click.echo(f"{r['session']}:{r['line']}  {when}  {r['role']}: {r['excerpt']}")


def _list_sessions(obj: Ctx, as_json: bool) -> None:
    from ..runtime.transcript import SessionStore, epoch_seconds

    settings = obj.settings()
    store = SessionStore(settings.sessions_dir, read_only=settings.openclaw_dir is not None)
    data = store.all_meta()
    rows = sorted((m for m in data.values() if isinstance(m, dict)), key=lambda m: epoch_seconds(m.get("updatedAt")),
                  reverse=True)
    if as_json:
        emit_json(rows)
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
@translated
def context(obj: Ctx, what: str, session_id, as_json: bool) -> None:
    """What the next request of a chat session holds (the /context report)."""
    from ..api import Memory

    with Memory(obj.settings(), background=False) as mem:
        agent = _agent_session(session_id, mem)
        if as_json:
            emit_json(agent.context_breakdown(detail=what == "detail"))
        else:
            click.echo(agent.context_report(detail=what == "detail"))


@cli.command()
@click.argument("focus", required=False)
@click.option("--session", "session_id", metavar="ID", help="Session (default: the latest).")
@click.option("--json", "as_json", is_flag=True, help="Print {session, compacted, tokensBefore, tokensAfter} as JSON.")
@click.pass_obj
@translated
def compact(obj: Ctx, focus, session_id, as_json: bool) -> None:
    """Compact a chat session now (the /compact command), optionally with a focus."""
    from ..api import Memory

    settings = obj.settings()
    settings.check_writable("compact (the session transcript)")
    with Memory(settings, background=False) as mem:
        agent = _agent_session(session_id, mem)
        before = agent.session_tokens()
        done = agent.compact(focus, reason="command")
        after = agent.session_tokens()
    if as_json:
        emit_json({"session": agent.session_id, "compacted": done, "tokensBefore": before, "tokensAfter": after})
    else:
        click.echo(f"Compacted session {agent.session_id}: ~{before} -> ~{after} tokens."
                   if done else f"Nothing to compact in session {agent.session_id} yet.")


@cli.command()
@click.option("--days", type=click.IntRange(1, 365), default=7, show_default=True, help="How many recent days of logs.")
@click.option("--apply", "apply_", is_flag=True, help="Append the proposal to MEMORY.md without asking.")
@click.option("--json", "as_json", is_flag=True, help="Print {additions, diff, sources, applied} as JSON.")
@click.pass_obj
@translated
def hygiene(obj: Ctx, days: int, apply_: bool, as_json: bool) -> None:
    """Distil the last days of daily logs into proposed MEMORY.md additions (shown as a diff).

    Needs a chat model: llm.baseUrl and llm.model in the config (or MNEMOCLAW_LLM_BASE_URL and
    MNEMOCLAW_LLM_MODEL), any OpenAI-compatible endpoint.
    """
    from ..runtime import hygiene as hy

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
        emit_json({"additions": proposal.additions, "diff": proposal.diff, "sources": proposal.sources,
                    "applied": applied})
    elif applied:
        click.echo(f"MEMORY.md: {len(proposal.additions)} lines added.")
    elif proposal.additions:
        click.echo("Not applied (run with --apply, or answer yes).", err=True)
