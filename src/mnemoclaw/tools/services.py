"""What a tool handler needs of memory (``ToolServices``), and who is asking (``Caller``).

A handler (``tools/handlers.py``) is written against these and nothing else: ``Memory``
provides the services (``api.py``), a test a fake of them. The caller is a record the edge
fills in (the MCP server, the chat runtime, the CLI): who reads the answer, and in which
session and channel what it writes was said. Nothing a caller's text says changes either.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..promote.record import Found
from ..types import Hit
from .wire import AGENT, PERSON, Situation

if TYPE_CHECKING:
    from ..config import Settings
    from ..notes.handle import Notes

__all__ = ["AGENT", "PERSON", "Caller", "Found", "ToolServices", "Transcript"]


@dataclass(frozen=True)
class Caller:
    """Who calls a tool. ``reader``: who reads the answer: an agent (paths inside the
    workspace only, and words for an agent) or the person at this machine (``PERSON``: real
    paths, the command to run). ``session``, ``channel``, ``chat``: where what it appends was
    said, written on the note by the writer."""

    reader: str = AGENT
    session: str | None = None
    channel: str | None = None
    chat: str | None = None

    @property
    def said_in(self) -> dict[str, str | None]:
        return {"session": self.session, "channel": self.channel, "chat": self.chat}


PERSON_AT_THIS_MACHINE = Caller(PERSON)


@dataclass(frozen=True)
class Transcript:
    """A session transcript ``sessions_search`` may read: its session as results name it, the
    agent it belongs to, and its JSONL with what was forgotten taken out."""

    session: str
    agent: str
    text: str


class ToolServices(Protocol):
    """What the agent tools ask of memory."""

    @property
    def settings(self) -> Settings:
        """The agent's settings (the recall options, the sources indexed, where things are)."""

    @property
    def notes(self) -> Notes:
        """The one writer of memory files: appends and forgets."""

    def search(self, query: str, *, max_results: int | None = None, min_score: float | None = None,
               mode: str | None = None, kind: str | None = None, history: bool = False, corpus: str = "all",
               project: str | None = None, origin: str | None = None) -> list[Hit]:
        """Hits best first (``Memory.search``); raises typed errors."""

    def read(self, path: str, from_line: int | None = None, lines: int | None = None) -> tuple[str, str | None]:
        """(the path as results show it, the text, or None when the file does not exist)."""

    def status(self, *, check_dirty: bool = True) -> dict[str, Any]: ...

    def transcripts(self) -> Iterator[Transcript]:
        """The transcripts this agent may search (``tools.sessions.visibility``)."""

    def situation(self, hits: Sequence[Hit] = ()) -> Situation:
        """What the answer to a search is told about where its results come from, and with
        what (the provider, the mode), as of now; the sessions of ``hits`` with their channel."""

    def corpus_size(self) -> int:
        """How many chunks the index ranks among (0 when it cannot tell)."""

    def recalled(self, query: str, found: Sequence[Found], *, via: str, caller: Caller) -> None:
        """Record that a search for ``query`` returned these results (recall events, which
        ``mnemoclaw promote`` reads); never raises."""

