import os
import sys

import pytest

from mnemoclaw.api import SNIPPET_MAX_CHARS, make_snippet
from mnemoclaw.errors import PathDeniedError
from mnemoclaw.search.snippets import choose, choose_all
from mnemoclaw.text.tokenize import keyword_query

from conftest import read_back, write


@pytest.fixture
def mem(workspace, make_memory):
    write(workspace / "MEMORY.md", "# Memory\n\n- Alex prefers PostgreSQL.\n- Deploy key rotation: every 90 days (PR-4821).\n")
    write(workspace / "memory" / "2026-11-26.md", "# 2026-11-26\n\n- 服务器迁移到杭州机房，旧服务器下线。\n")
    write(workspace / "memory" / "2026-11-27.md", "# 2026-11-27\n\n" + "\n".join(f"- filler line {i} about gardening" for i in range(200)))
    m = make_memory(workspace)
    m.sync()
    return m


def test_memory_search_shape(mem):
    out = mem.tools.memory_search("PR-4821")
    assert set(out) == {"results", "provider", "model", "fallback", "mode"}
    assert out["provider"] == "test-hash" and out["mode"] == "hybrid" and out["fallback"] is False
    top = out["results"][0]
    assert set(top) == {"path", "startLine", "endLine", "score", "snippet", "snippetLines", "source", "citation",
                        "origin"}
    assert top["origin"] == "owner"  # a file nobody marked is the owner's
    assert top["path"] == "MEMORY.md" and top["source"] == "memory"
    assert top["citation"] == f"MEMORY.md#L{top['startLine']}-L{top['endLine']}"
    assert top["snippet"].endswith(f"\n\nSource: {top['citation']}")
    assert 0 <= top["score"] <= 1


def test_chinese_short_queries_find_chinese_notes(mem):
    for q in ("服务器", "机房", "杭"):
        assert mem.tools.memory_search(q)["results"][0]["path"] == "memory/2026-11-26.md", q


def test_keyword_only_mode_works_without_a_provider(workspace, make_memory, mem):
    kw = make_memory(workspace, provider=None)
    kw.sync()
    out = kw.tools.memory_search("PostgreSQL")
    assert out["mode"] == "keyword" and out["provider"] == "none"
    assert out["results"][0]["path"] == "MEMORY.md"


def test_citations_off_and_on(workspace, make_memory, mem):
    off = make_memory(workspace, config={"memory": {"citations": "off"}})
    r = off.tools.memory_search("PostgreSQL")["results"][0]
    assert "citation" not in r and "Source:" not in r["snippet"]


def test_snippets_are_at_most_700_characters(mem):
    for r in mem.tools.memory_search("gardening filler", max_results=10)["results"]:
        body = r["snippet"].split("\n\nSource: ")[0]
        assert len(body) <= SNIPPET_MAX_CHARS


def test_snippet_centres_on_the_match():
    text = "x" * 2000 + " needle " + "y" * 2000
    snip = make_snippet(text, "needle")
    assert "needle" in snip and len(snip) <= SNIPPET_MAX_CHARS


def test_a_snippet_holds_the_answer_after_the_question_that_matched():
    """In a dialogue the words of a question match, its answer is the next line: a snippet
    keeps both, whole, with their file line numbers, wherever they stand in the chunk."""
    lines = [f"- filler line {i} about the weather and nothing else in particular" for i in range(30)]
    lines[17] = "- Caroline: Where did you go for your birthday last year?"
    lines[18] = "- Melanie: We drove up to the lake cabin in Tahoe."
    terms = dict.fromkeys(keyword_query("where did she go for her birthday").terms, 1.0)
    snip = choose("\n".join(lines), 40, terms, SNIPPET_MAX_CHARS)
    assert lines[17] in snip.text and lines[18] in snip.text and len(snip.text) <= SNIPPET_MAX_CHARS
    assert any(a <= 57 and 58 <= b for a, b in snip.ranges), snip.ranges  # lines 17-18 of a chunk at line 40
    assert snip.ranges[0][0] >= 40 and snip.ranges[-1][1] <= 69


