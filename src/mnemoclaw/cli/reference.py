"""The references generated from the code so they cannot drift: every key of the config schema
with its default, what it accepts and what it does (docs/config.md), every command with its
options (docs/cli.md), the layers, rooms and protocols (docs/architecture.md, and the layout
table in the README). ``tests/cli/test_reference.py`` fails when one is not what this module
writes; ``python -m mnemoclaw.cli.reference`` writes them.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import click

from ..config import (
    MEMORY,
    MEMORY_SEARCH,
    OPENCLAW_APPLIED,
    OPENCLAW_FTS_NOT_APPLIED,
    OPENCLAW_NOT_APPLIED,
    OPENCLAW_SEARCH_NOT_APPLIED,
    F,
)
from ..runtime.settings import REFERENCE as RUNTIME
from .architecture import architecture_md, layout_table

DOCS = Path(__file__).resolve().parents[3] / "docs"


def _accepts(spec: F) -> str:
    if spec.kind == "choice":
        return " / ".join(f"`{c}`" for c in spec.choices)
    if spec.kind == "provider":
        return "a registered provider, `auto`, `none`"
    if spec.kind == "list[str]" and spec.choices:
        return "a list of " + " / ".join(f"`{c}`" for c in spec.choices)
    rng = ""
    if spec.lo is not None or spec.hi is not None:
        lo = "" if spec.lo is None else f"{spec.lo:g}"
        hi = "" if spec.hi is None else f"{spec.hi:g}"
        rng = f" {lo}…{hi}"
    text = {"bool": "true / false", "int": "whole number", "float": "number", "str": "text",
            "list[str]": "list of text", "dict[str,str]": "object of text"}.get(spec.kind, spec.kind)
    return text + rng + (" or null" if spec.nullable else "")


def _default(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).replace("'", '"')


def _leaves(schema: dict[str, Any], prefix: str) -> list[tuple[str, F]]:
    out = []
    for key, spec in schema.items():
        if isinstance(spec, dict):
            out += _leaves(spec, f"{prefix}{key}.")
        else:
            out.append((prefix + key, spec))
    return out


def undocumented() -> list[str]:
    """Keys of the schema without a ``doc``."""
    return [path for schema, prefix in ((MEMORY_SEARCH, "memorySearch."), (MEMORY, "memory."))
            for path, spec in _leaves(schema, prefix) if not spec.doc.strip()]


def config_reference() -> str:
    lines = ["# Configuration reference", "",
             "Generated from the code (`python -m mnemoclaw.cli.reference`; a test fails when this file is stale).",
             "One JSON5 file with OpenClaw's key names, in either of its shapes: `memory.search.*` (per",
             "agent in `agents.entries.<id>.memory.search`, OpenClaw's since 2026-07-22) or",
             "`agents.defaults.memorySearch.*` (per agent in `agents.list[]`); `memory.*`; and the keys the",
             "chat runtime reads. Both shapes take the keys below. In one file, an agent's setting wins over",
             "every agent's, and at one level `memory.search` wins over `agents.defaults.memorySearch`",
             "(a key both set differently is named once; docs/openclaw.md). A key not listed here is named",
             "as unknown (or, for OpenClaw's own sections, accepted and left alone); a bad value is refused",
             "with the key and what it accepts.", ""]
    for title, schema, prefix in (("`agents.defaults.memorySearch`", MEMORY_SEARCH, ""), ("`memory`", MEMORY, "")):
        lines += [f"## {title}", "", "| key | default | accepts | what it does |", "|---|---|---|---|"]
        for path, spec in _leaves(schema, prefix):
            lines.append(f"| `{path}` | `{_default(spec.default)}` | {_accepts(spec)} | {spec.doc} |")
        lines.append("")
    lines += ["## OpenClaw keys read and not applied", "",
              "Accepted, never a failure, and named by `mnemoclaw status` (NOT IN EFFECT) with what runs instead.",
              "", "| key | what runs instead |", "|---|---|"]
    lines += [f"| `memory.search.{key}` | {instead} |" for key, instead in OPENCLAW_SEARCH_NOT_APPLIED.items()]
    lines += ["| `memory.search.store.fts.tokenizer` | " + OPENCLAW_FTS_NOT_APPLIED + " |",
              "| `memory.search.extraPaths[].pattern` | every Markdown file under the entry's `path` is indexed |"]
    lines += [f"| `{key}` | {state + ': ' if state != 'not applied' else ''}{instead} |"
              for key, (state, instead) in OPENCLAW_NOT_APPLIED.items()]
    lines += ["", "## OpenClaw keys read and applied", "", "| key | how |", "|---|---|"]
    lines += [f"| `{key}` | {how} |" for key, how in OPENCLAW_APPLIED.items()]
    lines.append("")
    lines += ["## The chat runtime (`mnemoclaw chat`, docs/runtime.md)", "",
              "| key | default | what it does |", "|---|---|---|"]
    lines += [f"| `{key}` | {default} | {doc} |" for key, default, doc in RUNTIME]
    return "\n".join(lines) + "\n"


def cli_reference() -> str:
    from . import cli

    lines = ["# Command reference", "",
             "Generated from the code (`python -m mnemoclaw.cli.reference`; a test fails when this file is stale).",
             "Every command also takes `--workspace DIR`, `--state-dir DIR`, `--config FILE` and",
             "`--openclaw [DIR]`, before or after its name.", ""]
    ctx = click.Context(cli, info_name="mnemoclaw")
    for name in sorted(cli.commands):
        cmd = cli.commands[name]
        args = " ".join(p.human_readable_name for p in cmd.params if isinstance(p, click.Argument))
        lines += [f"## `mnemoclaw {name}{' ' + args if args else ''}`", "", inspect.cleandoc(cmd.help or ""), ""]
        options = [p for p in cmd.params if isinstance(p, click.Option)
                   and not set(p.opts) & {"--workspace", "--state-dir", "--config", "--openclaw", "-w", "--help"}]
        for opt in options:
            record = opt.get_help_record(click.Context(cmd, parent=ctx, info_name=name))
            if record:
                flags, text = record
                lines.append(f"- `{flags}`: {text}")
        if options:
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


LAYOUT_START = "<!-- layout: written by python -m mnemoclaw.cli.reference -->"
LAYOUT_END = "<!-- end of layout -->"


def readme_with_layout(readme: str) -> str:
    """The README with its layout table as the plan has it (between the two markers)."""
    start, end = readme.index(LAYOUT_START) + len(LAYOUT_START), readme.index(LAYOUT_END)
    return readme[:start] + "\n" + layout_table() + readme[end:]


def write(folder: Path = DOCS) -> list[Path]:
    written = []
    for name, text in (("config.md", config_reference()), ("cli.md", cli_reference()),
                       ("architecture.md", architecture_md())):
        path = folder / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    readme = folder.parent / "README.md"
    if readme.is_file():
        readme.write_text(readme_with_layout(readme.read_text("utf-8")), encoding="utf-8")
        written.append(readme)
    return written


if __name__ == "__main__":  # pragma: no cover - the documented way to regenerate
    for path in write(Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS):
        print(path)
