"""The ``mnemoclaw`` command: the group and its shared edge (``app.py``), the commands by what they
do (``index.py``, ``serve.py``, ``chat.py``, ``manage.py``, ``bench.py``)."""

from . import bench, chat, index, manage, serve  # noqa: F401 - each module adds its commands to the group
from .app import cli, main

__all__ = ["cli", "main"]
