"""Whether two index terms may spell one name: Muhammad and Muhhamed, Aqib and Akib, Nikolas and
Nicolas, Eliza and Elise. Pure.

A question may name someone as another writer spells them: a transliteration (Mohammed /
Muhammad), a letter doubled or not, c for k, ph for f, or a typo. Memory that holds such a
spelling mentions the person; it is not a question about someone else (search/relevance.py).

Two terms spell one name when they sound alike and look alike: the same consonant skeleton
(``sound``: the first letter, then the consonants, with letters that sound alike merged, h
between vowels or after a consonant dropped, doubled letters single) and lengths at most
``LENGTH_GAP`` apart; or, for a name of five letters or more, a single typo (one letter added,
dropped, changed or two swapped). A short name written one vowel off is another spelling only
when it is no common given name itself (text/given.py: Juhn is John, Tom is not Tim). The name
is compared as the question writes it; memory's side is an index term (lowercased, stemmed:
text/tokenize.py), compared with the endings a stemmer takes off put back.
"""

from __future__ import annotations

import re
import unicodedata

from .given import GIVEN

# the longest difference in length between two spellings of one name (Muhammad / Mohamed)
LENGTH_GAP = 2
# the shortest name a single typo may be taken for another spelling of (Ana / Anna are alike by
# sound; Tom / Tim are two people)
TYPO_MIN = 5
# the shortest name a typo that changes no letter (one doubled, dropped or swapped) is looked past
# in, when the consonants agree: Saam / Sam, Jno / Jon
SHORT_TYPO_MIN = 3
# the shortest consonant skeleton that identifies a name (one consonant: too many words share it);
# one of two consonants only a name this long, or one with the same vowels
SKELETON_MIN = 2
LONG_NAME = 7

_LETTERS = re.compile(r"[a-z]+")
_VOWELS = frozenset("aeiouy")
# letters (and pairs) written for one sound, in the order they are replaced
_SOUNDS = (("ph", "f"), ("ck", "k"), ("kh", "k"), ("gh", "g"), ("sch", "s"), ("sh", "s"), ("ch", "k"),
           ("th", "t"), ("q", "k"), ("x", "ks"), ("z", "s"), ("w", "v"), ("j", "g"))
# the first letters a spelling of a name starting with the key may start with
_FIRST = {"c": "ck", "k": "ckq", "q": "kq", "f": "fp", "p": "pf", "s": "sz", "z": "zs", "i": "iy", "y": "yi",
          "v": "vw", "w": "wv", "j": "jg", "g": "gj"}


def plain(word: str) -> str:
    """``word`` lowercased without its diacritics, as the index holds it (Temüjin: temujin)."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(ch))


def is_word(term: str) -> bool:
    """A term of letters a-z alone: what may be a respelled name (not a number, code or CJK)."""
    return bool(_LETTERS.fullmatch(term))


def sound(term: str) -> str:
    """The consonant skeleton of ``term``: its first letter (vowels as ``a``), then its
    consonants, letters for one sound merged, doubled letters single."""
    t = term.lower()
    if not t:
        return ""
    # c is s before e, i, y and k elsewhere
    t = re.sub(r"c(?=[eiy])", "s", t)
    for a, b in _SOUNDS:
        t = t.replace(a, b)
    t = t.replace("c", "k")
    # h past the first letter is not written alike by two writers (Muhammad / Muammad, Jon / John)
    t = t[0] + t[1:].replace("h", "")
    first = "a" if t[0] in _VOWELS else t[0]
    rest = [ch for ch in t[1:] if ch not in _VOWELS]
    out = [first]
    for ch in rest:
        if ch != out[-1]:
            out.append(ch)
    return "".join(out)


def _one_typo(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter added, dropped, changed, or two neighbours swapped."""
    if a == b:
        return False
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    if la > lb:
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1:]


def _vowels(term: str) -> str:
    """The vowels inside a word (not its first or last letter, which a stem may have lost), a
    doubled one single (Saam / Sam), y read as i (Aqyb / Aqib)."""
    out: list[str] = []
    for ch in term[1:-1].replace("y", "i"):
        if ch in _VOWELS and (not out or out[-1] != ch):
            out.append(ch)
    return "".join(out)


