"""Why qmd is not used right now, and until when: one record for every process of an agent.

A process that finds qmd broken (missing, hanging, crashing, answering garbage) records it in
``fallback.json`` in the agent's qmd folder. Every other process (each CLI call, the MCP
server, the watcher) reads that record and answers from the builtin index at once, without
starting qmd, until the retry time; the first process to reach that time moves it on before it
tries qmd, so the others keep answering meanwhile. A successful qmd run removes the record.

The record names the qmd it is about (the executable's real path, size and time): a new
``memory.qmd.command`` or a reinstalled qmd is tried at once, not five minutes later. A record
that cannot be read, names another qmd, or whose times a clock change put out of reach means
"try qmd", never an error. When the file cannot be written (a read-only state dir) the failure
holds in this process only: each process finds it again, as before it was shared.

Beside it, ``set-up.json`` says what the last setup left qmd holding (``SetUpRecord``), so a
new process searches qmd at once instead of setting it up again.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..atomic import private_dir, write_atomic

log = logging.getLogger(__name__)

FILE = "fallback.json"
RETRY_SECONDS = 300.0  # after a failure, qmd is tried again this long later
SKEW = 60.0  # seconds a record's times may lie ahead of this clock before they are disbelieved
PUBLIC = ("from", "reason", "since", "retryAt")
# the temporary file write_atomic replaces the record with is named by the process: two backends
# of one process (a web page's "sync now" opens its own) must not write into it at once
_WRITING = threading.Lock()


class SharedFallback:
    """The fallback record of one agent's qmd (``folder``: the agent's qmd folder;
    ``identity``: which qmd is configured now, see ``QmdClient.identity``)."""

    def __init__(self, folder: Path, identity: Callable[[], str], clock: Callable[[], float] = time.time,
                 retry_seconds: float = RETRY_SECONDS):
        self.path = Path(folder) / FILE
        self.identity = identity
        self.clock = clock
        self.retry_seconds = retry_seconds
        self._mine: dict[str, Any] | None = None  # the failure this process could not write down
        self.unshared: str | None = None  # why it could not (None: the record is shared)

    def get(self) -> dict[str, Any] | None:
        """The failure on record for the qmd configured now, whether its retry time came or not."""
        found = self._read()
        if self._mine is not None and (found is None or found["retryAt"] < self._mine["retryAt"]):
            found = self._mine
        if found is None or found["qmd"] != self.identity():
            return None
        return found

    def due(self, record: dict[str, Any]) -> bool:
        return self.clock() >= float(record["retryAt"])

    def record(self, reason: str) -> dict[str, Any]:
        """qmd failed now: the builtin index answers for every process until the retry time
        (kept from an earlier record: since when qmd has been failing)."""
        now = self.clock()
        earlier = self.get()
        info = {"from": "qmd", "reason": reason, "since": earlier["since"] if earlier else now,
                "retryAt": now + self.retry_seconds, "qmd": self.identity()}
        try:
            private_dir(self.path.parent)
            with _WRITING:
                write_atomic(self.path, json.dumps(info))
        except OSError as exc:
            if self.unshared is None:
                log.info("qmd's failure is known to this process only: cannot write %s (%s)", self.path,
                         exc.strerror or exc)
            self.unshared = f"{self.path}: {exc.strerror or exc}"
            self._mine = info
        else:
            self.unshared = None
            self._mine = None
        return info

    def clear(self) -> None:
        """qmd served: no process needs to avoid it any longer."""
        self._mine = None
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:  # a read-only state dir: the record stays until its retry time
            log.debug("cannot remove %s: %s", self.path, exc)

    @staticmethod
    def public(record: dict[str, Any]) -> dict[str, Any]:
        """What an answer and ``status`` show of a record."""
        return {k: record[k] for k in PUBLIC}

    def _read(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("from") != "qmd" or not isinstance(data.get("reason"), str) \
                or not isinstance(data.get("qmd"), str):
            return None
        since, retry = data.get("since"), data.get("retryAt")
        if not isinstance(since, int | float) or not isinstance(retry, int | float):
            return None
        now = self.clock()
        # a record from the future (the clock was set back, or it was copied from another
        # machine) would hold qmd off for longer than a retry period: try qmd instead
        if since > now + SKEW or retry > now + self.retry_seconds + SKEW:
            return None
        return data


SET_UP = "set-up.json"
Held = frozenset[tuple[str, str, str]]  # qmd's collections: (name, folder, pattern)


class SetUpRecord:
    """What the last setup of an agent's qmd left it holding: which qmd (``QmdClient.identity``),
    its version and the collections. A process whose config wants those collections of that qmd
    searches it at once, instead of waiting for a setup of its own (each CLI call is a new
    process). Removed when a collection is found missing; unreadable means "set it up"."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / SET_UP

    def get(self, identity: str) -> tuple[tuple[int, ...], Held] | None:
        """(version, collections) set up for the qmd ``identity`` names, or None."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data["qmd"] != identity:
                return None
            version = tuple(int(v) for v in data["version"])
            held = frozenset((str(n), str(p), str(m)) for n, p, m in data["collections"])
        except (OSError, ValueError, TypeError, KeyError):
            return None
        return version, held

    def put(self, identity: str, version: tuple[int, ...], held: Held) -> None:
        try:
            with _WRITING:
                write_atomic(self.path, json.dumps({"qmd": identity, "version": list(version),
                                                    "collections": sorted(held)}))
        except OSError as exc:  # a read-only state dir: each process sets qmd up for itself
            log.debug("cannot write %s: %s", self.path, exc)

    def forget(self) -> None:
        try:
            self.path.unlink()
        except OSError:
            pass
