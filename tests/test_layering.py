"""The layers of README's Layout section, kept true by reading every import.

A module may import its own layer or a lower one; an arrow that points up fails here,
and so does anything outside ``store/`` that imports a store's internals (only
``store.open_store`` builds a store, everything else is written against ``store.base``),
and so does a circle of modules importing each other, even sideways.
Imports inside functions and under TYPE_CHECKING count: they are dependencies too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from mnemoclaw.cli.architecture import LAYERS as PLANNED

from conftest import REPO

SRC = REPO / "src" / "mnemoclaw"

# module prefix -> layer (the plan, src/mnemoclaw/cli/architecture.py); the longest prefix decides
LAYERS = PLANNED
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
    if module == "__init__":  # the package itself
        package = []
    else:
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
                found.add(candidate if candidate in ALL else target or "__init__")
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


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Circles of imports, each as the path ``a, b, …, a``: at least one through every group of
    modules that import each other (a depth-first walk, where an import of a module still on the
    walk's path closes a circle)."""
    found: list[list[str]] = []
    done: set[str] = set()
    path: list[str] = []

    def walk(module: str) -> None:
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if target in path:
                found.append([*path[path.index(target):], target])
            elif target not in done:
                walk(target)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            walk(module)
    return found


def test_no_modules_import_each_other():
    """Two modules that import each other (directly or round a longer circle) are one module
    cut in two: each can only be read, tested and imported with the other."""
    graph = {module: {t for t in imports(module, path) if t in ALL} for module, path in ALL.items()}
    assert sum(map(len, graph.values())) > 300  # the graph is read, not empty
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [["a", "b", "c", "a"]]
    found = cycles(graph)
    assert not found, "modules that import each other:\n" + "\n".join(" -> ".join(c) for c in found)


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


# -- the house's measures (issue: "Tools beside Memory") ----------------------------------------
MEMORY_MEMBERS = 15  # Memory is the composition root: open/close, sync, search, read, status, the handles
MEMORY_LINES = 300
PROTOCOL_MEMBERS = 12  # a protocol with more gathers every feature; cut it by job
TOP_LEVEL_MODULES = 14
FILE_LINES = 700


def _memory_class() -> ast.ClassDef:
    tree = ast.parse((SRC / "api.py").read_text("utf-8"))
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Memory")


def test_memory_is_a_composition_root_of_few_members():
    cls = _memory_class()
    members = {n.name for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
               and not n.name.startswith("_")}
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    members |= {t.attr for node in ast.walk(init) if isinstance(node, ast.Assign | ast.AnnAssign)
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                and not t.attr.startswith("_")}
    assert len(members) <= MEMORY_MEMBERS, sorted(members)
    lines = cls.end_lineno - cls.lineno + 1  # type: ignore[operator]
    assert lines <= MEMORY_LINES, f"Memory is {lines} lines"


def test_no_code_outside_the_backends_tests_for_a_concrete_backend():
    concrete = re.compile(r"isinstance\([^)]*(Builtin|Qmd)Backend")
    wrong = [f"{p.relative_to(SRC)}:{i}" for p in SRC.rglob("*.py") if "backends" not in p.parts
             for i, line in enumerate(p.read_text("utf-8").splitlines(), 1) if concrete.search(line)]
    assert not wrong, wrong


def test_no_module_answers_for_names_it_does_not_have():
    """A ``__getattr__`` proxy is a seam gone around; only a package's face may hand names on lazily."""
    wrong = [f"{p.relative_to(SRC)}:{node.lineno}" for p in SRC.rglob("*.py") if p.name != "__init__.py"
             for node in ast.walk(ast.parse(p.read_text("utf-8")))
             if isinstance(node, ast.FunctionDef) and node.name == "__getattr__"]
    assert not wrong, wrong


def _protocols() -> list[tuple[str, int]]:
    out = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                    (isinstance(b, ast.Name) and b.id == "Protocol") or
                    (isinstance(b, ast.Subscript) and getattr(b.value, "id", "") == "Protocol") for b in node.bases):
                own = {i.name for i in node.body if isinstance(i, ast.FunctionDef | ast.AsyncFunctionDef)}
                own |= {i.target.id for i in node.body if isinstance(i, ast.AnnAssign) and isinstance(i.target, ast.Name)}
                out.append((f"{path.relative_to(SRC)}:{node.name}", len(own - {"__init__"})))
    return out


def test_every_protocol_is_narrow():
    wide = [(name, n) for name, n in _protocols() if n > PROTOCOL_MEMBERS]
    assert not wide, f"protocols with more than {PROTOCOL_MEMBERS} members of their own: {wide}"


def test_few_modules_at_the_top_and_none_too_long():
    top = sorted(p.name for p in SRC.glob("*.py"))
    assert len(top) <= TOP_LEVEL_MODULES, top
    long = [(str(p.relative_to(SRC)), n) for p in SRC.rglob("*.py")
            if (n := len(p.read_text("utf-8").splitlines())) > FILE_LINES]
    assert not long, long


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


def test_tests_are_laid_out_like_the_source():
    """A package's tests are in its folder under tests/ (tests/notes/ for mnemoclaw/notes/): a
    newcomer knows where a test goes, and docs/architecture.md says which package has none."""
    folders = {p.name for p in (REPO / "tests").iterdir() if p.is_dir() and p.name not in ("fixtures", "__pycache__")}
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    assert folders and folders <= packages, f"test folders that name no package: {sorted(folders - packages)}"
