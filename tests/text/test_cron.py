"""Five-field cron schedules: parsing, and the next minute one names."""

from __future__ import annotations

from datetime import datetime

import pytest

from mnemoclaw.errors import ConfigError
from mnemoclaw.text.cron import next_run, parse_cron


@pytest.mark.parametrize("schedule, after, expected", [
    ("0 3 * * *", "2026-12-07 02:59", "2026-12-07 03:00"),
    ("0 3 * * *", "2026-12-07 03:00", "2026-12-08 03:00"),
    ("*/15 * * * *", "2026-12-07 03:07", "2026-12-07 03:15"),
    ("30 9 * * 1-5", "2026-12-05 10:00", "2026-12-07 09:30"),  # Saturday -> Monday
    ("0 0 1 * *", "2026-12-07 00:00", "2027-01-01 00:00"),
    ("0 0 29 2 *", "2026-03-01 00:00", "2028-02-29 00:00"),
    ("0 12 1 * 0", "2026-12-02 00:00", "2026-12-06 12:00"),  # day of month or Sunday, whichever first
    ("0 12 * * 7", "2026-12-02 00:00", "2026-12-06 12:00"),  # 7 is Sunday too
    ("5,35 1-2 * * *", "2026-12-07 01:06", "2026-12-07 01:35"),
])
def test_the_next_run(schedule, after, expected):
    assert next_run(parse_cron(schedule), datetime.fromisoformat(after)) == datetime.fromisoformat(expected)


@pytest.mark.parametrize("schedule, said", [
    ("0 3 * *", "five fields"),
    ("61 3 * * *", "out of range for the minute"),
    ("0 3 * * mon", "is not a day of week"),
    ("*/0 * * * *", "out of range"),
])
def test_a_bad_schedule_names_the_field(schedule, said):
    with pytest.raises(ConfigError, match=said):
        parse_cron(schedule, "memory.dreaming.frequency")
