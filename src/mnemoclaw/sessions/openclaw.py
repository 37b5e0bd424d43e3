"""Where an OpenClaw state directory keeps an agent's transcripts, and reading them read-only.

OpenClaw has kept transcripts in two ways:

- files (to 2026.7.1): ``agents/<id>/sessions/<sessionId>.jsonl`` beside ``sessions.json``
  (session key -> entry with ``sessionId``); archives are ``<id>.jsonl.<reason>.<ts>``;
- SQLite (2026.7.2 on; the default layout of 2026.8 and 2026.9): the agent's database
  ``agents/<id>/agent/openclaw-agent.sqlite``, table ``transcript_events`` (one row per
  JSONL line, ``event_json`` the line as the file held it, or ``event_zstd`` compressed) and
  table ``sessions`` (one row per session). The database is in WAL mode with OpenClaw's
  gateway its one writer.

The database is never opened where it lies: opening a WAL database, even read-only, can
create or change its ``-shm`` and ``-wal`` files. It is copied (with its ``-wal``) into
mnemoclaw's state dir and read there, and its transcripts are written out as JSONL files
beside a ``sessions.json``, so everything that reads transcripts reads them the one way.
The copy is made again only when the database or its WAL changed.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..atomic import private_dir, private_file, write_atomic

AGENT_DB = Path("agent") / "openclaw-agent.sqlite"
# the newest OpenClaw whose layout this reader was written against
KNOWN_UP_TO = (2026, 9)
SQLITE_SINCE = (2026, 7, 2)
_STAMP = "source.json"


@dataclass
class Layout:
    """Where one agent's transcripts are: ``kind`` is ``files``, ``sqlite`` or ``none`` (no
    transcripts yet); ``problem`` says why they cannot be read, if they cannot."""

    agent_id: str
    kind: str
    sessions_dir: Path  # the JSONL files to read (OpenClaw's own, or the copy written from its database)
    database: Path | None = None
    version: str | None = None
    problem: str | None = None
    sessions: int = 0
    notes: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.version, "layout": self.kind, "transcripts": str(self.sessions_dir)}
        if self.database is not None:
            out["database"] = str(self.database)
        if self.problem:
            out["problem"] = self.problem
        return out


def parse_version(text: Any) -> tuple[int, ...] | None:
    """``"2026.9.1"`` (or ``"2026.9.1-beta.2"``) -> ``(2026, 9, 1)``; anything else -> None."""
    if not isinstance(text, str):
        return None
    head = text.strip().lstrip("v").split("-")[0]
    parts = head.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def config_version(raw: dict[str, Any]) -> str | None:
    """The OpenClaw version that last wrote ``openclaw.json`` (``meta.lastTouchedVersion``)."""
    meta = raw.get("meta")
    value = meta.get("lastTouchedVersion") if isinstance(meta, dict) else None
    return value if isinstance(value, str) else None


def _tables(con: sqlite3.Connection) -> dict[str, set[str]]:
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {n: {r[1] for r in con.execute(f'PRAGMA table_info("{n}")')} for n in names}


def _stamp(paths: list[Path]) -> list[list[int]]:
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append([st.st_size, st.st_mtime_ns])
        except FileNotFoundError:
            out.append([-1, 0])
    return out


def _copy(database: Path, into: Path) -> Path:
    """Copy ``database`` and its WAL into ``into``; the copy's path."""
    private_dir(into)
    target = into / database.name
    for suffix in ("-wal", "-shm", ""):  # nothing of an earlier copy may meet the new one
        Path(str(target) + suffix).unlink(missing_ok=True)
    private_file(target)  # a copy of someone's conversations: the user's alone, as the original
    shutil.copyfile(database, target)
    wal = Path(str(database) + "-wal")
    if wal.is_file():
        private_file(str(target) + "-wal")
        shutil.copyfile(wal, Path(str(target) + "-wal"))
    return target


def _decoder() -> Any:
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard.ZstdDecompressor()


def _events(con: sqlite3.Connection, columns: set[str], skipped: list[int]) -> Iterator[tuple[str, str]]:
    """(session id, JSONL line) in the order OpenClaw wrote them."""
    order = "seq" if "seq" in columns else "rowid"
    packed = "event_zstd" in columns
    select = "session_id, event_json" + (", event_zstd" if packed else "")
    decoder = _decoder() if packed else None
    for row in con.execute(f"SELECT {select} FROM transcript_events ORDER BY session_id, {order}"):
        session, text = str(row[0]), row[1]
        if text is None and packed and row[2] is not None:
            if decoder is None:
                skipped[0] += 1
                continue
            text = decoder.decompress(row[2]).decode("utf-8", errors="replace")
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        if isinstance(text, str) and text.strip():
            yield session, " ".join(text.splitlines())


def _session_entries(con: sqlite3.Connection, columns: set[str]) -> dict[str, dict[str, Any]]:
    """``sessions.json``'s shape (session key -> entry with ``sessionId``) from the sessions table."""
    id_col = next((c for c in ("session_id", "id") if c in columns), None)
    if id_col is None:
        return {}
    key_col = next((c for c in ("session_key", "key") if c in columns), None)
    time_col = next((c for c in ("updated_at", "updatedAt", "last_activity_at") if c in columns), None)
    json_col = next((c for c in ("entry_json", "meta_json", "data") if c in columns), None)
    cols = [id_col, key_col or id_col, time_col or id_col, json_col or id_col]
    out: dict[str, dict[str, Any]] = {}
    for sid, key, updated, extra in con.execute(f"SELECT {', '.join(cols)} FROM sessions"):
        entry: dict[str, Any] = {}
        if json_col:
            try:
                parsed = json.loads(extra) if isinstance(extra, str) else None
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                entry.update(parsed)
        entry["sessionId"] = str(sid)
        if time_col and isinstance(updated, int | float):
            entry["updatedAt"] = int(updated)
        out[str(key) if key_col and key else str(sid)] = entry
    return out


