"""Import another assistant's memory into ``memory/imports/<source>/``: conversations as dated
Markdown (a ChatGPT or Claude.ai data export), memory files as they are (Claude Code's per-project
memory and CLAUDE.md files, Codex's memories folder). Secrets are redacted on the way in.

Importing twice adds nothing: each conversation has one file, named by its date, title and id;
a later export of a longer conversation replaces it, unless the file was edited since it was
written (the state directory keeps what each imported file held), which is kept and reported.
Nothing is merged into MEMORY.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..atomic import atomic_file, like_parent_dir, private_dir, remove_leftovers
from ..errors import MnemoclawError
from ..markdown.annotations import as_data, neutralise_comments
from ..markdown.provenance import IMPORT_SOURCES, IMPORTS_DIR
from ..text import parse
from ..text.secrets import redact, redact_counted
from . import tombstones
from .discovery import is_link, walk_markdown

SOURCES = IMPORT_SOURCES
MANIFEST = tombstones.IMPORTS_MANIFEST  # under the state directory: what each imported file held when written
_SLUG = re.compile(r"[^\w]+")


class ImportFormatError(MnemoclawError):
    """The file given is not the format the source named writes."""


@dataclass
class Conversation:
    id: str
    title: str
    started: datetime | None
    messages: list[tuple[str, datetime | None, str]]  # (role, when, text)


@dataclass
class Planned:
    rel: str  # workspace-relative destination
    text: str  # what the file will hold
    origin: str  # the conversation id or the source file
    redacted: int = 0


@dataclass
class ImportReport:
    source: str
    found: int = 0
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    kept_edits: list[str] = field(default_factory=list)  # imported files edited since: left alone
    empty: int = 0  # conversations with no text
    redacted: int = 0
    links: list[str] = field(default_factory=list)  # symbolic links met in the source: skipped, never read
    forgotten: int = 0  # conversations a forget --source took out: left out (tombstones.py)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "found": self.found, "added": len(self.added), "updated": len(self.updated),
                "unchanged": self.unchanged, "keptEdits": self.kept_edits, "empty": self.empty,
                "secretsRedacted": self.redacted, "skippedLinks": self.links, "forgotten": self.forgotten,
                "warnings": self.warnings, "files": self.added + self.updated}


# -- reading the exports ------------------------------------------------------------------
def _load_json(path: Path, source: str) -> Any:
    """conversations.json from the file, the export's folder or its zip."""
    if path.is_dir():
        path = path / "conversations.json"
        if is_link(path):
            raise ImportFormatError(f"{path} is a symbolic link; links in an export's folder are not followed "
                                    "(give the file it points to, or the zip)")
    try:
        with open(path, "rb") as fh:
            zipped = fh.read(4) == b"PK\x03\x04"
        if zipped:
            with zipfile.ZipFile(path) as z:
                names = [n for n in z.namelist() if n.rsplit("/", 1)[-1] == "conversations.json"]
                if not names:
                    raise ImportFormatError(f"{path} holds no conversations.json; expected the {_label(source)} "
                                            "data export (the zip, its folder, or conversations.json)")
                return parse.loads(z.read(names[0]).decode("utf-8"))
        with open(path, encoding="utf-8") as fh:
            return parse.loads(fh.read())
    except FileNotFoundError:
        raise ImportFormatError(f"{path} does not exist") from None
    except (zipfile.BadZipFile, EOFError) as exc:  # a download cut short: the zip's directory is missing
        raise ImportFormatError(f"{path} is a damaged or incomplete zip ({exc}); download the {_label(source)} "
                                "export again (or give its unpacked folder)") from None
    except ValueError as exc:  # not UTF-8, not JSON, or nested too deeply to read
        raise ImportFormatError(f"{path} is not JSON ({exc}); expected the {_label(source)} data export's "
                                "conversations.json") from None


def _label(source: str) -> str:
    return {"chatgpt": "ChatGPT", "claude": "Claude.ai"}.get(source, source)


