"""Chinese characters read alike: what a pinyin input method offers for one syllable. Pure
(pypinyin's table of readings, in memory).

A Chinese name is often written with another character of the same sound: a pinyin input
method offers every character of a syllable, and a transliteration may use any of them (特斯拉
and 特思拉, 路德 and 鹿德, 张伟 and 章伟). Tones are left out: an input method asks for none.
``alike(ch)`` lists the characters that share a reading with ``ch`` (among the common ones, the
CJK Unified Ideographs block); the table loads once a process, the first time a Chinese name is
looked for in another spelling. Without pypinyin installed (it is a dependency; a broken
install) no character is alike.
"""

from __future__ import annotations

import threading
import unicodedata
from functools import lru_cache

_lock = threading.Lock()
_by_sound: dict[str, frozenset[str]] | None = None
_readings: dict[str, tuple[str, ...]] = {}
# the common ideographs: a reading's rarer characters (extensions A and beyond) are left out
_FIRST, _LAST = 0x4E00, 0x9FFF


def _toneless(syllable: str) -> str:
    out = "".join(c for c in unicodedata.normalize("NFD", syllable) if not unicodedata.combining(c))
    return out.replace("ü", "v")


def _load() -> dict[str, frozenset[str]]:
    global _by_sound
    with _lock:
        if _by_sound is None:
            try:
                from pypinyin.pinyin_dict import pinyin_dict
            except ImportError:
                _by_sound = {}
                return _by_sound
            groups: dict[str, set[str]] = {}
            for code, readings in pinyin_dict.items():
                if _FIRST <= code <= _LAST:
                    ch = chr(code)
                    sounds = tuple(dict.fromkeys(_toneless(r) for r in readings.split(",")))
                    _readings[ch] = sounds
                    for s in sounds:
                        groups.setdefault(s, set()).add(ch)
            _by_sound = {s: frozenset(chars) for s, chars in groups.items()}
    return _by_sound


def readings(ch: str) -> tuple[str, ...]:
    """The syllables ``ch`` is read as, without tones (() for a character the table lacks)."""
    _load()
    return _readings.get(ch, ())


@lru_cache(maxsize=4096)
def alike(ch: str) -> frozenset[str]:
    """The characters that share a reading with ``ch``, ``ch`` left out."""
    by_sound = _load()
    out: set[str] = set()
    for s in _readings.get(ch, ()):
        out |= by_sound.get(s, frozenset())
    out.discard(ch)
    return frozenset(out)
