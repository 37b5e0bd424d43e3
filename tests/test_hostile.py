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


def _qmd_that_hangs(tmp_path, on: str):
    """A qmd (a script) that answers like qmd 2.8.3 and, while ``tmp_path/hang`` exists, hangs on
    ``on`` ("collection add" or "search") after starting a child of its own; every start (and
    child) is logged with its pid. Returns (command, log, hang flag)."""
    import json
    import sys

    log, hang, qmd = tmp_path / "qmd-starts", tmp_path / "hang", tmp_path / "bin" / "qmd"
    qmd.parent.mkdir(parents=True, exist_ok=True)
    found = json.dumps([{"docid": "#1", "score": 0.5, "file": "qmd://notes/trip.md", "line": 3, "title": "Trip",
                          "snippet": ""}])
    qmd.write_text(f"""#!{sys.executable}
import os, subprocess, sys, time
args = sys.argv[3:]  # after --index mnemoclaw
with open({str(log)!r}, "a") as f:
    f.write(str(os.getpid()) + " " + " ".join(args) + "\\n")
if " ".join(args).startswith({on!r}) and os.path.exists({str(hang)!r}):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open({str(log)!r}, "a") as f:
        f.write(str(child.pid) + " child\\n")
    time.sleep(600)
if args == ["--version"]:
    print("qmd 2.8.3 (hanging fake)")
elif args[0] == "search":
    print({found!r})
""")
    qmd.chmod(0o755)
    hang.write_text("1")
    return str(qmd), log, hang


QMD_SEARCH_TIMEOUT = 4.0  # limits.timeoutMs's default, in seconds
WELL_UNDER = QMD_SEARCH_TIMEOUT / 4


def _qmd_memory(tmp_path, workspace, make_memory, qmd: str, clock, **qmd_config):
    from conftest import write

    notes = tmp_path / "notes"
    write(workspace / "MEMORY.md", "# Memory\n\n- Alice prefers green tea.\n")
    write(notes / "trip.md", "# Trip\n\n- The best pasta was in Bolzano, near the station.\n")
    config = {"memory": {"backend": "qmd", "qmd": {
        "command": qmd, "searchMode": "search", "includeDefaultMemory": False,
        "paths": [{"name": "notes", "path": str(notes)}], **qmd_config}}}
    return make_memory(workspace, config=config, clock=clock)


def _timed_search(mem) -> tuple[dict, float]:
    import time

    t = time.monotonic()
    answer = mem.memory_search("best pasta Bolzano")
    took = time.monotonic() - t
    assert answer["results"][0]["path"] == "qmd/notes/trip.md", answer  # served all the same
    return answer, took


def _alive(log) -> list[int]:
    """The logged qmd processes (and their children) still running."""
    from pathlib import Path

    out = []
    for line in log.read_text().splitlines() if log.exists() else []:
        pid = int(line.split()[0])
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            out.append(pid)
    return out


