"""`mnemoclaw ui` over HTTP: a real uvicorn server on 127.0.0.1, requests through urllib."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from mnemoclaw.errors import ConfigError
from mnemoclaw.tools.services import Caller

from conftest import REPO, write
from secret_phrases import NOTE, assert_no_secret

uvicorn = pytest.importorskip("uvicorn")
from mnemoclaw.ui.app import COOKIE, create_app  # noqa: E402

STATIC = REPO / "src" / "mnemoclaw" / "ui" / "static"


class Server:
    """The app on a free loopback port, in a thread, for one test."""

    def __init__(self, app):
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                                    access_log=False, lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    def get(self, path: str, headers: dict | None = None) -> tuple[int, str, dict]:
        return _send(urllib.request.Request(self.base + path, headers=headers or {}))


def _send(req: urllib.request.Request) -> tuple[int, str, dict]:
    """(status, body, headers), redirects not followed, errors answered like the rest."""
    try:
        with urllib.request.build_opener(NoRedirect).open(req, timeout=60) as resp:
            return resp.status, resp.read().decode("utf-8"), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8"), dict(exc.headers)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.fixture
def mem(workspace, make_memory):
    write(workspace / "MEMORY.md", "# Memory\n\n- Alex prefers PostgreSQL.\n- Deploy key rotation: every 90 days.\n")
    write(workspace / "memory" / "2026-11-26.md", "# 2026-11-26\n\n- 服务器迁移到杭州机房，旧服务器下线。\n")
    write(workspace / "memory" / "2026-11-27.md",
          "# 2026-11-27\n\n- a note with <script>alert('x')</script> in it\n"
          "- and <img src=x onerror=alert(1)> too\n- [a link](javascript:alert(2))\n")
    write(workspace / "notes.txt", "not a memory file\n")
    m = make_memory(workspace)
    m.sync()
    return m


@pytest.fixture
def app_server(mem):
    with Server(create_app(mem)) as server:
        yield server


def test_search_answers_in_english_and_chinese_with_why_and_a_link_to_the_lines(app_server):
    status, body, _ = app_server.get("/search?q=PostgreSQL&mode=hybrid")
    assert status == 200
    first = body.index('class="result"')
    link = re.search(r'href="(/file/MEMORY\.md#L(\d+)-L(\d+))"', body[first:])
    assert link, body[first:first + 800]
    assert "MEMORY.md#L" in body[first:] and "keyword " in body[first:] and "vector " in body[first:]
    assert "(postgresql)" in body[first:]  # the query term the chunk holds
    status, page, _ = app_server.get(link.group(1).split("#")[0])
    assert status == 200 and f'id="L{link.group(2)}"' in page
    status, body, _ = app_server.get("/search?q=" + urllib.request.quote("杭州机房") + "&mode=keyword")
    assert status == 200 and "memory/2026-11-26.md#L" in body and "服务器迁移到杭州机房" in body
    assert 'value="keyword" selected' in body


def test_an_empty_query_and_a_bad_mode(app_server):
    status, body, _ = app_server.get("/search")
    assert status == 200 and 'class="result"' not in body
    status, body, _ = app_server.get("/search?q=x&mode=fuzzy")
    assert status == 400 and "unknown search mode &#39;fuzzy&#39;" in body


def test_a_note_holding_html_renders_inert(app_server):
    status, body, _ = app_server.get("/file/memory/2026-11-27.md")
    assert status == 200
    assert "<script>alert" not in body and "&lt;script&gt;alert" in body
    assert not re.search(r"<[a-z][^>]*\sonerror\s*=", body, re.I)  # no tag carries the attribute
    assert 'href="javascript:' not in body
    assert '<article class="rendered"' in body and "<ul>" in body  # the Markdown view is rendered
    assert 'id="L3"' in body and 'href="#L3"' in body  # numbered lines, anchors to each


def test_paths_follow_the_memory_get_rules(app_server):
    for path in ("/file/notes.txt", "/file/%2e%2e/%2e%2e/etc/passwd", "/file//etc/passwd"):
        status, body, _ = app_server.get(path)
        assert status == 403, (path, status, body[:300])
    status, body, _ = app_server.get("/file/memory/2030-01-01.md")
    assert status == 404 and "does not exist" in body


def test_the_host_header_must_name_loopback(app_server):
    status, body, _ = app_server.get("/search", headers={"Host": "evil.example"})
    assert status == 421 and "loopback" in body
    status, body, _ = app_server.get("/search", headers={"Host": f"evil.example:{app_server.port}"})
    assert status == 421
    for host in (f"localhost:{app_server.port}", f"127.0.0.1:{app_server.port}"):
        assert app_server.get("/search", headers={"Host": host})[0] == 200


def test_off_loopback_a_token_is_required(mem):
    with pytest.raises(ConfigError, match="without a token"):
        create_app(mem, host="0.0.0.0")
    with Server(create_app(mem, host="0.0.0.0", token="s3cret")) as server:
        status, body, _ = server.get("/files")
        assert status == 401 and "token" in body
        assert server.get("/files?token=wrong")[0] == 401
        assert server.get("/files", headers={"Authorization": "Bearer s3cret"})[0] == 200
        status, _, headers = server.get("/files?token=s3cret")
        assert status == 303 and headers["location"] == "/files"
        cookie = headers["set-cookie"].split(";")[0]
        assert cookie == f"{COOKIE}=s3cret" and "HttpOnly" in headers["set-cookie"]
        assert server.get("/files", headers={"Cookie": cookie})[0] == 200
        assert server.get("/files", headers={"Cookie": f"{COOKIE}=nope"})[0] == 401


def test_files_as_a_timeline_with_summaries_other_notes_and_extra_paths(workspace, make_memory, tmp_path):
    write(workspace / "MEMORY.md", "# Memory\n\n- one\n")
    write(workspace / "memory" / "2026-11-26.md", "# 2026-11-26\n\n- a day\n")
    write(workspace / "memory" / "2026-11-27.md", "# 2026-11-27\n\n- the next day\n")
    write(workspace / "memory" / "2026-11-27-deploy-plan.md", "# Session: deploy plan\n\n- summary\n")
    write(workspace / "memory" / "2026-10-02.md", "# 2026-10-02\n\n- last month\n")
    write(workspace / "memory" / "people.md", "# People\n\n- Alex\n")
    write(tmp_path / "team-notes" / "runbook.md", "# Runbook\n\n- restart the walrus service\n")
    mem = make_memory(workspace, config={"agents": {"defaults": {"memorySearch": {
        "extraPaths": [str(tmp_path / "team-notes")]}}}})
    mem.sync()
    with Server(create_app(mem)) as server:
        status, body, _ = server.get("/files")
        assert status == 200
        order = ["Long-term", "MEMORY.md", "November 2026", "2026-11-27", "daily log", "session summary: deploy-plan",
                 "2026-11-26", "October 2026", "2026-10-02", "Other notes", "memory/people.md", "Extra paths"]
        at = [body.index(x) for x in order]
        assert at == sorted(at), list(zip(order, at, strict=True))
        extra = re.search(r'Extra paths.*?<a href="(/file/[^"]+)"', body, re.S)
        assert extra and "runbook.md" in extra.group(1)
        status, page, _ = server.get(extra.group(1))
        assert status == 200 and "restart the walrus service" in page


def test_files_and_health(app_server):
    status, body, _ = app_server.get("/files")
    assert status == 200
    assert body.index("MEMORY.md") < body.index("memory/2026-11-27.md") < body.index("memory/2026-11-26.md")
    assert "notes.txt" not in body
    status, body, _ = app_server.get("/health")
    assert status == 200 and re.search(r"<th>Files · chunks · vectors</th><td>3 · \d+ · \d+</td>", body)
    assert "test-hash" in body and "<th>background.searchCheck.mode</th>" in body


def test_the_app_ships_its_own_small_script_and_style(app_server):
    total = 0
    for name in ("ui.js", "ui.css"):
        status, body, headers = app_server.get(f"/static/{name}")
        assert status == 200 and body
        total += len(body.encode("utf-8"))
    assert total == sum(p.stat().st_size for p in STATIC.iterdir())
    assert total < 50 * 1024
    _, page, _ = app_server.get("/search")
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing from another host


def test_the_command_serves_the_app(workspace, tmp_path):
    write(workspace / "MEMORY.md", "# Memory\n\n- The harbour walrus sings at dawn.\n")
    proc = subprocess.Popen([sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir",
                             str(tmp_path / "state"), "ui", "--port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        url = None
        while url is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "the command ended before serving"
            m = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
            url = m.group(1) if m else None
        assert url, "no URL printed"
        with urllib.request.urlopen(url + "search?q=walrus", timeout=60) as resp:
            body = resp.read().decode("utf-8")
        assert "MEMORY.md#L" in body and "walrus" in body
    finally:
        proc.terminate()
        proc.wait(20)


def test_an_address_that_cannot_be_served_is_one_line_with_the_fix(workspace, tmp_path):
    """Out of range, held by another program, held by mnemoclaw itself (ui and mcp --http)."""
    write(workspace / "MEMORY.md", "- a note\n")
    base = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir", str(tmp_path / "st")]
    env = {**os.environ, "MNEMOCLAW_PROVIDER": "none"}

    def run(*args):
        r = subprocess.run([*base, *args], capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        return r.stderr

    assert "port 99999 does not exist" in run("ui", "--port", "99999") and "--port" in run("ui", "--port", "99999")
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen()
    port = other.getsockname()[1]
    try:
        said = run("ui", "--port", str(port))
        assert f"port {port} on 127.0.0.1 is in use by another program (pid {os.getpid()}" in said and "--port" in said
        said = run("mcp", "--http", f"127.0.0.1:{port}")
        assert f"port {port} on 127.0.0.1 is in use" in said and "--http HOST:PORT" in said
    finally:
        other.close()
    ours = subprocess.Popen([*base, "ui", "--port", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        m = None
        while m is None:
            line = ours.stderr.readline()
            assert line, "the first ui ended before serving"
            m = re.search(r"at http://127\.0\.0\.1:(\d+)/", line)
        port = int(m.group(1))
        for args in (("ui", "--port", str(port)), ("mcp", "--http", f"127.0.0.1:{port}")):
            said = run(*args)
            assert f"in use by mnemoclaw (pid {ours.pid}: mnemoclaw " in said and f"kill {ours.pid}" in said, said
    finally:
        ours.terminate()
        ours.wait(20)


def _post(server, path: str, fields: dict, cookie: str, headers: dict | None = None):
    data = urllib.parse.urlencode(fields).encode("utf-8")
    return _send(urllib.request.Request(server.base + path, data=data, method="POST", headers={
        "Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie, **(headers or {})}))


def _form(server, path: str) -> tuple[str, dict]:
    """The session cookie a page sets and the hidden fields of its form."""
    status, body, headers = server.get(path)
    assert status == 200, body[:300]
    cookie = headers["set-cookie"].split(";")[0]
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', body))
    return cookie, fields


def test_a_note_appended_in_the_page_is_found_by_search_at_once(app_server, workspace):
    cookie, fields = _form(app_server, "/files")
    status, _, headers = _post(app_server, "/append", {**fields, "text": "The harbour walrus sings at dawn."}, cookie)
    assert status == 303
    where = headers["location"]
    assert re.fullmatch(r"/file/memory/\d{4}-\d{2}-\d{2}\.md\?saved=appended#L\d+-L\d+", where), where
    status, page, _ = app_server.get(where.split("#")[0], headers={"Cookie": cookie})
    assert status == 200 and "Saved and indexed" in page and "harbour walrus" in page
    status, body, _ = app_server.get("/search?q=walrus+dawn&mode=keyword")
    assert where.split("?")[0][len("/file/"):] + "#L" in body


def test_secrets_written_as_prose_in_a_note_or_an_edit_are_never_stored(app_server, mem, workspace):
    cookie, fields = _form(app_server, "/files")
    status, _, headers = _post(app_server, "/append", {**fields, "text": NOTE}, cookie)
    assert status == 303
    daily = headers["location"].split("?")[0][len("/file/"):]
    cookie, fields = _form(app_server, "/edit/MEMORY.md")
    mine = (workspace / "MEMORY.md").read_text("utf-8") + NOTE + "\n"
    status, _, headers = _post(app_server, "/edit/MEMORY.md", {**fields, "text": mine}, cookie)
    assert status == 303, headers
    for rel in (daily, "MEMORY.md"):
        text = (workspace / rel).read_text("utf-8")
        assert "my bank PIN is [REDACTED]" in text and "银行卡密码是 [REDACTED]" in text, text
    assert_no_secret(mem, workspace)
    status, body, _ = app_server.get("/search?q=hunter22&mode=keyword")
    assert status == 200 and "hunter22" in body and 'class="result"' not in body  # the query, and no result


def test_writes_need_the_pages_token_and_the_same_origin(app_server, workspace):
    cookie, fields = _form(app_server, "/files")
    before = sorted(p.name for p in (workspace / "memory").iterdir())
    assert _post(app_server, "/append", {"text": "no token"}, cookie)[0] == 403
    assert _post(app_server, "/append", {"csrf": "0" * 64, "text": "a wrong token"}, cookie)[0] == 403
    assert _post(app_server, "/append", {**fields, "text": "another session"}, "mnemoclaw_ui_session=other")[0] == 403
    status, body, _ = _post(app_server, "/append", {**fields, "text": "from elsewhere"}, cookie,
                            {"Origin": "http://evil.example"})
    assert status == 403 and "another site" in body
    assert _post(app_server, "/append", {**fields, "text": "x"}, cookie, {"Sec-Fetch-Site": "cross-site"})[0] == 403
    assert sorted(p.name for p in (workspace / "memory").iterdir()) == before  # nothing was written


def test_editing_memory_md_saves_atomically_indexes_and_refuses_a_stale_copy(app_server, workspace):
    target = workspace / "MEMORY.md"
    cookie, fields = _form(app_server, "/edit/MEMORY.md")
    assert fields["base"]
    new = target.read_text("utf-8").replace("PostgreSQL", "CockroachDB")
    status, _, headers = _post(app_server, "/edit/MEMORY.md", {**fields, "text": new}, cookie)
    assert status == 303 and headers["location"] == "/file/MEMORY.md?saved=edited"
    assert target.read_text("utf-8") == new
    assert "MEMORY.md#L" in app_server.get("/search?q=CockroachDB&mode=keyword")[1]
    # opened, then changed on disk by someone else: the save is refused and both versions shown
    cookie, fields = _form(app_server, "/edit/MEMORY.md")
    target.write_text(new + "- written by the agent meanwhile\n", encoding="utf-8")
    mine = new.replace("CockroachDB", "SQLite")
    status, body, _ = _post(app_server, "/edit/MEMORY.md", {**fields, "text": mine}, cookie)
    assert status == 409 and "changed on disk since it was opened" in body
    assert "written by the agent meanwhile" in body and "SQLite" in body  # on disk now, and yours
    assert target.read_text("utf-8").endswith("- written by the agent meanwhile\n")  # nothing lost
    again = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', body))
    assert again["base"] != fields["base"]
    assert _post(app_server, "/edit/MEMORY.md", {**again, "text": mine}, cookie)[0] == 303  # saved over it, knowingly
    assert target.read_text("utf-8") == mine


def test_only_memory_md_and_daily_logs_can_be_edited(app_server, workspace):
    assert app_server.get("/edit/notes.txt")[0] == 403
    cookie, fields = _form(app_server, "/files")
    status, body, _ = _post(app_server, "/edit/notes.txt", {**fields, "base": "", "text": "x"}, cookie)
    assert status == 403 and (workspace / "notes.txt").read_text("utf-8") == "not a memory file\n"
    status, body, _ = app_server.get("/edit/memory/2026-11-26.md")
    assert status == 200 and "服务器迁移到杭州机房" in body


def test_every_page_says_what_it_cost_the_server(app_server):
    _, _, headers = app_server.get("/search?q=PostgreSQL")
    assert re.fullmatch(r"app;dur=\d+\.\d\d", headers["server-timing"])


def test_sessions_and_the_context_of_one(app_server, mem, workspace):
    from mnemoclaw.runtime.transcript import SessionStore

    write(workspace / "AGENTS.md", "# Agents\n\n" + "Follow the memory protocol. " * 2000)  # past the cap
    store = SessionStore(mem.settings.sessions_dir)
    sid = "20261201-101500-abc123"
    store.update_meta(sid, sessionId=sid, createdAt=1796100000, updatedAt=1796100900, compactionCount=1,
                      memoryFlushAt=1796100800, totalTokens=5400)
    line = store.append(sid, {"type": "message", "message": {"role": "user", "content": "remember the <b>walrus</b>"}})
    store.append(sid, {"type": "recall", "forLine": line, "entries": [
        {"citation": "MEMORY.md#L1-L2", "path": "MEMORY.md", "startLine": 1, "endLine": 2, "score": 0.9412,
         "trigger": "walrus"}]})
    store.append(sid, {"type": "message", "message": {"role": "assistant", "content": "Noted."}})
    wrote = mem.tools.said_by(Caller(session=sid)).memory_append("The walrus colony counts 40.")
    mem.sync()
    status, body, _ = app_server.get("/sessions")
    assert status == 200 and f'href="/sessions/{sid}"' in body and "~5400 tokens" in body and "1 compactions" in body
    status, body, _ = app_server.get(f"/sessions/{sid}")
    assert status == 200
    assert re.search(r"AGENTS\.md <span class=\"meta\">TRUNCATED</span>", body)
    assert "remember the &lt;b&gt;walrus&lt;/b&gt;" in body and "<b>walrus" not in body
    assert 'class="window"' in body and "memory flush at" in body and "compaction at" in body
    # what came unasked before the reply, and what the session wrote, each by citation
    assert re.search(r'Recalled before the reply: <a href="/file/MEMORY.md#L1">MEMORY.md#L1-L2</a> \(0.94, trigger '
                     r'“walrus”\)', body), body
    assert f'{wrote["path"]}#L{wrote["startLine"] - 2}-L{wrote["endLine"]}</a> <span class="meta">origin agent' in body
    status, found, _ = app_server.get("/search?q=walrus+colony")
    assert status == 200 and f'agent, session <a href="/sessions/{sid}">{sid}</a>' in found
    before = sorted(p.name for p in Path(mem.settings.sessions_dir).iterdir())
    assert app_server.get("/sessions/20990101-000000-nosuch")[0] == 404
    assert app_server.get("/sessions/..%2Fsecret")[0] == 404
    assert sorted(p.name for p in Path(mem.settings.sessions_dir).iterdir()) == before  # nothing made


def test_a_session_page_leaves_out_what_was_forgotten_even_when_it_comes_back(app_server, mem):
    """The transcript is restored from a backup after a forget (by query, by participant): the
    session page shows the other lines, not the forgotten ones; the file page neither."""
    from mnemoclaw.runtime.transcript import SessionStore

    store = SessionStore(mem.settings.sessions_dir)
    sid = "20261202-090000-def456"
    store.update_meta(sid, sessionId=sid, createdAt=1796100000, updatedAt=1796100900, compactionCount=0)
    store.append(sid, {"type": "message", "message": {"role": "user", "content": "the alarm code is 8841 at the barn"}})
    store.append(sid, {"type": "message", "message": {"role": "user", "content": "Dana: the barn key is with Ola",
                                                      "sender": "Dana"}})
    store.append(sid, {"type": "message", "message": {"role": "assistant", "content": "Noted the barn details."}})
    backup = store.path(sid).read_text("utf-8")
    assert mem.notes.forget(mem.notes.forget_plan("alarm code barn"))["verified"]
    assert mem.notes.forget_origin(mem.notes.forget_origin_plan("participant", "Dana"))["verified"]
    assert mem.notes.forget(mem.notes.forget_plan("Alex prefers PostgreSQL"))["verified"]
    store.path(sid).write_text(backup, "utf-8")  # restored
    write(mem.settings.workspace / "MEMORY.md", "# Memory\n\n- Alex prefers PostgreSQL.\n- Deploy key rotation: "
                                                "every 90 days.\n")
    status, body, _ = app_server.get(f"/sessions/{sid}")
    assert status == 200 and "Noted the barn details." in body
    assert "8841" not in body and "alarm code" not in body and "Ola" not in body
    status, body, _ = app_server.get("/file/MEMORY.md")
    assert status == 200 and "Deploy key rotation" in body and "PostgreSQL" not in body


def test_sync_now_and_rebuild_run_beside_the_pages_and_report(app_server, workspace):
    import json

    write(workspace / "memory" / "2026-12-01.md", "# 2026-12-01\n\n- The lighthouse keeper retired.\n")
    cookie, fields = _form(app_server, "/health")
    for kind in ("sync", "rebuild"):
        status, _, headers = _post(app_server, "/index", {**fields, "kind": kind}, cookie)
        assert status == 303 and headers["location"] == "/health#job"
        deadline = time.monotonic() + 60
        while True:
            state = json.loads(app_server.get("/index/progress")[1])
            if not state["running"]:
                break
            assert time.monotonic() < deadline, state
            time.sleep(0.05)
        assert state["kind"] == kind and "error" not in state, state
        assert state["result"]["failed"] == []
    assert state["result"]["added"] + state["result"]["changed"] >= 1  # the rebuild indexed every file again
    assert "lighthouse" in app_server.get("/search?q=lighthouse+keeper&mode=keyword")[1]
    status, body, _ = app_server.get("/health")
    assert "rebuild done in" in body
    assert _post(app_server, "/index", {"kind": "sync"}, cookie)[0] == 403  # a write: the form's token


def test_an_openclaw_agent_is_served_read_only(mem, monkeypatch, workspace):
    monkeypatch.setattr(mem.settings, "openclaw_dir", str(workspace))
    with Server(create_app(mem)) as server:
        status, body, headers = server.get("/files")
        assert status == 200 and 'action="/append"' not in body  # no form to write with
        cookie = headers["set-cookie"].split(";")[0]
        status, body, _ = _post(server, "/append", {"text": "x"}, cookie)
        assert status == 403 and "served read-only" in body
        assert 'action="/index"' not in server.get("/health")[1]
        assert server.get("/edit/MEMORY.md")[0] == 403 and "Edit</a>" not in server.get("/file/MEMORY.md")[1]


def test_a_token_or_form_token_in_any_characters_is_refused_not_a_crash(mem, workspace):
    with Server(create_app(mem, host="0.0.0.0", token="s3cret")) as server:
        assert server.get("/files?token=" + urllib.parse.quote("пароль"))[0] == 401
        assert server.get("/files", headers={"Authorization": "Bearer clé"})[0] == 401
    with Server(create_app(mem)) as server:
        cookie, _ = _form(server, "/files")
        assert _post(server, "/append", {"csrf": "токен", "text": "x"}, cookie)[0] == 403


def test_a_file_with_spaces_in_its_name_opens_from_its_link(workspace, make_memory):
    write(workspace / "memory" / "team notes #1.md", "# Team\n\n- the walrus rota\n")
    mem = make_memory(workspace)
    mem.sync()
    with Server(create_app(mem)) as server:
        _, body, _ = server.get("/files")
        link = re.search(r'href="(/file/memory/team[^"]+)"', body).group(1)
        assert " " not in link and "#" not in link
        status, page, _ = server.get(link)
        assert status == 200 and "the walrus rota" in page
