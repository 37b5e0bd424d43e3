"""The interface above the store: what ``Memory`` asks of a memory backend, cut by job.

The builtin backend (``backends/builtin.py``) is mnemoclaw's own index: the indexer and
the searcher over a ``Store``. The QMD backend (``backends/qmd.py``) asks qmd which files
answer and ranks their chunks over the same index. ``backends/__init__.py:open_backend`` is
where ``memory.backend`` chooses one. A caller is typed on the slices it uses
(``freshness`` on ``Indexing`` and ``Health``); ``Backend`` is every slice, with the handles a
composition root needs (the store, the files it serves), so no caller tests for a concrete
backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..embeddings.base import EmbeddingProvider
from ..store.base import Store
from ..types import IndexReport, Progress, SearchOutcome, SourceFile


class Indexing(Protocol):
    """Keeping the index in step with the files."""

    def use(self, provider: EmbeddingProvider | None) -> None:
        """Embed with ``provider`` from now on (the fallback took over, or the primary is back)."""
    def sync(self, *, full: bool = False, progress: Progress | None = None, lock_timeout: float | None = None,
             sources: Sequence[str] | None = None, limit: int | None = None, without_vectors: str | None = None,
             retry: bool = False) -> IndexReport: ...
    def dirty_sources(self, sources: Sequence[str] | None = None) -> set[str]:
        """Which sources have files to index or remove (all of them before a rebuild)."""
    def needs_rebuild(self) -> str:
        """Why the whole index must be rebuilt ("" if not): the settings changed."""
    def has_files(self) -> bool: ...
    def files(self, sources: Sequence[str] | None = None) -> list[SourceFile]:
        """The memory files (and transcripts) this backend indexes, as discovery finds them."""
    def recover(self, why: str) -> None:
        """The index cannot be used at all: start an empty one (the next sync fills it)."""


class Answering(Protocol):
    """Searching, and the paths results show."""

    def search(self, query: str, *, max_results: int | None = None, min_score: float | None = None,
               mode: str | None = None, sources: Sequence[str] | None = None, kind: str | None = None,
               history: bool = False) -> SearchOutcome:
        """``kind``: only entries of this annotated type; ``history``: expired and superseded too."""
    def search_readable(self, query: str, *, max_results: int | None, min_score: float | None, mode: str | None,
                        sources: Sequence[str] | None, kind: str | None = None,
                        history: bool = False) -> SearchOutcome | None:
        """After damage was met: an answer from whatever can still be read, or None."""
    def default_mode(self) -> str: ...
    def vectors_usable(self) -> bool:
        """The index's vectors come from the provider in use (else search by keyword only)."""
    def scope_denied(self) -> str | None:
        """Why searching is refused where the question is asked (qmd's scope rule), or None."""
    def local_path(self, shown: str) -> str:
        """A path as results show it, as ``memory_get`` checks and reads it."""
    def shown_path(self, stored: str) -> str:
        """A path of the index as results show it."""


class Health(Protocol):
    """What the backend can tell of itself."""

    @property
    def read_only(self) -> bool:
        """The index cannot be written: it is served as it is."""
    @property
    def read_only_why(self) -> str: ...
    @property
    def fallback(self) -> dict[str, Any] | None:
        """Why the last answer came from another engine than the one asked for (qmd -> builtin)."""
    def damaged(self) -> str | None: ...
    def mark_damaged(self, why: str) -> None: ...
    def indexing(self) -> dict[str, Any] | None:
        """The sync or rebuild under way now (any process): kind, filesDone, filesTotal, by."""
    def last_sync(self) -> float | None: ...
    def lock_holder(self) -> int | None: ...
    def status(self, *, check_dirty: bool = True, check_integrity: bool = False, deep: bool = False) -> dict[str, Any]:
        """The index's part of ``status``."""


class Backend(Indexing, Answering, Health, Protocol):
    """A memory backend: every slice, and its handles."""

    name: str

    @property
    def provider(self) -> EmbeddingProvider | None: ...
    @property
    def store(self) -> Store:
        """The index it keeps (for what acts on the index itself: migrate, forget's purge)."""
    def close(self) -> None: ...
