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
# A `watch` stopped with SIGSTOP (or hung) still accepts on its socket: the command line waited 30 s
# for it, and a hook (10 s in docs/recall.md's example) recalled nothing on every prompt.
def _s7_mnemoclaw(argv, env, stdin=""):
    """A real `mnemoclaw` process: (exit code, stdout, stderr, seconds)."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    exe = str(Path(sys.executable).with_name("mnemoclaw"))
    started = time.monotonic()
    run = subprocess.run([exe, *argv], input=stdin, capture_output=True, text=True, env=env, timeout=120)
    return run.returncode, run.stdout, run.stderr, time.monotonic() - started


S7_NOTES = ("# Memory\n\n- The deploy server is atlas-7, in rack 12.\n"
            "- We chose PostgreSQL for the billing database in March.\n")
S7_PROMPT = '{"prompt": "deploy to atlas-7 now"}'


def _s7_agent(tmp_path, config=None):
    """A workspace with two notes, indexed; its environment (keyword-only unless ``config``)."""
    import os

    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    (ws / "MEMORY.md").write_text(S7_NOTES, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOCLAW_", "OPENCLAW_"))}
    env["MNEMOCLAW_STATE_DIR"] = str(state)
    if config is None:
        env["MNEMOCLAW_PROVIDER"] = "none"
    else:
        state.mkdir()
        (state / "config.json5").write_text(config, encoding="utf-8")
    assert _s7_mnemoclaw(["--workspace", str(ws), "index"], env)[0] == 0
    return ws, state, env


def _s7_watch(ws, state, env):
    """A real `mnemoclaw watch`, once it serves over its socket."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    exe = str(Path(sys.executable).with_name("mnemoclaw"))
    watch = subprocess.Popen([exe, "--workspace", str(ws), "watch"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not list((state / "serving").glob("*.server")):
        assert watch.poll() is None and time.monotonic() < deadline, "watch did not start serving"
        time.sleep(0.05)
    return watch


def _s7_end(proc):
    import signal

    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        proc.wait(timeout=30)


def test_a_stopped_or_hung_server_is_given_up_on_and_the_command_answers_itself(tmp_path):
    import os
    import signal
    import socket

    ws, state, env = _s7_agent(tmp_path)
    alone = {**env, "MNEMOCLAW_NEARBY": "off"}
    base = ["--workspace", str(ws)]
    hook = [*base, "recall", "--hook", "--timeout-ms", "20000"]
    _, search_alone, _, t_search = _s7_mnemoclaw([*base, "search", "billing database"], alone)
    _, hook_alone, _, t_hook = _s7_mnemoclaw(hook, alone, S7_PROMPT)
    assert "rack 12" in search_alone and "atlas-7" in hook_alone
    watch = _s7_watch(ws, state, env)
    try:
        os.kill(watch.pid, signal.SIGSTOP)  # as Ctrl-Z in its terminal: the kernel still accepts on its socket
        code, out, err, took = _s7_mnemoclaw([*base, "search", "billing database"], env)
        assert code == 0 and out == search_alone, err
        assert err == (f"mnemoclaw: process {watch.pid} (watch) is stopped (Ctrl-Z or SIGSTOP; `kill -CONT "
                       f"{watch.pid}` resumes it) and cannot answer; running on its own\n"), err
        assert took < t_search + 1.5, (took, t_search)  # not thirty seconds
        code, out, err, took = _s7_mnemoclaw(hook, env, S7_PROMPT)
        assert code == 0 and out == hook_alone and err.count("\n") == 1 and "is stopped" in err, err
        assert took < t_hook + 1.5, (took, t_hook)
        # at the default deadline (3 s), whatever this machine's speed: never longer, always exit 0
        code, out, err, took = _s7_mnemoclaw([*base, "recall", "--hook"], env, S7_PROMPT)
        assert code == 0 and took < 3.0 + 1.0, (took, err)
        assert out == hook_alone or (out == "" and "3000 ms deadline passed" in err), (out, err)
    finally:
        _s7_end(watch)
    # hung rather than stopped: a live process whose socket accepts and never answers
    mute = socket.socket(socket.AF_UNIX)
    mute.bind(str(tmp_path / "mute.sock"))
    mute.listen(4)
    record = state / "serving" / f"{os.getpid()}.server"
    record.write_text(f"pid={os.getpid()}\nsocket={tmp_path / 'mute.sock'}\ncommand=watch\n", encoding="utf-8")
    try:
        code, out, err, took = _s7_mnemoclaw([*base, "search", "billing database"], env)
        assert code == 0 and out == search_alone and err == (
            f"mnemoclaw: process {os.getpid()} (watch) did not answer within 1 s (stopped or hung?); running on its "
            "own\n"), err
        assert took < t_search + 2.5, (took, t_search)
        code, out, err, took = _s7_mnemoclaw(hook, env, S7_PROMPT)
        assert code == 0 and out == hook_alone and "did not answer within 1 s" in err and took < t_hook + 2.5, err
    finally:
        mute.close()


def test_a_working_server_is_waited_for_and_a_hook_ends_at_its_deadline(tmp_path):
    """A server that is slow but alive (here its embedding provider takes 2 s a request) says so
    while it works: the command waits for its answer past the one second a silent one gets; a
    hook's run still ends at its deadline."""
    from provider_server import KEY, ProviderServer

    with ProviderServer("openai") as srv:
        config = (f'{{ agents: {{ defaults: {{ memorySearch: {{ provider: "openai", '
                  f'remote: {{ baseUrl: "{srv.base_url}", apiKey: "{KEY}" }} }} }} }} }}')
        ws, state, env = _s7_agent(tmp_path, config)
        srv.delay = 2.0
        watch = _s7_watch(ws, state, env)
        try:
            code, out, err, took = _s7_mnemoclaw(["-v", "--workspace", str(ws), "search", "which rack holds atlas"],
                                                 env)
            assert code == 0 and "rack 12" in out and f"answered by process {watch.pid} (watch)" in err, err
            assert took > 2.0 and "did not answer" not in err  # it waited for the query's embedding
            code, out, err, took = _s7_mnemoclaw(["--workspace", str(ws), "recall", "--hook", "--timeout-ms",
                                                  "1200"], env, '{"prompt": "the billing database in March?"}')
            assert (code, out) == (0, "") and err.count("\n") == 1, err
            assert f"the 1200 ms deadline passed while waiting for process {watch.pid} (watch)" in err, err
            assert 1.2 <= took < 1.2 + 1.0, took
        finally:
            _s7_end(watch)


def test_a_hook_s_deadline_ends_work_in_process_and_leaves_the_index_sound(tmp_path):
    """No server: the run's own work (here embedding a changed note while holding the index's
    write lock) is cut at the deadline, exit 0; the next run finds the index sound."""
    import json
    import re

    from provider_server import KEY, ProviderServer

    with ProviderServer("openai") as srv:
        config = (f'{{ agents: {{ defaults: {{ memorySearch: {{ provider: "openai", '
                  f'remote: {{ baseUrl: "{srv.base_url}", apiKey: "{KEY}" }} }} }} }} }}')
        ws, state, env = _s7_agent(tmp_path, config)
        base = ["--workspace", str(ws)]
        with open(ws / "MEMORY.md", "a", encoding="utf-8") as fh:
            fh.write("- The staging cluster moved to Frankfurt in May.\n")
        srv.delay = 20.0
        code, out, err, took = _s7_mnemoclaw([*base, "recall", "--hook", "--timeout-ms", "1500"], env,
                                             '{"prompt": "where did the staging cluster move?"}')
        assert (code, out) == (0, "") and err.count("\n") == 1, err
        assert "the 1500 ms deadline passed while searching memory" in err and took < 1.5 + 1.0, (took, err)
        assert any("Frankfurt" in json.dumps(r.get("body")) for r in srv.log)  # cut while it embedded the change
        srv.delay = 0.0
        code, out, err, _ = _s7_mnemoclaw([*base, "index", "--no-wait"], env)  # no lock left held, no damage
        assert code == 0 and "1 changed" in out and "Skipped" not in err, (out, err)
        code, out, _, _ = _s7_mnemoclaw([*base, "search", "staging cluster Frankfurt"], env)
        assert "Frankfurt" in out
        code, out, _, _ = _s7_mnemoclaw([*base, "status"], env)
        assert code == 0 and re.search(r"^state +clean$", out, re.M), out
        # a deadline of one millisecond ends the run before it has even read its settings
        code, out, err, took = _s7_mnemoclaw([*base, "recall", "--hook", "--timeout-ms", "1"], env, S7_PROMPT)
        assert (code, out) == (0, "") and "the 1 ms deadline passed" in err and took < 1.0, (took, err)


# (end of section 7)


# -- 8. a hanging qmd does not hold a search -----------------------------------------------------


# (end of section 8)


# -- 9. recall --hook says what is wrong and creates nothing -------------------------------------
# A wrong workspace, no config, or input that is not JSON: the hook exited 0 with both streams empty
# (and made a state folder and an index for the workspace that does not exist).


def _s9_hook(tmp_path, argv, stdin, **env_extra):
    """`mnemoclaw [argv] recall --hook` in a real process, with a state dir that does not exist yet."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOCLAW_", "OPENCLAW_"))}
    env.update({"MNEMOCLAW_STATE_DIR": str(tmp_path / "state"), "MNEMOCLAW_PROVIDER": "none", **env_extra})
    exe = str(Path(sys.executable).with_name("mnemoclaw"))
    return subprocess.run([exe, *argv], input=stdin, capture_output=True, text=True, env=env, timeout=120,
                          cwd=tmp_path)


def test_recall_hook_names_a_wrong_workspace_no_config_and_input_that_is_not_json_and_creates_nothing(tmp_path):
    prompt = '{"prompt": "where does the deploy server live?"}'
    missing = tmp_path / "no-such-notes"
    cases = [
        (["--workspace", str(missing), "recall", "--hook"], prompt,
         [f"the workspace {missing} does not exist", f"`mnemoclaw init --workspace {missing}`", "--workspace DIR"]),
        (["recall", "--hook"], prompt,  # no config file, no --workspace: the default workspace is not there
         [f"no config file ({tmp_path / 'state' / 'config.json5'}) names a workspace",
          str(tmp_path / "state" / "workspace"), "--workspace DIR", "`mnemoclaw init`"]),
        (["--workspace", str(missing), "recall", "--hook"], "where does the deploy server live?",
         ["the input is not the hook's JSON", "`mnemoclaw recall -`"]),
        (["--workspace", str(missing), "recall", "--hook"], '{"session_id": "s1"}', ["has no prompt"]),
    ]
    for argv, stdin, said in cases:
        run = _s9_hook(tmp_path, argv, stdin)
        assert run.returncode == 0 and run.stdout == "", (argv, run.stdout, run.stderr)
        assert run.stderr.count("\n") == 1 and run.stderr.startswith("mnemoclaw recall --hook: "), run.stderr
        assert all(s in run.stderr for s in said) and "nothing recalled" in run.stderr, (said, run.stderr)
        assert not (tmp_path / "state").exists() and not missing.exists(), argv
    # the same for a workspace that does exist but is empty: searched (nothing to find), quietly
    (tmp_path / "notes").mkdir()
    run = _s9_hook(tmp_path, ["--workspace", str(tmp_path / "notes"), "recall", "--hook"], prompt)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", ""), run.stderr


def test_a_hook_s_usage_error_does_not_block_the_prompt(tmp_path):
    """Claude Code reads exit code 2, click's code for a usage error, as "block this prompt"."""
    (tmp_path / "notes").mkdir()
    for argv in (["recall", "--hook", "--no-such-option"], ["recall", "--hook", "--timeout-ms", "soon"]):
        run = _s9_hook(tmp_path, ["--workspace", str(tmp_path / "notes"), *argv], '{"prompt": "hello"}')
        assert run.returncode == 0 and run.stdout == "" and "Error:" in run.stderr, (argv, run.stderr)
    run = _s9_hook(tmp_path, ["--workspace", str(tmp_path / "notes"), "search", "--no-such-option", "x"], "")
    assert run.returncode == 2  # only a hook's run is spared


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
