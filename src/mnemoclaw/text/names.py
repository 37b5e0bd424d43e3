"""The names in Chinese text: people, places, organisations. Pure (jieba's tagger, in memory).

Chinese writes no capitals, so the rule that a question whose names memory never mentions is
about someone else (search/relevance.py) needs the names found another way. jieba's
part-of-speech tagger (rjieba: its dictionary and its hidden Markov model, compiled into the
package) marks the words that name a person (``nr``: 张伟, 小王, 李老师), a transliterated
name (``nrt``), a place (``ns``: 滨江), an organisation (``nt``) or another proper noun (``nz``).

A name is two characters or more, in a run of Han characters. Text with kana, Hangul or the
characters of written Cantonese (嘅, 咗, 嗰, …) is left alone: the tagger knows Mandarin only,
and takes Cantonese particles for names. Words its dictionary counts as common (``COMMON``:
东西 and 城市, which it tags as places, but also 美国) are not names here either: what tells a
question about someone else is a rare, proper term. The tagger loads once a process, the
first time a question holds Chinese (what that costs a cold search: docs/quality.md).
Without it installed (it is a dependency; a broken install) no Chinese name is found, and
``available()`` says so.
"""

from __future__ import annotations

import importlib.util
import re
import threading
from typing import Any

from .script import HAN_RUN

# the tags that name someone or something (jieba's tag set, after ICTCLAS)
NAME_TAGS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz"})
# a word the tagger's dictionary has counted this often (its own corpus's count) is
# a common one, whatever its tag (docs/quality.md, "Chinese names")
COMMON = 1000
# Text the tagger does not know: Japanese (kana), Korean (Hangul) and written Cantonese (its own
# characters, as written and as folded into Simplified: 嘅 咗 嗰 哋 冇 啲 喺 嘢 …), where a Mandarin
# tagger takes particles and phrases for names
_CANTONESE = "嘅咗嗰𠮶哋冇啲喺嘢噉嚟咩㗎喎㖞囉啰嘞諗谂攞揾睇佢乜咁唔𡃉嚹囖啫唧嗱嘍喽"
_NOT_MANDARIN = re.compile(
    f"[\u3040-\u30ff\u31f0-\u31ff\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af{_CANTONESE}]")
_lock = threading.Lock()
_tagger: Any = None
_failed = False
# off: no Chinese name is looked for (benchmarks/quality.py --without-han-names compares)
enabled = True


def _load() -> Any:
    global _tagger, _failed
    with _lock:
        if _tagger is None and not _failed:
            try:
                import rjieba
            except ImportError:
                _failed = True
                return None
            _tagger = rjieba
    return _tagger


def available() -> bool:
    """Whether the tagger is installed (found, not loaded: ``status`` stays fast)."""
    return _tagger is not None or (not _failed and importlib.util.find_spec("rjieba") is not None)


def han_names(text: str) -> tuple[str, ...]:
    """The names a Chinese text holds, each as written, in order, once (() for other text)."""
    if not enabled or not HAN_RUN.search(text) or _NOT_MANDARIN.search(text):
        return ()
    tagger = _load()
    if tagger is None:
        return ()
    out: dict[str, None] = {}
    for run in HAN_RUN.findall(text):
        if len(run) < 2:
            continue
        for word, tag in tagger.tag(run):
            common = tagger.has_word(word) and tagger.suggest_freq(word) >= COMMON
            if tag in NAME_TAGS and len(word) >= 2 and not common:
                out[word] = None
    return tuple(out)


def han_nouns(text: str) -> tuple[str, ...] | None:
    """The nouns a Chinese text holds, as the tagger cuts it: each run of nouns joined (卡罗来纳黑豹队,
    托马斯·戴维斯) and its words of two characters or more, in order, once (() for text without
    Chinese). What a note may write a foreign name as: a tagger cuts transliterations and
    translated names (黑豹 for the Panthers) into pieces, and often not as names. None where the
    tagger cannot tell: Japanese, Korean, written Cantonese, or no tagger installed."""
    if not HAN_RUN.search(text):
        return ()
    tagger = _load()
    if tagger is None or _NOT_MANDARIN.search(text):
        return None
    out: dict[str, None] = {}
    for run in _NOUN_TEXT.findall(text):
        nouns: list[str] = []
        for word, tag in [*tagger.tag(run), ("", "")]:
            if tag.startswith("n") or word == "·":
                nouns.append(word)
                continue
            if nouns:
                out.update(dict.fromkeys(["".join(nouns), *nouns]))
            nouns = []
    return tuple(w for w in out if len(w) >= 2)


_NOUN_TEXT = re.compile(r"[\u4e00-\u9fff·]+")
