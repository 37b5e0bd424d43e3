"""The BLAS thread limit, shared by everything in the process that multiplies matrices.

OpenBLAS keeps one thread count for the whole process, and its worker threads spin for a
while after each product before they sleep: a product on two threads beside other work (a
keyword query's two halves, a background batch, the rest of the machine) leaves a core
spinning. So every product mnemoclaw runs (the local embedder's, the in-memory vector
search's) runs on one BLAS thread under this limit, and the work is spread over threads of
our own instead (docs/speed.md, "Quiet and busy").
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)

class BlasLimit:
    """The process's BLAS thread limit while any of our products runs. BLAS libraries keep one
    limit for the whole process, so calls that each set and restore their own (a query beside
    a background batch) would undo each other mid-call: the first call in sets it, the last
    one out restores what was there."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._active: Any = None
        self._controller: Any = None

    @contextmanager
    def __call__(self, threads: int) -> Iterator[None]:
        with self._lock:
            if self._users == 0:
                self._active = self._limit(threads)
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0 and self._active is not None:
                    take_control()  # the last call out may run on another thread than the first in
                    self._active.restore_original_limits()
                    self._active = None

    def _limit(self, threads: int) -> Any:
        try:
            if self._controller is None:
                from threadpoolctl import ThreadpoolController

                self._controller = ThreadpoolController()  # finds the BLAS libraries once
            take_control()
            return self._controller.limit(limits=threads, user_api="blas")
        except Exception as exc:  # no threadpoolctl: BLAS keeps its own count
            log.debug("cannot limit BLAS threads: %s", exc)
            return None


def take_control() -> None:
    """Let this thread set OpenBLAS's limit. threadpoolctl lets only the first thread that set
    it set it again and silently ignores the others (measured: a background writer's limit did
    nothing, and its batches ran on every core's thread beside the searches); the refcount
    above already keeps our own calls from fighting over it."""
    try:
        from threadpoolctl import OpenBLASController

        OpenBLASController.clear_controlling_thread(force=True)
    except (ImportError, AttributeError):  # an older threadpoolctl: any thread may set it
        pass


blas_threads = BlasLimit()
