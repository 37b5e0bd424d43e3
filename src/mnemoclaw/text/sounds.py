"""Chinese characters read alike: what a pinyin input method offers for one syllable. Pure (a
table of readings shipped beside this module, read once a process).

A Chinese name is often written with another character of the same sound: a pinyin input
method offers every character of a syllable, and a transliteration may use any of them (特斯拉
and 特思拉, 路德 and 鹿德, 张伟 and 章伟). Tones are left out: an input method asks for none.
``alike(ch)`` lists the characters whose common reading is ``ch``'s, among the CJK Unified
Ideographs (U+4E00-U+9FFF); a character's rarer readings are left out (赫 is hè, not also
shì). The table (``sounds.txt``: one line a syllable, its characters after it) is read the
first time a Chinese name is looked for in another spelling, in about 25 ms (7 MB). It is made
from pypinyin's readings of the characters by ``python -m mnemoclaw.text.sounds`` (pypinyin is
a development dependency only).
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
    """The syllable ``ch`` is commonly read as, without its tone (() for a character the table
    lacks)."""
    _load()
    return _readings.get(ch, ())


@lru_cache(maxsize=4096)
def alike(ch: str) -> frozenset[str]:
    """The characters read as ``ch`` is, ``ch`` left out."""
    by_sound = _load()
    out: set[str] = set()
    for s in _readings.get(ch, ()):
        out.update(by_sound.get(s, ""))
    out.discard(ch)
    return frozenset(out)


def _toneless(syllable: str) -> str:
    out = "".join(c for c in unicodedata.normalize("NFD", syllable) if not unicodedata.combining(c))
    return out.replace("ü", "v")


def table() -> str:
    """The table's text, made from pypinyin's readings (one line a syllable, sorted)."""
    from pypinyin.pinyin_dict import pinyin_dict

    groups: dict[str, list[str]] = {}
    for code in sorted(pinyin_dict):
        if _FIRST <= code <= _LAST:
            # its common reading only: a rare one links a character to a whole other syllable
            # (赫 hè, also shì; 斯 sī, also shǐ: 赫 and 斯 are no spellings of one name)
            groups.setdefault(_toneless(pinyin_dict[code].split(",")[0]), []).append(chr(code))
    return "".join(f"{s} {''.join(chars)}\n" for s, chars in sorted(groups.items()))


if __name__ == "__main__":  # python -m mnemoclaw.text.sounds: write the table again
    TABLE.write_text(table(), "utf-8")
    print(f"{TABLE}: {len(TABLE.read_text('utf-8').splitlines())} syllables", file=sys.stderr)
