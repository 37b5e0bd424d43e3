"""The Python example in docs/mcp.md runs as written, against a local chat server."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from chat_server import ChatServer
from conftest import REPO, write

pytest.importorskip("openai")


def brain(body):
    last = body["messages"][-1]
    if last["role"] == "user":
        return {"tool_calls": [("memory_search", {"query": "database decision", "maxResults": 3})]}
    if last["role"] == "tool" and '"results"' in last["content"]:
        return {"tool_calls": [("memory_get", {"path": "memory/2026-11-20.md", "from": 1, "lines": 5})]}
    return {"content": "ANSWER: " + last["content"][:200]}


def test_the_openai_tool_loop_example(tmp_path):
    doc = (REPO / "docs" / "mcp.md").read_text()
    code = re.search(r"```python\n(import json\n.*?)```", doc, re.S).group(1)
    home = tmp_path / "home"
    write(home / "notes" / "memory" / "2026-11-20.md", "- We decided to move the database to Postgres 16.")
    with ChatServer(brain) as srv:
        env = dict(os.environ, HOME=str(home), OPENAI_BASE_URL=srv.base_url, OPENAI_API_KEY="test",
                   PYTHONPATH=str(REPO / "src"), MNEMOCLAW_PROVIDER="none")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ANSWER:") and "Postgres 16" in r.stdout
    assert [m["role"] for m in srv.requests[-1]["messages"]][-4:] == ["assistant", "tool", "assistant", "tool"]
