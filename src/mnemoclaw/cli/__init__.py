"""The ``mnemoclaw`` command: the group and its shared edge (``app.py``), the commands by what they
do (``index.py``, ``serve.py``, ``chat.py``, ``manage.py``, ``bench.py``).

``main`` first lets a process that already serves this agent answer ``search`` and ``recall``
(``serve/nearby_client.py``, standard library only); the commands are imported only when it runs them itself.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs milliseconds on every prompt a hook answers
if TYPE_CHECKING:
    from typing import Any

__all__ = ["cli", "main"]


def _commands() -> Any:
    from . import bench, chat, index, manage, serve  # noqa: F401 - each module adds its commands to the group
    from .app import cli

    return cli


def main() -> None:
    import time

    started = time.monotonic()  # a hook's deadline counts from here (cli/hook.py)
    from ..serve.nearby_client import ask
    from .hook import timeout_ms

    ms = timeout_ms(sys.argv[1:])
    deadline = None if ms is None else started + ms / 1000
    asked = ask(sys.argv[1:], deadline=deadline)
    if asked.code is not None:
        sys.exit(asked.code)
    if asked.stdin is not None:  # read to be sent; the command reads it here instead
        import io

        sys.stdin = io.StringIO(asked.stdin)
    if deadline is None or ms is None:
        _commands()(prog_name="mnemoclaw")
        return
    from .hook import run

    run(lambda: _commands()(prog_name="mnemoclaw"), deadline, ms)


def __getattr__(name: str) -> Any:
    if name == "cli":
        return _commands()
    raise AttributeError(name)
