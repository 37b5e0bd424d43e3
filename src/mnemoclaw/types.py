"""Plain data passed between layers. Frozen where identity matters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Chunk:
    """A slice of a Markdown file; lines are 1-based and inclusive."""

    start_line: int
    end_line: int
    text: str
    hash: str


# how long work reports how far it is: (done, to do), files unless the caller says otherwise
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file discovered on disk, before it is read."""

    path: str  # the path memory tools use: workspace-relative, or absolute for outside extraPaths
    abspath: str
    source: str  # "memory" | "sessions"
    mtime_ns: int
    size: int


@dataclass(frozen=True, slots=True)
class FileRecord:
    """What the index remembers about a file it has indexed."""

    path: str
    source: str
    hash: str
    mtime_ns: int
    size: int
    # the hosts ("host:workspace") that have had this file, the one whose copy is indexed first;
    # () where the store does not record them (SQLite: one host) or did not yet
    hosts: tuple[str, ...] = ()
    # (host:workspace, mtime_ns, size): each host's copy as that host last saw it with this
    # content, since file sync gives each copy its own mtime; () where the store records none
    seen: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """A chunk as stored, ready to insert."""

    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    hash: str
    model: str
    text: str
    meta: str = ""  # the chunk's annotations (markdown/annotations.py:encode), '' for none


@dataclass(frozen=True, slots=True)
class StoredChunk:
    rowid: int
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    hash: str = ""
    meta: str = ""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a hit's score was computed from (search/stages.py ``score``; search/relevance.py reads
    it): its keyword side (coverage and BM25 of the query's words), its vector side (the cosine,
    against the index's reference sample and the unrelated sentences), how far it stands out of
    the query's candidates, and a date the query names."""

    coverage: float | None = None  # None: no keyword side in this mode
    bm25: float | None = None
    cosine: float | None = None  # None: no vector side in this mode
    reference: VectorReference | None = None
    date: int = 0
    # how far the chunk stands out of this query's candidates (z over the pool), per side
    vector_rel: float | None = None
    text_rel: float | None = None
    unrelated: UnrelatedReference | None = None
    # what memory mentions of the query at all (None: no keyword side in this mode)
    content: float | None = None  # coverage of the words the question is about, its frame left out
    unseen: float | None = None  # share of the query's IDF weight on words no chunk holds
    names_unseen: float | None = None  # share of the query's names (people, places, ids) memory never mentions
    names_missing: float | None = None  # share of them this chunk does not mention
    subject_unseen: bool = False  # memory never mentions someone the question is about (KeywordEvidence)
    other_script: bool = False  # the chunk's script may spell the query's names another way (KeywordEvidence)
    crossing: bool = False  # the chunk holds next to no word in the query's script (stages.written_in)
    named: bool = False  # the query names someone or something (KeywordEvidence.names)
    one_unseen: float = 0.0  # share of the content words' weight on the heaviest word no chunk holds


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result before it is shaped for a tool."""

    path: str
    start_line: int
    end_line: int
    score: float
    text: str
    source: str
    vector_score: float | None = None
    text_score: float | None = None
    evidence: Evidence | None = None  # what the score was computed from (None: a hit not scored)
    terms: dict[str, float] = field(default_factory=dict)  # the query's index terms and their IDF
    # the chunk's analysed lines (its lines with any word, in order) when keyword search read them
    analysed: list[list[str]] | None = None
    annotations: dict = field(default_factory=dict)  # importance, type, expires, key
    superseded_by: str | None = None  # "path#Lx-Ly" of the newer entry with the same key
    weak: bool = False  # under the floor, returned for its keyword evidence alone (stages.select)


@dataclass
class SearchOutcome:
    hits: list[Hit]
    mode: str
    candidates: int


@dataclass(slots=True)
class IndexReport:
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    chunks_total: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    full_rebuild: bool = False
    reason: str = ""
    seconds: float = 0.0  # the sync's own work, from the moment it held the write lock
    waited: float = 0.0  # seconds spent waiting for another writer first
    deferred: int = 0  # changed files left for a later (background) sync
    # chunks indexed for keyword search only because the embedding provider failed
    # (``vectors_error`` says how); a later sync adds their vectors
    vectors_pending: int = 0
    vectors_error: str = ""
    # annotations refused (a bad value): (path, "line N: why"); the file is indexed without them
    warnings: list[tuple[str, str]] = field(default_factory=list)
    # a namespace several hosts write (Postgres), each (path, "host:workspace"): files this
    # workspace does not have, kept because another host has had them; files re-indexed from
    # here that another host had indexed with other content; files of other hosts a rebuild
    # from this workspace left out (they come back with that host's next sync)
    kept: list[tuple[str, str]] = field(default_factory=list)
    replaced: list[tuple[str, str]] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what those mean and what to do, one line each
    # symbolic links met where memory is read: never followed, so not indexed (workspace-relative paths)
    skipped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "added": self.added,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "failed": [{"path": p, "reason": r} for p, r in self.failed],
            "chunks": self.chunks_total,
            "chunksEmbedded": self.chunks_embedded,
            "chunksReused": self.chunks_reused,
            "fullRebuild": self.full_rebuild,
            "reason": self.reason,
            "seconds": round(self.seconds, 3),
            "waitedSeconds": round(self.waited, 3),
            "deferred": self.deferred,
            "vectorsPending": self.vectors_pending,
            "vectorsError": self.vectors_error or None,
            "warnings": [{"path": p, "message": m} for p, m in self.warnings],
            **{name: [{"path": p, "host": h.partition(":")[0], "workspace": h.partition(":")[2] or None}
                      for p, h in pairs]
               for name, pairs in (("kept", self.kept), ("replaced", self.replaced), ("dropped", self.dropped))},
            "notes": list(self.notes),
            "skippedLinks": list(self.skipped),
        }


@dataclass(frozen=True, slots=True)
class VectorReference:
    """What text that mostly does not answer a query scores under the index's model: the
    query's cosine with a fixed sample of the index's chunks (mean, sd), and how similar
    those chunks are to each other (the model's spread on this index)."""

    mean: float
    sd: float
    pair_mean: float
    pair_sd: float


@dataclass(frozen=True, slots=True)
class UnrelatedReference:
    """A query's cosine with sentences about nothing a memory holds (search/unrelated.py),
    mean and best, and how those sentences spread against each other under the model."""

    mean: float
    best: float
    pair_sd: float


@dataclass(frozen=True, slots=True)
class KeywordCandidates:
    """What the full-text index found for a query, with what BM25 needs to rank it.

    ``lines`` holds each candidate's analysed terms line by line (the document as the
    index tokenised it), ``df`` the document frequency of each query term, ``n_docs``
    and ``avgdl`` the corpus size and mean document length in terms.
    """

    lines: dict[int, list[list[str]]] = field(default_factory=dict)
    df: dict[str, int] = field(default_factory=dict)
    n_docs: int = 0
    avgdl: float = 0.0
