"""Running the real index and search over benchmark data.

BEIR mode: every document becomes a Markdown file in a scratch workspace (one
workspace per scope value, e.g. per LoCoMo conversation), indexed by the normal
indexer, searched by the normal searcher; a document is ranked at the position of
its best chunk.

Workspace mode: a directory of Markdown folders (``locomo/markdown/<conv>/``) is
indexed as memory workspaces with the real chunker; a query is answered when a
returned chunk's line range contains one of its evidence ids, e.g. ``(D1:3)``.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..api import Memory
from ..config import load_settings
from ..embeddings.base import EmbeddingProvider, cpu_count
from ..errors import EvalDataError
from ..search.snippets import BEST_LINE_MAX, LINE_MAX, PREFIX_ALLOWANCE, choose_all, speaker
from ..text.tokenize import analyze, keyword_query
from ..tools import SNIPPET_MAX_CHARS
from .beir import Doc, Query, load_corpus, load_qrels, load_queries
from .metrics import mean, mrr_at, ndcg_at, percentile, recall_at

T = TypeVar("T")
K_VALUES = (1, 5, 10)
EVIDENCE = re.compile(r"\((D\d+:\d+)\)")
# how much of an evidence line a snippet must show, after who said it, for the line to be shown:
# about eight English words; every line a snippet shows holds 70 or more (a 100-character
# line less its speaker and an ellipsis at each end) unless it is shorter or cut past its speaker
HELD_CHARS = 40

PhaseProgress = Callable[[str, int, int], None]  # (phase, done, total)
IN_SCOPE = "in scope"
OTHER_SCOPES = "other scopes"
ABSENT = "not in memory"  # BEIR with ``absent``: the questions on the documents left out


@dataclass
class EvalOptions:
    mode: str | None = None  # keyword | vector | hybrid; None: the configured default
    scope_field: str | None = None
    queries_dir: str | None = None
    min_score: float | None = None
    work_dir: str | None = None  # keep scratch workspaces and indexes here (reused across runs)
    overrides: dict[str, Any] = field(default_factory=dict)
    config: str | dict[str, Any] | None = None
    limit_queries: int | None = None
    # out of scope: questions each workspace (each scope, in BEIR mode) has nothing on; the honest answer is []
    foreign_dirs: tuple[str, ...] = ()  # BEIR queries.jsonl folders (SciFact claims, XQuAD questions)
    foreign_limit: int = 300  # at most this many of each (spread over the file), the same for every workspace
    others: int = 0  # and this many questions from the other scopes (another person's conversations)
    first_files: int = 0  # workspace mode: index only each folder's first N files (a small, new memory)
    # workspace mode: this many folders in one workspace (a memory of many people), each query
    # answered from its own folder's lines; ``others`` then come from the folders left out
    together: int = 0
    # BEIR mode: leave half of the documents out of the index (whole titles: every paragraph of an
    # article), and ask the questions on them as well; nothing indexed answers those (ABSENT)
    absent: bool = False
    # called for every search with (scope, kind, query text, hits, relevant): kind is "in scope", a
    # foreign folder's label or "other scopes"; relevant is what holds the answer (empty out of scope)
    collect: Callable[[str, str, str, list[Any], Any], None] | None = None


@dataclass
class _QueryResult:
    category: Any
    scores: dict[str, float]
    latency_ms: float


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60] or "scope"


def _write_if_changed(path: str, text: str) -> None:
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _doc_markdown(doc: Doc) -> str:
    return f"# {doc.title}\n\n{doc.text}\n" if doc.title else f"{doc.text}\n"


class _Session:
    """Opens one Memory per scope, sharing one embedding provider."""

    def __init__(self, options: EvalOptions, progress: PhaseProgress | None):
        self.options = options
        self.progress = progress
        self._tmp = None
        if options.work_dir:
            self.root = os.path.abspath(options.work_dir)
            os.makedirs(self.root, exist_ok=True)
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="mnemoclaw-eval-")
            self.root = self._tmp.name
        # every mode searches the same index (mode only changes how it is searched),
        # so comparing modes costs one embedding pass
        self.overrides = dict(options.overrides)
        self.provider: EmbeddingProvider | None | object = None
        self._provider_ready = False
        self.index_seconds = 0.0
        self.chunks = 0
        self.described: dict[str, Any] = {}

    def memory(self, key: str, extra: dict[str, Any] | None = None) -> Memory:
        ws = os.path.join(self.root, key, "workspace")
        os.makedirs(os.path.join(ws, "memory"), exist_ok=True)
        overrides = {**self.overrides, **(extra or {})}
        settings = load_settings(workspace=ws, state_dir=os.path.join(self.root, key, "state"),
                                 config=self.options.config or {}, overrides=overrides, env={})
        if settings.memory_search["store"]["driver"] == "postgres":  # one server: a namespace per workspace
            store = {**overrides.get("store", {}), "namespace": f"eval-{key}"}
            settings = load_settings(workspace=ws, state_dir=os.path.join(self.root, key, "state"),
                                     config=self.options.config or {}, overrides={**overrides, "store": store}, env={})
        if not self._provider_ready:
            from ..api import resolve_provider

            self.provider = resolve_provider(settings)
            self._provider_ready = True
        return Memory(settings, provider=self.provider)

    def index(self, mem: Memory, label: str) -> None:
        t = time.monotonic()
        progress = self.progress
        report = mem.sync(progress=(lambda d, n: progress(f"index {label}", d, n)) if progress else None)
        self.index_seconds += time.monotonic() - t
        self.chunks += report.chunks_total
        if report.failed:
            raise EvalDataError(f"{len(report.failed)} files failed to index, e.g. {report.failed[0]}")
        if not self.described:
            st = mem.status(check_dirty=False)
            self.described = {k: st[k] for k in ("provider", "model", "fusion", "vectorSearch", "sqlite")}
            self.described["mode"] = self.options.mode or st["mode"]
            floor = self.options.min_score
            self.described["min_score"] = mem.settings.query_options().min_score if floor is None else floor

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()


SCORE_BINS = [i / 10 for i in range(11)]


def _histogram(scores: list[float]) -> list[int]:
    counts = [0] * (len(SCORE_BINS) - 1)
    for x in scores:
        counts[min(int(x * 10), 9)] += 1
    return counts


def _summarise(results: list[_QueryResult], extra_keys: tuple[str, ...] = ()) -> dict[str, Any]:
    # empty: answered with nothing; weak: answered only with a result under the floor (weak)
    keys = [f"recall@{k}" for k in K_VALUES] + ["mrr@10", "ndcg@10", "empty", "weak", *extra_keys]
    out: dict[str, Any] = {"queries": len(results)}
    for key in keys:
        out[key] = round(mean([r.scores[key] for r in results]), 4)
    lat = [r.latency_ms for r in results]
    out["latency_ms_p50"] = round(percentile(lat, 50), 2)
    out["latency_ms_p95"] = round(percentile(lat, 95), 2)
    cats: dict[Any, list[_QueryResult]] = defaultdict(list)
    for r in results:
        if r.category is not None:
            cats[r.category].append(r)
    out["by_category"] = {
        str(c): {"queries": len(rs), **{key: round(mean([r.scores[key] for r in rs]), 4) for key in keys}}
        for c, rs in sorted(cats.items(), key=lambda kv: str(kv[0]))
    }
    return out


def _scope_of(item: Doc | Query, field_name: str | None) -> str:
    if not field_name:
        return "all"
    value = item.metadata.get(field_name)
    if value is None:
        raise EvalDataError(f"item {item.id} has no metadata.{field_name} to scope by")
    return str(value)


def evaluate(directory: str, options: EvalOptions, progress: PhaseProgress | None = None) -> dict[str, Any]:
    """Evaluate ``directory``: a BEIR directory, or a folder of Markdown workspaces."""
    directory = os.path.abspath(directory)
    if not os.path.isdir(directory):
        raise EvalDataError(f"{directory} is not a directory")
    if os.path.isfile(os.path.join(directory, "corpus.jsonl")):
        return _evaluate_beir(directory, options, progress)
    subdirs = sorted(d for d in os.listdir(directory) if os.path.isdir(os.path.join(directory, d)))
    if subdirs and any(f.endswith(".md") for d in subdirs for f in os.listdir(os.path.join(directory, d))):
        return _evaluate_workspaces(directory, subdirs, options, progress)
    raise EvalDataError(
        f"{directory} holds neither corpus.jsonl (BEIR layout) nor folders of Markdown files (workspace mode)"
    )


def _evaluate_beir(directory: str, options: EvalOptions, progress: PhaseProgress | None) -> dict[str, Any]:
    corpus = load_corpus(directory)
    qdir = os.path.abspath(options.queries_dir) if options.queries_dir else directory
    queries = load_queries(qdir)
    qrels = load_qrels(qdir)
    queries = [q for q in queries if qrels.get(q.id)]
    if options.limit_queries:
        queries = queries[: options.limit_queries]
    if not queries:
        raise EvalDataError(f"no query in {qdir} has a relevant document in qrels.tsv")
    absent: list[Query] = []
    if options.absent:
        corpus, queries, absent = _leave_half_out(corpus, queries, qrels, options.foreign_limit)
    docs_by_scope: dict[str, list[Doc]] = defaultdict(list)
    for d in corpus:
        docs_by_scope[_scope_of(d, options.scope_field)].append(d)
    queries_by_scope: dict[str, list[Query]] = defaultdict(list)
    for q in queries:
        queries_by_scope[_scope_of(q, options.scope_field)].append(q)
    asked = [(_label(d), q) for d in options.foreign_dirs
             for q in spread(load_queries(os.path.abspath(d)), options.foreign_limit)]
    foreign_empty: dict[str, list[float]] = defaultdict(list)
    foreign_weak: dict[str, list[float]] = defaultdict(list)

    session = _Session(options, progress)
    digest = hashlib.sha256(directory.encode()).hexdigest()[:8]
    results: list[_QueryResult] = []
    top_relevant: list[float] = []  # the best score among the relevant results of a query
    try:
        for scope, scope_queries in sorted(queries_by_scope.items()):
            docs = docs_by_scope.get(scope, [])
            key = f"{_safe(os.path.basename(directory))}-{digest}-{_safe(scope)}" + ("-half" if options.absent else "")
            mem = session.memory(key)
            path_to_doc: dict[str, str] = {}
            wanted = set()
            for i, doc in enumerate(docs):
                rel = f"memory/d{i:06d}.md"
                _write_if_changed(os.path.join(str(mem.settings.workspace), rel), _doc_markdown(doc))
                path_to_doc[rel] = doc.id
                wanted.add(f"d{i:06d}.md")
            for stale in os.listdir(os.path.join(str(mem.settings.workspace), "memory")):
                if stale not in wanted:
                    os.unlink(os.path.join(str(mem.settings.workspace), "memory", stale))
            try:
                session.index(mem, scope)
                for n, q in enumerate(scope_queries):
                    t = time.perf_counter()
                    hits = mem.search(q.text, max_results=30, min_score=options.min_score, mode=options.mode,
                                      sync=False)
                    ms = (time.perf_counter() - t) * 1000
                    ranked = list(dict.fromkeys(path_to_doc[h.path] for h in hits if h.path in path_to_doc))
                    relevant = qrels[q.id]
                    scores = {f"recall@{k}": recall_at(ranked, relevant, k) for k in K_VALUES}
                    scores["mrr@10"] = mrr_at(ranked, relevant)
                    scores["ndcg@10"] = ndcg_at(ranked, relevant)
                    scores["empty"] = float(not hits)
                    scores["weak"] = float(bool(hits) and hits[0].weak)
                    good = [h.score for h in hits if path_to_doc.get(h.path) in relevant]
                    if good:
                        top_relevant.append(max(good))
                    if options.collect:
                        options.collect(scope, IN_SCOPE, q.text, hits,
                                        {p for p, d in path_to_doc.items() if d in relevant})
                    results.append(_QueryResult(q.metadata.get("category"), scores, ms))
                    if progress and n % 50 == 0:
                        progress(f"search {scope}", n, len(scope_queries))
                # asked where nothing answers them: the questions on the documents left out, and
                # the foreign folders' (of every scope)
                outside = [(ABSENT, a) for a in absent if _scope_of(a, options.scope_field) == scope] + asked
                for kind, q in outside:
                    hits = mem.search(q.text, max_results=30, min_score=options.min_score, mode=options.mode,
                                      sync=False)
                    foreign_empty[kind].append(float(not hits))
                    foreign_weak[kind].append(float(bool(hits) and hits[0].weak))
                    if options.collect:
                        options.collect(scope, kind, q.text, hits, set())
            finally:
                mem.close()
    finally:
        session.close()
    out = _summarise(results)
    if foreign_empty:
        out["out_of_scope"] = {kind: {"queries": len(e), "empty": round(mean(e), 4),
                                      "weak": round(mean(foreign_weak[kind]), 4)} for kind, e in foreign_empty.items()}
    out["score_histogram"] = {"bins": SCORE_BINS, "relevant_top": _histogram(top_relevant)}
    out.update({"dataset": directory, "queries_from": qdir, "scope_field": options.scope_field,
                "scopes": len(queries_by_scope), "chunks": session.chunks,
                "index_seconds": round(session.index_seconds, 2), "cores": cpu_count(), **session.described})
    return out


def _leave_half_out(corpus: list[Doc], queries: list[Query], qrels: dict[str, Any],
                    limit: int) -> tuple[list[Doc], list[Query], list[Query]]:
    """Half the documents (by a hash of their title, so an article's paragraphs go together),
    the questions they still answer, and at most ``limit`` of the questions only the other half
    answered."""
    def kept(doc: Doc) -> bool:
        key = (doc.title or doc.id).encode()
        return hashlib.sha256(key).digest()[0] % 2 == 0

    keep = {d.id for d in corpus if kept(d)}
    inside = [q for q in queries if all(d in keep for d in qrels[q.id])]
    outside = [q for q in queries if not any(d in keep for d in qrels[q.id])]
    return [d for d in corpus if d.id in keep], inside, spread(outside, limit)


def _evidence_lines(folder: str) -> dict[str, tuple[str, int]]:
    """Dialogue id -> (absolute file path, 1-based line) for every ``(Dn:m)`` mark in a folder."""
    out: dict[str, tuple[str, int]] = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".md"):
            continue
        path = os.path.realpath(os.path.join(folder, name))
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                for m in EVIDENCE.finditer(line):
                    out.setdefault(m.group(1), (path, lineno))
    return out


def _evaluate_workspaces(root: str, subdirs: list[str], options: EvalOptions,
                         progress: PhaseProgress | None) -> dict[str, Any]:
    if not options.queries_dir:
        raise EvalDataError("workspace mode needs --queries DIR (a queries.jsonl whose metadata holds the "
                            "evidence ids)")
    qdir = os.path.abspath(options.queries_dir)
    queries = load_queries(qdir)
    field_name = options.scope_field or "conv"
    by_scope: dict[str, list[Query]] = defaultdict(list)
    for q in queries:
        if q.metadata.get("evidence"):
            by_scope[_scope_of(q, field_name)].append(q)
    if options.limit_queries:
        kept = 0
        for scope in sorted(by_scope):
            room = max(0, options.limit_queries - kept)
            by_scope[scope] = by_scope[scope][:room]
            kept += len(by_scope[scope])
    foreign = [(_label(d), q) for d in options.foreign_dirs
               for q in spread(load_queries(os.path.abspath(d)), options.foreign_limit)]
    session = _Session(options, progress)
    results: list[_QueryResult] = []
    chunk_chars: list[int] = []
    top_relevant: list[float] = []  # the best score among the relevant results of a query
    top_foreign: list[float] = []  # the best score of a query asked where nothing answers it
    foreign_empty: dict[str, list[float]] = defaultdict(list)
    foreign_weak: dict[str, list[float]] = defaultdict(list)
    try:
        size = max(1, options.together)
        for group in (subdirs[i:i + size] for i in range(0, len(subdirs), size)):
            members = [s for s in group if by_scope.get(s)]
            if not members:
                continue
            key = "ws-" + "+".join(_safe(s) for s in members)
            folders = [os.path.join(root, s) for s in members]
            if options.first_files:
                key += f"-first{options.first_files}"
                folders = [_first_files(f, os.path.join(session.root, key, "notes", s), options.first_files)
                           for f, s in zip(folders, members, strict=True)]
            lines = {s: _evidence_lines(f) for s, f in zip(members, folders, strict=True)}
            scope = "+".join(members)
            mem = session.memory(key, {"extraPaths": folders})
            try:
                session.index(mem, scope)
                for q in (q for s in members for q in by_scope[s]):
                    own = lines[_scope_of(q, field_name)]
                    evidence = {e: own[e] for e in q.metadata["evidence"] if e in own}
                    if not evidence:
                        continue
                    t = time.perf_counter()
                    hits = mem.search(q.text, max_results=10, min_score=options.min_score, mode=options.mode,
                                      sync=False)
                    ms = (time.perf_counter() - t) * 1000
                    chunk_chars.extend(len(h.text) for h in hits[:5])
                    scores = _score_evidence(hits, evidence, q.metadata.get("answer"))
                    relevant = [h.score for h in hits if evidence_in(h, evidence)]
                    if relevant:
                        top_relevant.append(max(relevant))
                    results.append(_QueryResult(q.metadata.get("category"), scores, ms))
                    if options.collect:
                        options.collect(scope, IN_SCOPE, q.text, hits, evidence)
                asked = list(foreign)
                if options.others:
                    pool = [q for s2, qs in sorted(by_scope.items()) if s2 not in members for q in qs]
                    asked += [(OTHER_SCOPES, q) for q in spread(pool, options.others)]
                for kind, q in asked:
                    hits = mem.search(q.text, max_results=10, min_score=options.min_score, mode=options.mode,
                                      sync=False)
                    foreign_empty[kind].append(float(not hits))
                    foreign_weak[kind].append(float(bool(hits) and hits[0].weak))
                    if hits:
                        top_foreign.append(hits[0].score)
                    if options.collect:
                        options.collect(scope, kind, q.text, hits, {})
            finally:
                mem.close()
    finally:
        session.close()
    if not results:
        raise EvalDataError(f"no query in {qdir} has evidence ids found in {root}")
    out = _summarise(results, tuple(f"hit@{k}" for k in K_VALUES) + ("snippet_recall@5", "snippet_recall_lines@5"))
    out["avg_chunk_chars@5"] = round(mean(chunk_chars), 1)
    answered = [r.scores["snippet_answer@5"] for r in results if "snippet_answer@5" in r.scores]
    if answered:  # the questions whose answer's words the first five chunks hold
        out["snippet_answer@5"] = {"queries": len(answered), "shown": round(mean(answered), 4)}
    if foreign_empty:  # asked where nothing answers: the share answered []
        out["out_of_scope"] = {kind: {"queries": len(e), "empty": round(mean(e), 4),
                                      "weak": round(mean(foreign_weak[kind]), 4)}
                               for kind, e in foreign_empty.items()}
    out["score_histogram"] = {"bins": SCORE_BINS, "relevant_top": _histogram(top_relevant),
                              "out_of_scope_top": _histogram(top_foreign)}
    out.update({"dataset": root, "queries_from": qdir, "scope_field": field_name, "mode_kind": "workspace",
                "scopes": len([s for s in subdirs if by_scope.get(s)]), "chunks": session.chunks,
                "index_seconds": round(session.index_seconds, 2), "cores": cpu_count(), **session.described})
    return out


def _first_files(folder: str, dest: str, n: int) -> str:
    """A copy of ``folder``'s first ``n`` Markdown files (by name) in ``dest``."""
    os.makedirs(dest, exist_ok=True)
    names = sorted(f for f in os.listdir(folder) if f.endswith(".md"))[:n]
    for stale in set(os.listdir(dest)) - set(names):
        os.unlink(os.path.join(dest, stale))
    for name in names:
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            _write_if_changed(os.path.join(dest, name), fh.read())
    return dest


def _label(directory: str) -> str:
    """``.../scifact/beir-test`` -> ``scifact/beir-test``: how a foreign query set is reported."""
    path = os.path.abspath(directory)
    return f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path)}"


