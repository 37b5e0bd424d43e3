"""`mnemoclaw ui` in a real browser: headless Chromium (Debian's package) driven by Playwright.

Skipped, with the reason, where Chromium or Playwright is not installed; `.ci/run` installs
both. Screenshots of every page go to ``MNEMOCLAW_UI_SHOTS`` when set (docs/ui.md's come from
there), else to the test's temporary directory.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import write

CHROMIUM = next((p for p in (os.environ.get("MNEMOCLAW_CHROMIUM"), shutil.which("chromium"),
                             shutil.which("chromium-browser")) if p), None)
if CHROMIUM is None and os.environ.get("CI"):
    pytest.fail("CI must run the browser tests, and no Chromium is installed (.ci/run installs it)", pytrace=False)
if CHROMIUM is None:
    pytest.skip("no Chromium installed (apt-get install chromium; .ci/run does)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")

from test_ui import Server  # noqa: E402

from mnemoclaw.tools.services import Caller  # noqa: E402
from mnemoclaw.ui.app import create_app  # noqa: E402


@pytest.fixture
def mem(workspace, make_memory):
    write(workspace / "MEMORY.md", "# Memory\n\n## Preferences\n- Alex prefers PostgreSQL for anything with more "
          "than one writer.\n- 用户喜欢喝乌龙茶，不加糖。\n")
    write(workspace / "memory" / "2026-11-30.md", "# 2026-11-30\n\n- Migrated the staging database to Hangzhou.\n"
          "- 服务器迁移到杭州机房，旧服务器下线。\n- Risk: the island bridge is closed.\n- A note with <script>alert('x')</script> and "
          "<img src=x onerror=alert(1)> in it.\n- 和王芳討論了資料庫遷移方案，下週五切換。\n")
    m = make_memory(workspace)
    m.sync()
    return m


@pytest.fixture
def browser_page(mem, tmp_path):
    shots = Path(os.environ.get("MNEMOCLAW_UI_SHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with Server(create_app(mem)) as server, sync_api.sync_playwright() as pw:
        server.mem = mem
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        try:
            yield server, page, shots, dialogs
        finally:
            browser.close()


def server_mem(server):
    return server.mem


def test_search_follow_append_edit_and_conflict_in_a_browser(browser_page, workspace):
    server, page, shots, dialogs = browser_page
    # search, in Chinese: the query's words are marked in the snippet
    page.goto(server.base + "/search")
    page.fill("input[name=q]", "杭州机房")
    page.press("input[name=q]", "Enter")
    page.wait_for_selector(".result")
    assert "memory/2026-11-30.md#L" in page.inner_text(".result .cite")
    assert page.inner_text(".result mark") == "杭州机房"
    page.screenshot(path=str(shots / "search-zh.png"), full_page=True)
    # whole words only: "is" marks the word, never the letters inside "Risk" or "island"
    page.goto(server.base + "/search?q=is+risk&mode=keyword")
    page.wait_for_selector(".result mark")
    marks = page.eval_on_selector_all(".result .snippet mark", "ms => ms.map(m => m.textContent)")
    assert sorted(set(marks)) == ["Risk", "is"], marks
    page.screenshot(path=str(shots / "search-marks.png"), full_page=True)
    # a Simplified query marks the Traditional words of the note, as the note writes them
    page.goto(server.base + "/search?q=数据库迁移&mode=keyword")
    page.wait_for_selector(".result mark")
    marks = page.eval_on_selector_all(".result .snippet mark", "ms => ms.map(m => m.textContent)")
    assert "資料庫遷移" in marks, marks
    page.screenshot(path=str(shots / "search-cross-script.png"), full_page=True)
    # and in English, keyword mode, from the URL
    page.goto(server.base + "/search?q=PostgreSQL+writer&mode=keyword")
    assert page.locator(".result").count() >= 1 and "MEMORY.md#L" in page.inner_text(".result .cite")
    assert "postgresql" in page.inner_text(".result .why")
    page.screenshot(path=str(shots / "search.png"), full_page=True)
    # what else was found, under the floor, comes after the answer marked as a weak match (the
    # daily log's bridge line under MEMORY.md's PostgreSQL line; a note holding none of the words and
    # meaning less than sentences about nothing is off the question, not shown at all)
    page.goto(server.base + "/search?q=Hangzhou+staging&mode=hybrid")
    page.wait_for_selector(".result")
    assert page.locator(".result").count() == 1
    page.goto(server.base + "/search?q=bridge+PostgreSQL+anything&mode=hybrid")
    page.wait_for_selector(".result")
    results = page.locator(".result")
    assert results.count() == 2 and results.nth(0).locator(".weak").count() == 0
    assert results.nth(1).locator(".weak").inner_text() == "weak match"
    page.screenshot(path=str(shots / "search-weak.png"), full_page=True)
    page.goto(server.base + "/search?q=PostgreSQL+writer&mode=keyword")
    # a result opens its file at those lines, highlighted
    page.click(".result .cite")
    page.wait_for_selector("tr.hl")
    first, last = page.url.split("#L")[1].split("-L")
    assert page.locator("tr.hl").count() == int(last) - int(first) + 1
    page.screenshot(path=str(shots / "file.png"), full_page=True)
    # a note holding HTML renders inert, in both views
    page.goto(server.base + "/file/memory/2026-11-30.md")
    page.click("[data-tab=rendered]")
    assert page.is_visible("#rendered") and "<script>alert" in page.inner_text("#rendered")
    assert page.evaluate("document.querySelectorAll('main script, main img').length") == 0
    assert dialogs == []
    # append a note, then find it by search
    page.goto(server.base + "/files")
    page.fill("textarea[name=text]", "The harbour walrus sings at dawn.")
    page.click("form.append button")
    page.wait_for_selector(".saved")
    assert "harbour walrus" in page.inner_text("tr.hl")
    page.screenshot(path=str(shots / "appended.png"), full_page=True)
    page.goto(server.base + "/files")
    assert page.locator(".timeline .day").count() == 2  # today's log and 2026-11-30
    page.screenshot(path=str(shots / "files.png"), full_page=True)
    page.goto(server.base + "/search?q=walrus+dawn")
    assert page.locator(".result").count() >= 1 and "walrus" in page.inner_text(".result .snippet")
    # a question in the present marks the note's past tense: "won" for "win", never inside "wonder"
    server_mem(server).tools.memory_append("Maya won the regional chess tournament, a wonder.")
    server_mem(server).sync()
    page.goto(server.base + "/search?q=did+Maya+win+at+chess&mode=keyword")
    page.wait_for_selector(".result mark")
    marks = page.eval_on_selector_all(".result .snippet mark", "ms => ms.map(m => m.textContent)")
    assert {"Maya", "won", "chess"} <= set(marks) and marks.count("won") == 1, marks  # not the "won" of "wonder"
    page.screenshot(path=str(shots / "search-forms.png"), full_page=True)
    # edit MEMORY.md in the page
    page.goto(server.base + "/file/MEMORY.md")
    page.click("text=Edit")
    text = page.input_value("textarea[name=text]")
    page.fill("textarea[name=text]", text.replace("PostgreSQL", "CockroachDB"))
    page.screenshot(path=str(shots / "edit.png"), full_page=True)
    page.click("form.edit button")
    page.wait_for_selector(".saved")
    assert "CockroachDB" in (workspace / "MEMORY.md").read_text("utf-8")
    # opened, changed on disk meanwhile, saved: refused, both versions shown, nothing lost
    page.goto(server.base + "/edit/MEMORY.md")
    (workspace / "MEMORY.md").write_text((workspace / "MEMORY.md").read_text("utf-8") + "- added meanwhile\n",
                                         encoding="utf-8")
    page.fill("textarea[name=text]", "# Memory\n\n- mine\n")
    page.click("form.edit button")
    page.wait_for_selector(".conflict")
    assert "added meanwhile" in page.inner_text("pre.disk")
    assert page.input_value("textarea[name=text]").strip() == "# Memory\n\n- mine"
    assert (workspace / "MEMORY.md").read_text("utf-8").endswith("- added meanwhile\n")
    page.screenshot(path=str(shots / "conflict.png"), full_page=True)
    # a chat session: the next request against the window, the bootstrap files against their caps
    from mnemoclaw.runtime.transcript import SessionStore

    write(workspace / "AGENTS.md", "# Agents\n\n" + "Follow the memory protocol. " * 1000)
    store = SessionStore(server_mem(server).settings.sessions_dir)
    sid = "20261201-101500-abc123"
    store.update_meta(sid, sessionId=sid, createdAt=1796100000, updatedAt=1796100900, compactionCount=0,
                      totalTokens=2400)
    for i in range(6):
        line = store.append(sid, {"type": "message", "message": {"role": "user" if i % 2 == 0 else "assistant",
                                                                 "content": f"message {i}: " + "words " * 300}})
        if i == 0:  # what recall put before the first reply, and a note the session wrote
            store.append(sid, {"type": "recall", "forLine": line, "entries": [
                {"citation": "MEMORY.md#L1-L3", "path": "MEMORY.md", "startLine": 1, "endLine": 3, "score": 0.93}]})
    wrote = server_mem(server).tools.said_by(Caller(session=sid)).memory_append("The session's own note about the heron survey.")
    server_mem(server).sync()
    page.goto(server.base + "/sessions")
    page.click(f"text={sid}")
    page.wait_for_selector(".window")
    assert "TRUNCATED" in page.inner_text("table.files-cap")
    assert "Recalled before the reply: MEMORY.md#L1-L3 (0.93)" in page.inner_text("ol.transcript")
    assert wrote["path"] in page.inner_text("ul.wrote")
    page.screenshot(path=str(shots / "session.png"), full_page=True)
    # health, and a phone-width search
    page.goto(server.base + "/health")
    assert "Files · chunks · vectors" in page.inner_text("table.summary")
    page.click("button[value=sync]")  # the page follows the sync, then shows what it did
    page.wait_for_selector("text=sync done in", timeout=60_000)
    page.screenshot(path=str(shots / "health.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(server.base + "/search?q=" + "乌龙茶")
    assert page.locator(".result").count() >= 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing runs off the screen
    page.screenshot(path=str(shots / "phone.png"), full_page=True)


def test_the_health_page_shows_what_promotion_would_do_next(browser_page, workspace):
    server, page, shots, _ = browser_page
    mem = server_mem(server)
    mem.settings.raw.setdefault("memory", {})["dreaming"] = {"minScore": 0.5}
    for q in ("where is the staging database now", "staging database migration", "which city hosts staging"):
        mem.tools.memory_search(q)
    page.goto(server.base + "/health")
    section = page.inner_text("main")
    assert "Promotion" in section and "Never run." in section
    assert "would be promoted now" in section and "Migrated the staging database to Hangzhou." in section
    page.click("table.promote a")  # the entry where it stands in its daily log
    page.wait_for_url("**/file/memory/2026-11-30.md#L3")
    assert page.locator("tr#L3").inner_text().endswith("Migrated the staging database to Hangzhou.")
    page.goto(server.base + "/health")
    page.screenshot(path=str(shots / "health-promotion.png"), full_page=True)
