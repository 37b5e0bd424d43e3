"""The house as it is laid out: its layers, the rooms on each, and the protocols at its seams.

A room is a module or a package (a dotted prefix; the longest prefix that matches a module
decides where it stands). A room imports its own layer or a lower one, never a higher one:
``tests/test_layering.py`` reads every import and holds the code to this plan, and
``python -m mnemoclaw.cli.reference`` writes docs/architecture.md and the README's layout table
from it (a test fails when either is stale).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1]
TESTS = SRC.parents[1] / "tests"  # laid out like the source: tests/notes/ for mnemoclaw/notes/


@dataclass(frozen=True)
class Layer:
    number: int
    name: str
    job: str
    rooms: tuple[tuple[str, str], ...]  # (module prefix, what it holds)


PLAN = (
    Layer(0, "plain data", "no imports of the package", (
        ("errors", "typed errors, one line with the fix each"),
        ("types", "plain data: chunks, hits, reports"),
        ("atomic", "files replaced atomically; the modes of what mnemoclaw keeps for itself"),
        ("vectors", "vector arithmetic the stores and the search share"),
    )),
    Layer(1, "pure", "no I/O: text in, text or data out", (
        ("text", "the tokenizer (CJK as characters and pairs, stems), dates, cron schedules, the one redactor, "
                 "Chinese scripts"),
        ("markdown", "chunking, annotations, provenance: where a chunk came from"),
        ("search.fusion", "z-score fusion and its weights"),
        ("search.bm25", "BM25 over any store's candidates"),
        ("search.keyword", "keyword ranking and each chunk's best line"),
        ("search.relevance", "the calibrated score"),
        ("search.snippets", "the lines a snippet shows"),
        ("index.planning", "what a sync does, from the files and the index's records"),
        ("sessions", "transcripts as text, word-for-word search over them"),
        ("tools", "the agent tools: descriptions, schemas, bounds (specs.py), the wire format (wire.py)"),
        ("eval.metrics", "recall, nDCG, MRR"),
        ("promote.entries", "what a recall names (a daily log's entry) and the guard rails a promoted line passes"),
        ("promote.select", "the signals, gates and near-duplicates that choose what is promoted"),
        ("eval.transforms", "questions asked another way: names respelled, numbers in other forms, small talk, "
                            "colloquial forms, people memory does not hold"),
    )),
    Layer(2, "ports", "the only places that touch SQL, models, HTTP, sockets, file locks", (
        ("store", "the index: the Store protocol cut by job, SQLite and Postgres (each cut by job) behind "
                  "open_store; migrate, reset"),
        ("embeddings", "one module per provider, the bundled model and its cache, the BLAS limit"),
        ("locks", "one writer at a time across processes"),
        ("sessions.openclaw", "OpenClaw's transcripts wherever its version keeps them"),
        ("sessions.visibility", "which transcripts an agent may search (tools.sessions.visibility)"),
        ("notes.discovery", "which files are memory; links never followed"),
        ("notes.tombstones", "what forget took out, as keyed hashes, and the one filter every reader uses"),
        ("promote.events", "the recall-event store: bounded, reached by forget, set aside when damaged"),
        ("serve.http", "the HTTP binding and the one token guard of the web UI and the MCP server"),
    )),
    Layer(3, "orchestration", "compose ports, return reports", (
        ("index", "the indexer: sync by content hash, rebuilds built aside; files read and cut (preparing), "
                  "their vectors (embedding)"),
        ("search", "the searcher and its named stages; annotations; the measured figures"),
        ("backends", "the Backend protocol cut by job; the builtin index, qmd over it"),
        ("freshness", "the sync before a search, the background writer, the watcher, the journal"),
    )),
    Layer(4, "composition root", "the only place configuration is read", (
        ("config", "one JSON5 file with OpenClaw's key names: schema, loading, both OpenClaw shapes, the writer"),
        ("embeddings.resolve", "which provider, and the one fallback decision"),
        ("notes", "every write to a memory file (the one writer, the one sandbox), forget and what it owes, "
                  "cleanup, imports"),
        ("promote.record", "a search's results recorded as recall events"),
        ("tools.services", "what a tool handler asks of memory (ToolServices) and who calls (Caller)"),
        ("tools.handlers", "the agent tools' handlers, written against ToolServices"),
        ("tools.dispatch", "one table from a tool's name to its handler: call, Tools"),
        ("tools.recall", "what comes before the reply, unasked"),
        ("api", "Memory: opens, syncs, searches, reads, reports; hands out notes, tools, the backend"),
        ("__init__", "the package: its version, and Memory"),
    )),
    Layer(5, "built on Memory", "sessions, servers, evaluation", (
        ("runtime", "the chat session: the flush, compaction, pruning, bootstrap files, its tools"),
        ("serve", "the MCP server (mcp.py) and the socket a running process answers search and recall on"),
        ("ui", "the web app: views, one routes table, templates"),
        ("promote", "mnemoclaw promote: plan, apply, undo, the diary"),
        ("eval", "retrieval quality on BEIR-layout data"),
    )),
    Layer(6, "edge", "parse, one call, one translated error", (
        ("cli", "the mnemoclaw command, this plan and the generated references"),
    )),
)

LAYERS: dict[str, int] = {prefix: layer.number for layer in PLAN for prefix, _ in layer.rooms}


def layer_of(module: str) -> int | None:
    """The layer of a module (dotted, relative to the package), by its longest listed prefix."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYERS:
            return LAYERS[prefix]
    return None