def _when(value: Any) -> datetime | None:
    if isinstance(value, (int, float)) and value > 0:
        return datetime.fromtimestamp(value, UTC)
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
        except ValueError:
            return None
    return None


def _refuse(source: str, data: Any, path: Path) -> None:
    if not isinstance(data, list):
        raise ImportFormatError(f"{path} is not a {_label(source)} export: expected a list of conversations, "
                                f"found a JSON {type(data).__name__}")
    sample = next((c for c in data if isinstance(c, dict)), None)
    if sample is None:
        return
    if source == "chatgpt" and "mapping" not in sample:
        hint = " (it looks like a Claude.ai export: `mnemoclaw import claude`)" if "chat_messages" in sample else ""
        raise ImportFormatError(f"{path} is not a ChatGPT export: its conversations have no 'mapping' of "
                                f"messages{hint}")
    if source == "claude" and "chat_messages" not in sample:
        hint = " (it looks like a ChatGPT export: `mnemoclaw import chatgpt`)" if "mapping" in sample else ""
        raise ImportFormatError(f"{path} is not a Claude.ai export: its conversations have no 'chat_messages'{hint}")


def chatgpt_conversations(data: list) -> Iterator[Conversation]:
    for c in data:
        if not isinstance(c, dict):
            continue
        mapping = c.get("mapping") or {}
        # the branch the user last saw: from the current node up to the root
        node_id = c.get("current_node")
        chain = []
        seen = set()
        while node_id and node_id in mapping and node_id not in seen:
            seen.add(node_id)
            chain.append(mapping[node_id])
            node_id = mapping[node_id].get("parent")
        if not chain:  # no current node: the nodes in the order given
            chain = list(mapping.values())[::-1]
        messages = []
        for node in reversed(chain):
            msg = node.get("message") or {}
            role = (msg.get("author") or {}).get("role")
            content = msg.get("content") or {}
            hidden = (msg.get("metadata") or {}).get("is_visually_hidden_from_conversation")
            if role not in ("user", "assistant") or hidden:
                continue
            raw = content.get("parts")
            parts: list[Any] = raw if isinstance(raw, list) else [content.get("text")]
            text = "\n\n".join(p for p in parts if isinstance(p, str) and p.strip())
            if text.strip():
                messages.append((role, _when(msg.get("create_time")), text))
        yield Conversation(str(c.get("id") or c.get("conversation_id") or ""), str(c.get("title") or "").strip(),
                           _when(c.get("create_time")), messages)