def spread(items: list[T], n: int) -> list[T]:
    """At most ``n`` of ``items``, evenly spaced (a file's first questions share one topic)."""
    if n <= 0:
        return []
    return items[:: max(1, len(items) // n)][:n]


def evidence_in(hit: Any, evidence: dict[str, tuple[str, int]]) -> set[str]:
    """The evidence ids whose (file, line) the hit's line range holds."""
    path = os.path.realpath(hit.path) if os.path.isabs(hit.path) else hit.path
    return {e for e, (p, ln) in evidence.items() if p == path and hit.start_line <= ln <= hit.end_line}


@dataclass(frozen=True)
class Shown:
    """What an agent reading only the snippets of the first results sees of a question's evidence."""

    text: float  # the share of the evidence lines the snippets' text holds (``holds``)
    lines: float  # the share of them the snippets' line ranges (snippetLines) name
    words: float | None  # of the answer's words the chunks hold, the share the snippets show


def holds(snippet: str, line: str, mark: str) -> bool:
    """Whether a snippet's text shows ``line``, the evidence line marked ``mark`` (``(D3:5)``): one
    of its lines starts with the line's speaker (``- **Caroline** (D3:5): ``, snippets.speaker;
    nothing for a line without one), holds the mark, and goes on with a piece of the rest of the
    line, as written, of at least ``HELD_CHARS`` characters (all of it when it is shorter). An
    ellipsis where the line was cut does not count. Named by snippetLines but cut past who
    said it, or to a few words, a line is not shown."""
    head = speaker(line)
    rest = line[len(head):]
    for shown in snippet.split("\n"):
        if shown.startswith(head) and mark in shown:
            piece = shown[len(head):].strip("…")
            if piece in rest and len(piece) >= min(HELD_CHARS, len(rest)):
                return True
    return False


def snippets_show(top: list, evidence: dict[str, tuple[str, int]], answer: Any = None,
                  line_max: int = LINE_MAX, best_line_max: int = BEST_LINE_MAX,
                  allowance: int = PREFIX_ALLOWANCE) -> Shown:
    """What an agent reading only the snippets of ``top`` sees: the share of the evidence lines
    their text shows (and the share their line ranges name), and of the answer's words ``top``
    holds the share they show (None without an answer, or when ``top`` holds none of its words)."""
    snippets = choose_all(((h.path, h.text, h.start_line, h.terms, h.analysed) for h in top), SNIPPET_MAX_CHARS,
                          line_max, best_line_max, allowance)
    named: set[str] = set()
    shown: set[str] = set()
    for h, snippet in zip(top, snippets, strict=True):
        path = os.path.realpath(h.path) if os.path.isabs(h.path) else h.path
        lines = h.text.split("\n")
        for e, (p, ln) in evidence.items():
            if p == path and any(a <= ln <= b for a, b in snippet.ranges):
                named.add(e)
                if holds(snippet.text, lines[ln - h.start_line], f"({e})"):
                    shown.add(e)
    words = set(keyword_query(str(answer)).as_written) if answer not in (None, "") else set()
    held = words & {t for h in top for t in analyze(h.text)}
    seen = {t for s in snippets for t in analyze(s.text)} if held else set()
    return Shown(len(shown) / len(evidence), len(named) / len(evidence),
                 len(held & seen) / len(held) if held else None)


def _score_evidence(hits: list, evidence: dict[str, tuple[str, int]], answer: Any = None) -> dict[str, float]:
    """Metrics for one query: a chunk counts for the evidence ids its line range holds. With the
    question's ``answer``: of the answer's words the first five chunks hold, the share their
    snippets show (``snippet_answer@5``; a line shortened past its answer shows a line, not the
    answer)."""
    seen: set[str] = set()
    covered_at: list[int] = []  # evidence ids covered by the first k chunks
    gains: list[int] = []
    first_hit = 0
    for rank, h in enumerate(hits, 1):
        inside = evidence_in(h, evidence)
        if inside and not first_hit:
            first_hit = rank
        gains.append(1 if inside - seen else 0)
        seen |= inside
        covered_at.append(len(seen))
    n = len(evidence)

    def covered(k: int) -> int:
        return covered_at[min(k, len(covered_at)) - 1] if covered_at else 0

    scores = {f"recall@{k}": covered(k) / n for k in K_VALUES}
    scores.update({f"hit@{k}": float(covered(k) > 0) for k in K_VALUES})
    scores["mrr@10"] = 1.0 / first_hit if first_hit and first_hit <= 10 else 0.0
    scores["empty"] = float(not hits)
    scores["weak"] = float(bool(hits) and hits[0].weak)
    shown = snippets_show(hits[:5], evidence, answer)
    scores["snippet_recall@5"] = shown.text
    scores["snippet_recall_lines@5"] = shown.lines
    if shown.words is not None:
        scores["snippet_answer@5"] = shown.words
    dcg = sum(g / math.log2(i + 1) for i, g in enumerate(gains[:10], 1))
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(n, 10) + 1))
    scores["ndcg@10"] = dcg / ideal
    return scores
