"""``mnemoclaw promote``: what keeps being recalled from the daily logs moves into MEMORY.md.

``plan`` reads the recall events (promote/events.py), finds each entry where it stands now
(an entry edited or forgotten since is no longer the one recalled), passes it through the guard
rails (promote/entries.py ``junk``; expired, retired, fenced by a forget, kept out by
``memoryPolicy``, an older value of a key, written by someone untrusted, longer than
``maxPromotedSnippetTokens``, already in MEMORY.md in other words), scores and gates it
(promote/select.py), and fits what passes into MEMORY.md's bootstrap budget, best first. Nothing
is written. ``apply`` writes the plan as one atomic replacement of MEMORY.md, refused if the
file changed since it was read; a run's record in the state directory lets ``undo`` restore the
file byte for byte while nobody has edited it since. Each run's diary (what was promoted, from
where, why, what was left out and why) goes to DREAMS.md when the config asks for it, else to the
state directory.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import private_dir, write_atomic
from ..config.dreaming import Dreaming, dreaming
from ..errors import EditConflictError, MnemoclawError
from ..markdown import provenance
from ..markdown.annotations import annotate, in_code, retired
from ..notes.write import content_hash
from ..vectors import unit_rows
from . import merge
from .entries import Entry, body, day_of, entry_at, entry_id, junk
from .select import Candidate, Gates, near_duplicate, rank, too_long

if TYPE_CHECKING:
    from ..api import Memory

log = logging.getLogger(__name__)

MEMORY = "MEMORY.md"
DIARY = "DREAMS.md"
SECTION = "## Promoted {day}"
# a promoted line as MEMORY.md holds it, and how a later run finds it again
_PROMOTED = re.compile(r"<!--\s*origin:\s*promoted\b[^>]*?-->")
_KEY = re.compile(r"\bkey:\s*([^;>]+?)\s*(?:;|-->)")
# a candidate this close by meaning to a MEMORY.md line (or a better candidate) says nothing new,
# in whatever script either is written
NEAR_COSINE = 0.9
MERGED = "merged with other entries into one line (the model step)"


class PromoteError(MnemoclawError):
    """A promotion that cannot be written or undone as asked."""


@dataclass
class Plan:
    at: float
    memory_before: str
    memory_after: str
    base: str  # the hash MEMORY.md had when it was read
    promoted: list[Candidate] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # older promoted values of a key, replaced in place
    left_out: list[Candidate] = field(default_factory=list)
    budget: int = 0
    full: str | None = None  # what MEMORY.md would need to drop to take what did not fit
    settings: Dreaming = field(default_factory=Dreaming)
    stale: list[str] = field(default_factory=list)  # recorded entries no longer in their files
    merge: merge.MergeReport | None = None  # what the model step did (None: it did not run)

    @property
    def empty(self) -> bool:
        return not self.promoted

    def as_dict(self) -> dict[str, Any]:
        return {"at": datetime.fromtimestamp(self.at).isoformat(timespec="seconds"),
                "promoted": [c.as_dict() for c in self.promoted], "replaced": self.replaced,
                "leftOut": [c.as_dict() for c in self.left_out], "memoryChars": len(self.memory_before),
                "memoryCharsAfter": len(self.memory_after), "budget": self.budget, "full": self.full,
                "model": self.merge.as_dict() if self.merge else None,
                "gates": {"minScore": self.settings.min_score, "minRecallCount": self.settings.min_recall_count,
                          "minUniqueQueries": self.settings.min_unique_queries}}


def settings_of(memory: Memory, **overrides: Any) -> Dreaming:
    """The config's promotion settings with the command's flags put over them."""
    base = dreaming(memory.settings.raw if isinstance(memory.settings.raw, dict) else {})
    return replace(base, **{k: v for k, v in overrides.items() if v is not None})


def _budget(memory: Memory) -> int:
    from ..runtime.settings import runtime_settings

    return runtime_settings(memory.settings).bootstrap_max_chars


def _read(memory: Memory, path: str) -> str | None:
    try:
        return memory.read(path)[1]
    except (MnemoclawError, OSError, ValueError):
        return None


def _entries_in(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Every entry of a file by its lines (0-based, end exclusive), first occurrence."""
    out: dict[tuple[int, int], None] = {}
    code = in_code(lines)
    i = 0
    while i < len(lines):
        if lines[i].strip():
            a, b = entry_at(lines, i, code)
            out[(a, b)] = None
            i = max(b, i + 1)
        else:
            i += 1
    return {f"{a}:{b}": (a, b) for a, b in out}