def protocols(src: Path = SRC) -> list[tuple[str, str, list[str]]]:
    """(file, class, its own members) of every Protocol in the package, by file."""
    out = []
    for path in sorted(src.rglob("*.py")):
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, ast.ClassDef) and any(
                    (isinstance(b, ast.Name) and b.id == "Protocol")
                    or (isinstance(b, ast.Subscript) and isinstance(b.value, ast.Name) and b.value.id == "Protocol")
                    for b in node.bases):
                own = [i.name for i in node.body if isinstance(i, ast.FunctionDef | ast.AsyncFunctionDef)
                       and i.name != "__init__"]
                own += [i.target.id for i in node.body if isinstance(i, ast.AnnAssign)
                        and isinstance(i.target, ast.Name)]
                out.append((path.relative_to(src).as_posix(), node.name, own))
    return out


def _tests_of(prefix: str, tests: Path) -> str:
    """Where a room's tests are: its package's folder under tests/ (a module at the top: tests/test_<it>.py)."""
    top = prefix.split(".")[0]
    folder = tests / top
    if folder.is_dir():
        return f"`tests/{top}/`"
    if (tests / f"test_{top}.py").is_file():
        return f"`tests/test_{top}.py`"
    return "none of its own"


def layout_table() -> str:
    """The README's layout table."""
    rows = ["| layer | rooms | one job |", "|---|---|---|"]
    for layer in PLAN:
        rooms = ", ".join(f"`{p}`" for p, _ in layer.rooms)
        rows.append(f"| {layer.number} {layer.name} | {rooms} | {layer.job} |")
    return "\n".join(rows) + "\n"


def architecture_md(src: Path = SRC, tests: Path = TESTS) -> str:
    lines = ["# Architecture", "",
             "Generated from `src/mnemoclaw/cli/architecture.py` (`python -m mnemoclaw.cli.reference`); "
             "`tests/test_layering.py` holds the code to it: every import points down or sideways, no import "
             "circle, no protocol of more than 12 members of its own, `Memory` a composition root of at most 15 "
             "members, no file over 700 lines.", "",
             "A room is a module or a package; the longest listed prefix of a module decides its room. A room "
             "may import its own layer and the layers below it, never one above. Tests are laid out like the "
             "source: a package's tests are in its folder under tests/ (tests/notes/ for mnemoclaw/notes/); what "
             "tests the house as a whole (the layering, lint, the hostile findings, the state directory, the docs' "
             "examples) is at tests/.", ""]
    for layer in PLAN:
        below = ", ".join(str(n) for n in range(layer.number)) or "none"
        lines += [f"## {layer.number} {layer.name}: {layer.job}", "", f"May import layers: {below}.", "",
                  "| room | what it holds | its tests |", "|---|---|---|"]
        lines += [f"| `{prefix}` | {what} | {_tests_of(prefix, tests)} |" for prefix, what in layer.rooms]
        lines.append("")
    lines += ["## Protocols", "",
              "The seams, each typed (mypy checks every call against them); a caller is typed on the slice it "
              "uses.", "", "| protocol | members of its own |", "|---|---|"]
    lines += [f"| `{file}:{name}` | {', '.join(f'`{m}`' for m in members) or '(a union of slices)'} |"
              for file, name, members in protocols(src)]
    return "\n".join(lines) + "\n"
