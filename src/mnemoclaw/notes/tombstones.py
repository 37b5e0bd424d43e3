"""Tombstones: what a forget took out, remembered so that nothing brings it back: not a
re-index, not a rebuild, not a re-import of the same export, not a restored backup, not a
transcript that another program keeps (OpenClaw's) and mnemoclaw may only read.

One file, ``STATE_DIR/tombstones.json``::

    {"version": 2,
     "tombstones": [{"kind": "session", "value": "<hash>", "since": "2026-11-01" | null,
                     "at": "2026-12-04T17:50:00+00:00", "items": ["<hash>", …]}, …],
     "pending": [{"id": "…", "at": "…", "paths": ["<hash>", …], "chunks": [...], "texts": [...]}]}

It names nothing that was forgotten: every value and item is a keyed hash (HMAC-SHA256 under a
random key kept beside it in ``forget.key``, created on first use), so a forgotten session id,
a person's name (casefolded first), an imported conversation's file name (its title) or a
forgotten line cannot be read back from it, only recognised when met again. Kinds: ``session``,
``source`` (``items``: the imported files it removed, which a re-import leaves out),
``participant``, ``text`` (a line or a message a forget by query removed, normalised by
``said_key``). ``since``: only what is dated that day or later is fenced (null: all of it).

``pending``: what a forget still owes the index (re-index the files it changed, delete the
cached vectors of the chunks that held the text, scrub, check), recorded in the same write as
its tombstones and before any file changes, so a forget killed at any point is finished by the
next sync or search (``Memory.finish_forgets``) and shown by ``status`` until then.

``Fences.view`` is the one filter: every reader of memory or transcript text (the indexer,
``memory_get``, ``sessions_search``, the session pages, qmd's export) blanks what it fences,
line numbers kept.

A plain file (version 1, a list of records naming their values) is upgraded when first read:
hashed and rewritten atomically, and the import records of the files it names dropped. A
damaged file is never rewritten and never guessed at: it is read as no tombstones (the plain
path), with one line naming it and the fix, and a forget refuses until it is mended.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import unicodedata
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from ..atomic import private_dir, write_atomic
from ..errors import MnemoclawError
from ..locks import file_lock
from ..markdown.annotations import annotated_entries
from ..markdown.provenance import session_of
from ..sessions.transcript import entry_message
from ..text.secrets import redact

log = logging.getLogger(__name__)

FILE = "tombstones.json"  # under the state directory
KEY_FILE = "forget.key"  # the hashes' key, beside it
IMPORTS_MANIFEST = "imports.json"  # what each imported file held (notes/imports.py); forgotten ones leave it
VERSION = 2
KINDS = ("session", "source", "participant")  # what forget by origin takes
TEXT = "text"  # what forget by query takes
SENDER_FIELDS = ("sender", "senderName", "sender_name", "name", "from", "author")
MIN_SAID = 8  # a shorter line ("- ok", "---") is too common to fence wherever it is met
_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})")
_MARKER = re.compile(r"^(?:[-*+>]|\d{1,9}[.)])\s+")  # a list item's or a quote's marker
_HEX = re.compile(r"^[0-9a-f]{32}$")
_warned: set[str] = set()
# the file as last read, by its stat: every search and read asks for it (this process's own
# writes drop it, so a rewrite within the clock's granularity is never missed here)
_cache: dict[str, tuple[tuple[int, int, int, int], Fences]] = {}


class TombstoneError(MnemoclawError):
    """The tombstone file cannot be read or written."""


@dataclass(frozen=True)
class Tombstone:
    """One record. Given to ``record`` with its values as they are; read back (``load``) with
    them hashed."""

    kind: str  # session | source | participant | text
    value: str
    since: str | None  # YYYY-MM-DD: only what is dated then or later
    at: str  # when it was forgotten (ISO 8601)
    items: tuple[str, ...] = ()

    def covers(self, day: str | None) -> bool:
        """Whether content of ``day`` (YYYY-MM-DD; None: undated) is fenced: with no ``since``
        everything is; with one, what is dated then or later (what carries no date is left, as
        the forget left it, and it said so)."""
        return self.since is None or (day is not None and day >= self.since)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "since": self.since, "at": self.at, "items": list(self.items)}


@dataclass(frozen=True)
class Pending:
    """What a forget still owes the index, by keyed hashes: the files to index again, the
    chunk texts whose cached vectors go, the lines it removed (for the check)."""

    id: str
    at: str
    paths: tuple[str, ...] = ()
    chunks: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "at": self.at, "paths": list(self.paths), "chunks": list(self.chunks),
                "texts": list(self.texts)}


def said_key(text: str) -> str:
    """A line or a message as a text tombstone knows it: Unicode-normalised, whitespace
    collapsed, casefolded, without a list item's or a quote's marker; "" when it is too short
    to tell apart from other text."""
    said = " ".join(unicodedata.normalize("NFKC", text).split()).casefold()
    while m := _MARKER.match(said):
        said = said[m.end():]
    return said if len(said) >= MIN_SAID and any(c.isalnum() for c in said) else ""


def keyed(key: bytes, kind: str, value: str) -> str:
    """``value`` as the tombstone file holds it (``kind`` keeps the kinds apart)."""
    return hmac.new(key, f"{kind}\n{value}".encode(), hashlib.sha256).hexdigest()[:32]


def line_keys(state_dir: str | Path, lines: Sequence[str]) -> list[str]:
    """The lines (of them long enough to tell apart) as a forget of them records them, so what
    keeps a line elsewhere (recall events: promote/events.py) is reached by that forget, even one
    finished by the next command after a kill."""
    said = [s for s in (said_key(line) for line in lines) if s]
    if not said:
        return []
    key = _KEYS.get(str(state_dir))
    if key is None:  # a key never changes once made: read once a process
        key = _KEYS[str(state_dir)] = _key(Path(state_dir), create=True)
    assert key is not None
    return [keyed(key, TEXT, s) for s in said]


_KEYS: dict[str, bytes | None] = {}


def _plain(kind: str, value: str) -> str:
    """A value as it is hashed: a person's name in any case is one person; a line as
    ``said_key`` knows it."""
    if kind == TEXT:
        return said_key(value)
    return value.strip().casefold() if kind == "participant" else value.strip()


@dataclass
class Fences:
    """The tombstones in force, what forgets still owe, and why none are when the file is damaged."""

    tombstones: list[Tombstone] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)
    damaged: str | None = None
    key: bytes | None = None
    _by: dict[tuple[str, str], list[Tombstone]] = field(default_factory=dict, init=False, repr=False)
    _items: set[str] = field(default_factory=set, init=False, repr=False)
    _kinds: set[str] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        for t in self.tombstones:
            self._by.setdefault((t.kind, t.value), []).append(t)
            self._kinds.add(t.kind)
            if t.kind == "source":
                self._items.update(t.items)

    def hashed(self, kind: str, value: str) -> str:
        assert self.key is not None
        return keyed(self.key, kind, _plain(kind, value))

    def _fenced(self, kind: str, value: str | None, day: str | None) -> bool:
        if not value or not value.strip() or kind not in self._kinds:
            return False
        return any(t.covers(day) for t in self._by.get((kind, self.hashed(kind, value)), ()))

    def session(self, session_id: str | None, day: str | None = None) -> bool:
        return self._fenced("session", session_id, day)

    def participant(self, name: str | None, day: str | None = None) -> bool:
        return self._fenced("participant", name, day)

    def imported(self, rel: str) -> bool:
        return bool(self._items) and keyed(self.key or b"", "item", rel) in self._items

    def said(self, text: str) -> bool:
        """A line or message a forget by query took out."""
        if TEXT not in self._kinds:
            return False
        said = said_key(text)
        return bool(said) and (TEXT, keyed(self.key or b"", TEXT, said)) in self._by

    def entry(self, attrs: dict[str, Any], day: str | None) -> bool:
        """A memory entry an agent wrote in a forgotten session."""
        return self.session(attrs.get("session"), day)

    def view(self, path: str, source: str, text: str) -> tuple[str, int]:
        """A memory file's or a transcript's text with what the tombstones fence blanked (line
        numbers kept, so citations hold), and how many lines were: what every reader shows."""
        if source == "sessions":
            return self.transcript(session_of(path), text)
        return self.markdown(path, text)

    def transcript(self, session_id: str, data: str) -> tuple[str, int]:
        """A transcript's JSONL with the fenced lines blanked, and how many were."""
        if not self.tombstones:
            return data, 0
        whole = self._by.get(("session", self.hashed("session", session_id)), []) if session_id else []
        people = "participant" in self._kinds
        texts = TEXT in self._kinds
        if not (whole or people or texts):
            return data, 0
        out, dropped = [], 0
        for line in data.split("\n"):
            entry = json_entry(line)
            if entry is not None:
                day = entry_day(entry)
                said = entry_message(entry) if texts else None
                if any(t.covers(day) for t in whole) or (people and self.participant(sender(entry), day)) \
                        or (said is not None and self.said(said[1])):
                    out.append("")
                    dropped += 1
                    continue
            out.append(line)
        return "\n".join(out), dropped

    def markdown(self, path: str, text: str) -> tuple[str, int]:
        """A memory file with the fenced lines blanked: an imported file a ``source`` forget
        removed, an agent's entry of a forgotten session, a line a forget by query removed
        (each come back: a restore, a revert)."""
        if not self.tombstones:
            return text, 0
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        drop: set[int] = set()
        if self.imported(path):
            drop = set(range(1, len(lines) + 1))
        if "session" in self._kinds and "<!--" in text:
            day = file_day(path)
            scoped, _ = annotated_entries(text)
            for s, e, attrs, _ in scoped:
                if self.entry(attrs, day):
                    drop.update(range(s, e + 1))
        if TEXT in self._kinds:
            drop.update(i for i, line in enumerate(lines, 1) if len(line.strip()) >= MIN_SAID and self.said(line))
        drop = {i for i in drop if lines[i - 1].strip()}
        if not drop:
            return text, 0
        return "\n".join("" if i in drop else line for i, line in enumerate(lines, 1)), len(drop)

    def owed(self) -> Pending | None:
        """Every forget's debt as one (None: nothing is owed)."""
        if not self.pending:
            return None
        return Pending(",".join(p.id for p in self.pending), min(p.at for p in self.pending),
                       *(tuple(dict.fromkeys(x for p in self.pending for x in getattr(p, name)))
                         for name in ("paths", "chunks", "texts")))


