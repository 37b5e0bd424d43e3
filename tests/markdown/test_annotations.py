"""Annotations in the Markdown: parsed at indexing, honoured by search, written by memory_append."""

import pytest

from mnemoclaw.markdown.annotations import annotate, parse_value, render
from mnemoclaw.markdown.chunker import chunk_markdown, chunk_spans

from conftest import write


@pytest.fixture(params=["sqlite", "postgres"])
def store(request):
    """Each search test on both stores: what the annotations do may not depend on where the index is."""
    if request.param == "sqlite":
        return {}
    from conftest import postgres_url

    return {"store": {"driver": "postgres", "url": postgres_url(fresh=True)}}

NOTES = """\
# Preferences <!-- type: preference -->

- editor: helix <!-- importance: 8 -->
- shell: fish
  with the tide prompt
<!-- key: shell -->

A paragraph about tea.
It spans two lines. <!-- importance: 0.3 -->

<!-- type: task; expires: 2027-03-31 -->
- renew the passport

## Nested
- an item <!-- importance: 42 -->
<!-- just a comment -->
"""


def attrs_of(text: str) -> dict[int, dict]:
    spans, _ = annotate(text)
    return {line: s.attrs for s in spans for line in range(s.start, s.end + 1)}


def test_an_annotation_holds_for_its_item_paragraph_or_section():
    at = attrs_of(NOTES)
    assert at[1] == at[2] == at[16] == {"type": "preference"}  # the heading's section, sub-sections too
    assert at[3] == {"type": "preference", "importance": 8}  # the item it ends
    assert at[4] == at[5] == at[6] == {"type": "preference", "key": "shell"}  # a comment line under the item
    assert at[8] == at[9] == {"type": "preference", "importance": 3}  # 0-1 scale: 0.3 -> 3
    assert at[11] == at[12] == {"type": "task", "expires": "2027-03-31"}  # after a blank line: the next entry


def test_a_bad_value_is_reported_with_its_line_and_ignored():
    spans, problems = annotate(NOTES)
    assert [(p.line, p.message) for p in problems] == [
        (15, "importance 42 is not a whole number from 1 to 10 (or 0.0-1.0); the annotation is ignored")]
    _, problems = annotate("- a trip <!-- expires: 2027-02-30 -->\n")
    assert problems[0].line == 1 and "is not a date (YYYY-MM-DD)" in problems[0].message
    assert parse_value("type", "Work Item") == ("work-item", None)


def test_a_file_without_annotations_chunks_exactly_as_before():
    text = "\n".join(f"- line {i} <!-- a plain comment -->" for i in range(300))
    spans, _ = annotate(text)
    assert [c for c, _ in chunk_spans(text, spans, 60, 10)] == chunk_markdown(text, 60, 10)


def test_annotated_entries_are_chunks_of_their_own():
    pieces = chunk_spans(NOTES, annotate(NOTES)[0])
    by_line = {c.start_line: (c.end_line, a) for c, a in pieces}
    assert by_line[3] == (3, {"type": "preference", "importance": 8})
    assert by_line[4] == (6, {"type": "preference", "key": "shell"})
    assert by_line[11] == (12, {"type": "task", "expires": "2027-03-31"})


def test_render_writes_what_parse_reads():
    comment = render({"importance": 8, "type": "fact", "key": "db-host"})
    assert comment == "<!-- importance: 8; type: fact; key: db-host -->"
    assert annotate(f"- x {comment}\n")[0][0].attrs == {"importance": 8, "type": "fact", "key": "db-host"}


def test_search_leaves_out_expired_entries_unless_history_is_asked(workspace, make_memory, store):
    write(workspace / "MEMORY.md", "# Memory\n\n- the office wifi password hint is the cat's name "
          "<!-- expires: 2020-01-31 -->\n\n- the office wifi is on floor three\n")
    mem = make_memory(workspace, overrides=store)
    report = mem.sync()
    assert report.warnings == []
    lines = [(r["startLine"], r.get("expires")) for r in mem.tools.memory_search("office wifi password hint")["results"]]
    assert (3, "2020-01-31") not in lines and lines
    old = mem.tools.memory_search("office wifi password hint", history=True)["results"]
    assert (old[0]["startLine"], old[0]["expires"]) == (3, "2020-01-31")


