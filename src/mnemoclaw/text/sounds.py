"""Chinese characters read alike: what a pinyin input method offers for one syllable. Pure (a
table of readings shipped beside this module, read once a process).

A Chinese name is often written with another character of the same sound: a pinyin input
method offers every character of a syllable, and a transliteration may use any of them (特斯拉
and 特思拉, 路德 and 鹿德, 张伟 and 章伟, 于乐 and 于勒). ``alike(ch)`` lists the characters that
share a reading with ``ch``, tone included, among the CJK Unified Ideographs (U+4E00-U+9FFF).
Without the tone, a character's rarer reading links it to a whole other syllable (赫 hè is also
shì, 斯 sī also shǐ: 卡赫 and 卡斯 would be one name). The table (``sounds.txt``: one line a
syllable and its tone, 1-4 or 5 for none, then its characters) is read the first time a Chinese
name is looked for in another spelling, in about 25 ms (7 MB). It is made from pypinyin's
readings of the characters by ``python -m mnemoclaw.text.sounds`` (pypinyin is a development
dependency only).
"""

from __future__ import annotations

import sys
import threading
import unicodedata
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).with_name("sounds.txt")
# the common ideographs: a reading's rarer characters (extensions A and beyond) are left out
_FIRST, _LAST = 0x4E00, 0x9FFF
_lock = threading.Lock()
_by_sound: dict[str, str] | None = None
_readings: dict[str, tuple[str, ...]] = {}


def _load() -> dict[str, str]:
    global _by_sound
    with _lock:
        if _by_sound is None:
            by_sound: dict[str, str] = {}
            readings: dict[str, list[str]] = {}
            try:
                text = TABLE.read_text("utf-8")
            except OSError:  # a broken install: no character is alike
                text = ""
            for line in text.splitlines():
                sound, _, chars = line.partition(" ")
                if sound and chars:
                    by_sound[sound] = chars
                    for ch in chars:
                        readings.setdefault(ch, []).append(sound)
            _readings.update((ch, tuple(s)) for ch, s in readings.items())
            _by_sound = by_sound
    return _by_sound


def readings(ch: str) -> tuple[str, ...]:
    """The syllables ``ch`` is read as, each with its tone (() for a character the table lacks)."""
    _load()
    return _readings.get(ch, ())


@lru_cache(maxsize=4096)
def alike(ch: str) -> frozenset[str]:
    """The characters that share a reading with ``ch``, tone included, ``ch`` left out."""
    by_sound = _load()
    out: set[str] = set()
    for s in _readings.get(ch, ()):
        out.update(by_sound.get(s, ""))
    out.discard(ch)
    return frozenset(out)


_TONES = {"\u0304": "1", "\u0301": "2", "\u030c": "3", "\u0300": "4"}


def _numbered(syllable: str) -> str:
    """A syllable as pinyin writes it, its tone as a number after it (zhāng: zhang1; 5: none)."""
    parts = unicodedata.normalize("NFD", syllable).replace("u\u0308", "v")  # lǚ: lv3, not lu3
    tone = next((_TONES[c] for c in parts if c in _TONES), "5")
    return "".join(c for c in parts if not unicodedata.combining(c)) + tone


def table() -> str:
    """The table's text, made from pypinyin's readings (one line a syllable, sorted)."""
    from pypinyin.pinyin_dict import pinyin_dict

    groups: dict[str, list[str]] = {}
    for code in sorted(pinyin_dict):
        if _FIRST <= code <= _LAST:
            for s in dict.fromkeys(_numbered(r) for r in pinyin_dict[code].split(",")):
                groups.setdefault(s, []).append(chr(code))
    return "".join(f"{s} {''.join(chars)}\n" for s, chars in sorted(groups.items()))


if __name__ == "__main__":  # python -m mnemoclaw.text.sounds: write the table again
    TABLE.write_text(table(), "utf-8")
    print(f"{TABLE}: {len(TABLE.read_text('utf-8').splitlines())} syllables", file=sys.stderr)
