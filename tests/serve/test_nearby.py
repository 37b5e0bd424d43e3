"""`search` and `recall` asked of a process that already serves the agent, over a Unix socket:
real subprocesses (`mnemoclaw watch`, the command line), real sockets, and each way it must
fall back to running alone."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mnemoclaw import config
from mnemoclaw.cli.app import Ctx
from mnemoclaw.serve import nearby

EXE = str(Path(sys.executable).with_name("mnemoclaw"))
NOTES = ("# Memory\n\n- The deploy server is atlas-7, in rack 12.\n"
         "- We chose PostgreSQL for the billing database in March.\n")


def _env(state: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOCLAW_", "OPENCLAW_"))}
    return {**env, "MNEMOCLAW_STATE_DIR": str(state), **extra}


def _cli(argv: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *argv], capture_output=True, text=True, env=env, timeout=120, **kw)


def _records(state: Path) -> list[Path]:
    return sorted((state / nearby.FOLDER).glob(f"*{nearby.RECORD}"))


@pytest.fixture
def agent(tmp_path: Path):
    """A workspace with two notes, indexed keyword-only (no model: these tests are about the
    socket), and a `mnemoclaw watch` serving it."""
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    (ws / "MEMORY.md").write_text(NOTES, encoding="utf-8")
    env = _env(state, MNEMOCLAW_PROVIDER="none")
    assert _cli(["--workspace", str(ws), "index"], env).returncode == 0
    watch = subprocess.Popen([EXE, "--workspace", str(ws), "watch"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not _records(state):
        assert watch.poll() is None and time.monotonic() < deadline, watch.stderr.read() if watch.stderr else ""
        time.sleep(0.05)
    yield ws, state, env, watch
    if watch.poll() is None:
        watch.send_signal(signal.SIGINT)
        watch.wait(timeout=30)


def test_a_search_and_a_recall_are_answered_by_the_running_watch_with_the_same_text(agent, tmp_path: Path):
    ws, state, env, watch = agent
    record = _records(state)[0]
    info = dict(line.split("=", 1) for line in record.read_text().splitlines())
    sock = Path(info["socket"])
    assert info["pid"] == str(watch.pid) and info["command"] == "watch"
    assert oct((state / nearby.FOLDER).stat().st_mode & 0o777) == "0o700"
    assert oct(sock.stat().st_mode & 0o777) == "0o600" and oct(record.stat().st_mode & 0o777) == "0o600"

    for argv in (["search", "billing database"], ["search", "billing database", "--json", "-n", "1"],
                 ["recall", "deploy to atlas-7 now", "--json"]):
        asked = _cli(["-v", "--workspace", str(ws), *argv], env)
        alone = _cli(["--workspace", str(ws), *argv], {**env, "MNEMOCLAW_NEARBY": "off"})
        assert f"answered by process {watch.pid} (watch)" in asked.stderr, asked.stderr
        assert asked.returncode == alone.returncode == 0
        assert asked.stdout == alone.stdout and ("billing" in asked.stdout or "atlas-7" in asked.stdout)

    # a hook's JSON on stdin is sent along
    hook_in = json.dumps({"prompt": "deploy to atlas-7 now"})
    hook = _cli(["-v", "--workspace", str(ws), "recall", "--hook", "--json"], env, input=hook_in)
    hook_alone = _cli(["--workspace", str(ws), "recall", "--hook", "--json"], {**env, "MNEMOCLAW_NEARBY": "off"},
                      input=hook_in)
    assert "answered by process" in hook.stderr and hook.stdout == hook_alone.stdout
    assert json.loads(hook.stdout)["entries"][0]["citation"] == "MEMORY.md#L1-L4"

    # a relative --workspace is relative to the caller's directory, not the server's
    rel = _cli(["-v", "--workspace", "ws", "search", "atlas-7 rack"], env, cwd=tmp_path)
    assert "answered by process" in rel.stderr and "rack 12" in rel.stdout

    # a note written now is found through the server (its reader follows the file events)
    with open(ws / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write("- The staging cluster moved to Frankfurt.\n")
    moved = _cli(["-v", "--workspace", str(ws), "search", "staging cluster Frankfurt"], env)
    assert "answered by process" in moved.stderr and "Frankfurt" in moved.stdout

    # the server goes, and so do its socket and its record
    watch.send_signal(signal.SIGINT)
    watch.wait(timeout=30)
    assert not sock.exists() and not record.exists()
    after = _cli(["-v", "--workspace", str(ws), "search", "billing database"], env)
    assert after.returncode == 0 and "answered by" not in after.stderr and "billing" in after.stdout


def test_other_settings_are_not_answered_by_this_server(agent, tmp_path: Path):
    ws, state, env, _ = agent
    other = tmp_path / "other"
    other.mkdir()
    (other / "MEMORY.md").write_text("- The other agent keeps bees.\n", encoding="utf-8")
    for argv in (["--workspace", str(other), "search", "bees"],  # another workspace
                 ["--workspace", str(ws), "--agent", "second", "search", "billing"],  # another agent
                 ["--workspace", str(ws), "search", "   "]):  # a usage error: said as the command says it
        asked = _cli(["-v", *argv], env)
        alone = _cli(argv, {**env, "MNEMOCLAW_NEARBY": "off"})
        assert "answered by" not in asked.stderr
        assert (asked.returncode, asked.stdout) == (alone.returncode, alone.stdout)
    # a config written after the server started: its settings are not the server's any more
    (state / "config.json5").write_text('{ memory: { search: { query: { maxResults: 1 } } } }', encoding="utf-8")
    changed = _cli(["-v", "--workspace", str(ws), "search", "billing database"], env)
    assert "answered by" not in changed.stderr and changed.stdout.count("score") == 1
    # another environment (here the project a search ranks first) is not the server's either
    project = _cli(["-v", "--workspace", str(ws), "search", "billing"], {**env, "MNEMOCLAW_PROJECT": "x"})
    assert "answered by" not in project.stderr


def _ask(argv: list[str], state: Path, monkeypatch, stdin: str = "") -> tuple[nearby.Asked, str, str]:
    import io

    monkeypatch.setenv("MNEMOCLAW_STATE_DIR", str(state))
    out, err = io.StringIO(), io.StringIO()
    asked = nearby.ask(argv, stdin=io.StringIO(stdin), out=out, err=err)
    return asked, out.getvalue(), err.getvalue()


def _record(state: Path, pid: int, sock: str, **extra: str) -> Path:
    folder = state / nearby.FOLDER
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"{pid}{nearby.RECORD}"
    path.write_text("".join(f"{k}={v}\n" for k, v in {"pid": pid, "socket": sock, "command": "watch",
                                                       **extra}.items()))
    return path


def test_a_record_left_by_a_process_that_ended_is_removed_with_one_line(tmp_path: Path, monkeypatch):
    state = tmp_path / "state"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    sock_path = str(tmp_path / "left.sock")
    left = socket.socket(socket.AF_UNIX)
    left.bind(sock_path)
    left.close()  # the file stays, as after a kill -9
    record = _record(state, dead.pid, sock_path)
    asked, out, err = _ask(["search", "anything"], state, monkeypatch)
    assert asked.code is None and out == ""
    assert err.count("\n") == 1 and f"(process {dead.pid}) has ended" in err
    assert not record.exists() and not os.path.exists(sock_path)

    # a live process's record whose socket nobody listens on (the pid was reused)
    sock2 = str(tmp_path / "quiet.sock")
    quiet = socket.socket(socket.AF_UNIX)
    quiet.bind(sock2)
    quiet.close()
    record = _record(state, os.getpid(), sock2)
    asked, _, err = _ask(["search", "anything"], state, monkeypatch)
    assert asked.code is None and err.count("\n") == 1 and "nothing listens on" in err and not record.exists()


def test_a_damaged_record_is_named_and_removed(tmp_path: Path, monkeypatch):
    state = tmp_path / "state"
    (state / nearby.FOLDER).mkdir(parents=True)
    bad = state / nearby.FOLDER / f"123{nearby.RECORD}"
    bad.write_bytes(b"\x00\xffnot a record")
    asked, out, err = _ask(["recall", "--hook"], state, monkeypatch, stdin='{"prompt": "hello"}')
    assert asked.code is None and out == "" and err.count("\n") == 1 and "is damaged" in err and not bad.exists()
    assert asked.stdin == '{"prompt": "hello"}'  # read to be sent: the command gets it instead


class _Replier:
    """A real Unix socket that answers every request with ``reply`` (another program, or
    another version of mnemoclaw)."""

    def __init__(self, path: str, reply: bytes):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(path)
        self.sock.listen(4)
        self.reply = reply
        self.requests: list[dict] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
                self.requests.append(json.loads(data))
                conn.sendall(self.reply)


def test_a_server_of_another_version_is_not_believed(tmp_path: Path, monkeypatch):
    state = tmp_path / "state"
    path = str(tmp_path / "old.sock")
    old = _Replier(path, nearby.reply_bytes(True, 0, "WRONG ANSWER\n", "", version="0.0.9"))
    _record(state, os.getpid(), path)
    asked, out, err = _ask(["search", "billing"], state, monkeypatch)
    assert asked.code is None and "WRONG" not in out
    assert err.count("\n") == 1 and "is version 0.0.9, this one is" in err and "restart it" in err
    assert old.requests and old.requests[0]["argv"] == ["search", "billing"]
    # something that is not mnemoclaw at all
    junk_path = str(tmp_path / "junk.sock")
    _Replier(junk_path, b"HTTP/1.1 400 Bad Request\r\n\r\n")
    os.unlink(state / nearby.FOLDER / f"{os.getpid()}{nearby.RECORD}")
    _record(state, os.getpid(), junk_path)
    asked, out, err = _ask(["search", "billing"], state, monkeypatch)
    assert asked.code is None and out == "" and "gave no answer (not a mnemoclaw reply)" in err


def test_a_socket_that_accepts_and_says_nothing_is_given_up_on_within_a_second(tmp_path: Path, monkeypatch):
    """What a stopped (SIGSTOP) or hung server looks like from outside: the kernel completes the
    connection, and nothing comes back."""
    import io

    state = tmp_path / "state"
    path = str(tmp_path / "mute.sock")
    mute = socket.socket(socket.AF_UNIX)
    mute.bind(path)
    mute.listen(4)  # never accepted
    record = _record(state, os.getpid(), path)
    started = time.monotonic()
    asked, out, err = _ask(["search", "billing"], state, monkeypatch)
    took = time.monotonic() - started
    assert asked.code is None and out == "" and err.count("\n") == 1, err
    assert f"process {os.getpid()} (watch) did not answer within 1 s (stopped or hung?); running on its own" in err
    assert nearby.ACK_TIMEOUT * 0.9 < took < nearby.ACK_TIMEOUT + 1.0 and record.exists()  # alive: left alone
    # callers that gave up stay in its backlog until it is full: then a connection is refused at once (EAGAIN)
    filling = []
    while True:
        caller = socket.socket(socket.AF_UNIX)
        caller.setblocking(False)
        try:
            caller.connect(path)
        except BlockingIOError:
            caller.close()
            break
        filling.append(caller)
    asked, out, err = _ask(["search", "billing"], state, monkeypatch)
    assert asked.code is None and "did not answer within 1 s (stopped or hung?)" in err, err
    for caller in filling:
        caller.close()

    # one that acknowledges, then falls silent mid-way
    os.unlink(record)
    mute.close()
    path = str(tmp_path / "then-mute.sock")
    held: list[socket.socket] = []

    def acknowledge_then_stop(sock: socket.socket) -> None:
        conn, _ = sock.accept()
        conn.sendall(nearby.ALIVE * 3)
        held.append(conn)  # open, and silent

    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(4)
    threading.Thread(target=acknowledge_then_stop, args=(server,), daemon=True).start()
    _record(state, os.getpid(), path)
    asked, out, err = _ask(["search", "billing"], state, monkeypatch)
    assert asked.code is None and out == "" and "stopped answering (silent for 1 s); running on its own" in err, err

    # a hook's run waits no longer than its deadline, and ends there: exit 0, nothing on stdout
    threading.Thread(target=acknowledge_then_stop, args=(server,), daemon=True).start()
    started = time.monotonic()
    monkeypatch.setenv("MNEMOCLAW_STATE_DIR", str(state))
    out_, err_ = io.StringIO(), io.StringIO()
    asked = nearby.ask(["recall", "--hook", "--timeout-ms", "400"], stdin=io.StringIO('{"prompt": "x"}'), out=out_,
                       err=err_, deadline=started + 0.4)
    assert asked.code == 0 and out_.getvalue() == "" and time.monotonic() - started < 0.4 + 0.3
    assert err_.getvalue() == (f"mnemoclaw recall --hook: nothing recalled: the 400 ms deadline passed while waiting "
                               f"for process {os.getpid()} (watch) (--timeout-ms sets it)\n")
    server.close()


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user's needs root")


@needs_root
def test_a_socket_of_another_user_is_never_asked(tmp_path: Path, monkeypatch):
    state = tmp_path / "state"
    path = str(tmp_path / "theirs.sock")
    theirs = _Replier(path, nearby.reply_bytes(True, 0, "THEIR MEMORY\n", ""))
    os.chown(path, 65534, 65534)
    _record(state, os.getpid(), path)
    asked, out, err = _ask(["search", "billing"], state, monkeypatch)
    assert asked.code is None and out == "" and not theirs.requests
    assert err.count("\n") == 1 and "belongs to user 65534" in err


@needs_root
def test_the_server_answers_no_caller_of_another_user():
    """Even with its folder opened to everyone, the server asks the kernel who is calling."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="mnemoclaw-nearby-"))  # under /tmp: another user can reach it
    try:
        (root / "ws").mkdir()
        os.chmod(root, 0o755)
        settings = Ctx(str(root / "ws"), str(root / "state"), None, None).settings(provider="none")
        with nearby.Server(settings, "test", lambda: None).start() as server:
            os.chmod(root / "state", 0o755)
            os.chmod(root / "state" / nearby.FOLDER, 0o777)
            os.chmod(server.path, 0o777)
            # it connects (the folder lets it), and is told no before it has said anything
            code = ("import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
                    "sys.stdout.buffer.write(s.recv(4096))")
            run = subprocess.run(["/usr/bin/python3", "-I", "-c", code, server.path], capture_output=True,
                                 timeout=30, user=65534, group=65534)
            assert run.returncode == 0, run.stderr
            protocol, _, answered, _, said, _ = nearby.read_reply(run.stdout)
            assert protocol == nearby.PROTOCOL and not answered and said == "another user"
            assert server.answered == 0
    finally:
        shutil.rmtree(root)