def _promoted_lines(text: str) -> list[tuple[int, str | None]]:
    """MEMORY.md's promoted lines: (0-based line, its key or None)."""
    out = []
    for i, line in enumerate(text.split("\n")):
        m = _PROMOTED.search(line)
        if m:
            k = _KEY.search(m.group(0))
            out.append((i, k.group(1).strip() if k else None))
    return out


def _newest_by_key(memory: Memory, files: Sequence[str]) -> dict[str, tuple[str, str, int]]:
    """For every key written in the daily logs, the newest entry's (day, path, line)."""
    out: dict[str, tuple[str, str, int]] = {}
    for path in files:
        text = _read(memory, path)
        if not text or "key" not in text:
            continue
        spans, _ = annotate(text)
        day = day_of(path) or ""
        for s in spans:
            k = s.attrs.get("key")
            if k and (k not in out or (day, s.start) >= out[k][::2]):
                out[k] = (day, path, s.start)
    return out


def _daily_logs(memory: Memory) -> list[str]:
    root = Path(memory.settings.workspace) / "memory"
    return sorted(f"memory/{p.name}" for p in root.glob("*.md") if day_of(f"memory/{p.name}")) \
        if root.is_dir() else []


def plan(memory: Memory, options: Dreaming | None = None, *, now: float | None = None,
         include_promoted: bool = False, by_meaning: bool = True, quick: bool = False, model: bool = True) -> Plan:
    """What a run would promote now, and why each other recalled entry would not be; writes no
    memory file (the events of entries no longer in their files are dropped, unless ``quick``).
    ``by_meaning``: near-duplicates of MEMORY.md told by the embedding model too (``quick``: not);
    ``model``: the chat model merges what says one thing, when the config names one (promote/merge.py)."""
    opts = options or settings_of(memory)
    now = time.time() if now is None else now
    opened = memory.notes.opened(MEMORY)
    current = opened["text"]
    out = Plan(at=now, memory_before=current, memory_after=current, base=opened["base"], budget=_budget(memory),
               settings=opts)
    events = memory.recall_events
    recorded = events.entries(memory.settings.agent_id)
    policy = memory.settings.exclude_sessions()
    today = date.fromtimestamp(now).isoformat()
    files: dict[str, tuple[list[str], dict[str, tuple[int, int]], list]] = {}
    candidates: list[Candidate] = []
    for e in recorded:
        c = _resolve(memory, e, files)
        if c is None:
            out.stale.append(e.id)
            continue
        c.why_not = _guard(c, files[c.path][2], policy, today, opts)
        candidates.append(c)
    newest = _newest_by_key(memory, _daily_logs(memory)) if any(c.key for c in candidates) else {}
    for c in candidates:
        if c.why_not is None and c.key and c.key in newest and (newest[c.key][1], newest[c.key][2]) != \
                (c.path, c.start_line) and newest[c.key][::2] > (day_of(c.path) or "", c.start_line):
            day, path, line = newest[c.key]
            c.why_not = f"an older value of {c.key!r} (the newest is {path}#L{line})"
    ranked = rank(candidates, Gates(opts.min_score, opts.min_recall_count, opts.min_unique_queries), now)
    promoted_keys = dict((k, i) for i, k in _promoted_lines(current) if k)
    existing = [line for line in current.split("\n") if line.strip()]
    already = {body(line) for line in existing if _PROMOTED.search(line)}
    chosen: list[Candidate] = []
    for c in ranked:
        if c.line in already:  # promoted by an earlier run, and not changed since
            c.why_not = "already promoted"
            if not include_promoted:
                continue
        if c.why_not is None:
            replacing = c.key in promoted_keys if c.key else False
            twin = None if replacing else near_duplicate(c.line, [*existing, *(x.line for x in chosen)])
            if twin is not None:
                c.why_not = f"already in MEMORY.md in other words ({twin.strip()[:80]!r})"
        if c.why_not is None:
            chosen.append(c)
    if by_meaning and not quick:
        replaced = set(promoted_keys.values())  # lines a newer value of their key takes over
        _near_by_meaning(memory, [c for c in chosen if not (c.key and c.key in promoted_keys)],
                         [line for i, line in enumerate(current.split("\n")) if line.strip() and i not in replaced])
    chosen = [c for c in chosen if c.why_not is None]
    for c in chosen[opts.limit:]:
        c.why_not = f"past --limit {opts.limit} this run"
    chosen = chosen[:opts.limit]
    if model and not quick and merge.configured(memory.settings, opts):
        out.merge = merge.merge(merge.chat_for(memory.settings, opts), chosen, opts.max_snippet_tokens)
        chosen = _merged(chosen, out.merge)
    fitted, text = _fit(current, chosen, promoted_keys, out, today)
    out.promoted = fitted
    out.memory_after = text
    shown = {id(c) for c in fitted}
    out.left_out = [c for c in ranked if id(c) not in shown and c.why_not != MERGED
                    and (include_promoted or c.why_not != "already promoted")]
    if out.stale and not quick:
        events.drop(out.stale)  # no longer in their files: nothing of them is kept
    return out


