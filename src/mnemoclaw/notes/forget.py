"""Forget: take lines out of the memory files (and session transcripts), then everything the
index made from them.

A plan comes first and removes nothing: the lines a query's words all appear in (each with the
entry it belongs to: the list item, the paragraph; a heading only its own line), or the lines a
citation names (``memory/2026-03-01.md#L3-L5``). Applying a plan checks that every file still
holds exactly what the plan showed and rewrites the files, all or none, and leaves the purge of
chunks, vectors, cached vectors and deleted pages to ``Memory.forget``. What is forgotten is not
kept: the preview is the safety net. An undo copy is made only when asked and deleted after
``UNDO_DAYS``; in a git repository the removal is committed and the report names the commits
that still hold the text (history is the user's to rewrite).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..atomic import PRIVATE_FILE, private_dir, replace_all
from ..errors import MnemoclawError, PathDeniedError
from ..markdown.annotations import Entries, annotated_entries
from ..markdown.provenance import session_of
from ..sessions.transcript import entry_message, parse_transcript
from ..text.tokenize import analyze, keyword_query
from ..types import SourceFile
from . import git
from .paths import split_citation
from .tombstones import entry_day, file_day, json_entry, sender

BACKUP_DIR = "forgotten"  # under the state directory
# A test hook, read here only: a forget kills itself (SIGKILL) when it reaches the phase named
# (recorded, rewritten, synced, scrubbed), so tests/test_hostile.py can show the next command
# finishing what it owed.
KILL_AT = "MNEMOCLAW_TEST_KILL_AT"


def reached(phase: str) -> None:
    """A forget reached ``phase`` (the test hook ``KILL_AT``)."""
    if os.environ.get(KILL_AT) == phase:
        os.kill(os.getpid(), signal.SIGKILL)


class NothingToForget(MnemoclawError):
    """A forget that matches nothing."""


@dataclass(frozen=True, slots=True)
class Removal:
    path: str  # as results show it
    abspath: str
    source: str  # "memory" | "sessions"
    start: int
    end: int
    lines: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "startLine": self.start, "endLine": self.end, "source": self.source,
                "lines": list(self.lines)}


@dataclass
class ForgetPlan:
    target: str
    removals: list[Removal] = field(default_factory=list)
    # lines of files mnemoclaw may only read (an OpenClaw agent's): left in place, fenced by a tombstone
    fenced: list[Removal] = field(default_factory=list)

    @property
    def line_count(self) -> int:
        return sum(r.end - r.start + 1 for r in self.removals)

    def files(self) -> list[str]:
        return list(dict.fromkeys(r.path for r in self.removals))

    def fenced_files(self) -> list[str]:
        return list(dict.fromkeys(r.path for r in self.fenced))

    def digest(self) -> str:
        """Names exactly these removals: a confirmation must quote it, so that nothing is removed
        that a preview did not show."""
        shown: Any = [r.as_dict() for r in self.removals]
        if self.fenced:
            shown = [shown, [r.as_dict() for r in self.fenced]]
        data = json.dumps(shown, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]

    def as_dict(self) -> dict[str, Any]:
        out = {"target": self.target, "lines": self.line_count, "files": self.files(),
               "removals": [r.as_dict() for r in self.removals], "id": self.digest()}
        if self.fenced:
            out["fenced"] = [{**r.as_dict(), "why": FENCED} for r in self.fenced]
        return out


def read_split(abspath: str) -> list[str]:
    with open(abspath, encoding="utf-8", newline="") as fh:
        return fh.read().split("\n")


def merge_ranges(ranges: list[tuple[int, int]], *, adjacent: bool = True) -> list[tuple[int, int]]:
    """Overlapping ranges (and, with ``adjacent``, touching ones) as one."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1] + int(adjacent):
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _message(line: str) -> str | None:
    """What a transcript line says (None: not a message of the user's or the assistant's)."""
    found = entry_message(json_entry(line))
    return found[1] if found else None