def claude_conversations(data: list) -> Iterator[Conversation]:
    for c in data:
        if not isinstance(c, dict):
            continue
        messages = []
        for m in c.get("chat_messages") or []:
            if not isinstance(m, dict):
                continue
            role = {"human": "user", "assistant": "assistant"}.get(str(m.get("sender")))
            blocks = [b.get("text") for b in m.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"]
            text = "\n\n".join(t for t in blocks if isinstance(t, str) and t.strip()) or str(m.get("text") or "")
            for a in m.get("attachments") or []:
                if isinstance(a, dict) and a.get("extracted_content"):
                    text += f"\n\n(attached {a.get('file_name') or 'a file'}:)\n{a['extracted_content']}"
            if role and text.strip():
                messages.append((role, _when(m.get("created_at")), text))
        yield Conversation(str(c.get("uuid") or ""), str(c.get("name") or "").strip(), _when(c.get("created_at")),
                           messages)


def render(source: str, conv: Conversation) -> str:
    """A conversation as Markdown: a heading, where it came from, one section per message."""
    title = conv.title or "untitled conversation"
    started = conv.started or next((w for _, w, _ in conv.messages if w), None)
    lines = [f"# {title}", "", f"Imported from {_label(source)}, conversation {conv.id}"
             + (f", started {started:%Y-%m-%d %H:%M} UTC." if started else "."), ""]
    for role, when, text in conv.messages:
        who = "User" if role == "user" else "Assistant"
        # what was said is data: its comments annotate nothing, its headings stay under the message's
        lines += [f"## {who}" + (f" ({when:%Y-%m-%d %H:%M})" if when else ""), "", as_data(text.strip())[0], ""]
    return "\n".join(lines)


def _stem(conv: Conversation) -> str:
    day = (conv.started or next((w for _, w, _ in conv.messages if w), None))
    # the title names the file, which every search result cites: no secret in it either
    slug = _SLUG.sub("-", redact(conv.title).lower()).strip("-")[:48].strip("-") or "conversation"
    short = hashlib.sha256(conv.id.encode()).hexdigest()[:8]
    return (f"{day:%Y-%m-%d}-" if day else "undated-") + f"{slug}-{short}"


def plan_conversations(source: str, path: Path,
                       progress: Callable[[int, int], None] | None = None) -> tuple[list[Planned], ImportReport]:
    data = _load_json(path, source)
    _refuse(source, data, path)
    report = ImportReport(source, found=len(data))
    reader = chatgpt_conversations if source == "chatgpt" else claude_conversations
    out = []
    for i, conv in enumerate(reader(data), 1):
        if progress:
            progress(i, len(data))
        if not conv.messages:
            report.empty += 1
            continue
        body, redacted = redact_counted(render(source, conv))
        report.redacted += redacted
        out.append(Planned(f"{IMPORTS_DIR}/{source}/{_stem(conv)}.md", body, conv.id, redacted))
    return out, report


# -- memory files, as they are ---------------------------------------------------------------
def _markdown_under(root: Path, links: list[str]) -> list[Path]:
    """The ``.md`` files below ``root`` by the index's rule (no link followed; each link met is
    added to ``links``), hidden files and folders left out."""
    if is_link(root):
        links.append(str(root))
        return []
    return [Path(e.path) for e in walk_markdown(str(root), links.append)
            if not any(part.startswith(".") for part in Path(e.path).relative_to(root).parts)]


def _folder(path: Path, links: list[str]) -> bool:
    """``path`` is a real folder (a link to one is recorded in ``links`` and is not)."""
    if is_link(path):
        links.append(str(path))
        return False
    return path.is_dir()


def memory_files(source: str, path: Path, links: list[str] | None = None) -> list[tuple[Path, str]]:
    """(file, destination under memory/imports/<source>/) for Claude Code or Codex memory. The
    folder given is the user's to name; below it no symbolic link is followed (each is added
    to ``links``), as when indexing."""
    links = [] if links is None else links
    if not path.is_dir():
        raise ImportFormatError(f"{path} is not a folder; expected "
                                + ("Claude Code's ~/.claude (or its projects/ folder, or a project with CLAUDE.md)"
                                   if source == "claude-code" else "Codex's memories folder (~/.codex/memories)"))
    found: list[tuple[Path, str]] = []
    if source == "codex":
        nested = path / "memories"
        base = nested if nested.is_dir() and not (path / "MEMORY.md").exists() else path
        found = [(f, f.relative_to(base).as_posix()) for f in _markdown_under(base, links)]
        what = "Codex memory: Markdown files in ~/.codex/memories"
    else:
        projects = path / "projects" if _folder(path / "projects", links) else path
        for project in sorted(projects.iterdir()) if projects.is_dir() else []:
            if project.name.startswith(".") or not _folder(project, links):
                continue
            memory = project / "memory"
            if _folder(memory, links):
                found += [(f, f"{project.name}/{f.relative_to(memory).as_posix()}")
                          for f in _markdown_under(memory, links)]
        if path.name == "memory" and not found:  # one project's memory folder
            found = [(f, f"{path.parent.name}/{f.relative_to(path).as_posix()}") for f in _markdown_under(path, links)]
        for folder in (path, path / ".claude"):
            if folder != path and not _folder(folder, links):
                continue
            for name in ("CLAUDE.md", "CLAUDE.local.md"):
                if is_link(folder / name):
                    links.append(str(folder / name))
                elif (folder / name).is_file():
                    found.append((folder / name, name))
        what = "Claude Code memory: ~/.claude/projects/<project>/memory/*.md or CLAUDE.md files"
    links[:] = list(dict.fromkeys(links))
    if not found:
        raise ImportFormatError(f"{path} holds no {what}"
                                + (f" (symbolic links are not followed: {', '.join(links[:3])})" if links else ""))
    return found


def plan_files(source: str, path: Path) -> tuple[list[Planned], ImportReport]:
    links: list[str] = []
    files = memory_files(source, path, links)
    report = ImportReport(source, found=len(files), links=links)
    out = []
    for f, dest in files:
        try:
            text = f.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ImportFormatError(f"{f} cannot be read as UTF-8 text ({exc}); nothing was imported") from None
        # another assistant's file is data: a comment in it annotates nothing here
        body, redacted = redact_counted(neutralise_comments(text))
        report.redacted += redacted
        out.append(Planned(f"{IMPORTS_DIR}/{source}/{dest}", body, str(f), redacted))
    return out, report


def plan(source: str, path: Path,
         progress: Callable[[int, int], None] | None = None) -> tuple[list[Planned], ImportReport]:
    """What importing ``path`` as ``source`` writes; writes nothing."""
    if source not in SOURCES:
        raise ImportFormatError(f"unknown import source {source!r}; expected one of {', '.join(SOURCES)}")
    path = Path(os.path.expanduser(str(path)))
    if source in ("chatgpt", "claude"):
        return plan_conversations(source, path, progress)
    return plan_files(source, path)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _manifest(state_dir: Path) -> dict[str, str]:
    try:
        with open(state_dir / MANIFEST, encoding="utf-8") as fh:
            data = json.load(fh)
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (FileNotFoundError, ValueError):
        return {}


def write(workspace: Path, state_dir: Path, planned: list[Planned], report: ImportReport,
          progress: Callable[[int, int], None] | None = None, *, dry: bool = False) -> ImportReport:
    """Write the planned files: new ones added, unchanged ones left, ones an earlier import wrote
    and nobody edited since replaced, edited ones kept (the state directory's manifest records
    what each imported file held when it was written). ``dry``: only say what would happen."""
    ws = Path(os.path.realpath(workspace))
    manifest = _manifest(state_dir)
    fences = tombstones.load(state_dir)
    if fences.damaged:
        report.warnings.append(fences.damaged)
    swept: set[Path] = set()
    # a forgotten file is named nowhere (a forget killed before it dropped the record: dropped now)
    manifest = {rel: digest for rel, digest in manifest.items() if not fences.imported(rel)}
    try:
        for i, p in enumerate(planned, 1):
            if progress:
                progress(i, len(planned))
            if fences.imported(p.rel):  # forgotten: a re-import of the same export adds nothing back
                report.forgotten += 1
                continue
            target = ws / p.rel
            for parent in target.parents:
                if parent == ws:
                    break
                if parent.is_symlink():
                    raise MnemoclawError(f"{parent.relative_to(ws)} is a symbolic link; nothing more was imported")
            if target.is_symlink():
                raise MnemoclawError(f"{p.rel} is a symbolic link; nothing more was imported")
            if target.parent not in swept:  # a killed import's temporary files: garbage, preview or not
                remove_leftovers(target.parent)
                swept.add(target.parent)
            try:
                old = target.read_text("utf-8")
            except FileNotFoundError:
                old = None
            if old == p.text:
                report.unchanged += 1
                manifest[p.rel] = _digest(p.text)
                continue
            if dry:
                edited = old is not None and manifest.get(p.rel) != _digest(old)
                (report.kept_edits if edited else report.added if old is None else report.updated).append(p.rel)
                continue
            if old is not None and manifest.get(p.rel) != _digest(old):  # edited since it was imported
                report.kept_edits.append(p.rel)
                continue
            like_parent_dir(target.parent)
            with atomic_file(target, "w", private=False) as fh:
                fh.write(p.text)
            manifest[p.rel] = _digest(p.text)
            (report.added if old is None else report.updated).append(p.rel)
    finally:
        if not dry:
            private_dir(state_dir)
            with atomic_file(state_dir / MANIFEST, "w") as fh:
                json.dump(manifest, fh, indent=0, sort_keys=True)
    return report