def _resolve(memory: Memory, e: Entry, files: dict) -> Candidate | None:
    """The recorded entry where it stands now, or None when its text is no longer in its file."""
    if e.source == "sessions":
        return _transcript(e)
    if e.path not in files:
        text = _read(memory, e.path)
        if text is None:
            files[e.path] = ([], {}, [])
        else:
            lines = text.split("\n")
            spans, _ = annotate(text)
            files[e.path] = (lines, _entries_in(lines), spans)
    lines, entries, _ = files[e.path]
    near = sorted(entries.values(), key=lambda ab: abs(ab[0] + 1 - e.start_line))
    for a, b in near:
        text = "\n".join(lines[a:b])
        if entry_id(e.path, text) == e.id:
            attrs = _attrs(files[e.path][2], a + 1)
            return Candidate(e, e.path, a + 1, b, text, body(text), key=attrs.get("key"))
    return None


def _transcript(e: Entry) -> Candidate:
    c = Candidate(e, e.path, e.start_line, e.end_line, "", "")
    c.why_not = "a transcript's message (the memory flush writes what a session keeps into the daily log, " \
                "and that is what is promoted)"
    return c


def _attrs(spans: list, line: int) -> dict:
    for s in spans:
        if s.start <= line <= s.end:
            return s.attrs
    return {}


def _guard(c: Candidate, spans: list, policy: dict, today: str, opts: Dreaming) -> str | None:
    if c.why_not is not None:
        return c.why_not
    attrs = _attrs(spans, c.start_line)
    origin = provenance.of(c.path, c.entry.source, attrs)
    if origin["origin"] in provenance.NEVER_UNASKED:
        return f"written by {origin['origin']} content"
    said_in = {k: str(attrs[a]) for k, a in (("channel", "channel"), ("chatType", "chat")) if attrs.get(a)}
    why = provenance.excluded(said_in, policy)
    if why:
        return f"kept out of memory: {why}"
    expires = attrs.get("expires")
    if expires and str(expires) < today:
        return f"expired on {expires}"
    if retired(attrs):
        return f"marked {attrs.get('status')}"
    bad = junk(c.text)
    if bad:
        return bad
    if too_long(c.line, opts.max_snippet_tokens):
        return f"longer than maxPromotedSnippetTokens {opts.max_snippet_tokens} (promoted whole or not at all)"
    return None


def _near_by_meaning(memory: Memory, chosen: list[Candidate], existing: list[str]) -> None:
    """Mark a candidate whose meaning a MEMORY.md line (or a better candidate) already holds, in
    any script, by the embedding model in use; nothing is marked without one."""
    provider = memory.provider
    if provider is None or not chosen:
        return
    try:
        import numpy as np

        lines = [line for line in existing if len(line.strip()) > 12 and not line.lstrip().startswith("#")]
        vecs = unit_rows(np.asarray(provider.embed([c.line for c in chosen] + lines), dtype=np.float32))
    except Exception as exc:  # noqa: BLE001 - without the model the word check alone decides
        log.warning("promote: the near-duplicate check by meaning was skipped (%s); words alone decided", exc)
        return
    mine, theirs = vecs[:len(chosen)], vecs[len(chosen):]
    for i, c in enumerate(chosen):
        if len(theirs):
            j = int((theirs @ mine[i]).argmax())
            if float(theirs[j] @ mine[i]) >= NEAR_COSINE:
                c.why_not = f"already in MEMORY.md in other words ({lines[j].strip()[:80]!r})"
                continue
        for k in range(i):
            if chosen[k].why_not is None and float(mine[k] @ mine[i]) >= NEAR_COSINE:
                c.why_not = f"says what {chosen[k].source} says"
                break


def _line(c: Candidate) -> str:
    # the day it was said: a newer value of its key in a later daily log still supersedes it
    day = day_of(c.path)
    extra = (f"; key: {c.key}" if c.key else "") + (f"; observed: {day}" if day else "")
    return f"- {c.line} <!-- origin: promoted; from: {', '.join([c.source, *c.also])}{extra} -->"


