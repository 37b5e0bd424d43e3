"""Reading a BEIR-layout directory: corpus.jsonl, queries.jsonl, qrels.tsv."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import EvalDataError


@dataclass
class Doc:
    id: str
    title: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Query:
    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


def _jsonl(path: str) -> list[dict[str, Any]]:
    if not os.path.isfile(path):
        raise EvalDataError(f"{path} is missing; a BEIR directory holds corpus.jsonl, queries.jsonl and qrels.tsv")
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError as exc:
                    raise EvalDataError(f"{path}:{n} is not valid JSON: {exc}") from None
    return out


def load_corpus(directory: str) -> list[Doc]:
    return [Doc(str(d["_id"]), d.get("title") or "", d.get("text") or "", d.get("metadata") or {})
            for d in _jsonl(os.path.join(directory, "corpus.jsonl"))]


def load_queries(directory: str) -> list[Query]:
    return [Query(str(q["_id"]), q.get("text") or "", q.get("metadata") or {})
            for q in _jsonl(os.path.join(directory, "queries.jsonl"))]


def load_qrels(directory: str) -> dict[str, set[str]]:
    path = os.path.join(directory, "qrels.tsv")
    if not os.path.isfile(path):
        raise EvalDataError(f"{path} is missing; a BEIR directory holds corpus.jsonl, queries.jsonl and qrels.tsv")
    out: dict[str, set[str]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh, delimiter="\t")
        header = next(rows, None)
        reader: Iterator[list[str]] = iter([header, *rows]) if header and header[0] != "query-id" else rows
        for row in reader:  # (no header line: the first row is data)
            if len(row) < 2:
                continue
            score = float(row[2]) if len(row) > 2 and row[2] else 1.0
            if score > 0:
                out.setdefault(row[0], set()).add(row[1])
    return out
