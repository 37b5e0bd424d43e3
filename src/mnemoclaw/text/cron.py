"""Five-field cron schedules (minute hour day-of-month month day-of-week), as OpenClaw's
``dreaming.frequency`` writes them: ``*``, numbers, ranges ``a-b``, lists ``a,b`` and steps
``*/n`` or ``a-b/n``; Sunday is 0 or 7. ``next_run`` is the first minute after a moment that the
schedule names, in that moment's time zone (local time for a naive one)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from ..errors import ConfigError

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # day of month was "*"
    any_weekday: bool

    def matches(self, t: datetime) -> bool:
        return (t.minute in self.minutes and t.hour in self.hours and t.month in self.months
                and _day_ok(self, t))


def _field(text: str, name: str, lo: int, hi: int, where: str) -> frozenset[int]:
    out: set[int] = set()
    for part in text.split(","):
        body, _, step_s = part.partition("/")
        try:
            step = int(step_s) if step_s else 1
            if body == "*":
                a, b = lo, hi
            elif "-" in body:
                a_s, b_s = body.split("-", 1)
                a, b = int(a_s), int(b_s)
            else:
                a = b = int(body)
                if step_s:
                    b = hi
        except ValueError:
            raise ConfigError(f"{where}: {part!r} is not a {name} (numbers, ranges a-b, lists a,b, steps */n)") \
                from None
        if not (lo <= a <= b <= hi) or step < 1:
            raise ConfigError(f"{where}: {part!r} is out of range for the {name} ({lo}-{hi})")
        out.update(range(a, b + 1, step))
    return frozenset(out)


def parse_cron(text: str, where: str = "the schedule") -> Cron:
    parts = text.split()
    if len(parts) != 5:
        raise ConfigError(f"{where} must have five fields (minute hour day-of-month month day-of-week), "
                          f"for example \"0 3 * * *\"; got {text!r}")
    sets = [_field(p, name, lo, hi, where) for p, (name, lo, hi) in zip(parts, _FIELDS, strict=True)]
    weekdays = frozenset(d % 7 for d in sets[4])
    return Cron(sets[0], sets[1], sets[2], sets[3], weekdays, parts[2] == "*", parts[4] == "*")


def next_run(cron: Cron, after: datetime) -> datetime:
    """The first minute strictly after ``after`` that ``cron`` names (within four years)."""
    t = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    end = t + timedelta(days=366 * 4)
    while t < end:
        if t.month not in cron.months:
            t = (t.replace(day=1, hour=0, minute=0) + timedelta(days=32)).replace(day=1)
            continue
        if not _day_ok(cron, t):
            t = t.replace(hour=0, minute=0) + timedelta(days=1)
            continue
        if t.hour not in cron.hours:
            t = t.replace(minute=0) + timedelta(hours=1)
            continue
        if t.minute not in cron.minutes:
            t += timedelta(minutes=1)
            continue
        return t
    raise ConfigError("the schedule names no minute in the next four years")


def _day_ok(cron: Cron, t: datetime) -> bool:
    """Cron's rule: when one of day of month and day of week is restricted, it alone decides;
    when both are, either will do."""
    day_ok, week_ok = t.day in cron.days, (t.isoweekday() % 7) in cron.weekdays
    if cron.any_day or cron.any_weekday:
        return day_ok and week_ok
    return day_ok or week_ok


__all__ = ["Cron", "next_run", "parse_cron"]