def json_entry(line: str) -> dict[str, Any] | None:
    """One JSONL line as the object it holds (None: not an object, or not JSON)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        got = json.loads(line)
    except ValueError:
        return None
    return got if isinstance(got, dict) else None


def entry_day(entry: dict[str, Any] | None) -> str | None:
    """The day (UTC, YYYY-MM-DD) a transcript entry was written, from ``at`` / ``timestamp``."""
    if not entry:
        return None
    for key in ("at", "timestamp", "ts", "createdAt"):
        value = entry.get(key)
        if isinstance(value, (int, float)) and value > 0:
            seconds = value / 1000 if value > 1e11 else value  # OpenClaw writes milliseconds
            return datetime.fromtimestamp(seconds, UTC).date().isoformat()
        if isinstance(value, str) and (m := _DAY.match(value)):
            return m.group(1)
    return None


def sender(entry: dict[str, Any]) -> str | None:
    """Who said a transcript message, where the transcript says (a group chat's sender)."""
    msg = entry.get("message") if isinstance(entry.get("message"), dict) else entry
    for holder in (msg, entry):
        for key in SENDER_FIELDS:
            value = holder.get(key) if isinstance(holder, dict) else None
            if isinstance(value, str) and value.strip():
                return value.strip()
            if isinstance(value, dict):  # {"sender": {"name": …, "id": …}}
                for inner in ("name", "displayName", "username", "id"):
                    if isinstance(value.get(inner), str) and value[inner].strip():
                        return value[inner].strip()
    return None


def file_day(path: str) -> str | None:
    """The day a memory file is about, from its name (``memory/2026-03-01.md``,
    ``memory/imports/chatgpt/2026-03-01-trip-….md``); None when it names none."""
    m = _DAY.search(path.rsplit("/", 1)[-1])
    return m.group(1) if m else None


# -- the key -------------------------------------------------------------------------------------
def _read_key(path: Path) -> bytes:
    raw = path.read_text("ascii").strip()
    if not re.fullmatch(r"[0-9a-f]{64}", raw):
        raise ValueError(f"{path} is not a key (64 hex digits)")
    return bytes.fromhex(raw)


def _key(state_dir: Path, *, create: bool) -> bytes | None:
    """The hashes' key (None when there is none and ``create`` is false). Made private and
    whole beside its name, then linked into place: two processes making it at once agree on
    the one that landed."""
    path = state_dir / KEY_FILE
    try:
        return _read_key(path)
    except FileNotFoundError:
        if not create:
            return None
    private_dir(state_dir)
    tmp = state_dir / f".{KEY_FILE}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, os.urandom(32).hex().encode() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return _read_key(path)


# -- reading -------------------------------------------------------------------------------------
def _record(i: int, rec: Any, kinds: Sequence[str]) -> Tombstone:
    if not isinstance(rec, dict) or rec.get("kind") not in kinds or not isinstance(rec.get("value"), str) \
            or not rec["value"] or not isinstance(rec.get("at"), str):
        raise ValueError(f"record {i} is not a tombstone (kind, value, at)")
    since = rec.get("since")
    if since is not None:
        date.fromisoformat(str(since))  # ValueError: not a date
    items = rec.get("items") or []
    if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
        raise ValueError(f"record {i}'s items are not a list of paths")
    return Tombstone(rec["kind"], rec["value"], since, rec["at"], tuple(items))


def _hashes(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(x, str) and _HEX.match(x) for x in value):
        raise ValueError(f"{what} are not a list of hashes")
    return tuple(value)


def _parse(data: Any) -> tuple[list[Tombstone], list[Pending]]:
    """Version 2's records (ValueError: it is not that)."""
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise ValueError("it is neither a list of records nor a version 2 file")
    raw, owed = data.get("tombstones", []), data.get("pending", [])
    if not isinstance(raw, list) or not isinstance(owed, list):
        raise ValueError("its tombstones or pending are not lists")
    tombs = [_record(i, rec, (*KINDS, TEXT)) for i, rec in enumerate(raw)]
    for i, t in enumerate(tombs):
        _hashes([t.value, *t.items], f"record {i}'s value and items")
    pending = []
    for i, p in enumerate(owed):
        if not isinstance(p, dict) or not isinstance(p.get("id"), str) or not isinstance(p.get("at"), str):
            raise ValueError(f"pending {i} is not a debt (id, at)")
        pending.append(Pending(p["id"], p["at"], *(_hashes(p.get(k, []), f"pending {i}'s {k}")
                                                   for k in ("paths", "chunks", "texts"))))
    return tombs, pending


def load(state_dir: str | Path, *, quiet: bool = False) -> Fences:
    """The tombstones in force; a damaged file is said once in the log (unless ``quiet``: the
    caller says it) and read as none. A plain (version 1) file is upgraded here."""
    path = Path(state_dir) / FILE
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Fences()
    except OSError as exc:
        return _damaged(path, str(exc.strerror or exc), quiet)
    stamp = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
    cached = _cache.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.loads(fh.read())
        if isinstance(data, list):
            return _upgrade(Path(state_dir), [_record(i, rec, KINDS) for i, rec in enumerate(data)])
        tombs, pending = _parse(data)
        key = _key(Path(state_dir), create=False)
    except (OSError, UnicodeDecodeError) as exc:
        return _damaged(path, str(getattr(exc, "strerror", None) or exc), quiet)
    except (ValueError, TypeError) as exc:
        return _damaged(path, str(exc), quiet)
    if key is None and (tombs or pending):
        return _damaged(path, f"its key {Path(state_dir) / KEY_FILE} is missing, so nothing can be matched "
                              "against it", quiet)
    fences = Fences(tombs, pending, key=key)
    _cache[str(path)] = (stamp, fences)
    return fences


def _damaged(path: Path, why: str, quiet: bool) -> Fences:
    say = (f"{path} is damaged ({why}): what was forgotten is not kept out until it is mended; "
           "fix the JSON or move the file aside, then run `mnemoclaw forget` again")
    if not quiet and str(path) not in _warned:
        _warned.add(str(path))
        log.warning("%s", say)
    return Fences(damaged=say)


def _hashed(key: bytes, t: Tombstone) -> Tombstone:
    return Tombstone(t.kind, keyed(key, t.kind, _plain(t.kind, t.value)), t.since, t.at,
                     tuple(keyed(key, "item", x) for x in t.items))


def _upgrade(state_dir: Path, plain: list[Tombstone]) -> Fences:
    """A version 1 file, which names what was forgotten: hashed, written back, and the import
    records of the files it names dropped. Where it cannot be written (a read-only state
    directory) it is read with a key of this process's own, and left as it is."""
    try:
        key = _key(state_dir, create=True)
        assert key is not None
    except OSError:
        key = os.urandom(32)
        fences = Fences([_hashed(key, t) for t in plain], key=key)
        return fences
    fences = Fences(_merged([], [_hashed(key, t) for t in plain]), key=key)
    try:
        _write(state_dir, fences.tombstones, [])
        drop_import_records(state_dir, [x for t in plain for x in t.items])
    except OSError as exc:
        log.warning("could not upgrade %s to hashed records (%s); it is read as it is", state_dir / FILE,
                    exc.strerror or exc)
    return fences


# -- writing -------------------------------------------------------------------------------------
def _merged(old: list[Tombstone], new: list[Tombstone]) -> list[Tombstone]:
    """``old`` with ``new`` added: one record per (kind, value, since), its items joined."""
    out = {(t.kind, t.value, t.since): t for t in old}
    for t in new:
        same = out.pop((t.kind, t.value, t.since), None)
        items = tuple(dict.fromkeys([*(same.items if same else ()), *t.items]))
        out[(t.kind, t.value, t.since)] = Tombstone(t.kind, t.value, t.since, t.at, items)
    return list(out.values())


def _write(state_dir: Path, tombs: list[Tombstone], pending: list[Pending]) -> None:
    data = {"version": VERSION, "tombstones": [t.as_dict() for t in tombs], "pending": [p.as_dict() for p in pending]}
    _cache.pop(str(state_dir / FILE), None)
    write_atomic(state_dir / FILE, json.dumps(data, ensure_ascii=False, indent=0) + "\n")


@contextmanager
def _changing(state_dir: Path) -> Iterator[None]:
    """One process at a time reads and rewrites the file (a forget recording its debt while a
    search settles another's must lose neither)."""
    private_dir(state_dir)
    with file_lock(str(state_dir / f".{FILE}.lock"), timeout=60, what=str(state_dir / FILE)):
        _cache.pop(str(state_dir / FILE), None)  # read afresh: another process may have written it
        yield


@dataclass(frozen=True)
class Recorded:
    """A forget's record: its debt's id, and the file as it was before (to put back when the
    forget removes nothing after all)."""

    id: str
    before: bytes | None


def record(state_dir: str | Path, tombstones: Sequence[Tombstone], *, paths: Sequence[str] = (),
           chunks: Sequence[str] = (), texts: Sequence[str] = (), at: str) -> Recorded:
    """Record ``tombstones`` (values as they are: hashed here) and what the forget will owe the
    index (``paths`` it changes, the ``chunks`` hashes indexed from them, the ``texts`` it
    removes), in one atomic write made before any file changes. Refuses when the file is
    damaged: it is never overwritten."""
    state = Path(state_dir)
    try:
        with _changing(state):
            return _record_now(state, tombstones, paths, chunks, texts, at)
    except OSError as exc:
        raise TombstoneError(f"could not record the forget in {state / FILE} ({exc.strerror or exc}); "
                             "nothing was removed") from None


def _record_now(state: Path, tombstones: Sequence[Tombstone], paths: Sequence[str], chunks: Sequence[str],
                texts: Sequence[str], at: str) -> Recorded:
    fences = load(state, quiet=True)
    if fences.damaged:
        raise TombstoneError(fences.damaged)
    try:
        before: bytes | None = (state / FILE).read_bytes()
    except FileNotFoundError:
        before = None
    key = fences.key or _key(state, create=True)
    assert key is not None
    owed = Pending(uuid.uuid4().hex[:12], at,
                   tuple(dict.fromkeys(keyed(key, "path", p) for p in paths)),
                   tuple(dict.fromkeys(keyed(key, "chunk", c) for c in chunks)),
                   # a transcript's message is indexed redacted: the check knows it that way too
                   tuple(dict.fromkeys(keyed(key, TEXT, k) for t in texts
                                       for k in (said_key(t), said_key(redact(t))) if k)))
    _write(state, _merged(fences.tombstones, [_hashed(key, t) for t in tombstones]), [*fences.pending, owed])
    return Recorded(owed.id, before)


def undo(state_dir: str | Path, done: Recorded) -> None:
    """Put the file back as it was before ``done`` (a forget that removed nothing after all)."""
    path = Path(state_dir) / FILE
    with _changing(Path(state_dir)):
        _cache.pop(str(path), None)
        if done.before is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, done.before)


def settled(state_dir: str | Path, ids: Sequence[str]) -> None:
    """The debts ``ids`` are paid: forget them."""
    with _changing(Path(state_dir)):
        fences = load(state_dir, quiet=True)
        if fences.damaged or not any(p.id in ids for p in fences.pending):
            return
        _write(Path(state_dir), fences.tombstones, [p for p in fences.pending if p.id not in ids])


def drop_import_records(state_dir: str | Path, rels: Sequence[str]) -> None:
    """Take forgotten files out of the import manifest, which names each imported file (its
    conversation's title) with a hash of what it held."""
    path = Path(state_dir) / IMPORTS_MANIFEST
    if not rels:
        return
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (FileNotFoundError, ValueError):
        return
    if not isinstance(data, dict) or not any(r in data for r in rels):
        return
    kept = {k: v for k, v in data.items() if k not in set(rels)}
    write_atomic(path, json.dumps(kept, indent=0, sort_keys=True))