def plan(target: str, files: Sequence[SourceFile], resolve: Callable[[str], tuple[str, str]], *,
         writable: bool = True) -> ForgetPlan:
    """What forgetting ``target`` would remove. ``resolve`` turns a path a user typed into
    (the path as results show it, where it is on disk), by the rules of ``memory_get``.
    ``files``: the memory files and every transcript (indexed or not). Where the files may not
    be changed (``writable`` false: another program's), what matches is listed as fenced."""
    target = target.strip()
    if not target:
        raise NothingToForget("nothing to forget: give a query or a citation such as memory/2026-03-01.md#L3-L5")
    cited = split_citation(target)
    if cited:
        path, start, end = cited
        shown, abspath = resolve(path)
        try:
            lines = read_split(abspath)
        except FileNotFoundError:
            raise NothingToForget(f"{shown} does not exist; nothing to forget") from None
        if start < 1 or end < start or end > len(lines):
            raise NothingToForget(f"{shown} has {len(lines)} lines; lines {start}-{end} are not in it")
        cut = Removal(shown, abspath, "memory", start, end, tuple(lines[start - 1 : end]))
        return ForgetPlan(target, [cut]) if writable else ForgetPlan(target, fenced=[cut])
    terms = set(keyword_query(target).as_written)
    if not terms:
        raise NothingToForget(f"{target!r} has no words to look for")
    out = ForgetPlan(target)
    for f in files:
        try:
            lines = read_split(f.abspath)
        except (OSError, UnicodeDecodeError):
            continue
        if f.source == "sessions":  # a transcript: the messages (JSONL lines) whose text holds the words
            said = [(i, _message(line)) for i, line in enumerate(lines, 1)]
            hits = [i for i, text in said if text and terms <= set(analyze(text))]
            ranges = [(i, i) for i in hits]
        else:
            hits = [i for i, line in enumerate(lines, 1) if line.strip() and terms <= set(analyze(line))]
            doc = Entries(lines)
            ranges = [(i, i) if doc.level[i] else doc.block(i)[:2] for i in hits]
        for s, e in merge_ranges(ranges):
            (out.removals if writable else out.fenced).append(
                Removal(f.path, f.abspath, f.source, s, e, tuple(lines[s - 1 : e])))
    if not out.removals and not out.fenced:
        raise NothingToForget(f"no line of memory holds all of {', '.join(sorted(terms))} (from {target!r}); "
                              "nothing was removed")
    return out


def _check_writable(abspath: str, shown: str) -> None:
    st = os.lstat(abspath)
    if stat.S_ISLNK(st.st_mode):
        raise PathDeniedError(f"{shown} is a symbolic link; memory is changed only in real files")
    if not stat.S_ISREG(st.st_mode):
        raise PathDeniedError(f"{shown} is not a regular file")
    if st.st_nlink > 1:
        raise PathDeniedError(f"{shown} has {st.st_nlink} hard links: changing it would change the same file "
                              "elsewhere on disk; nothing was removed")


UNDO_DAYS = 7  # an undo copy (forget --keep-copy) is deleted this long after the forget
_STAMP = "%Y%m%d-%H%M%S-%f"


def _keep_copy(paths: dict[str, str], state_dir: Path, now: datetime) -> Path:
    """Copy the files about to change to ``STATE_DIR/forgotten/<time>/``: built in a hidden
    folder and renamed into place, so a full disk leaves no partial copy behind."""
    root = state_dir / BACKUP_DIR
    folder = root / now.strftime(_STAMP)
    partial = root / f".partial-{folder.name}"
    try:
        for abspath, rel in paths.items():
            dest = partial / rel
            private_dir(dest.parent)
            shutil.copy2(abspath, dest)
            os.chmod(dest, PRIVATE_FILE)  # what was forgotten, kept for a week: the user's alone
        os.rename(partial, folder)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise MnemoclawError(f"could not keep an undo copy in {root} ({exc.strerror or exc}); nothing was removed "
                             "(free space there, or forget without --keep-copy)") from None
    return folder


