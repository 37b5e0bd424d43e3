"""Memory as a hostile tester uses it: what an agent writes is data, what is forgotten is gone
everywhere, nothing holds a prompt. One test (or a few) per finding, each written from the
commands that reproduced it; the sections follow the findings' numbers.
"""

from __future__ import annotations

# -- 1. an agent's text cannot speak as the owner ---------------------------------------------


# (end of section 1)


# -- 2. no pickle where a file can be planted: the bundled model's cache -----------------------


# (end of section 2)


# -- 3. state is private -------------------------------------------------------------------------


# (end of section 3)


# -- 4. forget reaches sessions_search -----------------------------------------------------------


# (end of section 4)


# -- 5. a killed forget is finished by the next command ------------------------------------------


# (end of section 5)


# -- 6. tombstones and import records hold no names ----------------------------------------------


# (end of section 6)


# -- 7. a silent server does not hold a prompt ---------------------------------------------------


# (end of section 7)


# -- 8. a hanging qmd does not hold a search -----------------------------------------------------


# (end of section 8)


# -- 9. recall --hook says what is wrong and creates nothing -------------------------------------


# (end of section 9)


# -- 10. an entry's age is its own ---------------------------------------------------------------


# (end of section 10)


# -- 11. each annotated entry is its own chunk ---------------------------------------------------


# (end of section 11)


# -- 12. an annotation line before a list item is named ------------------------------------------


# (end of section 12)


# -- 13. two hosts on one Postgres namespace -----------------------------------------------------


# (end of section 13)


# -- 14. MCP over HTTP forgets idle sessions -----------------------------------------------------
# The tester's 3 300 `initialize` calls without DELETE took the server from 226 to 363 MB, never
# given back: each session stayed until the SDK's 30-minute idle timeout, up to 10 000 of them.
# (imports inside the functions: each section keeps its own)

_MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


class _McpHttp:
    """A real `mnemoclaw mcp --http` on a free loopback port (with ``config`` as its config file);
    ``with`` gives its URL."""

    def __init__(self, tmp_path, *options: str, config: dict | None = None):
        import json
        import os
        import subprocess
        import sys

        from conftest import REPO, write

        ws = tmp_path / "ws"
        write(ws / "MEMORY.md", "- the spare key is under the blue flowerpot")
        config_file = tmp_path / "mnemoclaw.json"
        config_file.write_text(json.dumps(config or {}), encoding="utf-8")
        env = {"PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none", "HOME": os.environ.get("HOME", "/tmp")}
        self.command = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir",
                        str(tmp_path / "state"), "--config", str(config_file), "mcp", "--http", "127.0.0.1:0",
                        *options]
        self.proc = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                                     text=True)

    def __enter__(self) -> str:
        import re
        import time

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            found = re.search(r"at (http://\S+/mcp)", line)
            if found:
                return found.group(1)
            if not line and self.proc.poll() is not None:
                break
        self.__exit__()
        raise AssertionError("the HTTP server did not start: " + self.proc.stderr.read())

    def __exit__(self, *_: object) -> None:
        self.proc.terminate()
        self.proc.wait(20)


def _open_session(http, url: str) -> str:
    import json

    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}}
    r = http.post(url, content=json.dumps(body), headers=_MCP_HEADERS)
    assert r.status_code == 200, r.text
    return r.headers["mcp-session-id"]


def _ping(http, url: str, session: str):
    import json

    return http.post(url, content=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
                     headers={**_MCP_HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"})


def test_sessions_beyond_the_cap_close_the_least_recently_used(tmp_path):
    import anyio
    import httpx2  # the MCP SDK's HTTP client

    with _McpHttp(tmp_path, config={"memory": {"mcp": {"maxSessions": 3}}}) as url, httpx2.Client(timeout=30) as http:
        a, b, c = (_open_session(http, url) for _ in range(3))
        assert _ping(http, url, a).status_code == 200  # a used last: b, then c, are the least recently used
        d, e = _open_session(http, url), _open_session(http, url)
        answers = {name: _ping(http, url, s) for name, s in zip("abcde", (a, b, c, d, e), strict=True)}
        assert {name: r.status_code for name, r in answers.items()} == {"a": 200, "b": 404, "c": 404, "d": 200,
                                                                         "e": 200}
        assert answers["b"].json()["error"]["message"] == "Session not found"  # the client initializes again
        # 20 more never-closed sessions later, still 3 open: the 3 newest
        more = [_open_session(http, url) for _ in range(20)]
        assert [_ping(http, url, s).status_code for s in (a, d, e, *more)] == [404] * 20 + [200] * 3

        async def sessionless_calls() -> None:
            from mcp import Client

            # the SDK's own client speaks the 2026-07-28 protocol: no sessions, each call a POST
            # without a session id, and none of them closes anyone's session
            async with Client(url) as client:
                for _ in range(5):
                    assert not (await client.call_tool("memory_search", {"query": "spare key"})).is_error

        anyio.run(sessionless_calls)
        elsewhere = url.removesuffix("/mcp") + "/elsewhere"
        assert http.post(elsewhere, content="{}", headers=_MCP_HEADERS).status_code == 404  # no session there
        assert [_ping(http, url, s).status_code for s in more[-3:]] == [200] * 3

        # a session with a request in flight (here a GET stream a client keeps open for the server's
        # messages) is busy: never closed for room, even once it is the least recently used
        listening = _open_session(http, url)
        with httpx2.Client(timeout=30) as other, other.stream("GET", url, headers={
                "Accept": "text/event-stream", "mcp-session-id": listening,
                "mcp-protocol-version": "2025-06-18"}) as stream:
            assert stream.status_code == 200
            later = [_open_session(http, url) for _ in range(6)]
            assert [_ping(http, url, s).status_code for s in (listening, *later)] == [200] + [404] * 4 + [200] * 2


def test_an_idle_session_expires_and_its_id_gets_404_while_an_active_one_keeps_working(tmp_path):
    import time

    import httpx2

    # 0.02 minutes: a session with no request for 1.2 s is closed
    with _McpHttp(tmp_path, "--session-idle", "0.02") as url, httpx2.Client(timeout=30) as http:
        idle, active = _open_session(http, url), _open_session(http, url)
        for _ in range(12):  # 2.4 s, twice the idle timeout; `active` is used every 0.2 s
            assert _ping(http, url, active).status_code == 200
            time.sleep(0.2)
        r = _ping(http, url, idle)
        assert r.status_code == 404 and r.json()["error"]["message"] == "Session not found"
        assert _ping(http, url, active).status_code == 200
        again = _open_session(http, url)  # what a client does on 404: initialize again
        assert _ping(http, url, again).status_code == 200


def test_session_limits_below_the_least_are_refused_in_one_line(tmp_path):
    import os
    import subprocess
    import sys

    from conftest import REPO

    env = {"PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none", "HOME": os.environ.get("HOME", "/tmp")}
    for option in ("--session-idle=0", "--max-sessions=0"):
        got = subprocess.run([sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(tmp_path), "mcp", "--http",
                              "127.0.0.1:0", option], capture_output=True, text=True, env=env, timeout=60)
        assert got.returncode == 2 and "Traceback" not in got.stderr and option.split("=")[0] in got.stderr, got.stderr


# (end of section 14)


# -- rough edges ---------------------------------------------------------------------------------


# (end of rough edges)
