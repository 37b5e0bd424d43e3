"""The layers of README's Layout section, kept true by reading every import.

A module may import its own layer or a lower one; an arrow that points up fails here,
and so does anything outside ``store/`` that imports a store's internals (only
``store.open_store`` builds a store, everything else is written against ``store.base``).
Imports inside functions and under TYPE_CHECKING count: they are dependencies too.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

SRC = REPO / "src" / "mnemoclaw"

# module prefix -> layer; the longest prefix that matches a module decides
LAYERS = {
    # 0: plain data and errors
    "errors": 0, "types": 0, "atomic": 0, "vectors": 0,
    # 1: pure
    "text": 1, "markdown": 1, "search.fusion": 1, "search.bm25": 1, "search.keyword": 1, "search.relevance": 1,
    "search.snippets": 1, "index.planning": 1,
    "sessions": 1, "sessions.openclaw": 2, "tools": 1, "eval.metrics": 1,
    # 2: ports: databases, models, HTTP, files, locks
    "store": 2, "embeddings": 2, "locks": 2, "notes.discovery": 2, "notes.tombstones": 2, "serve.http": 2,
    # 3: orchestration
    "index": 3, "search": 3, "backends": 3, "freshness": 3,
    # 4: the composition root
    "config": 4, "notes": 4, "embeddings.resolve": 4, "api": 4, "tools.recall": 4,
    # 5: what is built on Memory: the chat runtime, the evaluation harness, the servers
    "runtime": 5, "eval": 5, "serve": 5, "ui": 5,
    # 6: the command line
    "cli": 6, "serve.nearby": 6, "__init__": 6,
}
STORE_INTERNALS = ("store.sqlite", "store.sqlite_schema", "store.driver", "store.dense", "store.postgres")


def layer_of(module: str) -> int:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYERS:
            return LAYERS[prefix]
    raise AssertionError(f"mnemoclaw.{module} has no layer in tests/test_layering.py; give it one")


def modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports(module: str, path: Path) -> set[str]:
    """The mnemoclaw modules ``module`` imports, relative imports resolved."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name[len("mnemoclaw."):] for a in node.names if a.name.startswith("mnemoclaw.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1] if node.level > 1 else package
                target = ".".join([*base, node.module] if node.module else base)
            elif node.module and node.module.startswith("mnemoclaw"):
                target = node.module[len("mnemoclaw."):] if node.module != "mnemoclaw" else ""
            else:
                continue
            for alias in node.names:  # `from . import tools` imports the module tools
                candidate = f"{target}.{alias.name}" if target else alias.name
                found.add(candidate if candidate in ALL else target)
    return {m for m in found if m and m != module}


ALL = modules()


def test_every_import_points_down_or_sideways():
    wrong = []
    for module, path in sorted(ALL.items()):
        if module in ("", "__main__"):
            continue
        mine = layer_of(module)
        for target in sorted(imports(module, path)):
            if target not in ALL:
                continue
            if layer_of(target) > mine:
                wrong.append(f"{module} (layer {mine}) imports {target} (layer {layer_of(target)})")
    assert not wrong, "imports that point up:\n" + "\n".join(wrong)


def test_only_the_store_package_touches_a_store_s_internals():
    wrong = [f"{module} imports {target}" for module, path in sorted(ALL.items()) if not module.startswith("store")
             for target in imports(module, path) if target.startswith(STORE_INTERNALS)]
    assert not wrong, "\n".join(wrong)


def test_the_layer_map_covers_every_module():
    for module in ALL:
        if module:
            layer_of(module)


def _protocol_members() -> set[str]:
    """Every member a protocol of the seams declares (the stores, backends, providers, the
    notes side's index): what a caller reaches through the protocol, never by name."""
    members: set[str] = set()
    for rel in ("store/base.py", "backends/base.py", "embeddings/base.py", "notes/handle.py"):
        tree = ast.parse((SRC / rel).read_text("utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(
                    (isinstance(b, ast.Name) and b.id == "Protocol") or
                    (isinstance(b, ast.Subscript) and getattr(b.value, "id", "") == "Protocol") for b in node.bases):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        members.add(item.name)
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        members.add(item.target.id)
    return members - {"__init__"}


def test_no_protocol_member_is_found_by_name():
    """An optional capability is a protocol a caller checks with isinstance; getattr/hasattr of
    a protocol's member is a seam gone around (what mypy cannot see)."""
    members = _protocol_members()
    assert {"keyword_candidates", "shared_file", "bulk_load", "embed_batch_size",
            "endpoint", "cache_dir"} <= members
    wrong = []
    for module, path in sorted(ALL.items()):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in members):
                wrong.append(f"{module}:{node.lineno} {node.func.id}(…, {node.args[1].value!r})")
    assert not wrong, "\n".join(wrong)


def test_no_store_protocol_is_wider_than_a_dozen_members():
    """A wide seam gathers every new feature until callers go around it: each slice of the
    store is cut by job, and ``Store`` is only their union."""
    tree = ast.parse((SRC / "store" / "base.py").read_text("utf-8"))
    widths = {node.name: sum(isinstance(item, (ast.FunctionDef, ast.AnnAssign)) for item in node.body)
              for node in tree.body if isinstance(node, ast.ClassDef)
              and any(isinstance(b, ast.Name) and b.id == "Protocol" for b in node.bases)}
    assert {"FileIndex", "WriteLock", "Rebuilds", "Health", "Purge", "Handle", "Store"} <= set(widths)
    assert widths["Store"] == 0
    assert not {name: n for name, n in widths.items() if n > 12}