def expire_copies(state_dir: Path, now: datetime) -> list[str]:
    """Delete undo copies older than ``UNDO_DAYS`` (and partial ones a failed copy left); the
    folders deleted."""
    root = state_dir / BACKUP_DIR
    try:
        names = os.listdir(root)
    except OSError:
        return []
    gone = []
    for name in names:
        try:
            made = datetime.strptime(name.removeprefix(".partial-"), _STAMP)
        except ValueError:
            continue
        if name.startswith(".partial-") or (now.replace(tzinfo=None) - made).days >= UNDO_DAYS:
            shutil.rmtree(root / name, ignore_errors=True)
            gone.append(name)
    return gone


def apply(p: ForgetPlan, *, workspace: Path, state_dir: Path, now: datetime,
          keep_copy: bool = False) -> dict[str, Any]:
    """Remove the plan's lines from the files, all files or none, after checking each still
    holds them. No copy of what was forgotten is kept unless ``keep_copy`` (for ``UNDO_DAYS``);
    in a git repository the removal is committed (the message does not quote the text) and the
    commits that still hold it are named. What was done, for the report."""
    by_file: dict[str, list[Removal]] = {}
    for r in p.removals:
        by_file.setdefault(r.abspath, []).append(r)
    check(p.removals)
    contents = {abspath: read_split(abspath) for abspath in by_file}

    ws = Path(os.path.realpath(workspace))
    inside = {a: os.path.relpath(a, ws) for a in by_file
              if os.path.realpath(a).startswith(str(ws) + os.sep)}
    done: dict[str, Any] = {}
    repo = git.is_repository(ws) and bool(inside)
    if repo:  # asked before the removal is committed (that commit removes the text: git would name it too)
        done["gitHistory"] = git.commits_holding(ws, [line for r in p.removals for line in r.lines])
    if keep_copy:
        folder = _keep_copy({a: inside.get(a) or os.path.join("_outside", a.lstrip(os.sep)) for a in by_file},
                            state_dir, now)
        done["undoCopy"] = str(folder)
        done["undoUntil"] = (now + timedelta(days=UNDO_DAYS)).strftime("%Y-%m-%d")

    new: dict[str, str] = {}
    for abspath, removals in by_file.items():
        drop = {i for r in removals for i in range(r.start, r.end + 1)}
        if removals[0].source == "sessions":  # a transcript's lines are blanked: the others keep their numbers
            new[abspath] = "\n".join("" if i in drop else line for i, line in enumerate(contents[abspath], 1))
        else:
            new[abspath] = "\n".join(line for i, line in enumerate(contents[abspath], 1) if i not in drop)
    try:
        replace_all(new, {a: stat.S_IMODE(os.stat(a).st_mode) for a in new})
    except OSError as exc:
        if keep_copy:
            shutil.rmtree(done["undoCopy"], ignore_errors=True)
        raise MnemoclawError(f"could not rewrite the memory files ({exc.strerror or exc}); nothing was removed, "
                             "every file is as it was (free some space, then forget again)") from None
    if repo:
        files = len(inside)
        done["gitCommit"] = git.commit(ws, sorted(inside.values()),
                                        f"mnemoclaw: forget {p.line_count} line(s) in {files} file(s)")
    return done


def still_in(paths: Sequence[str], texts: Sequence[str]) -> list[str]:
    """Which of ``texts`` the files at ``paths`` still hold, byte for byte."""
    found = []
    blobs = []
    for path in paths:
        try:
            with open(path, "rb") as fh:
                blobs.append(fh.read())
        except FileNotFoundError:
            continue
    for text in texts:
        needle = text.encode("utf-8")
        if needle and any(needle in blob for blob in blobs):
            found.append(text)
    return found


