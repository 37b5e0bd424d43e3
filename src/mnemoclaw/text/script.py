"""Chinese in either script: Traditional text is matched as Simplified. Pure (OpenCC in memory).

A note written in Traditional Chinese (``資料庫遷移``) and a question asked in Simplified
(``数据库迁移``) are the same words to a reader. The keyword index and every query see text
folded into Simplified Chinese by OpenCC's ``tw2sp`` table (Traditional characters, and
Taiwan's words for things: 資料庫 -> 数据库, 軟體 -> 软件, 記憶體 -> 内存), so either script
finds the other. Simplified text, and text without Chinese characters, comes back as it is.
What is stored and shown is always the text as written: only the index terms are folded.

Japanese kanji fold too (東京 -> 东京); that is harmless, because documents and queries fold
alike. Without OpenCC installed (it is a dependency; a broken install) text is not folded,
and ``available()`` says so for ``mnemoclaw status``.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

# CJK unified ideographs (basic, extension A, compatibility): where Traditional and Simplified differ
HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
HAN_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
TABLE = "tw2sp"
# part of the index fingerprint (text/tokenize.py TOKENIZER_ID): a new table rebuilds the index
SCHEME = f"zh folded by OpenCC {TABLE}"

_lock = threading.Lock()
_converters: dict[str, Any] = {}
_missing: list[str] = []


def _converter(table: str = TABLE) -> Any:
    conv = _converters.get(table)
    if conv is None and not _missing:
        with _lock:
            conv = _converters.get(table)
            if conv is None:
                try:
                    from opencc import OpenCC
                except ImportError as exc:  # a broken install: match as written
                    _missing.append(str(exc))
                    return None
                conv = _converters[table] = OpenCC(table)
    return conv


def available() -> bool:
    return _converter() is not None


def fold(text: str) -> str:
    """``text`` with its Chinese in Simplified script (regional words included)."""
    if not HAN.search(text):
        return text
    if len(text) <= 64:
        return _fold_short(text)
    conv = _converter()
    return conv.convert(text) if conv is not None else text


@lru_cache(maxsize=4096)
def _fold_short(text: str) -> str:  # queries and short lines recur
    conv = _converter()
    return conv.convert(text) if conv is not None else text


def _fold_chars(run: str) -> str:
    """A run folded one character at a time: as long as the run, so positions carry over."""
    conv = _converter("t2s")
    if conv is None:
        return run
    out = []
    for ch in run:
        got = conv.convert(ch)
        out.append(got if len(got) == 1 else ch)
    return "".join(out)


def marks(text: str, words: list[str]) -> list[str]:
    """The pieces of ``text``, as written, that are one of ``words`` (folded) in the other
    script: what a highlighter marks when the query's script is not the note's."""
    typed = set(words)
    wanted = [w for w in dict.fromkeys(fold(w) for w in words) if HAN.search(w)]
    if not wanted:
        return []
    found: list[str] = []
    for m in HAN_RUN.finditer(text):
        run = m.group()
        folded = fold(run)
        if len(folded) != len(run):
            folded = _fold_chars(run)
        for word in wanted:
            start = folded.find(word)
            while start >= 0:
                piece = run[start:start + len(word)]
                if piece not in typed:  # as typed, the highlighter finds it itself
                    found.append(piece)
                start = folded.find(word, start + 1)
    return list(dict.fromkeys(found))
