"""Deciding what a sync must do. Pure: disk listing and index records in, plan out.

Where several hosts write one namespace (Postgres), each file's record names the hosts that
have had it (``FileRecord.hosts``, "host:workspace"). A file missing here is removed only if
this host has had it (it was deleted here); a file only other hosts have had is theirs, and is
kept. So two workspaces in one namespace no longer delete each other's notes, and one
workspace synced between two hosts still sees a deletion on either reach the index.

Each host's copy of a file has its own mtime (file sync does not keep it), so a file is
compared with the stat this host recorded for it (``FileRecord.seen``), not with the stat of
whichever host wrote the row last: compared with that, every file looked changed to one host
after each sync of the other, for ever.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..types import FileRecord, SourceFile

FIX = ("if it has a different workspace, give each its own memorySearch.store.namespace and list the "
       "other in store.shared")
SHOWN_PATHS = 3  # paths a note names before "and N more"


@dataclass
class SyncPlan:
    new: list[SourceFile] = field(default_factory=list)
    # stat differs from the index: read and hash; re-chunk only if the hash differs too
    suspect: list[SourceFile] = field(default_factory=list)
    unchanged: list[SourceFile] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # not here, but only other hosts have had them
    claimed: list[str] = field(default_factory=list)  # unchanged files whose record does not name this host yet


def had_it(rec: FileRecord, origin: str) -> bool:
    """Whether ``origin`` ("host:workspace") has had this file: its record names it, or only its
    host (a row from before workspaces were recorded), or nobody (a store that records no hosts,
    a row from before hosts were recorded)."""
    return not rec.hosts or origin in rec.hosts or origin.partition(":")[0] in rec.hosts


def indexed_elsewhere(rec: FileRecord, origin: str) -> str | None:
    """The other host whose copy of the file the index holds, or None (this one's, or unknown)."""
    if not rec.hosts or rec.hosts[0] in (origin, origin.partition(":")[0]):
        return None
    return rec.hosts[0]


def stat_here(rec: FileRecord, origin: str | None) -> tuple[int, int]:
    """(mtime_ns, size) of the file as this host last saw it with the content indexed: its own
    entry in ``rec.seen``, else (a store that records none, a host that has not seen this content
    yet) the row's, which is its writer's: a copy whose stat differs is read and hashed, once."""
    if origin is not None:
        for who, mtime_ns, size in rec.seen:
            if who == origin:
                return mtime_ns, size
    return rec.mtime_ns, rec.size


def plan_sync(disk: list[SourceFile], indexed: dict[str, FileRecord], full: bool = False,
              origin: str | None = None) -> SyncPlan:
    """``origin``: this host and workspace, for a store that records hosts (None: every file
    missing here is removed, as on a store one host writes)."""
    plan = SyncPlan()
    on_disk = set()
    for f in disk:
        on_disk.add(f.path)
        rec = indexed.get(f.path)
        if rec is None or full:
            plan.new.append(f)
        elif stat_here(rec, origin) != (f.mtime_ns, f.size) or rec.source != f.source:
            plan.suspect.append(f)
        else:
            plan.unchanged.append(f)
            # a row naming this host alone (migrated) already counts as this host's: no write
            # for every file of a namespace after the upgrade
            if origin is not None and origin not in rec.hosts and origin.partition(":")[0] not in rec.hosts:
                plan.claimed.append(f.path)
    if not full:
        for p in sorted(p for p in indexed if p not in on_disk):
            (plan.removed if origin is None or had_it(indexed[p], origin) else plan.kept).append(p)
    return plan


def shown_host(identity: str) -> str:
    """ "host:workspace" as messages name it: host (workspace)."""
    host, _, workspace = identity.partition(":")
    return f"{host} ({workspace})" if workspace else host


def _paths(paths: list[str]) -> str:
    more = len(paths) - SHOWN_PATHS
    return ", ".join(paths[:SHOWN_PATHS]) + (f" and {more} more" if more > 0 else "")


def _by_host(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for path, identity in pairs:
        out[identity].append(path)
    return out


def host_notes(kept: list[tuple[str, str]], replaced: list[tuple[str, str]],
               dropped: list[tuple[str, str]]) -> list[str]:
    """One line for each other host a sync met: what was kept, replaced or dropped, and why."""
    notes = []
    for identity, paths in _by_host(kept).items():
        host = identity.partition(":")[0]
        notes.append(f"kept {len(paths)} file(s) this workspace does not have, indexed on host {shown_host(identity)}: "
                     f"{_paths(paths)} ({host} may have a different workspace in this namespace, or one this "
                     f"host's file sync has not brought yet; {FIX})")
    for identity, paths in _by_host(replaced).items():
        notes.append(f"re-indexed {len(paths)} file(s) that host {shown_host(identity)} had indexed with other "
                     f"content: {_paths(paths)} (until file sync makes them equal, or for good if it has a "
                     f"different workspace: each host's sync replaces the other's copy; {FIX})")
    for identity, paths in _by_host(dropped).items():
        notes.append(f"the rebuild left out {len(paths)} file(s) this workspace does not have, indexed on host "
                     f"{shown_host(identity)}: {_paths(paths)}; they come back with that host's next sync")
    return notes