# -- forget by origin --------------------------------------------------------------------------
@dataclass
class OriginPlan:
    """What ``forget --session | --source | --participant`` would do: the lines it removes (as a
    ``ForgetPlan``), the files it deletes whole (an import's), the transcripts it can only keep
    out of the index (another program's, read here), and what it cannot target."""

    kind: str
    value: str
    since: str | None
    lines: ForgetPlan
    deletions: list[Removal] = field(default_factory=list)  # whole files: lines 1..n
    fenced: list[str] = field(default_factory=list)  # read-only transcripts: kept out by the tombstone
    untargetable: list[dict[str, Any]] = field(default_factory=list)  # {path, startLine, endLine, why}
    said: list[str] = field(default_factory=list)  # the transcript messages it takes out, as indexed

    @property
    def target(self) -> str:
        return f"{self.kind} {self.value}" + (f" since {self.since}" if self.since else "")

    def empty(self) -> bool:
        return not (self.lines.removals or self.deletions or self.fenced)

    def files(self) -> list[str]:
        return list(dict.fromkeys([*self.lines.files(), *(d.path for d in self.deletions)]))

    def leave(self, path: str, start: int, end: int, why: str) -> None:
        """Name lines it cannot take out, and why."""
        self.untargetable.append({"path": path, "startLine": start, "endLine": end, "why": why})

    def digest(self) -> str:
        data = json.dumps([self.target, self.lines.digest(), [d.as_dict() for d in self.deletions], self.fenced],
                          ensure_ascii=False)
        return hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "kind": self.kind, "value": self.value, "since": self.since,
                "lines": self.lines.line_count, "files": self.files(),
                "removals": [r.as_dict() for r in self.lines.removals],
                "deletions": [{"path": d.path, "lines": d.end} for d in self.deletions],
                "fenced": self.fenced, "untargetable": self.untargetable, "id": self.digest()}


READ_ONLY = ("OpenClaw's file, read-only here: forget it with OpenClaw's `openclaw memory forget`; "
             "mnemoclaw's index leaves it out")
FENCED = "OpenClaw's file, read-only here: left in place; mnemoclaw's index and answers leave it out"


def plan_origin(kind: str, value: str, since: str | None, files: Sequence[SourceFile], *,
                writable: bool, imports_dir: str, session_ids: dict[str, str]) -> OriginPlan:
    """What forgetting everything from one origin would do. ``kind``: ``session`` (a session id,
    or an OpenClaw session key, resolved through ``session_ids``), ``source`` (an import source),
    ``participant`` (who said it in a transcript); ``since``: only content dated then or later.
    ``writable``: the files may be changed; if not (another program's), transcripts are only
    fenced and the rest is listed as untargetable."""
    value = session_ids.get(value, value) if kind == "session" else value
    out = OriginPlan(kind, value, since, ForgetPlan(f"{kind} {value}"))
    named = re.compile(rf"(?<!\w){re.escape(value)}(?!\w)", re.IGNORECASE)  # a participant, as a whole word

    def dated(day: str | None) -> bool:
        return since is None or (day is not None and day >= since)

    def remove(f: SourceFile, lines: list[str], ranges: list[tuple[int, int]], *, whole: bool = False) -> None:
        for s, e in ranges:
            if not writable:
                out.leave(f.path, s, e, READ_ONLY)
            else:
                (out.deletions if whole else out.lines.removals).append(
                    Removal(f.path, f.abspath, f.source, s, e, tuple(lines[s - 1 : e])))

    for f in files:
        try:
            lines = read_split(f.abspath)
        except (OSError, UnicodeDecodeError):
            continue
        if f.source == "sessions":
            if kind == "source":
                continue
            hit: list[int] = []
            undated: list[int] = []  # with --since: lines that carry no time, listed and left
            for i, line in enumerate(lines, 1):
                entry = json_entry(line)
                if entry is None:
                    continue
                if (kind == "session" and session_of(f.path) == value) or \
                        (kind == "participant" and (who := sender(entry)) and who.casefold() == value.casefold()):
                    day = entry_day(entry)
                    if dated(day):
                        hit.append(i)
                    elif day is None:
                        undated.append(i)
            for s, e in merge_ranges([(i, i) for i in undated]):
                out.leave(f.path, s, e, "carries no time, so --since cannot tell whether it is newer")
            if not hit:
                continue
            for i in hit:
                out.said += _as_indexed(lines[i - 1])
            if writable:
                remove(f, lines, merge_ranges([(i, i) for i in hit]))
            else:
                out.fenced.append(f.path)
            continue
        if kind == "source":
            if not f.path.startswith(f"{imports_dir}/{value}/"):
                continue
            if dated(file_day(f.path)):
                n = max(1, len(lines) - (1 if lines and lines[-1] == "" else 0))
                remove(f, lines, [(1, n)], whole=True)
            else:
                out.leave(f.path, 1, len(lines), "carries no date on or after --since")
            continue
        scoped, _ = annotated_entries("\n".join(lines))
        if kind == "session":
            ranges = [(s, e) for s, e, attrs, _ in scoped if attrs.get("session") == value]
            if ranges and not dated(file_day(f.path)):
                for s, e in ranges:
                    out.leave(f.path, s, e, "the file carries no date on or after --since")
                continue
            remove(f, lines, merge_ranges(ranges, adjacent=False))
        elif kind == "participant" and named.search("\n".join(lines)):  # an agent's note naming them: mixed
            for s, e, attrs, _ in scoped:
                if attrs.get("origin") == "agent" and named.search("\n".join(lines[s - 1:e])):
                    out.leave(f.path, s, e, f"an agent's note that names {value} among other things (mixed): "
                                            "forget it by citation if it should go")
    return out