def test_a_heading_over_an_expired_entry_does_not_bring_it_back(workspace, make_memory, store):
    """A heading that matches gives its place to what it heads, but never to an entry the
    annotations leave out."""
    write(workspace / "MEMORY.md", "# Office wifi\n\n- the hint is the cat's name <!-- expires: 2020-01-31 -->\n\n"
          "- printer on floor three <!-- type: fact -->\n")
    mem = make_memory(workspace, overrides=store)
    mem.sync()
    got = [(h.start_line, h.annotations.get("expires")) for h in mem.search("office wifi", min_score=0.0)]
    assert got and (3, "2020-01-31") not in got, got
    old = [(h.start_line, h.annotations.get("expires")) for h in mem.search("office wifi", min_score=0.0,
                                                                           history=True)]
    assert (3, "2020-01-31") in old


def test_a_newer_entry_with_the_same_key_answers_in_place_of_the_old(workspace, make_memory, store):
    write(workspace / "memory" / "2026-01-05.md", "# 2026-01-05\n\n- the database host is pg1.internal "
          "<!-- key: db-host -->\n- lunch was noodles\n")
    write(workspace / "memory" / "2026-03-01.md", "# 2026-03-01\n\n- moved the database to a new machine, "
          "pg2.internal <!-- key: db-host -->\n")
    mem = make_memory(workspace, overrides=store)
    mem.sync()
    out = mem.tools.memory_search("what is the database host pg1")
    paths = [(r["path"], r["startLine"]) for r in out["results"]]
    assert paths[0] == ("memory/2026-03-01.md", 3), out["results"]
    assert ("memory/2026-01-05.md", 3) not in paths
    assert out["results"][0]["key"] == "db-host"
    # asked for history: the old value comes right after the new one, and says what replaced it
    past = mem.tools.memory_search("what is the database host pg1", history=True)["results"]
    assert [(r["path"], r["startLine"]) for r in past[:2]] == [("memory/2026-03-01.md", 3),
                                                              ("memory/2026-01-05.md", 3)]
    assert past[1]["supersededBy"] == "memory/2026-03-01.md#L3-L3" and "supersededBy" not in past[0]
    # the unkeyed line next to the old value is still found
    assert mem.tools.memory_search("lunch noodles")["results"][0]["path"] == "memory/2026-01-05.md"


def test_type_filters_and_importance_orders_near_duplicates(workspace, make_memory, store):
    write(workspace / "MEMORY.md", "# Memory\n\n- the user drinks green tea in the morning\n\n"
          "- the user drinks green tea in the morning, always <!-- importance: 9; type: preference -->\n\n"
          "- buy green tea on Friday <!-- type: task -->\n")
    mem = make_memory(workspace, overrides=store)
    mem.sync()
    first = mem.tools.memory_search("green tea morning")["results"][0]
    assert (first["startLine"], first["importance"], first["type"]) == (5, 9, "preference")
    tasks = mem.tools.memory_search("green tea", kind="task")["results"]
    assert [(r["startLine"], r["type"]) for r in tasks] == [(7, "task")]
    assert mem.tools.memory_search("green tea", kind="summary")["results"] == []


def test_a_bad_annotation_is_a_warning_and_the_file_is_indexed(workspace, make_memory, store):
    write(workspace / "MEMORY.md", "# Memory\n\n- the build runs on Fridays <!-- importance: 42 -->\n")
    mem = make_memory(workspace, overrides=store)
    report = mem.sync()
    assert not report.failed
    assert report.as_dict()["warnings"] == [{"path": "MEMORY.md", "message": "line 3: importance 42 is not a whole "
                                             "number from 1 to 10 (or 0.0-1.0); the annotation is ignored"}]
    hit = mem.tools.memory_search("build Fridays")["results"][0]
    assert hit["path"] == "MEMORY.md" and "importance" not in hit


