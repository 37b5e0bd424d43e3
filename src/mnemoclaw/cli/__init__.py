"""The ``mnemoclaw`` command: the group and its shared edge (``app.py``), the commands by what they
do (``index.py``, ``serve.py``, ``chat.py``, ``manage.py``, ``bench.py``).

``main`` first lets a process that already serves this agent answer ``search`` and ``recall``
(``nearby.py``, standard library only); the commands are imported only when it runs them itself.
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
    from .nearby import ask

    asked = ask(sys.argv[1:])
    if asked.code is not None:
        sys.exit(asked.code)
    if asked.stdin is not None:  # read to be sent; the command reads it here instead
        import io

        sys.stdin = io.StringIO(asked.stdin)
    _commands()(prog_name="mnemoclaw")


def __getattr__(name: str) -> Any:
    if name == "cli":
        return _commands()
    raise AttributeError(name)