def _merged(chosen: list[Candidate], report: merge.MergeReport) -> list[Candidate]:
    """The run's candidates with each kept merge in place of its sources (where the first stood)."""
    out: list[Candidate] = []
    taken: dict[int, merge.Merged] = {}
    for m in report.merged:
        if m.why_not is None:
            for c in m.sources:
                taken[id(c)] = m
    done: set[int] = set()
    for c in chosen:
        group = taken.get(id(c))
        if group is None:
            out.append(c)
        else:
            c.why_not = MERGED  # written as part of the group's one line
        if group is not None and id(group) not in done:
            done.add(id(group))
            out.append(replace(group.sources[0], text=group.text, line=group.text, why_not=None,
                               also=[s.source for s in group.sources[1:]], score=max(s.score for s in group.sources)))
    return out


def _fit(current: str, chosen: list[Candidate], promoted_keys: dict[str, int], out: Plan,
         today: str) -> tuple[list[Candidate], str]:
    """MEMORY.md with the chosen entries: a keyed one over its older promoted value, in place;
    the others under today's section; best first until the bootstrap budget is reached."""
    lines = current.split("\n") if current else []
    if lines and lines[-1] == "":
        lines.pop()
    fitted: list[Candidate] = []
    new: list[str] = []
    size = len(current)
    left: list[Candidate] = []
    for c in chosen:
        line = _line(c)
        if c.key and c.key in promoted_keys:
            i = promoted_keys[c.key]
            grow = len(line) - len(lines[i])
            if size + grow <= out.budget:
                out.replaced.append(lines[i])
                lines[i] = line
                size += grow
                fitted.append(c)
            else:
                left.append(c)
            continue
        grow = len(line) + 1 + (len(SECTION.format(day=today)) + 3 if not new else 0)
        if size + grow <= out.budget:
            new.append(line)
            size += grow
            fitted.append(c)
        else:
            left.append(c)
    if left:
        need = sum(len(_line(c)) + 1 for c in left)
        oldest = [lines[i] for i, _ in _promoted_lines(current)][:3]
        hint = f"; the oldest promoted lines are {', '.join(repr(x[:60]) for x in oldest)}" if oldest else ""
        out.full = (f"MEMORY.md is at {size} of its {out.budget} characters (bootstrapMaxChars): {len(left)} more "
                    f"entr{'y' if len(left) == 1 else 'ies'} would need {need} more; shorten or remove entries to "
                    f"make room{hint}")
        for c in left:
            c.why_not = "MEMORY.md is full (bootstrapMaxChars)"
    if new:
        heading = SECTION.format(day=today)
        if heading in lines:  # today's section: the new lines go at its end
            at = lines.index(heading) + 1
            while at < len(lines) and not lines[at].startswith("#"):
                at += 1
            while at > 0 and not lines[at - 1].strip():
                at -= 1
            lines[at:at] = new
        else:
            if lines and lines[-1].strip():
                lines.append("")
            lines += [heading, "", *new]
    return fitted, "\n".join(lines) + "\n" if lines else ""


# -- writing --------------------------------------------------------------------------------
def _record_path(memory: Memory) -> Path:
    return Path(memory.settings.state_dir) / "promote" / memory.settings.agent_id / "last-run.json"


def apply(memory: Memory, p: Plan) -> dict[str, Any]:
    """Write the plan: one atomic replacement of MEMORY.md, refused if it changed since ``plan``
    read it (nothing written then); the run's record (for ``undo``) first, its diary after."""
    memory.settings.check_writable("promote")
    if p.empty:
        _diary(memory, p, applied=False)
        return {"written": False, "promoted": 0}
    record = _record_path(memory)
    private_dir(record.parent)
    write_atomic(record, json.dumps({"at": p.at, "before": p.memory_before, "after": p.memory_after,
                                     "promoted": [c.as_dict() for c in p.promoted]}, ensure_ascii=False))
    try:
        memory.notes.edit(MEMORY, p.memory_after, p.base)
    except EditConflictError:
        record.unlink(missing_ok=True)
        raise PromoteError("MEMORY.md changed while promote ran; nothing was written. Run `mnemoclaw promote` "
                           "again (it reads the file afresh)") from None
    _diary(memory, p, applied=True)
    return {"written": True, "promoted": len(p.promoted), "replaced": len(p.replaced)}


