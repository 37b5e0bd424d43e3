"""Data exports in the published shapes of ChatGPT's and Claude.ai's conversations.json, made up."""

from __future__ import annotations

import random
import uuid

TOPICS = ["the garden irrigation timer", "a Rust borrow checker error", "planning a trip to Porto",
          "the quarterly budget spreadsheet", "a sourdough starter that will not rise", "learning the cello",
          "our Kubernetes ingress", "a birthday present for Mia", "the apartment lease renewal", "tax deductions",
          "choosing a road bike", "the CI pipeline on the monorepo", "a job interview at a bakery", "vegan lasagna"]
SENTENCES = ["Could you explain that step by step?", "That makes sense, thanks.", "What would you do instead?",
             "Here is what I tried so far, and it did not work.", "Can you make it shorter?",
             "The second option looks better to me.", "I will try that tonight and report back."]


def _text(rnd: random.Random, topic: str, n: int) -> str:
    return f"About {topic}: " + " ".join(rnd.choice(SENTENCES) for _ in range(n))


def chatgpt_export(n: int, seed: int = 1, *, extra: dict | None = None, scale: int = 1) -> list[dict]:
    """``n`` conversations, each a tree of messages: a hidden system root, 3-9 user/assistant
    turns, one regenerated answer off the current branch. ``scale`` multiplies message length
    (3: answers of about a thousand characters, as in real exports)."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        topic = rnd.choice(TOPICS)
        start = 1_700_000_000 + i * 86_400 + rnd.randint(0, 80_000)
        ids = [str(uuid.UUID(int=rnd.getrandbits(128))) for _ in range(40)]
        mapping = {ids[0]: {"id": ids[0], "message": {"id": ids[0], "author": {"role": "system", "name": None,
                   "metadata": {}}, "create_time": None, "content": {"content_type": "text", "parts": [""]},
                   "metadata": {"is_visually_hidden_from_conversation": True}, "status": "finished_successfully",
                   "recipient": "all"}, "parent": None, "children": [ids[1]]}}
        parent, k, t = ids[0], 1, start
        turns = rnd.randint(3, 9)
        for turn in range(turns * 2):
            role = "user" if turn % 2 == 0 else "assistant"
            node = ids[k]
            text = _text(rnd, topic, rnd.randint(2, 6)) if role == "user" else \
                _text(rnd, topic, rnd.randint(6, 16) * scale)
            mapping[node] = {"id": node, "message": {"id": node, "author": {"role": role, "name": None,
                             "metadata": {}}, "create_time": t, "update_time": None,
                             "content": {"content_type": "text", "parts": [text]}, "status": "finished_successfully",
                             "end_turn": role == "assistant", "weight": 1.0, "metadata": {}, "recipient": "all"},
                             "parent": parent, "children": []}
            mapping[parent]["children"].append(node)
            if turn == 1:  # a regenerated answer: a sibling off the branch the user kept
                alt = ids[39]
                mapping[alt] = {"id": alt, "message": {"id": alt, "author": {"role": "assistant"}, "create_time": t,
                                "content": {"content_type": "text", "parts": ["DISCARDED regenerated answer"]},
                                "metadata": {}}, "parent": parent, "children": []}
                mapping[parent]["children"].append(alt)
            parent, k, t = node, k + 1, t + rnd.randint(20, 600)
        out.append({"title": f"Help with {topic}", "create_time": float(start), "update_time": float(t),
                    "mapping": mapping, "moderation_results": [], "current_node": parent, "plugin_ids": None,
                    "conversation_id": ids[1], "id": ids[1], "conversation_template_id": None, "gizmo_id": None,
                    "is_archived": False, "safe_urls": [], **(extra or {})})
    return out


def claude_export(n: int, seed: int = 2) -> list[dict]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        topic = rnd.choice(TOPICS)
        day = f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}"
        messages = []
        for turn in range(rnd.randint(2, 8) * 2):
            sender = "human" if turn % 2 == 0 else "assistant"
            text = _text(rnd, topic, rnd.randint(2, 10))
            messages.append({"uuid": str(uuid.UUID(int=rnd.getrandbits(128))), "text": text,
                             "content": [{"type": "text", "text": text, "citations": []}], "sender": sender,
                             "created_at": f"{day}T10:{turn:02d}:00.000000Z", "updated_at": f"{day}T10:{turn:02d}:00Z",
                             "attachments": [], "files": []})
        out.append({"uuid": str(uuid.UUID(int=rnd.getrandbits(128))), "name": f"{topic.capitalize()}",
                    "created_at": f"{day}T10:00:00.000000Z", "updated_at": f"{day}T11:00:00.000000Z",
                    "account": {"uuid": "acc"}, "chat_messages": messages})
    return out