def test_memory_append_writes_annotations_search_reads_back(workspace, make_memory, store):
    mem = make_memory(workspace, overrides=store)
    out = mem.tools.memory_append("The staging database moved to pg3.internal", importance=7, kind="fact",
                            key="staging-db")
    assert out["ok"] and out["annotations"] == {"importance": 7, "type": "fact", "key": "staging-db"}
    text = (workspace / out["path"]).read_text()
    assert "<!-- importance: 7; type: fact; key: staging-db; origin: agent -->" in text  # the agent wrote it
    hit = mem.tools.memory_search("staging database")["results"][0]
    assert (hit["importance"], hit["type"], hit["key"]) == (7, "fact", "staging-db")
    bad = mem.tools.memory_append("a note", expires="2027-02-30")
    assert not bad["ok"] and "expires '2027-02-30' is not a date" in bad["error"] and "nothing was written" \
        in bad["error"]
    assert mem.tools.memory_append("a note", importance=11)["ok"] is False


def test_the_flush_tool_takes_annotations_but_no_target(workspace, make_memory, store):
    from mnemoclaw import tools

    mem = make_memory(workspace, overrides=store)
    out = mem.tools.call("memory_append", {"text": "deploys go through the blue cluster", "key": "deploy-target",
                                            "importance": 8}, spec=tools.FLUSH_APPEND)
    assert out["ok"] and out["path"].startswith("memory/")
    assert "<!-- importance: 8; key: deploy-target; origin: agent -->" in (workspace / out["path"]).read_text()
    refused = mem.tools.call("memory_append", {"text": "x", "target": "long_term"}, spec=tools.FLUSH_APPEND)
    assert refused["ok"] is False and "does not take target" in refused["error"]
    found = mem.tools.call("memory_search", {"query": "deploy target", "history": True, "type": "fact"})
    assert found["results"] == [] and "note" in found
    assert mem.tools.call("memory_search", {"query": "deploy", "history": "yes"})["error"] == \
        "history must be true or false, got 'yes'"


def test_a_heading_left_alone_by_annotated_entries_is_never_a_hit(workspace, make_memory, store):
    """Annotated entries become chunks of their own and leave their section's heading alone in a
    chunk: it matches the heading's word, and says nothing."""
    write(workspace / "memory" / "2026-11-30.md",
          "# Project Heron\n\n## Decisions\n\n- Use Postgres 16 for the decisions service <!-- key: heron-db -->\n\n"
          "- Deploy on Fridays only <!-- importance: 8 -->\n")
    mem = make_memory(workspace, overrides=store)
    mem.sync()
    chunks = mem.backend.store.file_chunks("memory/2026-11-30.md").chunks
    assert any(c.text.strip() == "# Project Heron\n\n## Decisions" for c in chunks)  # the case exists
    for query in ("decisions", "project heron decisions", "Heron"):
        out = mem.tools.memory_search(query, min_score=0.0)
        assert out["results"], query
        assert all(r["startLine"] >= 5 for r in out["results"]), (query, out["results"])
    # the file named by the query answers with a chunk that says something
    named = mem.tools.memory_search("2026-11-30.md")["results"]
    assert named[0]["path"] == "memory/2026-11-30.md" and named[0]["startLine"] >= 5


def test_a_title_over_a_long_first_line_answers_with_the_text_it_heads(workspace, make_memory):
    """The title alone is a chunk when the line after it does not fit beside it; a query that
    matches the title gets the text under it."""
    write(workspace / "memory" / "heron.md", "# Project Heron budget\n\n" + "word " * 400 + "\n")
    write(workspace / "memory" / "2026-11-02.md", "- lunch was noodles\n")
    mem = make_memory(workspace)
    mem.sync()
    chunks = mem.backend.store.file_chunks("memory/heron.md").chunks
    assert chunks[0].text == "# Project Heron budget"
    top = mem.tools.memory_search("project heron budget")["results"][0]
    assert (top["path"], top["startLine"]) == ("memory/heron.md", 3), top


USER_MD = """\
# User

<!-- observed: 2026-05-02 | status: superseded -->
- Answer in British English and keep replies under five sentences.

<!-- observed: 2026-09-14 | status: active -->
- Answer in American English; long replies are fine when the user asks for detail.

<!-- observed: 2026-08-01 | status: active -->
- The user's cat is called Biscuit.
"""