def _as_indexed(line: str) -> list[str]:
    """What the index holds of a transcript line (its message, redacted, whitespace collapsed),
    as far as one chunk surely holds it whole."""
    text = parse_transcript(line).text
    return [text[:80]] if len(text) >= 8 else []


def indexed_texts(removals: Sequence[Removal]) -> list[str]:
    """What the index file is checked for, byte for byte, after a forget: each removed line of
    a memory file, each removed message as a transcript is indexed."""
    out: list[str] = []
    for r in removals:
        for line in r.lines:
            if r.source == "sessions":
                out += _as_indexed(line)
            elif len(line.strip()) >= 8:
                out.append(line.strip())
    return list(dict.fromkeys(out))


def said(removals: Sequence[Removal]) -> list[str]:
    """What the removals said, as text tombstones know it: each line of a memory file, each
    message of a transcript."""
    out: list[str] = []
    for r in removals:
        for line in r.lines:
            text = _message(line) if r.source == "sessions" else line
            if text and text.strip():
                out.append(text)
    return list(dict.fromkeys(out))


def check(removals: Sequence[Removal]) -> None:
    """Raise (PathDeniedError, naming the file) unless every file still holds what the plan
    showed and may be rewritten: asked before anything is recorded or removed."""
    for r in removals:
        _check_writable(r.abspath, r.path)
        try:
            lines = read_split(r.abspath)
        except FileNotFoundError:
            raise PathDeniedError(f"{r.path} is gone since the preview; nothing was removed: "
                                  "run forget again") from None
        if tuple(lines[r.start - 1 : r.end]) != r.lines:
            raise PathDeniedError(f"{r.path} changed since the preview (lines {r.start}-{r.end}); nothing was "
                                  "removed: run forget again to see what it would remove now")


def delete_files(removals: Sequence[Removal]) -> None:
    """Delete whole files a plan showed, after checking each still holds what it showed."""
    for r in removals:
        _check_writable(r.abspath, r.path)
        if tuple(read_split(r.abspath)[: len(r.lines)]) != r.lines:
            raise PathDeniedError(f"{r.path} changed since the preview; nothing more was removed: run forget again")
    for r in removals:
        os.unlink(r.abspath)