def test_overlapping_results_show_different_lines():
    text = "\n".join(f"- line {i} " + ("kettle " if i in (3, 20) else "") + "x" * 60 for i in range(40))
    terms = dict.fromkeys(keyword_query("kettle").terms, 1.0)
    first, second = choose_all([("a.md", text, 1, terms, None), ("a.md", text, 1, terms, None)], 200)
    shown = {n for a, b in first.ranges for n in range(a, b + 1)}
    assert not shown & {n for a, b in second.ranges for n in range(a, b + 1)}
    assert "line 3 kettle" in first.text + second.text and "line 20 kettle" in first.text + second.text


def test_snippet_lines_name_what_the_snippet_shows(mem):
    for r in mem.tools.memory_search("gardening filler", max_results=10)["results"]:
        lines = read_back(mem, r["path"])["text"].split("\n")
        body = r["snippet"].split("\n\nSource: ")[0]
        for a, b in r["snippetLines"]:
            assert r["startLine"] <= a <= b <= r["endLine"]
            assert "\n".join(lines[a - 1 : b]) in body


def test_max_results_and_min_score(mem):
    assert len(mem.tools.memory_search("filler gardening", max_results=2)["results"]) <= 2
    assert mem.tools.memory_search("filler gardening", min_score=1.0)["results"] == []


@pytest.mark.parametrize("query", ['"', "AND", "OR NOT", "NEAR(a b)", "*", "^", "???", "'''", "(", "title:x"])
def test_queries_of_syntax_or_punctuation_never_fail(mem, query):
    out = mem.tools.memory_search(query)
    assert "disabled" not in out and isinstance(out["results"], list)


def test_memory_get_whole_file_and_ranges(mem):
    assert read_back(mem, "MEMORY.md")["text"].startswith("# Memory\n")
    assert read_back(mem, "MEMORY.md", from_line=3, lines=1) == {"path": "MEMORY.md", "text": "- Alex prefers PostgreSQL."}
    assert read_back(mem, "MEMORY.md", from_line=999)["text"] == ""
    assert read_back(mem, "memory/2099-01-01.md") == {"path": "memory/2099-01-01.md", "text": ""}
    assert mem.tools.memory_get("MEMORY.md", from_line=3, lines=1)["text"] == "- Alex prefers PostgreSQL."


def test_a_citation_as_search_gives_it_reads_those_lines(mem):
    hit = mem.tools.memory_search("Alex prefers PostgreSQL")["results"][0]
    got = mem.tools.memory_get(hit["citation"])
    assert got["path"] == hit["path"] and got["text"] == read_back(mem, hit["path"], hit["startLine"],
                                                                  hit["endLine"] - hit["startLine"] + 1)["text"]
    assert read_back(mem, "MEMORY.md#L3") == {"path": "MEMORY.md", "text": "- Alex prefers PostgreSQL."}
    assert read_back(mem, "MEMORY.md#L1-L3", lines=1)["text"] == "# Memory"  # what is given explicitly wins


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_an_empty_query_asks_for_one_rather_than_saying_memory_has_nothing(mem, query):
    out = mem.tools.memory_search(query)
    assert out["results"] == [] and out["error"] == "the query is empty" and "words" in out["action"]
    assert "disabled" not in out and "memory has nothing" not in str(out)


@pytest.mark.parametrize("path,why", [
    ("../x.md", "climbs out of the workspace"),
    ("memory/../../x.md", "climbs out of the workspace"),
    ("/etc/passwd", "not a Markdown file"),
    ("/tmp/elsewhere.md", "outside the workspace"),
    ("AGENTS.md", "not a memory file"),
    ("memory/notes.txt", "not a Markdown file"),
    ("", "needs a path"),
    ("memory/node_modules/x.md", "ignored directory"),
])
def test_memory_get_denials_say_why(mem, path, why):
    with pytest.raises(PathDeniedError, match=why):
        read_back(mem, path)
    out = mem.tools.memory_get(path)
    assert out["text"] == "" and why in out["error"]


