"""Deciding what a sync must do. Pure: disk listing and index records in, plan out."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..types import FileRecord, SourceFile


@dataclass
class SyncPlan:
    new: list[SourceFile] = field(default_factory=list)
    # stat differs from the index: read and hash; re-chunk only if the hash differs too
    suspect: list[SourceFile] = field(default_factory=list)
    unchanged: list[SourceFile] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def is_noop(self) -> bool:
        return not (self.new or self.suspect or self.removed)


def plan_sync(disk: list[SourceFile], indexed: dict[str, FileRecord], full: bool = False) -> SyncPlan:
    plan = SyncPlan()
    on_disk = set()
    for f in disk:
        on_disk.add(f.path)
        rec = indexed.get(f.path)
        if rec is None or full:
            plan.new.append(f)
        elif rec.mtime_ns != f.mtime_ns or rec.size != f.size or rec.source != f.source:
            plan.suspect.append(f)
        else:
            plan.unchanged.append(f)
    if not full:
        plan.removed = sorted(p for p in indexed if p not in on_disk)
    return plan
