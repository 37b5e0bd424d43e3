"""Imports: ChatGPT and Claude.ai exports as dated Markdown, Claude Code and Codex memory as it is."""

import json
import os
import subprocess
import sys
import zipfile

import pytest

from mnemoclaw.notes.imports import ImportFormatError

from conftest import REPO, write
from exports import chatgpt_export, claude_export
from secret_phrases import NOTE, NOTE_SECRETS, assert_no_secret

KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def export_file(tmp_path, data, name="conversations.json"):
    path = tmp_path / "export" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_chatgpt_export_becomes_one_dated_file_per_conversation(workspace, make_memory, tmp_path):
    data = chatgpt_export(20)
    first = data[0]
    node = first["mapping"][first["current_node"]]
    node["message"]["content"]["parts"] = [f"my key is {KEY}, and the heron budget is 40k"]
    data.append({**chatgpt_export(1, seed=9)[0], "mapping": {}, "current_node": None, "id": "empty"})
    path = export_file(tmp_path, data)
    write(workspace / "MEMORY.md", "- untouched\n")
    mem = make_memory(workspace)
    planned, preview = mem.notes.import_preview("chatgpt", path)
    assert (preview.found, len(preview.added), preview.empty) == (21, 20, 1) and preview.redacted == 1
    assert not (workspace / "memory" / "imports").exists()  # a preview writes nothing

    report = mem.notes.import_files(planned, preview)
    assert len(report.added) == 20 and all(r.startswith("memory/imports/chatgpt/20") for r in report.added)
    text = (workspace / report.added[0]).read_text()
    assert text.startswith(f"# {first['title']}\n") and "Imported from ChatGPT, conversation " in text
    assert "## User (" in text and "## Assistant (" in text
    assert "DISCARDED" not in text  # the regenerated answer off the kept branch
    assert KEY not in text and "heron budget is 40k" in text
    user_turns = [m for m in first["mapping"].values() if m["message"] and m["message"]["author"]["role"] == "user"]
    assert text.count("## User") == len(user_turns)
    assert (workspace / "MEMORY.md").read_text() == "- untouched\n"

    mem.sync()
    hit = mem.tools.memory_search("heron budget")["results"][0]
    assert hit["path"] == report.added[0]

    # importing twice adds nothing; an edited file is kept; a longer conversation replaces its file
    again, preview2 = mem.notes.import_preview("chatgpt", path)
    assert (len(preview2.added), preview2.unchanged) == (0, 20)
    edited = workspace / report.added[1]
    edited.write_text(edited.read_text() + "\nmy own note\n")
    longer = json.loads(path.read_text())
    conv = longer[2]
    tip = conv["current_node"]
    conv["mapping"]["extra"] = {"id": "extra", "message": {"id": "extra", "author": {"role": "user"},
                                "create_time": 1_800_000_000, "content": {"content_type": "text",
                                                                          "parts": ["one more question"]}},
                                "parent": tip, "children": []}
    conv["current_node"] = "extra"
    longer[1]["mapping"][longer[1]["current_node"]]["message"]["content"]["parts"] = ["changed upstream"]
    path.write_text(json.dumps(longer))
    third = mem.notes.import_files(*mem.notes.import_preview("chatgpt", path))
    assert third.added == [] and third.updated == [report.added[2]] and third.kept_edits == [report.added[1]]
    assert "my own note" in edited.read_text() and "one more question" in (workspace / report.added[2]).read_text()