def undo(memory: Memory) -> dict[str, Any]:
    """Restore MEMORY.md as the last run found it, if nobody edited it since; otherwise refuse
    and show what changed since the run."""
    memory.settings.check_writable("promote --undo")
    record = _record_path(memory)
    try:
        last = json.loads(record.read_text("utf-8"))
    except FileNotFoundError:
        raise PromoteError("there is no promote run to undo (none applied since the last undo)") from None
    except (OSError, ValueError) as exc:
        raise PromoteError(f"the record of the last promote run ({record}) cannot be read ({exc}); "
                           "MEMORY.md was left as it is") from None
    opened = memory.notes.opened(MEMORY)
    if opened["text"] == last["before"]:
        record.unlink(missing_ok=True)
        return {"restored": False, "why": "MEMORY.md already holds what it held before the last run"}
    if opened["text"] != last["after"]:
        diff = "".join(difflib.unified_diff(last["after"].splitlines(keepends=True),
                                            opened["text"].splitlines(keepends=True),
                                            "MEMORY.md after the last promote run", "MEMORY.md now"))
        raise PromoteError("MEMORY.md was edited after the last promote run, so undoing it would lose those "
                           "edits; nothing was changed. Remove the promoted lines by hand. What changed since "
                           f"the run:\n{diff}")
    memory.notes.edit(MEMORY, last["before"], opened["base"])
    record.unlink(missing_ok=True)
    return {"restored": True, "removed": len(last.get("promoted", []))}


def _diary(memory: Memory, p: Plan, *, applied: bool) -> Path | None:
    """One section per run: what was promoted, from where and why; what was left out and why."""
    stamp = datetime.fromtimestamp(p.at).isoformat(timespec="minutes")
    out = [f"## {stamp} {'promoted' if applied else 'nothing promoted'}", ""]
    for c in p.promoted:
        sig = ", ".join(f"{k} {v:.2f}" for k, v in c.signals.items())
        out.append(f"- promoted from {c.source}: {c.line[:200]} (score {c.score:.3f}; recalled {c.entry.recalls} "
                   f"times by {len(c.entry.queries)} questions on {len(c.entry.days)} days; {sig})")
    for m in p.merge.merged if p.merge else ():
        state = "merged" if m.why_not is None else f"not merged ({m.why_not})"
        out.append(f"- {state}: {', '.join(c.source for c in m.sources)} -> {m.text[:200]}")
    if p.merge and p.merge.error:
        out.append(f"- {p.merge.error}")
    for c in p.left_out[:50]:
        out.append(f"- left out {c.source}: {c.why_not}")
    if p.full:
        out.append(f"- {p.full}")
    out.append("")
    section = "\n".join(out) + "\n"
    if p.settings.diary and memory.settings.openclaw_dir is None:
        path = Path(memory.settings.workspace) / DIARY
        private = False
    else:
        path = Path(memory.settings.state_dir) / "promote" / memory.settings.agent_id / "diary.md"
        private = True
        private_dir(path.parent)
    try:
        old = path.read_text("utf-8") if path.exists() else "# Promotion diary\n\n"
        write_atomic(path, old + section, private=private)
    except OSError as exc:
        log.warning("promote: the diary could not be written to %s (%s)", path, exc)
        return None
    return path


def summary(memory: Memory, *, now: float | None = None) -> dict[str, Any]:
    """What ``status`` and the web UI show: the settings, when the next scheduled run is, the last
    applied run, and the entries the next run would promote (quickly: words only)."""
    from ..text.cron import next_run, parse_cron

    opts = settings_of(memory)
    now = time.time() if now is None else now
    p = plan(memory, opts, now=now, quick=True)
    return {"enabled": opts.enabled, "frequency": opts.frequency,
            "nextRun": next_run(parse_cron(opts.frequency), datetime.fromtimestamp(now)).isoformat(timespec="minutes")
            if opts.enabled else None,
            "lastRun": last_run(memory), "recalledEntries": len(p.promoted) + len(p.left_out),
            "candidates": [{"from": c.source, "path": c.path, "startLine": c.start_line, "line": c.line[:160],
                            "score": round(c.score, 3)} for c in p.promoted],
            "unknownKeys": list(opts.unknown)}


def last_run(memory: Memory) -> dict[str, Any] | None:
    """The last applied run (for ``status``), or None."""
    try:
        last = json.loads(_record_path(memory).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return {"at": datetime.fromtimestamp(last["at"]).isoformat(timespec="seconds"),
            "promoted": len(last.get("promoted", [])), "undoable": True,
            "memoryUnchangedSince": content_hash(last["after"]) == content_hash(_read(memory, MEMORY) or "")}


__all__ = ["DIARY", "MEMORY", "NEAR_COSINE", "Plan", "PromoteError", "apply", "last_run", "plan", "settings_of",
           "summary", "undo"]