def _revoweled(a: str, b: str) -> bool:
    """One vowel written for another, nothing else changed (Juhn / John, Tym / Tim)."""
    if len(a) != len(b):
        return False
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return len(diff) == 1 and a[diff[0]] in _VOWELS and b[diff[0]] in _VOWELS


def _shifted(a: str, b: str) -> bool:
    """One typo that changes no letter: one added or dropped, or two neighbours swapped (Jno /
    Jon); never one letter for another, which makes another name (Tom / Tim)."""
    return _one_typo(a, b) and (len(a) != len(b) or sorted(a) == sorted(b))


# what the stemmer may have taken off a name memory holds (text/tokenize.py stem: Muhhamed is
# held as muhham, Outlander as outland): the index term is compared with and without each
STEMMED_ENDS = ("", "e", "ed", "s", "ing", "er")
# the longest a stemmer takes off: "ing" after a doubled letter (Manning is held as man)
STEMMED_MAX = 4


def unstemmed(term: str) -> list[str]:
    """The words index term ``term`` may have been stemmed from (Turing as ture, Manning as man)."""
    forms = [term + end for end in STEMMED_ENDS]
    if term.endswith("e"):
        forms.append(term[:-1] + "ing")
    if term and term[-1] not in _VOWELS:
        forms.append(term + term[-1] + "ing")
    return forms


def alike(name: str, term: str, *, stemmed: bool = True) -> bool:
    """Whether index term ``term`` may be another spelling of ``name``, a name as the question
    writes it (lowercased, not stemmed): it sounds alike, with or without an ending the stemmer
    may have taken off (and, under five letters, with the same vowels or one letter doubled,
    dropped or swapped: Aqib / Akib, Saam / Sam, Jno / Jon, not Evan / even or Tom / Tim; or one
    vowel for another in a spelling that is nobody's name: Juhn / John, Tym / Tim, Marea /
    Maria), or, from five letters, it is one typo away. ``stemmed=False``: ``term`` is a word as
    memory writes it, not an index term (no ending is put back)."""
    name = name.lower()
    if not is_word(name) or not is_word(term) or name == term:
        return False
    forms = [f for f in (unstemmed(term) if stemmed else [term]) if abs(len(name) - len(f)) <= LENGTH_GAP]
    if not forms:
        return False
    if name in forms:  # the same word, stemmed
        return False
    if len(name) >= TYPO_MIN and any(len(f) >= TYPO_MIN and _one_typo(name, f) for f in forms):
        return True
    key = sound(name)
    if len(key) < SKELETON_MIN:
        return False
    # a skeleton of two consonants tells a long name only (Muhammad, not Priya / pray)
    if len(key) < SKELETON_MIN + 1 and len(name) < LONG_NAME:
        return any(sound(f) == key and (_vowels(name) == _vowels(f) or len(name) >= SHORT_TYPO_MIN
                                        and (_shifted(name, f) or name not in GIVEN and _revoweled(name, f)))
                   for f in forms)
    return any(sound(f) == key and (min(len(name), len(f)) >= TYPO_MIN or _vowels(name) == _vowels(f))
               for f in forms)


def first_letters(name: str) -> str:
    """The letters another spelling of ``name`` may start with (an index is read by prefix): its
    own first letter and those written for its sound, and, for a name long enough for a typo
    (``TYPO_MIN``), its second letter, which comes first when the typo is in the first two
    letters (Oultraboost, Lutraboost for Ultraboost)."""
    head = name[:1]
    letters = _FIRST.get(head, head)
    if len(name) >= TYPO_MIN and name[1:2] not in letters:
        letters += name[1:2]
    return letters


def length_range(name: str) -> tuple[int, int]:
    """The lengths an index term spelling ``name`` another way may have (stemmed: shorter)."""
    return max(1, len(name) - LENGTH_GAP - STEMMED_MAX), len(name) + LENGTH_GAP
