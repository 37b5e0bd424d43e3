"""Reading JSON that someone else wrote (a config, an export, a transcript, a provider's answer).

Python's JSON parsers recurse once per level of nesting, so a file nested some thousand levels
deep raises ``RecursionError``, which no ``except ValueError`` catches: a hostile or broken file
became a traceback. Here it is a ``ValueError`` like any other malformed input.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def loads(text: str | bytes, parser: Callable[[Any], Any] = json.loads) -> Any:
    """``parser(text)`` (``json.loads`` or ``json5.loads``); too deep a nesting is a ``ValueError``."""
    try:
        return parser(text)
    except RecursionError:
        raise ValueError("nested too deeply to read (more levels of brackets than any real file has)") from None
