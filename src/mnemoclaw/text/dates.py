"""Calendar dates named in queries and carried by notes. Pure.

A query such as "what did Gina find for her store on 1 February, 2023?" or
"2023年5月的计划" names a day, a month or a year. A note carries a date in its
file name (daily logs: ``memory/2023-02-01.md``) or in a header line near its top
(``Date: 1:56 pm on 8 May, 2023``, front matter ``date: 2023-05-08``,
``日期：2023年5月8日``). Search ranks the notes whose date falls in the named
period higher (search/searcher.py).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

_MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_MONTH = (r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
          r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(\d{4})"


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(name.lower().rstrip(".")[:3]))


# (pattern, how to read (year, month, day) from the match); earlier patterns win
# where matches overlap, so "8 May, 2023" is one day, not also a month.
_PATTERNS = [
    (re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)"), lambda m: (m[1], m[2], m[3])),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), lambda m: (m[1], m[2], m[3])),
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I), lambda m: (m[3], _month(m[2]), m[1])),
    (re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I), lambda m: (m[3], _month(m[1]), m[2])),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?!\s*\d)"), lambda m: (m[1], m[2], None)),
    (re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I), lambda m: (m[2], _month(m[1]), None)),
    (re.compile(r"(\d{4})-(\d{1,2})(?![\d-])"), lambda m: (m[1], m[2], None)),
    (re.compile(r"\b(?:in|of|during|since|until|throughout)\s+(\d{4})\b", re.I), lambda m: (m[1], None, None)),
    (re.compile(r"(\d{4})\s*年(?!\s*\d)"), lambda m: (m[1], None, None)),
]

# a note's date is read from its first lines only
_HEAD_LINES = 8
_DATE_LINE = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?(?:date|dated|日期)(?:\*\*)?\s*[:：]", re.I)
_FILE_DATE = re.compile(r"(?:^|/)(\d{4})-(\d{2})-(\d{2})(?:[-_.][^/]*)?\.md$")


@dataclass(frozen=True, slots=True)
class DateRef:
    """A period a query names: a year, a month of a year, or a day."""

    year: int
    month: int | None = None
    day: int | None = None

    def level(self, date: datetime.date | None) -> int:
        """0 when ``date`` is outside this period, else how precisely it matches: 1 year, 2 month, 3 day."""
        if date is None or date.year != self.year:
            return 0
        if self.month is None:
            return 1
        if date.month != self.month:
            return 0
        if self.day is None:
            return 2
        return 3 if date.day == self.day else 0


def _valid(year: str, month: str | int | None, day: str | None) -> DateRef | None:
    y, mo, d = int(year), None if month is None else int(month), None if day is None else int(day)
    if not 1900 <= y <= 2200:
        return None
    try:
        datetime.date(y, mo or 1, d or 1)
    except ValueError:
        return None
    return DateRef(y, mo, d)


def query_dates(text: str) -> tuple[DateRef, ...]:
    """The days, months and years ``text`` names, most precise reading of each span."""
    found: list[DateRef] = []
    taken: list[tuple[int, int]] = []
    for pattern, read in _PATTERNS:
        for m in pattern.finditer(text):
            start, end = m.span()
            if any(a < end and start < b for a, b in taken):
                continue
            ref = _valid(*read(m))
            if ref is not None:
                taken.append((start, end))
                found.append(ref)
    return tuple(dict.fromkeys(found))


def _as_date(ref: DateRef | None) -> datetime.date | None:
    if ref is None or ref.month is None or ref.day is None:
        return None
    return datetime.date(ref.year, ref.month, ref.day)


def note_date(path: str, head: str | None = None) -> datetime.date | None:
    """The day a note is about: its file name's date, else a ``Date:`` line among its first lines."""
    m = _FILE_DATE.search(path.replace("\\", "/"))
    if m:
        date = _as_date(_valid(*m.groups()))
        if date is not None:
            return date
    if head:
        for line in head.splitlines()[:_HEAD_LINES]:
            if _DATE_LINE.match(line):
                refs = query_dates(line)
                if refs:
                    return _as_date(refs[0])
    return None