def mirror(database: Path, out_dir: Path) -> tuple[int, str | None, list[str]]:
    """Write the transcripts of OpenClaw's ``database`` to ``out_dir`` as JSONL files and a
    ``sessions.json``: (sessions written, or -1 when the database holds none (the layout before
    2026.7.2, transcripts still files); why they could not be read, or None; notes). Only
    files that changed are rewritten; a session gone from the database goes from the copy."""
    sources = [database, Path(str(database) + "-wal")]
    stamp_path = out_dir.parent / _STAMP
    stamp = {"database": str(database), "stamp": _stamp(sources)}
    try:
        if json.loads(stamp_path.read_text("utf-8")) == stamp and out_dir.is_dir():
            return sum(1 for _ in out_dir.glob("*.jsonl")), None, []
    except (OSError, ValueError):
        pass
    try:
        copy = _copy(database, out_dir.parent / "db-copy")
    except OSError as exc:
        return 0, f"{database} could not be copied to read it ({exc.strerror or exc})", []
    notes: list[str] = []
    try:
        con = sqlite3.connect(copy)
        try:
            tables = _tables(con)
            events = tables.get("transcript_events")
            if events is None:
                if "sessions" not in tables:  # 2026.6.5-2026.7.1: the database holds no sessions yet
                    return -1, None, []
                return 0, (f"{database} has a sessions table but no transcript_events table, a layout mnemoclaw "
                           "does not know"), []
            if not {"session_id"} <= events or not ({"event_json", "event_zstd"} & events):
                return 0, (f"{database}'s transcript_events table has columns {', '.join(sorted(events))}, not the "
                           "session_id and event_json mnemoclaw reads"), []
            skipped = [0]
            lines: dict[str, list[str]] = {}
            for session, line in _events(con, events, skipped):
                lines.setdefault(session, []).append(line)
            entries = _session_entries(con, tables.get("sessions", set()))
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        return 0, f"{database} could not be read as SQLite ({exc})", []
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(str(copy) + suffix).unlink(missing_ok=True)
    if skipped[0]:
        n = skipped[0]
        notes.append(f"{n} transcript event{'s are' if n > 1 else ' is'} zstd-compressed and left out; "
                     "`pip install zstandard` reads them")
    private_dir(out_dir)
    wanted = set()
    for session, rows in lines.items():
        name = _safe_name(session)
        wanted.add(name)
        path = out_dir / f"{name}.jsonl"
        text = "\n".join(rows) + "\n"
        try:
            if path.read_text("utf-8") == text:
                continue
        except OSError:
            pass
        write_atomic(path, text)
    for old in out_dir.glob("*.jsonl"):
        if old.stem not in wanted:
            old.unlink(missing_ok=True)
    if not entries:  # no sessions table to name them: each by its own id
        entries = {sid: {"sessionId": sid} for sid in lines}
    write_atomic(out_dir / "sessions.json", json.dumps(entries, ensure_ascii=False, indent=1) + "\n")
    write_atomic(stamp_path, json.dumps(stamp))
    return len(lines), None, notes


def _safe_name(session: str) -> str:
    """A session id as a file name (OpenClaw's ids are UUIDs; anything else is made safe)."""
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in session).strip(".")
    return keep or "session"


def locate(root: Path, agent_id: str, mirror_dir: Path, *, version: str | None = None) -> Layout:
    """Find ``agent_id``'s transcripts under OpenClaw's ``root`` and, when they are in its
    database, bring the JSONL copy in ``mirror_dir`` up to date. Nothing under ``root`` is
    written or opened for writing."""
    agent_dir = root / "agents" / agent_id
    files_dir = agent_dir / "sessions"
    database = agent_dir / AGENT_DB
    parsed = parse_version(version)
    newer = parsed is not None and parsed[:2] > KNOWN_UP_TO
    if database.is_file():
        count, problem, notes = mirror(database, mirror_dir)
        if problem is None and count >= 0:
            return Layout(agent_id, "sqlite", mirror_dir, database, version, sessions=count, notes=notes)
        if problem is not None:
            if newer:
                problem += f" (OpenClaw {version}, newer than the {KNOWN_UP_TO[0]}.{KNOWN_UP_TO[1]} layouts known)"
            return Layout(agent_id, "none", mirror_dir, database, version,
                          problem=f"{problem}; the memory files are served, the transcripts are not: "
                                  "upgrade mnemoclaw (pip install -U mnemoclaw) to read them")
    if files_dir.is_dir():
        return Layout(agent_id, "files", files_dir, None, version,
                      sessions=sum(1 for _ in files_dir.glob("*.jsonl")))
    if parsed is None and version is not None:
        return Layout(agent_id, "none", files_dir, None, version,
                      problem=f"openclaw.json's meta.lastTouchedVersion {version!r} is not a version mnemoclaw can "
                              "read; no transcripts were found where any OpenClaw keeps them")
    return Layout(agent_id, "none", files_dir, None, version)


def agents(root: Path) -> list[str]:
    """The agent ids OpenClaw's ``root`` has a folder for."""
    base = root / "agents"
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
