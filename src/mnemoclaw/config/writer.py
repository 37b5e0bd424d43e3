"""The one writer of config files: a value changed as text (the user's comments and layout
kept), or the whole file parsed, changed and written back with a backup."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..errors import ConfigError
from .load import parse_object

# `workspace: "..."` in JSON5, the key quoted or not, the value in either quote
_WORKSPACE_VALUE = re.compile(
    r"""(?P<key>["']?\bworkspace["']?\s*:\s*)(?P<q>["'])(?P<value>(?:\\.|(?!(?P=q)).)*)(?P=q)""")


def set_workspace_value(config: Path, old: Path, new: Path) -> None:
    """Replace the one ``workspace`` value that names ``old`` by ``new``, as text: the file's
    comments and layout stay as the user wrote them."""
    text = config.read_text("utf-8")
    hits = [m for m in _WORKSPACE_VALUE.finditer(text)
            if Path(os.path.expanduser(m.group("value"))).absolute() == old]
    if len(hits) != 1:
        raise ConfigError(
            f"{config} does not name workspace {old} in exactly one place; set agents.defaults.workspace "
            f"to {str(new)!r} there by hand"
        )
    m = hits[0]
    value = str(new).replace("\\", "/")
    write_atomic(config, text[: m.start("value")] + value + text[m.end("value"):])


def rewrite_file(path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """Apply ``change`` to the config file at ``path`` (parsed, changed, written back as JSON in
    one rename); the old file is kept as ``<file>.bak``, which is returned. Comments are not
    kept (JSON5 has no round trip): ``set_workspace_value`` edits one value as text instead."""
    raw = path.read_text(encoding="utf-8")
    doc = parse_object(raw, path)
    change(doc)
    backup = Path(str(path) + ".bak")
    write_atomic(backup, raw)
    write_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return backup