def test_user_md_is_memory_and_a_superseded_entry_does_not_answer(workspace, make_memory, store):
    """USER.md at the workspace root, as OpenClaw writes it: each entry observed on a day, active
    or superseded in place."""
    write(workspace / "USER.md", USER_MD)
    mem = make_memory(workspace, overrides=store)
    report = mem.sync()
    assert report.warnings == []
    found = mem.tools.memory_search("which English should answers be in", max_results=10, min_score=0)["results"]
    lines = {r["startLine"]: r for r in found if r["path"] == "USER.md"}
    assert 6 in lines and (lines[6]["observed"], lines[6]["status"]) == ("2026-09-14", "active")
    assert 3 not in lines, found  # superseded: it no longer answers
    old = mem.tools.memory_search("British English five sentences", history=True, min_score=0)["results"]
    assert any(r["path"] == "USER.md" and r["startLine"] == 3 and r["status"] == "superseded" for r in old), old
    assert mem.tools.memory_search("cat Biscuit")["results"][0]["path"] == "USER.md"
    assert mem.tools.memory_get("USER.md")["text"] == USER_MD  # read back as written


def test_user_md_entries_parse_with_the_bar_separator():
    at = attrs_of(USER_MD)
    assert at[3] == at[4] == {"observed": "2026-05-02", "status": "superseded"}
    assert at[7] == {"observed": "2026-09-14", "status": "active"}
    _, problems = annotate("- x <!-- observed: 2026-13-01 | status: active -->\n")
    assert [p.message for p in problems] == ["observed '2026-13-01' is not a date (YYYY-MM-DD); the annotation is ignored"]


PROJECTS_MD = """\
# Coding notes

<!-- project: heron-api; trigger: deploy, release day, 上线 -->
- heron-api deploys with `make ship`; the release branch is cut on Tuesdays.

<!-- project: kestrel-web -->
- kestrel-web deploys with `make ship` too, from the main branch, on Fridays.

- every project deploys only after the test suite is green.

<!-- project: kestrel-web -->
- kestrel-web's deploy waits for the design review on Thursdays before it ships.
"""


def test_trigger_and_project_annotations_parse_as_openclaw_writes_them():
    at = attrs_of(PROJECTS_MD)
    assert at[4] == {"project": "heron-api", "trigger": ["deploy", "release day", "上线"]}
    assert at[7] == {"project": "kestrel-web"} and not at.get(9)
    _, problems = annotate("- x <!-- trigger: , -->\n")
    assert [p.message for p in problems] == ["trigger names no phrase (write <!-- trigger: a, b -->); "
                                             "the annotation is ignored"]
    assert render({"trigger": ["deploy", "上线"], "project": "heron-api"}) == \
        "<!-- trigger: deploy, 上线; project: heron-api -->"
    assert attrs_of("- y " + render({"trigger": ["deploy", "上线"], "project": "heron-api"}) + "\n")[1] == {
        "trigger": ["deploy", "上线"], "project": "heron-api"}


def test_a_project_puts_other_projects_entries_after_its_own_with_scores_in_order(workspace, make_memory, store):
    write(workspace / "MEMORY.md", PROJECTS_MD)
    mem = make_memory(workspace, overrides=store)
    mem.sync()
    plain = mem.tools.memory_search("how does it deploy with make ship", min_score=0)["results"]
    assert {r.get("project") for r in plain} >= {"heron-api", "kestrel-web"}
    for project in ("heron-api", "kestrel-web"):
        got = mem.tools.memory_search("how does it deploy with make ship", min_score=0, project=project)["results"]
        assert {r["startLine"] for r in got} == {r["startLine"] for r in plain}  # reordered, nothing dropped
        named = [r.get("project") for r in got]
        others = [i for i, p in enumerate(named) if p not in (None, project)]
        assert others and all(i > j for i in others for j, p in enumerate(named) if p in (None, project)), named
        scores = [r["score"] for r in got]
        assert scores == sorted(scores, reverse=True), scores
    top = mem.tools.memory_search("how does it deploy with make ship", project="kestrel-web")["results"][0]
    assert top["project"] == "kestrel-web" and top["startLine"] in (6, 11)
    # the trigger phrases are words the entry is found by, and shown with it
    hit = mem.tools.memory_search("上线", min_score=0)["results"][0]
    assert hit["startLine"] == 3 and hit["trigger"] == ["deploy", "release day", "上线"]
    bad = mem.tools.memory_search("deploy", project="x" * 101)
    assert bad["results"] == [] and "project is 101 characters long" in bad["error"]