def test_a_state_dir_too_long_for_a_socket_serves_from_a_private_temporary_folder(tmp_path: Path):
    state = tmp_path / ("s" * 120)
    path = nearby.socket_path(str(state), 4242)
    assert len(os.fsencode(path)) <= nearby.SUN_PATH_MAX + 8 and f"mnemoclaw-{os.getuid()}" in path
    settings = Ctx(str(tmp_path / "ws"), str(state), None, None).settings(provider="none")
    (tmp_path / "ws").mkdir()
    with nearby.Server(settings, "test", lambda: None).start() as server:
        assert os.path.dirname(server.path) != str(state / nearby.FOLDER)
        assert oct(os.stat(os.path.dirname(server.path)).st_mode & 0o777) == "0o700"
        assert _records(state) and Path(server.path).exists()
    assert not Path(server.path).exists() and not _records(state)


def test_the_client_knows_the_state_dir_as_the_config_does():
    assert nearby.DEFAULT_STATE_DIR == config.DEFAULT_STATE_DIR and nearby.ENV_STATE_DIR == config.ENV_STATE_DIR


def test_the_client_imports_nothing_heavy():
    """What a hook waits for on every prompt: the client imports only the standard library's
    smallest modules (no json, no socket.py, no typing, no click)."""
    code = ("import sys; from mnemoclaw.cli import main; from mnemoclaw.serve.nearby import _socket_module; "
            "from mnemoclaw.cli.hook import timeout_ms; timeout_ms(['recall', '--hook']); "
            "_socket_module(); print(' '.join(sorted(sys.modules)))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                timeout=60).stdout.split())
    assert not loaded & {"json", "socket", "typing", "click", "re", "dataclasses", "numpy"}, loaded & {
        "json", "socket", "typing", "click", "re", "dataclasses", "numpy"}
