"""``Notes``: the handle ``Memory.notes`` gives, and the ``Index`` it tells what changed."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import date, datetime
from pathlib import Path
from typing import Any, Protocol

from ..config import Settings
from ..errors import PathDeniedError
from ..markdown.annotations import parse_value, render
from ..markdown.provenance import IMPORTS_DIR
from ..tools import ToolArgumentError
from ..types import IndexReport, SourceFile
from . import cleanup, forget, git, imports, tombstones
from .cleanup import CleanupPlan
from .discovery import session_keys
from .forget import ForgetPlan, OriginPlan
from .owed import Forgotten
from .paths import read_lines, resolve_memory_path
from .write import append_note, content_hash, replace_note


def _purged(removed: dict[str, Any], gone: Forgotten, texts: list[str], removals: Sequence[forget.Removal],
            extra: dict[str, Any]) -> dict[str, Any]:
    """A forget's report: what was removed, what the index did, and whether the index file
    still holds any of ``texts`` (a copy kept elsewhere in the files does not count)."""
    elsewhere = set(forget.still_in([r.abspath for r in removals], texts))
    left = [t for t in gone.still_in_index if t not in elsewhere]
    out: dict[str, Any] = {"removed": removed, "chunksReplaced": gone.chunks_replaced,
                           "cachedVectorsDeleted": gone.cached_vectors_deleted,
                           "indexFailed": [{"path": p, "reason": r} for p, r in gone.report.failed], **extra}
    out["verified"] = not left
    if left:
        out["stillInIndex"] = left
    return out


class Index(Protocol):
    """What the notes side asks of the index."""

    def files(self, sources: Sequence[str] | None = None) -> list[SourceFile]:
        """The memory files the index reads (``sources``: only these), as discovery finds them."""

    def transcripts(self) -> list[SourceFile]:
        """Every transcript ``sessions_search`` reads, indexed or not."""

    def refresh(self) -> IndexReport:
        """Index what changed on disk, now."""

    def finish(self) -> Forgotten | None:
        """Finish what earlier forgets still owe the index (one killed half-way); None when nothing was owed."""

    def forgetting(self, paths: Sequence[str], texts: Sequence[str], fences: Sequence[tombstones.Tombstone] = (),
                   said: Sequence[str] = ()) -> AbstractContextManager[Forgotten]:
        """Around a change that removes ``texts`` from the files at ``paths``: first ``fences``
        (new tombstones) are recorded with what the forget owes the index (``said``: the lines
        and messages removed, kept as keyed hashes), in one write; afterwards the index holds
        nothing of them (``paths`` indexed again, even those unchanged on disk that a tombstone
        now fences, the chunks' cached vectors deleted, deleted pages scrubbed), and the
        ``Forgotten`` says what it did and what it still holds."""


class Notes:
    def __init__(self, settings: Settings, index: Index, clock: Callable[[], float]):
        self.settings = settings
        self.index = index
        self.clock = clock

    @property
    def workspace(self) -> Path:
        return Path(self.settings.workspace)

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock()).astimezone()

    # -- writing --------------------------------------------------------------------------------
    def append(self, text: str, target: str | None = None, *, importance: int | float | None = None,
               kind: str | None = None, expires: str | None = None, key: str | None = None,
               origin: str | None = None, session: str | None = None, channel: str | None = None,
               chat: str | None = None) -> dict[str, Any]:
        """Append to today's daily log, or to MEMORY.md with ``target="long_term"`` (nothing else),
        annotated (``<!-- importance: 8; key: db-host -->`` on the note's heading) when asked, and
        with its provenance when the agent writes it (``origin: agent; session: …``). What anyone
        but the owner writes is data: a comment in it is written as plain text, never read as an
        annotation (only these arguments annotate it)."""
        self.settings.check_writable("memory_append")
        attrs = {}
        for name, value in (("importance", importance), ("type", kind), ("expires", expires), ("key", key),
                            ("origin", origin), ("session", session), ("channel", channel), ("chat", chat)):
            if value is None or value == "":
                continue
            parsed, why = parse_value(name, str(value))
            if why:
                raise ToolArgumentError(f"{why}; nothing was written")
            attrs[name] = parsed
        done = append_note(self.workspace, text, target, self._now(), annotation=render(attrs),
                           verbatim=attrs.get("origin", "owner") == "owner")
        out: dict[str, Any] = {"path": done.path, "startLine": done.start_line, "endLine": done.end_line}
        asked = {k: v for k, v in attrs.items() if k not in ("origin", "session", "channel", "chat")}
        if asked:
            out["annotations"] = asked
        said = []
        if done.redacted:
            out["redacted"] = done.redacted
            said.append(f"{done.redacted} secret(s) (keys, tokens, passwords, identity and card numbers) were "
                        "replaced by [REDACTED]: memory is searchable, so secrets are never written to it")
        if done.neutralised:
            out["commentsAsText"] = done.neutralised
            said.append(f"{done.neutralised} comment(s) (<!-- … -->) were written as plain text (&lt;!--): a note's "
                        "importance, type, expires and key are set with this tool's arguments, and where it came "
                        "from by who writes it")
        if said:
            out["note"] = "; ".join(said)
        return out

    def opened(self, path: str) -> dict[str, Any]:
        """A memory file as an editor opens it: ``{"path", "text", "base"}``, ``base`` being what
        ``edit`` checks the file against (a file not written yet holds the empty text)."""
        resolved = resolve_memory_path(path, self.workspace, self.settings.extra_paths())
        text = read_lines(resolved.abspath, None, None, resolved.display) or ""
        return {"path": resolved.display, "text": text, "base": content_hash(text)}

    def edit(self, path: str, text: str, base: str) -> dict[str, Any]:
        """Replace MEMORY.md or a daily log with ``text`` if it still holds what ``opened`` gave
        (EditConflictError, with what it holds now, if not), then index it: when this returns,
        a search finds the new text."""
        self.settings.check_writable("editing a memory file")
        resolved = resolve_memory_path(path, self.workspace, self.settings.extra_paths())
        redacted = replace_note(self.workspace, resolved.display, base, text)
        report = self.index.refresh()
        out: dict[str, Any] = {"path": resolved.display, "indexed": not report.failed}
        if redacted:
            out["redacted"] = redacted
        return out

    # -- forgetting ------------------------------------------------------------------------------
    def forget_plan(self, target: str) -> ForgetPlan:
        """What ``forget`` would remove for a query (the lines holding all its words, each with
        its entry, and the transcripts' messages holding them, indexed or not) or a citation
        (``memory/2026-03-01.md#L3-L5``); removes nothing. An OpenClaw agent's files are only
        read here: what matches in them is fenced."""
        def resolve(raw: str) -> tuple[str, str]:
            got = resolve_memory_path(raw, self.workspace, self.settings.extra_paths())
            return got.display, str(got.abspath)

        self.index.finish()
        return forget.plan(target, self._files(), resolve, writable=self.settings.openclaw_dir is None)

    def _files(self) -> list[SourceFile]:
        """What a forget looks in: the memory files and every transcript, indexed or not."""
        files = self.index.files()
        seen = {os.path.realpath(f.abspath) for f in files}
        return files + [f for f in self.index.transcripts() if os.path.realpath(f.abspath) not in seen]

    def forget(self, plan: ForgetPlan, *, keep_copy: bool = False, fence: bool = True) -> dict[str, Any]:
        """Remove what ``plan`` showed from the files, then the chunks, vectors and cached vectors
        that held it, and vacuum the index, so that no search, ``memory_get`` or byte of the
        index file finds it. ``fence``: a text tombstone (keyed hashes) keeps each removed line
        and message out of every later answer wherever it comes back (a restore, a re-import,
        a transcript of OpenClaw's, which is fenced, not changed). No copy is kept unless
        ``keep_copy`` (an undo copy, deleted after ``forget.UNDO_DAYS``); in a git workspace the
        report names the commits that still hold the text. Says whether the check of the index
        passed."""
        if plan.removals:
            self.settings.check_writable("forget")
        forget.check(plan.removals)  # before anything is recorded: a refusal changes nothing
        cut = [*plan.removals, *plan.fenced]
        texts = forget.indexed_texts(cut)
        said = forget.said(cut)
        at = self._now().isoformat()
        stones = [tombstones.Tombstone(tombstones.TEXT, s, None, at) for s in said if tombstones.said_key(s)]
        kept: dict[str, Any] = {}
        with self.index.forgetting([*plan.files(), *plan.fenced_files()], texts, stones if fence else (),
                                   said) as gone:
            if plan.removals:
                kept = forget.apply(plan, workspace=self.workspace, state_dir=self.settings.state_dir,
                                    now=self._now(), keep_copy=keep_copy)
                gone.changed = True
        return _purged(plan.as_dict(), gone, texts, plan.removals, kept)

    def forget_origin_plan(self, kind: str, value: str, since: str | None = None) -> OriginPlan:
        """What ``forget --session | --source | --participant`` would remove; removes nothing."""
        if kind not in tombstones.KINDS:
            raise PathDeniedError(f"forget by {kind!r}: the origins are {', '.join(tombstones.KINDS)}")
        value = (value or "").strip()
        if not value:
            raise forget.NothingToForget(f"forget --{kind} needs a value")
        if since is not None:
            try:
                since = date.fromisoformat(since).isoformat()
            except ValueError:
                raise PathDeniedError(f"--since {since!r} is not a date (YYYY-MM-DD)") from None
        if kind == "source" and value not in imports.SOURCES:
            raise PathDeniedError(f"--source {value!r} is not an import source; the sources are "
                                  f"{', '.join(imports.SOURCES)}")
        fences = tombstones.load(self.settings.state_dir, quiet=True)
        if fences.damaged:
            raise tombstones.TombstoneError(fences.damaged)
        self.index.finish()
        # OpenClaw's files are read here, never written: what is in them can only be fenced
        return forget.plan_origin(kind, value, since, self._files(), imports_dir=IMPORTS_DIR,
                                  writable=self.settings.openclaw_dir is None,
                                  session_ids=session_keys(self.settings.sessions_dir))

    def forget_origin(self, p: OriginPlan) -> dict[str, Any]:
        """Apply an origin plan: record the tombstone first (so a process killed half-way still
        keeps it out, and the next command finishes the purge), remove the lines and delete
        the files, then purge and check the index as ``forget`` does; fenced transcripts are
        indexed again without what is fenced. The import manifest forgets the deleted files."""
        if p.lines.removals or p.deletions:
            self.settings.check_writable("forget")
        forget.check([*p.lines.removals, *p.deletions])  # before the tombstone: a refusal changes nothing
        items = tuple(d.path for d in p.deletions) if p.kind == "source" else ()
        stone = tombstones.Tombstone(p.kind, p.value, p.since, self._now().isoformat(), items)
        texts = forget.indexed_texts([*p.lines.removals, *p.deletions])
        texts += [t for t in dict.fromkeys(p.said) if t not in texts]
        paths = [*p.files(), *p.fenced]
        kept: dict[str, Any] = {}
        with self.index.forgetting(paths, texts, [stone], forget.said([*p.lines.removals, *p.deletions])) as gone:
            if p.lines.removals:
                kept = forget.apply(p.lines, workspace=self.workspace, state_dir=self.settings.state_dir,
                                    now=self._now())
                gone.changed = True
            if p.deletions:
                gone.changed = True
                forget.delete_files(p.deletions)
        tombstones.drop_import_records(self.settings.state_dir, items)
        return _purged(p.as_dict(), gone, texts, p.lines.removals,
                       {"tombstone": str(Path(self.settings.state_dir) / tombstones.FILE), **kept})

    def expire_copies(self) -> list[str]:
        """Delete the undo copies whose time is up (``forget --keep-copy``)."""
        return forget.expire_copies(self.settings.state_dir, datetime.fromtimestamp(self.clock()))

    # -- clean-up ----------------------------------------------------------------------------------
    def cleanup_plan(self, *, older_than_days: int | None = 180, below_importance: int | None = None,
                     expired: bool = True) -> CleanupPlan:
        """What ``cleanup`` would do: entries to remove (expired, less important than
        ``below_importance``) and daily logs older than ``older_than_days`` to archive."""
        today = datetime.fromtimestamp(self.clock()).date()
        return cleanup.plan(self.index.files(["memory"]), self.workspace, today, older_than_days=older_than_days,
                            below_importance=below_importance, expired=expired)

    def cleanup(self, plan: CleanupPlan, *, keep_copy: bool = False) -> dict[str, Any]:
        """Apply a clean-up plan: the removals as ``forget`` does them, then the archive moves
        (committed before and after when the workspace is a git repository), then a sync."""
        self.settings.check_writable("cleanup")
        out: dict[str, Any] = {}
        if plan.removals.removals:
            # expired or unimportant, not secret: the same line written again is memory again
            out["forget"] = self.forget(plan.removals, keep_copy=keep_copy, fence=False)
        if plan.moves:
            ws = self.workspace
            repo = git.is_repository(ws)
            if repo and git.commit(ws, ["memory"], "mnemoclaw: before archiving") is None:
                raise PathDeniedError("the workspace is a git repository but memory/ could not be committed "
                                      "before archiving; nothing was moved")
            out["archived"] = cleanup.move(ws, plan.moves)
            if repo:
                out["gitCommit"] = git.commit(ws, ["memory"], f"mnemoclaw: archive {len(plan.moves)} daily log(s)")
            self.index.refresh()
        return out

    # -- importing -------------------------------------------------------------------------------
    def import_preview(self, source: str, path: str | Path, progress: Callable[[int, int], None] | None = None
                       ) -> tuple[list[imports.Planned], imports.ImportReport]:
        """What importing ``path`` as ``source`` (chatgpt, claude, claude-code, codex) would write
        under memory/imports/<source>/, and the counts; writes nothing."""
        planned, report = imports.plan(source, Path(path), progress)
        return planned, imports.write(self.workspace, self.settings.state_dir, planned, report, dry=True)

    def import_files(self, planned: list[imports.Planned], preview: imports.ImportReport,
                     progress: Callable[[int, int], None] | None = None) -> imports.ImportReport:
        """Write what ``import_preview`` planned (idempotent; a file edited since an earlier import
        is kept). A sync afterwards makes it searchable."""
        self.settings.check_writable("import")
        report = imports.ImportReport(preview.source, found=preview.found, empty=preview.empty,
                                      redacted=preview.redacted, links=list(preview.links))
        return imports.write(self.workspace, self.settings.state_dir, planned, report, progress)