def _until(check, seconds: float = 20.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _text(log) -> str:
    return log.read_text() if log.exists() else ""


def _asked(log) -> int:
    """qmd searches for the question (not the setup's trial search)."""
    return sum("search " in line and "bolzano" in line for line in log.read_text().splitlines())


def test_a_qmd_hanging_on_collection_add_holds_no_search_and_dies_with_the_backend(tmp_path, workspace, make_memory):
    import time

    qmd, log, hang = _qmd_that_hangs(tmp_path, "collection add")
    # `collection add` gets the update timeout (qmd indexes the folder it adds): 60 s, so it is
    # still hanging when the backend closes
    mem = _qmd_memory(tmp_path, workspace, make_memory, qmd, time.time, update={"updateTimeoutMs": 60000})
    mem.sync()  # the builtin index; qmd's setup starts in the background
    answer, took = _timed_search(mem)
    assert took < WELL_UNDER, took  # main: 129 s (the probe, then `collection add` until its timeout)
    assert "not set up yet" in answer["backendFallback"]["reason"] and "builtin index" in answer["warning"]
    assert _until(lambda: "collection add" in _text(log) and len(_alive(log)) == 2), _text(log)
    answer, took = _timed_search(mem)  # while it hangs
    assert took < WELL_UNDER and "not set up yet" in answer["backendFallback"]["reason"]
    t = time.monotonic()
    mem.close()
    assert time.monotonic() - t < 5
    assert _until(lambda: not _alive(log), 5), _alive(log)  # the hung qmd and its child
    assert not list(tmp_path.glob("state/agents/*/qmd/fallback.json"))  # stopped by close: not a failure
    hang.unlink()  # qmd mended
    mem = _qmd_memory(tmp_path, workspace, make_memory, qmd, time.time)
    answer, took = _timed_search(mem)
    assert took < WELL_UNDER and "not set up yet" in answer["backendFallback"]["reason"]
    assert mem.backend.settle(30)
    answer, _ = _timed_search(mem)
    assert "backendFallback" not in answer and _asked(log) == 1  # qmd found the file
    mem.close()
    assert not _alive(log)


def test_a_qmd_whose_setup_keeps_hanging_is_retried_in_the_background_not_by_a_search(tmp_path, workspace,
                                                                                      make_memory):
    import time

    from mnemoclaw.backends.qmd_state import RETRY_SECONDS

    qmd, log, hang = _qmd_that_hangs(tmp_path, "collection add")
    now = [time.time()]
    mem = _qmd_memory(tmp_path, workspace, make_memory, qmd, lambda: now[0], update={"updateTimeoutMs": 500})
    answer, took = _timed_search(mem)
    assert took < WELL_UNDER and "not set up yet" in answer["backendFallback"]["reason"]
    assert mem.backend.settle(30)  # the add timed out in the background: a failure on record
    reason = "qmd collection took longer than 0.5s and was stopped"
    answer, took = _timed_search(mem)
    assert took < WELL_UNDER and answer["backendFallback"]["reason"] == reason
    adds = log.read_text().count("collection add")
    now[0] += RETRY_SECONDS  # the retry time: the search that finds it does not pay the retry
    answer, took = _timed_search(mem)
    assert took < WELL_UNDER and answer["backendFallback"]["reason"] == reason
    assert mem.backend.settle(30) and log.read_text().count("collection add") == adds + 1  # retried, failed again
    answer, took = _timed_search(mem)
    assert took < WELL_UNDER and answer["backendFallback"]["reason"] == reason
    assert not _alive(log)
    hang.unlink()
    now[0] += RETRY_SECONDS
    _, took = _timed_search(mem)
    assert took < WELL_UNDER
    assert mem.backend.settle(30)
    answer, _ = _timed_search(mem)
    assert "backendFallback" not in answer and _asked(log) == 1


def test_a_qmd_hanging_on_search_is_found_by_the_setup_and_costs_a_search_at_most_its_timeout(tmp_path, workspace,
                                                                                            make_memory):
    import time

    from mnemoclaw.backends.qmd_state import RETRY_SECONDS

    qmd, log, hang = _qmd_that_hangs(tmp_path, "search")
    now = [time.time()]
    mem = _qmd_memory(tmp_path, workspace, make_memory, qmd, lambda: now[0],
                      limits={"timeoutMs": QMD_SEARCH_TIMEOUT * 1000})
    mem.sync()
    answer, took = _timed_search(mem)
    assert took < WELL_UNDER and "backendFallback" in answer
    assert mem.backend.settle(30)  # the setup's trial search hung and was stopped
    reason = f"qmd search took longer than {QMD_SEARCH_TIMEOUT:g}s and was stopped"
    answer, took = _timed_search(mem)
    assert took < WELL_UNDER and answer["backendFallback"]["reason"] == reason
    assert not _alive(log) and _asked(log) == 0  # no search of the question ever waited on it
    hang.unlink()
    now[0] += RETRY_SECONDS
    _, took = _timed_search(mem)
    assert took < WELL_UNDER
    assert mem.backend.settle(30)
    answer, _ = _timed_search(mem)
    assert "backendFallback" not in answer and _asked(log) == 1
    # a qmd that starts hanging once it is set up costs one search its timeout, and no more
    hang.write_text("1")
    answer, took = _timed_search(mem)
    assert QMD_SEARCH_TIMEOUT <= took < QMD_SEARCH_TIMEOUT + 2 and answer["backendFallback"]["reason"] == reason
    answer, took = _timed_search(mem)
    assert took < WELL_UNDER and answer["backendFallback"]["reason"] == reason
    mem.close()
    assert not _alive(log)


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


# (end of section 14)


# -- rough edges ---------------------------------------------------------------------------------


# (end of rough edges)
