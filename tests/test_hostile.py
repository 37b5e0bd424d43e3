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
# One workspace synced between two hosts (file sync gives each copy its own mtime), indexed into
# one namespace by `mnemoclaw` processes of their own, each named by MNEMOCLAW_HOST. 136 files:
# a search indexes 64 changed files itself, so the finding's "0 of 72 changed files" showed.
def _synced_workspaces(tmp_path, files=136):
    import os

    from conftest import write

    laptop, server = tmp_path / "laptop", tmp_path / "server"
    for i in range(files):
        for ws, offset in ((laptop, 0), (server, 3600)):
            path = write(ws / "memory" / f"2026-01-{i:03d}.md", f"- note {i}: the walrus count was {i * 7}\n")
            stamp = (1_767_225_600 + i * 60 + offset) * 10**9  # the same content, another mtime on each host
            os.utime(path, ns=(stamp, stamp))
    return laptop, server, files


def _index(run, host, ws):
    import json

    done = run(host, ws, "index", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _says_nothing_of_partial_indexing(run, host, ws):
    import json

    found = run(host, ws, "search", "walrus count")
    assert found.returncode == 0, found.stderr
    assert "walrus count" in found.stdout
    for words in ("partly indexed", "being indexed", "changed files", "dirty"):
        assert words not in found.stderr + found.stdout, (host, found.stderr)
    status = run(host, ws, "status", "--json")
    assert status.returncode == 0, status.stderr
    st = json.loads(status.stdout)
    assert st["dirty"] is False and st["indexing"] is None, (host, st)


def test_two_hosts_with_one_synced_workspace_find_it_indexed_after_each_ran_index(tmp_path):
    from test_postgres import _host_cli

    from conftest import postgres_url

    run = _host_cli(tmp_path, postgres_url(fresh=True))
    laptop, server, files = _synced_workspaces(tmp_path)
    assert _index(run, "laptop", laptop)["added"] == files
    # the server's copies have other mtimes and the same content: recognised by their hash
    first = _index(run, "server", server)
    assert (first["added"], first["changed"], first["unchanged"]) == (0, 0, files)
    # and it stays so: neither host's sync makes the files look changed to the other
    where = {"laptop": laptop, "server": server}
    for host, other in (("laptop", "server"), ("server", "laptop")):
        again = _index(run, host, where[host])
        assert (again["added"], again["changed"], again["unchanged"]) == (0, 0, files), (host, again)
        _says_nothing_of_partial_indexing(run, other, where[other])


def test_a_file_changed_on_one_host_is_indexed_again_and_a_copy_with_only_another_mtime_is_not(tmp_path):
    import json
    import os
    import time

    from test_postgres import _host_cli

    from conftest import postgres_url, write

    run = _host_cli(tmp_path, postgres_url(fresh=True))
    laptop, server, files = _synced_workspaces(tmp_path)
    _index(run, "laptop", laptop)
    _index(run, "server", server)
    # a note edited on the laptop: its hash differs, it is indexed again
    write(laptop / "memory" / "2026-01-005.md", "- note 5: the walrus count was revised to 4242\n")
    edited = _index(run, "laptop", laptop)
    assert (edited["changed"], edited["unchanged"]) == (1, files - 1)
    # file sync brings the edit to the server, with the server's own mtime: nothing to index there
    write(server / "memory" / "2026-01-005.md", "- note 5: the walrus count was revised to 4242\n")
    synced = _index(run, "server", server)
    assert (synced["changed"], synced["unchanged"]) == (0, files)
    # a touch (another mtime, the same content) is no change either
    now = time.time_ns()
    os.utime(server / "memory" / "2026-01-009.md", ns=(now, now))
    assert _index(run, "server", server)["changed"] == 0
    # an edit on the server: indexed again from the server's copy, and once file sync has brought
    # it to the laptop, the laptop's copy is the same content, not a change
    for ws, host in ((server, "server"), (laptop, "laptop")):
        write(ws / "memory" / "2026-01-009.md", "- note 9: the walrus count was 63, then 64\n")
        assert _index(run, host, ws)["changed"] == (1 if host == "server" else 0), host
    for query, path in (("walrus count revised 4242", "memory/2026-01-005.md"),
                        ("walrus count 63 then 64", "memory/2026-01-009.md")):
        found = run("laptop", laptop, "search", query, "--json")
        assert json.loads(found.stdout)["results"][0]["path"] == path, found.stdout
    # the laptop's syncs left the server's record of its own copies alone
    _says_nothing_of_partial_indexing(run, "server", server)


# (end of section 13)


# -- 14. MCP over HTTP forgets idle sessions -----------------------------------------------------


# (end of section 14)


# -- rough edges ---------------------------------------------------------------------------------


# (end of rough edges)
