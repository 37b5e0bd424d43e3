"""Chinese in either script: Traditional text is matched as Simplified. Pure (OpenCC in memory).

A note written in Traditional Chinese (``資料庫遷移``) and a question asked in Simplified
(``数据库迁移``) are the same words to a reader. The keyword index, the embedder and every query
see each line that holds a character only Traditional script has folded into Simplified by
OpenCC's ``tw2sp`` table (the characters, and Taiwan's words for things: 資料庫 -> 数据库,
軟體 -> 软件, 記憶體 -> 内存), so either script finds the other. A line without such a
character is left as it is: the table would also turn words both regions write (新增, 字型)
into the Mainland's (添加, 字体), and change what Simplified text means to the embedder. What
is stored and shown is always the text as written.

Japanese kanji fold too (東京 -> 东京); that is harmless, because documents and queries fold
alike. Without OpenCC installed (it is a dependency; a broken install) text is not folded,
and ``available()`` says so for ``mnemoclaw status``.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

# CJK unified ideographs (basic, extension A, compatibility): where Traditional and Simplified differ
HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
HAN_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
TABLE = "tw2sp"
# part of the index fingerprint (text/tokenize.py TOKENIZER_ID): a new table rebuilds the index
SCHEME = f"zh: lines with Traditional characters folded by OpenCC {TABLE}"

@cache
def _converter(table: str = TABLE) -> Any:
    """OpenCC's converter for ``table``, made once (None on a broken install: match as written)."""
    try:
        from opencc import OpenCC
    except ImportError:
        return None
    return OpenCC(table)


def available() -> bool:
    return _converter() is not None


@lru_cache(maxsize=1)
def _traditional_chars() -> re.Pattern[str] | None:
    """The characters OpenCC's ``t2s`` changes: what only Traditional script writes (4 221 of the
    28 096 ideographs; 8 ms once)."""
    conv = _converter("t2s")
    if conv is None:
        return None
    chars = [chr(i) for a, b in ((0x3400, 0x4DC0), (0x4E00, 0xA000), (0xF900, 0xFB00)) for i in range(a, b)]
    out = conv.convert("\n".join(chars)).split("\n")  # one character a line: no phrase spans two
    return re.compile(f"[{re.escape(''.join(a for a, b in zip(chars, out, strict=True) if a != b))}]")


def fold(text: str) -> str:
    """``text`` with each line that holds a Traditional-only character in Simplified script
    (regional words included); other lines as they are."""
    if not HAN.search(text):
        return text
    if "\n" not in text:
        return _fold_line(text) if len(text) > 64 else _fold_short(text)
    return "\n".join(_fold_line(line) for line in text.split("\n"))


def _fold_line(line: str) -> str:
    conv = _converter()
    traditional = _traditional_chars()
    if conv is None or traditional is None or not traditional.search(line):
        return line
    return conv.convert(line)


@lru_cache(maxsize=4096)
def _fold_short(text: str) -> str:  # queries and short lines recur
    return _fold_line(text)


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