def test_memory_get_refuses_symlinks(mem, workspace, tmp_path):
    secret = write(tmp_path / "secret.md", "top secret")
    os.symlink(secret, workspace / "memory" / "link.md")
    os.symlink(tmp_path, workspace / "memory" / "linkdir")
    for p in ("memory/link.md", "memory/linkdir/secret.md"):
        with pytest.raises(PathDeniedError, match="symbolic link"):
            read_back(mem, p)


def test_memory_get_reads_extra_paths(workspace, make_memory, tmp_path):
    notes = write(tmp_path / "notes" / "ideas.md", "an idea")
    write(tmp_path / "notes" / "private.txt", "not markdown")
    m = make_memory(workspace, overrides={"extraPaths": [str(tmp_path / "notes")]})
    assert read_back(m, str(notes))["text"] == "an idea"
    with pytest.raises(PathDeniedError):
        read_back(m, str(tmp_path / "notes" / "private.txt"))


def test_a_note_written_before_a_search_is_found(mem, workspace):
    write(workspace / "memory" / "2026-11-28.md", "- the espresso machine is descaled on Mondays")
    assert mem.tools.memory_search("espresso descaled")["results"][0]["path"] == "memory/2026-11-28.md"


def test_status_reports_what_a_user_needs(mem):
    st = mem.status()
    for key in ("workspace", "index", "files", "chunks", "provider", "model", "vectorSearch", "ftsTokenizer",
                "dirty", "fingerprint", "sqlite"):
        assert key in st
    assert st["files"] == 3 and st["dirty"] is False
    assert "CJK" in st["ftsTokenizer"]


def test_memory_get_through_a_linked_workspace_and_extra_path(tmp_path, make_memory):
    real = tmp_path / "real"
    write(real / "memory" / "a.md", "in memory")
    write(real / "notes" / "n.md", "a note")
    os.symlink(real, tmp_path / "link")
    m = make_memory(tmp_path / "link", overrides={"extraPaths": ["notes"]})
    m.sync()
    paths = {r["path"] for r in m.tools.memory_search("note", min_score=0)["results"]}
    assert "notes/n.md" in paths
    assert read_back(m, "notes/n.md")["text"] == "a note"
    assert read_back(m, str(tmp_path / "link" / "memory" / "a.md"))["text"] == "in memory"


def test_memory_get_refuses_a_fifo_without_hanging(mem, workspace):
    os.mkfifo(workspace / "memory" / "pipe.md")
    with pytest.raises(PathDeniedError, match="not a regular file"):
        read_back(mem, "memory/pipe.md")


def test_tools_never_raise_on_bad_arguments(mem):
    assert mem.tools.memory_search("x", max_results="many")["disabled"]
    assert mem.tools.memory_search("x", min_score=float("nan"))["disabled"]
    assert mem.tools.memory_search(None)["disabled"]
    assert "error" in mem.tools.memory_get("MEMORY.md", lines="ten")
    assert "error" in mem.tools.memory_get("\udcff.md")


def test_an_index_damaged_inside_is_rebuilt_from_the_markdown(workspace, make_memory):
    for i in range(60):
        write(workspace / "memory" / f"2026-01-{i:02d}.md", f"- note {i} about the kettle " + "text " * 200)
    mem = make_memory(workspace)
    mem.sync()
    path = mem.backend.store.path
    mem.backend.store.checkpoint()
    mem.backend.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    mem.close()
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:  # keep the header, wreck the pages after it
        fh.seek(4096 * 3)
        fh.write(os.urandom(size - 4096 * 3))
    again = make_memory(workspace)
    out = again.tools.memory_search("kettle")
    assert "disabled" not in out, out
    assert out["results"] and out["results"][0]["path"].startswith("memory/2026-01-")
    assert [p for p in os.listdir(os.path.dirname(path)) if ".corrupt-" in p]
    assert again.status()["files"] == 60


