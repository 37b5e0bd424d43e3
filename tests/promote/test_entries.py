"""What a recall names (an entry of a daily log) and the guard rails a promoted line passes."""

from __future__ import annotations

import pytest

from mnemoclaw.promote.entries import body, entry_at, entry_id, junk, recallable

LOG = """\
# 2026-11-03

- Decided to move the billing service database to Postgres 16,
  because SQLite locked under load during the invoice run.
  - the migration is owned by Priya
- The staging server is staging-2.internal, reached over the VPN.

A paragraph about the release
that runs over two lines.
"""


def test_an_entry_is_the_list_item_or_paragraph_holding_the_line():
    lines = LOG.split("\n")
    assert entry_at(lines, 0) == (0, 1)  # a heading stands alone
    assert entry_at(lines, 2) == entry_at(lines, 3) == (2, 5)  # an item with its continuation and sub-item
    assert entry_at(lines, 4) == (4, 5)  # the sub-item is an entry of its own too
    assert entry_at(lines, 5) == (5, 6)
    assert entry_at(lines, 7) == entry_at(lines, 8) == (7, 9)
    with pytest.raises(IndexError):
        entry_at(lines, 99)


def test_an_entry_keeps_its_identity_when_it_moves_lines_and_loses_it_when_edited():
    text = "- The staging server is staging-2.internal, reached over the VPN."
    assert entry_id("memory/2026-11-03.md", text) == entry_id("memory/2026-11-03.md", "  " + text + "  ")
    assert entry_id("memory/2026-11-03.md", text) == entry_id("memory/2026-11-03.md", text + " <!-- importance: 7 -->")
    assert entry_id("memory/2026-11-03.md", text) != entry_id("memory/2026-11-04.md", text)
    assert entry_id("memory/2026-11-03.md", text) != entry_id("memory/2026-11-03.md", text.replace("2", "3"))


def test_only_daily_logs_and_transcripts_are_recalled_entries():
    assert recallable("memory/2026-11-03.md", "memory")
    assert recallable("memory/2026-11-03-standup.md", "memory")
    assert recallable("sessions/abc.jsonl", "sessions")
    assert not recallable("MEMORY.md", "memory")
    assert not recallable("memory/projects.md", "memory")
    assert not recallable("memory/imports/chatgpt/2024-01-02.md", "memory")


def test_a_promoted_line_is_the_entry_as_written_without_its_marker_and_comments():
    assert body("- Decided to move billing,\n  because SQLite locked. <!-- key: db -->") == \
        "Decided to move billing, because SQLite locked."
    assert body("- 我们决定每周五下午三点开账单服务的复盘会。") == "我们决定每周五下午三点开账单服务的复盘会。"


@pytest.mark.parametrize("text, why", [
    ("- $ npm install -g foo", "a shell command"),
    ("- `git push origin main`", "a shell command"),
    ("- ls -la /tmp", "a shell command"),
    ("- cd repo && make test", "a shell command"),
    ("```\nprint('hi')\n```", "a code block"),
    ("- Traceback (most recent call last):", "tool output"),
    ("- Exit code: 1", "tool output"),
    ('- {"id": 3, "ok": true}', "tool output"),
    ("- [tool_result] 3 files changed", "tool output"),
    ("- [score=0.93] the user prefers tea", "metadata or a score"),
    ("- relevance: 0.91 recalls: 4", "metadata or a score"),
    ("## Decisions", "a bare heading"),
    ("- hi there!", "small talk"),
    ("- 谢谢你！", "small talk"),
    ("- Thanks, that helps a lot!", "small talk"),
    ("- api_key = sk-abcdef1234567890abcdef1234567890", "a secret"),
    ("- The wifi password is hunter2-secret-99", "a secret"),
    ("- 好的", "too short to stand alone"),
    ("- see above", "too short to stand alone"),
    ("- hmm, how do I know if the attorney is a good fit during the initial consultation?",
     "a question, not something known"),
    ("- 我下周要不要去杭州见客户？", "a question, not something known"),
    ("- **Caroline** (D1:3): Ok cool, what did you do this weekend?", "a question, not something known"),
])
def test_junk_never_passes(text, why):
    assert junk(text) == why


@pytest.mark.parametrize("text", [
    "- Decided to move the billing service database to Postgres 16, because SQLite locked under load.",
    "- run `make test` before pushing, the suite takes five minutes",
    "- Meeting with Bob on Friday about the Q3 roadmap",
    "- 我们决定每周五下午三点开账单服务的复盘会。",
    "- Caroline adopted a dog named Max in May.",
    "- I moved to Berlin in May. Should I register my address there?",  # a fact beside the question
    "- I'm 46 and earn about $85,000 a year, can you help me plan a legally valid will?",  # a fact it asks about
])
def test_what_a_person_would_keep_passes(text):
    assert junk(text) is None


CODE_LOG = """\
## User

I set up the login route for my budget tracker like this:
```python
@app.route("/login", methods=["POST"])
def login():

    return issue_token(request.json["user"])
```
It returns a token the budget tracker keeps for a day.
"""


def test_a_code_block_is_an_entry_of_its_own_and_ends_the_paragraph_before_it():
    lines = CODE_LOG.split("\n")
    assert entry_at(lines, 2) == (2, 3)  # the prose before the fence, not the code with it
    assert entry_at(lines, 3) == entry_at(lines, 5) == entry_at(lines, 6) == entry_at(lines, 7) == (3, 9)
    assert entry_at(lines, 9) == (9, 10)  # what follows the closing fence
    assert junk("\n".join(lines[3:9])) == "a code block" and junk(lines[2]) is None


def test_a_recall_records_the_prose_a_result_showed_never_its_code(tmp_path):
    from mnemoclaw.promote.record import Found, entries_of

    shown = Found("memory/2026-03-02.md", "memory", ((1, 10),), 0.9)
    got = entries_of("how does my budget tracker login route return a token", [shown],
                     lambda path: CODE_LOG, tmp_path)
    assert [(r.start_line, r.end_line) for r in got] == [(3, 3)]  # the line holding most of the question's words
    # where only the code holds the question's words, the prose shown beside it is recorded, never the code
    got = entries_of("issue_token request json", [shown], lambda path: CODE_LOG, tmp_path)
    assert got and all(not 4 <= r.start_line <= 9 for r in got)
