"""Who speaks in a conversation's log, as the search reads it: how many speakers open messages in
a chunk, which side of a conversation between the user and an assistant a chunk or a line is on,
and whether a question speaks in the first person. Pure."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence

from ..markdown.chunker import ROLES, USER_ROLES, speakers


def speakers_in(text: str) -> int:
    """How many speakers open a message in a chunk."""
    return len({who for _, who, _ in speakers(text.split("\n"))})


# A question in the first person ("what did I say about…", "my app") asked of a conversation
# between the user and an assistant is about what the user said there: the user's messages come
# before the assistant's replies, which restate and elaborate them at length and would fill the
# context with what was said about the question rather than the user's own words. Chosen on BEAM
# conversations 1-10 and held on 11-20 (docs/quality.md, "Long conversations"); a log whose
# speakers are people by name (LoCoMo's) or that names no speaker is never reordered.
_FIRST_PERSON = re.compile(r"\b(?:I|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself)\b|我(?!们)")


def in_first_person(query: str) -> bool:
    """Whether ``query`` speaks of its asker in the first person (I, me, my; 我, not 我们)."""
    return _FIRST_PERSON.search(query) is not None


def said_by(text: str) -> str | None:
    """Which side of a conversation opens the messages in a chunk: "user" (the user's roles
    only), "assistant" (other roles only), "both", or None (no role opens a message: a chunk
    within one message, or speakers named as people)."""
    roles = {who for _, who, _ in speakers(text.split("\n")) if who in ROLES}
    if not roles:
        return None
    user = bool(roles & USER_ROLES)
    return "both" if user and roles - USER_ROLES else "user" if user else "assistant"


def sides(chunks: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    """Each file line that opens a message of either side, (line, "user" or "assistant") in line
    order, from a file's chunks ((first line, text); overlapping chunks count a line once)."""
    opened = {start + i: "user" if who in USER_ROLES else "assistant"
              for start, text in chunks for i, who, _ in speakers(text.split("\n")) if who in ROLES}
    return sorted(opened.items())


def said_before(opened: Sequence[tuple[int, str]], line: int) -> str | None:
    """The side of the last message ``opened`` (``sides``) before file line ``line``; None when
    no message opens before it."""
    at = bisect_left(opened, line, key=lambda o: o[0])
    return opened[at - 1][1] if at else None