@pytest.mark.parametrize("provider", ["hash", None])
def test_a_note_in_either_chinese_script_is_found_by_a_query_in_the_other(workspace, make_memory, provider):
    write(workspace / "memory" / "2026-11-20.md", "# 2026-11-20\n\n- 和王芳討論了資料庫遷移方案，決定下週五切換\n"
          "- 圖書館週末不開\n")
    write(workspace / "memory" / "2026-11-21.md", "# 2026-11-21\n\n- 软件更新推迟到月底\n- 内存不足的报警要处理\n")
    write(workspace / "memory" / "2026-11-22.md", "# 2026-11-22\n\n- 午饭吃了面条\n- 天气很好，去公园散步\n")
    kw = make_memory(workspace, **({} if provider else {"provider": None}))
    kw.sync()
    for query, path, line in (("数据库迁移", "memory/2026-11-20.md", "資料庫遷移"), ("图书馆", "memory/2026-11-20.md", "圖書館"),
                              ("軟體更新", "memory/2026-11-21.md", "软件更新"), ("記憶體不足", "memory/2026-11-21.md", "内存不足")):
        out = kw.tools.memory_search(query, mode="keyword")
        top = out["results"][0]
        assert top["path"] == path, (query, out["results"])
        assert line in top["snippet"]  # the note as written, its matching line shown


def test_traditional_chinese_is_embedded_as_simplified_and_old_vectors_of_it_are_not_reused(workspace, make_memory,
                                                                                          embedder):
    import numpy as np

    from mnemoclaw.index.embedding import vector_key
    from mnemoclaw.store.base import CacheKey
    from mnemoclaw.text.script import fold

    hant = "- 和王芳討論了資料庫遷移方案\n"
    write(workspace / "memory" / "2026-11-20.md", hant)
    write(workspace / "memory" / "2026-11-21.md", "- 午饭吃了面条\n")
    mem = make_memory(workspace)
    mem.sync()
    (chunk,) = mem.backend.store.file_chunks("memory/2026-11-20.md").chunks
    (vec,) = mem.backend.store.file_chunks("memory/2026-11-20.md").vectors
    assert np.allclose(vec, embedder.embed([fold(chunk.text)])[0])  # what is embedded is the Simplified text
    key = CacheKey(embedder.id, embedder.model, embedder.provider_key)
    assert set(mem.backend.store.cache_get(key, [vector_key(chunk.text, chunk.hash)])) == {vector_key(chunk.text, chunk.hash)}
    assert vector_key(chunk.text, chunk.hash) != chunk.hash and vector_key("- 午饭吃了面条", "h") == "h"
    # the Simplified question finds it by meaning as well as by keyword
    top = mem.tools.memory_search("和王芳讨论了数据库迁移方案", mode="vector")["results"][0]
    assert top["path"] == "memory/2026-11-20.md" and top["score"] > 0.5
    # a vector of the text as written (an index of an earlier version) is not taken for it
    mem.backend.store.cache_put(key, {chunk.hash: embedder.embed([chunk.text])[0]})
    mem.sync(full=True)
    (again,) = mem.backend.store.file_chunks("memory/2026-11-20.md").vectors
    assert np.allclose(again, vec)


def test_status_says_when_traditional_and_simplified_chinese_cannot_match(workspace, make_memory, monkeypatch):
    from mnemoclaw.text import script

    mem = make_memory(workspace)
    mem.sync()
    assert "OpenCC could not be loaded" not in mem.status()["ftsTokenizer"]
    monkeypatch.setattr(script, "available", lambda: False)  # a broken install: matched as written
    assert "OpenCC could not be loaded" in mem.status()["ftsTokenizer"]


def test_status_says_when_a_chinese_question_s_names_cannot_be_found(workspace, make_memory, monkeypatch):
    import importlib.util

    from mnemoclaw.text import names

    mem = make_memory(workspace)
    assert "rjieba could not be found" not in mem.status()["ftsTokenizer"]
    monkeypatch.setattr(names, "_tagger", None)
    monkeypatch.setattr(names, "_failed", False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)  # a broken install
    assert "rjieba could not be found" in mem.status()["ftsTokenizer"]
    monkeypatch.setitem(sys.modules, "rjieba", None)  # importing it fails
    assert names.han_names("张伟上周去滨江出差了吗") == ()  # no name found, and no error
    assert isinstance(mem.tools.memory_search("张伟上周去滨江出差了吗")["results"], list)