def test_a_zip_or_folder_export_works_and_a_wrong_format_is_refused(workspace, make_memory, tmp_path):
    mem = make_memory(workspace)
    path = export_file(tmp_path, claude_export(3))
    with pytest.raises(ImportFormatError, match="not a ChatGPT export.*looks like a Claude.ai export"):
        mem.notes.import_preview("chatgpt", path)
    zipped = tmp_path / "claude-export.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        z.write(path, "data-2025/conversations.json")
    _, preview = mem.notes.import_preview("claude", zipped)
    assert len(preview.added) == 3
    _, preview = mem.notes.import_preview("claude", path.parent)  # the unzipped folder
    assert len(preview.added) == 3
    bad = export_file(tmp_path, {"conversations": []}, "other.json")
    with pytest.raises(ImportFormatError, match="expected a list of conversations, found a JSON dict"):
        mem.notes.import_preview("claude", bad)
    (tmp_path / "notjson.json").write_text("<html>")
    with pytest.raises(ImportFormatError, match="is not JSON"):
        mem.notes.import_preview("chatgpt", tmp_path / "notjson.json")
    with pytest.raises(ImportFormatError, match="holds no conversations.json"):
        with zipfile.ZipFile(tmp_path / "empty.zip", "w") as z:
            z.writestr("readme.txt", "x")
        mem.notes.import_preview("chatgpt", tmp_path / "empty.zip")
    cut = tmp_path / "cut-short.zip"  # a download that stopped half-way
    cut.write_bytes(zipped.read_bytes()[: zipped.stat().st_size // 2])
    with pytest.raises(ImportFormatError, match="cut-short.zip is a damaged or incomplete zip .*download the "
                                                "Claude.ai export again"):
        mem.notes.import_preview("claude", cut)


def test_a_claude_export_keeps_attachments_and_order(workspace, make_memory, tmp_path):
    data = claude_export(2)
    data[0]["chat_messages"][0]["attachments"] = [{"file_name": "notes.txt", "extracted_content": "porcupine facts"}]
    mem = make_memory(workspace)
    report = mem.notes.import_files(*mem.notes.import_preview("claude", export_file(tmp_path, data)))
    text = (workspace / report.added[0]).read_text()
    assert "Imported from Claude.ai" in text and "(attached notes.txt:)\nporcupine facts" in text
    first, second = data[0]["chat_messages"][0]["text"], data[0]["chat_messages"][1]["text"]
    assert text.index(first) < text.index(second)


def test_claude_code_and_codex_memory_is_imported_as_it_is(workspace, make_memory, tmp_path):
    home = tmp_path / ".claude"
    fact = "---\nname: testing\ndescription: how tests run\nmetadata:\n  type: feedback\n---\n\nUse a real database.\n"
    write(home / "projects" / "-home-me-proj" / "memory" / "MEMORY.md", "- [Testing](testing.md) - real db\n")
    write(home / "projects" / "-home-me-proj" / "memory" / "testing.md", fact)
    write(home / "projects" / "-home-me-proj" / "abc.jsonl", "{}\n")  # a session, not memory
    write(home / "CLAUDE.md", f"Always answer in English. token {KEY}\n")
    codex = tmp_path / ".codex" / "memories"
    write(codex / "MEMORY.md", "# Codex memory\n- prefers pnpm\n")
    write(codex / "rollout_summaries" / "2026-01-02-x.md", "a summary\n")
    write(codex / ".git" / "HEAD", "ref: refs/heads/main\n")
    mem = make_memory(workspace)
    report = mem.notes.import_files(*mem.notes.import_preview("claude-code", home))
    assert sorted(report.added) == ["memory/imports/claude-code/-home-me-proj/MEMORY.md",
                                    "memory/imports/claude-code/-home-me-proj/testing.md",
                                    "memory/imports/claude-code/CLAUDE.md"]
    assert (workspace / "memory/imports/claude-code/-home-me-proj/testing.md").read_text() == fact  # as it is
    assert KEY not in (workspace / "memory/imports/claude-code/CLAUDE.md").read_text()
    assert mem.notes.import_files(*mem.notes.import_preview("claude-code", home)).added == []
    report = mem.notes.import_files(*mem.notes.import_preview("codex", tmp_path / ".codex"))
    assert sorted(report.added) == ["memory/imports/codex/MEMORY.md",
                                    "memory/imports/codex/rollout_summaries/2026-01-02-x.md"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImportFormatError, match="holds no Codex memory"):
        mem.notes.import_preview("codex", tmp_path / "empty")
    with pytest.raises(ImportFormatError, match="is not a folder"):
        mem.notes.import_preview("claude-code", tmp_path / "missing")
    mem.sync()
    assert mem.tools.memory_search("pnpm")["results"][0]["path"] == "memory/imports/codex/MEMORY.md"


def test_imports_follow_no_symbolic_link_and_name_each_one(workspace, make_memory, tmp_path):
    outside = write(tmp_path / "elsewhere" / "passwd.md", "root:x:0:0:wombatsecret:/root:/bin/bash\n")
    write(tmp_path / "elsewhere" / "ssh" / "config.md", "Host prod wombatssh IdentityFile ~/.ssh/id\n")
    home = tmp_path / ".claude"
    memory = home / "projects" / "-home-me-proj" / "memory"
    write(memory / "real.md", "a real note about otters\n")
    (memory / "passwd.md").symlink_to(outside)
    (memory / "ssh").symlink_to(tmp_path / "elsewhere" / "ssh")
    (home / "projects" / "-linked-proj").symlink_to(tmp_path / "elsewhere")
    (home / "CLAUDE.md").symlink_to(outside)
    codex = tmp_path / ".codex" / "memories"
    write(codex / "MEMORY.md", "# Codex memory\n- prefers pnpm\n")
    (codex / "etc.md").symlink_to(outside)
    mem = make_memory(workspace)
    planned, preview = mem.notes.import_preview("claude-code", home)
    assert [p.rel for p in planned] == ["memory/imports/claude-code/-home-me-proj/real.md"]
    assert sorted(preview.links) == sorted(str(p) for p in (memory / "passwd.md", memory / "ssh",
                                                            home / "projects" / "-linked-proj", home / "CLAUDE.md"))
    report = mem.notes.import_files(planned, preview)
    assert report.links == preview.links and preview.as_dict()["skippedLinks"] == preview.links
    planned, preview = mem.notes.import_preview("codex", tmp_path / ".codex")
    assert [p.rel for p in planned] == ["memory/imports/codex/MEMORY.md"] and preview.links == [str(codex / "etc.md")]
    mem.notes.import_files(planned, preview)
    mem.sync()
    for word in ("wombatsecret", "wombatssh"):
        assert not any(word in r["snippet"] for r in mem.tools.memory_search(word, min_score=0)["results"])
    assert not any("wombat" in f.read_text() for f in (workspace / "memory").rglob("*.md"))
    # a folder of nothing but links: refused, naming them
    only = tmp_path / "only-links"
    only.mkdir()
    (only / "a.md").symlink_to(outside)
    with pytest.raises(ImportFormatError, match="symbolic links are not followed"):
        mem.notes.import_preview("codex", only)
    # an export's folder whose conversations.json is a link
    export = tmp_path / "export-dir"
    export.mkdir()
    (export / "conversations.json").symlink_to(export_file(tmp_path, chatgpt_export(1)))
    with pytest.raises(ImportFormatError, match="symbolic link"):
        mem.notes.import_preview("chatgpt", export)


def test_the_cli_names_the_links_an_import_skipped(workspace, tmp_path):
    outside = write(tmp_path / "elsewhere" / "passwd.md", "root:x:0:0:wombatsecret\n")
    codex = tmp_path / "memories"
    write(codex / "MEMORY.md", "- prefers pnpm\n")
    (codex / "passwd.md").symlink_to(outside)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
    base = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir", str(tmp_path / "st")]
    done = subprocess.run([*base, "import", "codex", str(codex), "--yes"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "skipped 1 symbolic link(s), never followed" in done.stderr and str(codex / "passwd.md") in done.stderr
    assert not (workspace / "memory" / "imports" / "codex" / "passwd.md").exists()


@pytest.mark.parametrize("source", ["chatgpt", "claude", "claude-code", "codex"])
def test_secrets_written_as_prose_are_redacted_on_the_way_in(workspace, make_memory, tmp_path, source):
    if source == "chatgpt":
        data = chatgpt_export(2)
        node = data[0]["mapping"][data[0]["current_node"]]
        node["message"]["content"]["parts"] = [f"Noted, and the heron budget is 40k.\n{NOTE}"]
        data[0]["title"] = "router password hunter22"  # the title names the file
        path = export_file(tmp_path, data)
    elif source == "claude":
        data = claude_export(2)
        data[0]["chat_messages"][0]["text"] = f"Noted, and the heron budget is 40k.\n{NOTE}"
        data[0]["chat_messages"][0]["content"] = [{"type": "text", "text": data[0]["chat_messages"][0]["text"]}]
        data[0]["name"] = "router password hunter22"
        path = export_file(tmp_path, data)
    else:
        path = tmp_path / "home"
        note = f"# Notes\n\nthe heron budget is 40k.\n{NOTE}\n"
        write(path / ("projects/-home-me-proj/memory/notes.md" if source == "claude-code" else "MEMORY.md"), note)
    mem = make_memory(workspace)
    planned, preview = mem.notes.import_preview(source, path)
    assert preview.redacted == len(NOTE_SECRETS) + (source in ("chatgpt", "claude")), preview
    report = mem.notes.import_files(planned, preview)
    written = "\n".join((workspace / rel).read_text("utf-8") for rel in report.added)
    assert "my bank PIN is [REDACTED]" in written and "验证码：[REDACTED]" in written
    if source in ("chatgpt", "claude"):
        assert any("router-password-redacted" in rel for rel in report.added), report.added
    mem.sync()
    assert mem.tools.memory_search("heron budget")["results"]  # the note is there, its secrets are not
    assert_no_secret(mem, workspace)


def test_the_cli_previews_then_imports(workspace, tmp_path):
    path = export_file(tmp_path, chatgpt_export(5))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
    base = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir", str(tmp_path / "st")]
    dry = subprocess.run([*base, "import", "chatgpt", str(path)], capture_output=True, text=True, env=env, timeout=120)
    assert dry.returncode == 0, dry.stderr
    assert "chatgpt: 5 found" in dry.stdout and "5 to add" in dry.stdout and "Nothing imported" in dry.stderr
    done = subprocess.run([*base, "import", "chatgpt", str(path), "--yes"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "5 added" in done.stdout and "Indexed:" in done.stdout
    out = subprocess.run([*base, "import", "chatgpt", str(path), "--json"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert json.loads(out.stdout)["preview"]["unchanged"] == 5
    wrong = subprocess.run([*base, "import", "claude", str(path), "--yes"], capture_output=True, text=True, env=env,
                           timeout=120)
    assert wrong.returncode != 0 and "not a Claude.ai export" in wrong.stderr and "Traceback" not in wrong.stderr


@pytest.mark.slow
def test_a_real_size_export_imports_with_a_progress_bar(workspace, tmp_path):
    """2 000 conversations (a 30 MB conversations.json) through the CLI on a terminal: the bars
    are drawn, every conversation lands once, a second run adds nothing (the time is measured
    by benchmarks/imports.py, docs/managing.md)."""
    import pty

    path = export_file(tmp_path, chatgpt_export(2000, scale=3))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MNEMOCLAW_PROVIDER": "none"}
    base = [sys.executable, "-m", "mnemoclaw.cli", "--workspace", str(workspace), "--state-dir", str(tmp_path / "st")]
    # stderr on a pseudo-terminal, so the bars are drawn as a user sees them
    leader, follower = pty.openpty()
    proc = subprocess.Popen([*base, "import", "chatgpt", str(path), "--yes"], stdout=subprocess.PIPE,
                            stderr=follower, env=env, text=True)
    os.close(follower)
    drawn = b""
    while True:
        try:
            part = os.read(leader, 65536)
        except OSError:
            break
        if not part:
            break
        drawn += part
    out, _ = proc.communicate(timeout=600)
    os.close(leader)
    assert proc.returncode == 0, drawn.decode(errors="replace")
    screen = drawn.decode(errors="replace")
    assert "reading [" in screen and "2000/2000 conversations" in screen and "writing [" in screen
    assert "indexing [" in screen
    assert "2000 added" in out
    assert len(list((workspace / "memory" / "imports" / "chatgpt").glob("*.md"))) == 2000
    again = subprocess.run([*base, "import", "chatgpt", str(path), "--json"], capture_output=True, text=True,
                           env=env, timeout=600)
    assert json.loads(again.stdout)["preview"]["unchanged"] == 2000
