"""Commands that change memory on purpose: forget, cleanup, import, migrate, migrate-from-qmd, reset, promote."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from .app import Ctx, Progress, cli, emit_json, translated


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


def _say_what_was_purged(done: dict, what: str) -> None:
    """After a forget: where the text still is, what the index did, and whether its check passed
    (exit 1 when the index file still holds some of it)."""
    _say_what_still_holds(done)
    click.echo(f"Index: {done['chunksReplaced']} chunk(s) replaced, {done['cachedVectorsDeleted']} cached "
               "vector(s) deleted, vacuumed.")
    if done["verified"]:
        click.echo(f"Checked: the index file no longer holds {what}.")
    else:
        click.echo(f"Warning: the index file still holds {len(done['stillInIndex'])} removed line(s); run "
                   "`mnemoclaw index --full`.", err=True)
        sys.exit(1)


@cli.command()
@click.argument("target", required=False)
@click.option("--session", help="Forget what came from this session (its id, or an OpenClaw session key).")
@click.option("--source", help="Forget an import source (chatgpt, claude, claude-code, codex).")
@click.option("--participant", help="Forget what this person said in the transcripts.")
@click.option("--since", help="With --session, --source or --participant: only what is dated YYYY-MM-DD or later.")
@click.option("--dry-run", is_flag=True, help="Show what would be removed; remove nothing.")
@click.option("--yes", is_flag=True, help="Remove without asking (after printing what is removed).")
@click.option("--keep-copy", is_flag=True,
              help="Keep an undo copy of the old files under the state directory for 7 days (none by default).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan (and, with --yes, the result) as JSON.")
@click.pass_obj
@translated
def forget(obj: Ctx, target: str | None, session: str | None, source: str | None, participant: str | None,
           since: str | None, dry_run: bool, yes: bool, keep_copy: bool, as_json: bool) -> None:
    """Remove from memory for good: the lines holding all of TARGET's words (each with its list
    item or paragraph, and every transcript message holding them, indexed or not), or the lines
    TARGET cites (memory/2026-03-01.md#L3-L5). Shows them first; removes only on confirmation.
    A keyed hash of each removed line (never the line) keeps it out of every answer wherever it
    comes back; an OpenClaw agent's files are left in place and only kept out.

    By origin: --session ID (what an agent wrote in that session, and its transcript), --source S
    (an import's files) or --participant P (what P said in transcripts), with --since DATE for
    only the newer part. A tombstone in the state directory keeps it out of every later index,
    rebuild and re-import; a transcript another program keeps (OpenClaw's) is left in place and
    kept out of the index. Lines it cannot tell apart (an agent's note that mixes several
    sources) are listed, not removed.

    No copy of what is forgotten is kept (the preview is the safety net; --keep-copy keeps one
    for 7 days). In a git workspace the removal is committed and the commits that still hold the
    text are named. Then the chunks, vectors and cached vectors that held the lines are purged,
    the index vacuumed, and the index file checked for the text; a forget stopped half-way is
    finished by the next index, sync or search (status says so until then).
    """
    origins = [(k, v) for k, v in (("session", session), ("source", source), ("participant", participant)) if v]
    if len(origins) > 1 or (origins and target):
        raise click.UsageError("give one of TARGET, --session, --source or --participant")
    if since and not origins:
        raise click.UsageError("--since goes with --session, --source or --participant")
    if origins:
        if keep_copy:
            raise click.UsageError("--keep-copy goes with a TARGET; a forget by origin keeps no copy")
        _forget_origin(obj, *origins[0], since, dry_run=dry_run, yes=yes, as_json=as_json)
        return
    if not target:
        raise click.UsageError("say what to forget: a query, a citation, or --session, --source or --participant")
    with obj.memory() as mem:
        plan = mem.notes.forget_plan(target)
        if not as_json:
            click.echo(f"forget {target!r}: {plan.line_count} line(s) in {len(plan.files())} file(s)"
                       + (f", {len(plan.fenced)} more kept out (read-only here)" if plan.fenced else ""))
            for r in [*plan.removals, *plan.fenced]:
                where = f"{r.path}#L{r.start}" + (f"-L{r.end}" if r.end != r.start else "")
                click.echo(f"  {where}" + ("  (session transcript)" if r.source == "sessions" else "")
                           + ("  (OpenClaw's: left in place, kept out of the index and answers)"
                              if r in plan.fenced else ""))
                _show_lines(r.start, r.lines)
        ask = not yes and not as_json and not dry_run and sys.stdin.isatty()
        if dry_run or not (yes or (ask and click.confirm("Remove these lines?", default=False))):
            if as_json:
                emit_json({"plan": plan.as_dict(), "applied": False})
            else:
                click.echo("Nothing removed (answer yes, or run with --yes).", err=True)
            return
        done = mem.notes.forget(plan, keep_copy=keep_copy)
    if as_json:
        emit_json({"plan": plan.as_dict(), "applied": True, **done})
        return
    click.echo(f"Removed {plan.line_count} line(s) from {len(plan.files())} file(s)"
               + (f"; {len(plan.fenced)} kept out" if plan.fenced else "")
               + ". A keyed hash of each in the state directory keeps them out wherever they come back.")
    _say_what_was_purged(done, "the removed lines")


def _forget_origin(obj: Ctx, kind: str, value: str, since: str | None, *, dry_run: bool, yes: bool,
                   as_json: bool) -> None:
    with obj.memory() as mem:
        plan = mem.notes.forget_origin_plan(kind, value, since)
        if not as_json and not plan.empty():
            click.echo(f"forget {plan.target}: {plan.lines.line_count} line(s) in {len(plan.lines.files())} file(s)"
                       + (f", {len(plan.deletions)} imported file(s) deleted" if plan.deletions else "")
                       + (f", {len(plan.fenced)} transcript(s) kept out of the index" if plan.fenced else ""))
            for r in plan.lines.removals:
                where = f"{r.path}#L{r.start}" + (f"-L{r.end}" if r.end != r.start else "")
                click.echo(f"  {where}" + ("  (session transcript)" if r.source == "sessions" else ""))
                _show_lines(r.start, r.lines, limit=6)
            for d in plan.deletions:
                click.echo(f"  {d.path}  (deleted: {d.end} line(s))")
            for path in plan.fenced:
                click.echo(f"  {path}  (another program's transcript: left in place, kept out of the index)")
        for u in plan.untargetable if not as_json else ():
            click.echo(f"  not removed: {u['path']}#L{u['startLine']}-L{u['endLine']}: {u['why']}")
        if plan.empty():
            if as_json:
                emit_json({"plan": plan.as_dict(), "applied": False})
            else:
                click.echo(f"Nothing in memory came from {plan.target} that can be removed here; nothing was removed."
                           if plan.untargetable else
                           f"Nothing in memory came from {plan.target}; nothing was removed.", err=True)
            return
        ask = not yes and not as_json and not dry_run and sys.stdin.isatty()
        if dry_run or not (yes or (ask and click.confirm("Remove all of this?", default=False))):
            if as_json:
                emit_json({"plan": plan.as_dict(), "applied": False})
            else:
                click.echo("Nothing removed (answer yes, or run with --yes).", err=True)
            return
        done = mem.notes.forget_origin(plan)
    if as_json:
        emit_json({"plan": plan.as_dict(), "applied": True, **done})
        return
    click.echo(f"Removed {plan.lines.line_count} line(s)" + (f" and {len(plan.deletions)} file(s)"
                                                             if plan.deletions else "")
               + f"; the tombstone in {done['tombstone']} keeps {plan.target} out of every later index and import.")
    _say_what_was_purged(done, "what was removed")


@cli.command()
@click.option("--older-than", default="180d", show_default=True,
              help="Archive daily logs older than this (180d, 26w, 6m, 1y; 0 or 'never' archives none).")
@click.option("--below-importance", type=click.IntRange(2, 10),
              help="Remove entries annotated with an importance below this.")
@click.option("--expired/--no-expired", default=True, show_default=True, help="Remove entries past their expires date.")
@click.option("--apply", "apply_", is_flag=True, help="Do it (the default is to show what would be done).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan (and what was done) as JSON.")
@click.pass_obj
@translated
def cleanup(obj: Ctx, older_than: str, below_importance: int | None, expired: bool, apply_: bool,
            as_json: bool) -> None:
    """Propose, then with --apply perform, a clean-up of memory: expired entries and entries
    below an importance removed (as `forget` removes them: no copy kept, index purged), daily
    logs older than a cut-off moved to memory/archive/ (still searched, ranked below live notes;
    query.archive false leaves them out)."""
    from ..notes.cleanup import parse_age

    days = None if older_than.strip().lower() in ("never", "0", "0d") else parse_age(older_than)
    with obj.memory() as mem:
        plan = mem.notes.cleanup_plan(older_than_days=days, below_importance=below_importance, expired=expired)
        shown = plan.as_dict()
        if not as_json:
            if plan.empty:
                click.echo("Nothing to clean up.")
            for r in shown["remove"]:
                click.echo(f"remove {r['path']}#L{r['startLine']}-L{r['endLine']} ({r['why']})")
                _show_lines(r["startLine"], r["lines"])
            for m in shown["archive"]:
                click.echo(f"archive {m['path']} -> {m['to']}")
        done: dict = {}
        if apply_ and not plan.empty:
            done = mem.notes.cleanup(plan)
    if as_json:
        emit_json({"plan": shown, "applied": bool(apply_ and not plan.empty), **done})
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
@translated
def import_(obj: Ctx, source: str, path: str, yes: bool, no_index: bool, as_json: bool) -> None:
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
                       + (f"; {preview.redacted} secret(s) will be redacted" if preview.redacted else "")
                       + (f"; {preview.forgotten} forgotten earlier (`forget --source`), left out"
                          if preview.forgotten else ""))
            for warning in preview.warnings:
                click.echo(f"Warning: {warning}", err=True)
            for rel in (preview.added + preview.updated)[:8]:
                click.echo(f"  {rel}")
            if len(preview.added) + len(preview.updated) > 8:
                click.echo(f"  ... and {len(preview.added) + len(preview.updated) - 8} more")
            _skipped_links(preview.links)
        todo = bool(preview.added or preview.updated)
        ask = todo and not yes and not as_json and sys.stdin.isatty()
        if not todo or not (yes or (ask and click.confirm("Import these?", default=True))):
            if as_json:
                emit_json({"preview": shown, "applied": False})
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
        emit_json({"preview": shown, "applied": True, "report": report.as_dict(),
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
@translated
def migrate_from_qmd(obj: Ctx, write: bool) -> None:
    """Use the builtin engine instead of qmd: memory.qmd.paths become memorySearch.extraPaths and
    memory.backend becomes "builtin". Without --write, shows the change."""
    from ..backends.qmd import QmdConfig, as_extra_paths, leave_qmd
    from ..config import rewrite_file

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
    backup = rewrite_file(path, lambda doc: leave_qmd(doc, added))
    click.echo(f"Changed {path} (the old one is {backup}; comments in it were not kept). "
               "`mnemoclaw index` indexes the new paths.")


@cli.command()
@click.option("--to", "to_url", metavar="URL", help="Copy this agent's SQLite index into Postgres at URL.")
@click.option("--from", "from_url", metavar="URL", help="Copy this agent's namespace at URL into its SQLite index.")
@click.option("--namespace", help="The Postgres namespace (default: store.namespace, the agent id).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
@translated
def migrate(obj: Ctx, to_url: str | None, from_url: str | None, namespace: str | None, as_json: bool) -> None:
    """Copy the index between SQLite and Postgres without embedding anything again: files,
    chunks, vectors, annotations and the embedding cache. The target keeps answering from what
    it held until the copy is swapped in; the source is only read. Then point
    memorySearch.store at the target."""
    from ..store.migrate import migrate as copy
    from ..text.secrets import redact_url

    if bool(to_url) == bool(from_url):
        raise click.UsageError("give one of --to URL (SQLite -> Postgres) or --from URL (Postgres -> SQLite)")
    bar = Progress("copying")
    try:
        report = copy(obj.settings().store_options(), str(to_url or from_url), to_postgres=bool(to_url),
                      namespace=namespace, progress=bar)
    finally:
        bar.finish()
    if as_json:
        emit_json(report)
        return
    click.echo(f"Copied {report['files']} files, {report['chunks']} chunks ({report['vectors']} with vectors) and "
               f"{report['cacheEntries']} cached vectors from {report['from']} to {report['to']} in "
               f"{report['seconds']:.1f} s; nothing was embedded again.")
    where = f'{{driver: "postgres", url: "{redact_url(to_url)}", namespace: "{report["namespace"]}"}}' if to_url \
        else '{driver: "sqlite"}'
    click.echo(f"To use it: memorySearch.store = {where}")


@cli.command()
@click.option("--dry-run", is_flag=True, help="Show what would be removed; remove nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print what was (or would be) removed as JSON.")
@click.pass_obj
@translated
def reset(obj: Ctx, dry_run: bool, as_json: bool) -> None:
    """Clear this agent's derived index: the index file, its embedding cache, the state beside it
    and its recall events.

    Never a Markdown file, never a transcript: the next `mnemoclaw index` (or search) rebuilds
    everything from them, embedding every chunk again. Refused while another process writes
    the index.
    """
    from ..promote.events import RecallEvents
    from ..store.reset import reset_index

    settings = obj.settings()
    report = reset_index(settings.agent_id, settings.memory_search["store"]["driver"], settings.index_path,
                         settings.index_state_dir, settings.state_dir, dry_run=dry_run)
    events = RecallEvents(settings.state_dir)
    try:  # what searches recalled goes with the index that answered them
        report["recallEntries"] = len(events.entries(settings.agent_id)) if dry_run else events.clear(settings.agent_id)
    finally:
        events.close()
    if as_json:
        emit_json(report)
        return
    verb = "would remove" if dry_run else "removed"
    if report["recallEntries"]:
        click.echo(f"Reset {verb} the recall events of {report['recallEntries']} entr"
                   f"{'y' if report['recallEntries'] == 1 else 'ies'} (what `mnemoclaw promote` reads).")
    if not report["removed"]:
        click.echo(f"Nothing to reset: agent {report['agent']} has no index at {report['index']}.")
        return
    click.echo(f"Reset {verb} {len(report['removed'])} file{'s' if len(report['removed']) > 1 else ''} "
               f"({report['bytes'] / 1e6:.1f} MB) of agent {report['agent']}'s index:")
    for r in report["removed"]:
        click.echo(f"  {r['path']}  ({r['bytes']:,} bytes)")
    click.echo("No Markdown file or transcript was touched. " + ("Run without --dry-run to remove them."
               if dry_run else "The next `mnemoclaw index` (or search) rebuilds the index from them."))


def _show_lines(start: int, lines: Sequence[str], *, limit: int | None = None) -> None:
    """The lines a preview shows, each after its line number, as the file holds it."""
    shown = lines if limit is None else lines[:limit]
    width = len(str(start + len(shown) - 1))
    for n, line in enumerate(shown, start):
        click.echo(f"    {n:>{width}}  {line[:200]}".rstrip())
    if limit is not None and len(lines) > limit:
        click.echo(f"    ... and {len(lines) - limit} more line(s)")


@cli.command()
@click.option("--apply", "apply_", is_flag=True,
              help="Write MEMORY.md (the default is to show what would be promoted).")
@click.option("--limit", type=click.IntRange(1, 1000), help="At most this many entries this run (dreaming.limit, 10).")
@click.option("--include-promoted", is_flag=True,
              help="List the entries earlier runs promoted too (never written twice).")
@click.option("--min-score", type=click.FloatRange(0, 1), help="The weighted score's gate (dreaming.minScore, 0.8).")
@click.option("--min-recall-count", type=click.IntRange(1, 1000),
              help="Recalled at least this often (dreaming.minRecallCount, 3).")
@click.option("--min-unique-queries", type=click.IntRange(1, 1000),
              help="By at least this many different questions (dreaming.minUniqueQueries, 3).")
@click.option("--undo", is_flag=True,
              help="Restore MEMORY.md as the last applied run found it (refused if edited since).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan (and what was done) as JSON.")
@click.pass_obj
@translated
def promote(obj: Ctx, apply_: bool, limit: int | None, include_promoted: bool, min_score: float | None,
            min_recall_count: int | None, min_unique_queries: int | None, undo: bool, as_json: bool) -> None:
    """Move what keeps being recalled from the daily logs into MEMORY.md.

    Each search that returns a daily-log entry (the agent's memory_search, recall before the
    reply, `mnemoclaw search`) records a recall event. An entry recalled often, by different
    questions, with good scores, is promoted: written as the daily log wrote it under today's
    "## Promoted" section of MEMORY.md, with where it came from. Commands, tool output, code,
    metadata, small talk, secrets, expired and forgotten entries never are. Preview by default;
    --apply writes; --undo restores the file while nobody has edited it since.
    """
    from ..promote import run

    with obj.memory() as mem:
        if undo:
            done = run.undo(mem)
            if as_json:
                emit_json(done)
            elif done["restored"]:
                click.echo(f"MEMORY.md is restored as it was before the last promote run "
                           f"({done['removed']} promoted line(s) removed).")
            else:
                click.echo(f"Nothing to undo: {done['why']}.")
            return
        opts = run.settings_of(mem, limit=limit, min_score=min_score, min_recall_count=min_recall_count,
                               min_unique_queries=min_unique_queries)
        p = run.plan(mem, opts, include_promoted=include_promoted)
        done = run.apply(mem, p) if apply_ else {}
    shown = p.as_dict()
    if as_json:
        emit_json({"plan": shown, "applied": bool(apply_ and not p.empty), **done})
        return
    for c in shown["promoted"]:
        click.echo(f"promote {c['from']} (score {c['score']:.3f}, recalled {c['recalls']}x by "
                   f"{c['uniqueQueries']} questions)")
        click.echo(f"    {c['line'][:200]}")
    model = shown.get("model") or {}
    for m in model.get("merged", []):
        state = "merged by the model" if not m.get("refused") else f"the model's merge refused ({m['refused']})"
        click.echo(f"{state}: {', '.join(m['from'])}")
        click.echo(f"    {m['text'][:200]}")
    if model.get("error"):
        click.echo(model["error"])
    gated = list(shown["leftOut"])
    if gated:
        click.echo(f"{len(gated)} recalled entr{'y' if len(gated) == 1 else 'ies'} left out:")
        for c in gated[:20]:
            click.echo(f"    {c['from']}: {c['leftOut']}")
        if len(gated) > 20:
            click.echo(f"    ... and {len(gated) - 20} more (--json lists them all)")
    if p.full:
        click.echo(p.full)
    if p.empty:
        click.echo("Nothing to promote: no daily-log entry was recalled yet." if not gated
                   else "Nothing to promote now: every entry recalled is left out for the reason shown.")
        return
    if not apply_:
        click.echo("Nothing changed: this was a preview (run with --apply).", err=True)
        return
    click.echo(f"Promoted {done['promoted']} entr{'y' if done['promoted'] == 1 else 'ies'} into MEMORY.md"
               + (f" ({done['replaced']} older value(s) of a key replaced)" if done.get("replaced") else "")
               + "; `mnemoclaw promote --undo` restores it.")
