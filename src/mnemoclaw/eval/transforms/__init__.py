"""Questions asked another way, to measure how search holds up. Pure: text in, text out.

Each transform takes a question and what is known of the memory it is asked of (``Lexicon``)
and returns the question as a person might also have asked it, or None when it does not apply
(no name to respell, no number to rewrite). The same question, seed and lexicon give the same
result. benchmarks/transforms.py asks the rewritten questions of the benchmark sets.

- ``respelled``: a name (a person's, if there is one) spelled another way no corpus writes (names.py)
- ``units``: each number and measurement in another form (numbers.py)
- ``smalltalk``: the question inside a greeting, the weather, a "by the way"
- ``colloquial``: 什么 -> 啥, 怎么 -> 咋, a trailing 来着 or 呢, 是不是; "remind me, ...", "... again?",
  contractions
- ``unheld``: each person's name replaced by one nobody in memory has: the question is out of scope
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ...text.script import HAN
from . import numbers
from .names import Taken, respell, stranger


@dataclass(frozen=True)
class Lexicon:
    """What a transform knows of memory. ``is_name``: a Latin word its corpus writes as a name;
    ``is_person``: such a name is a person's (a speaker, a given name); ``han_people``: the people a
    Chinese text names, each as written; ``taken``: a corpus holds this (a Latin word lowercased,
    or Chinese text), so a respelled or invented name must not be it."""

    is_name: Callable[[str], bool] = lambda word: False
    is_person: Callable[[str], bool] = lambda word: False
    han_people: Callable[[str], tuple[str, ...]] = lambda text: ()
    taken: Taken = lambda text: False
    seed: object = 0
    # what each call did, for the report: respelled names by kind ("transliteration", "typo", "same sound")
    counts: dict[str, int] = field(default_factory=dict)


_WORD = re.compile(r"(?<![A-Za-z'\-])[A-Z][a-z]+(?![A-Za-z\-])")
# a question's first word that is lowercased after an opener ("By the way, what did ...")
_FUNCTION = frozenset(("what which who whom whose when where why how is am are was were do does did can could would "
                       "should will has have had in on at for from to the a an any if so").split())


def zh(text: str) -> bool:
    return bool(HAN.search(text))


def latin_names(text: str, lex: Lexicon) -> list[str]:
    """The capitalised words of ``text`` its corpus writes as names, each once, in order."""
    return list(dict.fromkeys(w for w in _WORD.findall(text) if lex.is_name(w)))


def _replace_words(text: str, mapping: dict[str, str]) -> str:
    for old, new in mapping.items():
        text = re.sub(rf"(?<![A-Za-z]){re.escape(old)}(?![A-Za-z])", new, text) if old.isascii() \
            else text.replace(old, new)
    return text


def respelled(text: str, lex: Lexicon, rng: random.Random) -> str | None:
    """One name of the question spelled another way (a person's if it names one), everywhere it occurs."""
    names = latin_names(text, lex) + list(lex.han_people(text))
    people = [n for n in names if lex.is_person(n) or not n.isascii()]
    for name in rng.sample(people, len(people)) + rng.sample(names, len(names)):
        found = respell(name, lex.taken, lex.seed)
        if found:
            kind, variant = found
            lex.counts[kind] = lex.counts.get(kind, 0) + 1
            return _replace_words(text, {name: variant})
    return None


def units(text: str, lex: Lexicon, rng: random.Random) -> str | None:
    """Every number of the question written another way (numbers.py); None without a number."""
    return numbers.rewrite(text, rng)


def unheld(text: str, lex: Lexicon, rng: random.Random) -> str | None:
    """Every person the question names replaced by someone no corpus mentions; None without a person."""
    mapping: dict[str, str] = {}
    for word in _WORD.findall(text):
        if lex.is_person(word) and word not in mapping:
            run = [word]  # a family name after the given one goes too: John Elway
            m = re.search(rf"(?<![A-Za-z]){re.escape(word)} ([A-Z][a-z]+)(?![A-Za-z])", text)
            if m and lex.is_name(m.group(1)):
                run.append(m.group(1))
            new = stranger(" ".join(run), lex.taken, lex.seed)
            if new:
                mapping[" ".join(run)] = new
    for name in lex.han_people(text):
        new = stranger(name, lex.taken, lex.seed)
        if new:
            mapping[name] = new
    return _replace_words(text, dict(sorted(mapping.items(), key=lambda kv: -len(kv[0])))) if mapping else None


SMALLTALK_EN = (
    ("Hi there! Lovely weather today. By the way, ", ""),
    ("Hey, hope your day is going well. Anyway, ", ""),
    ("Good morning! I just got back from a walk and it's freezing out. Quick question: ", ""),
    ("Ugh, Mondays. Anyway, ", " Thanks!"),
    ("Thanks for the help yesterday, it really worked. So, ", ""),
    ("Oh, before I forget: ", " No rush."),
    ("", " Hope you're having a good one!"),
    ("Hello again! The coffee here is terrible today, haha. ", ""),
    ("", " Cheers, and sorry for all the questions today."),
    ("Okay, I'm back from lunch. I wanted to ask: ", ""),
)
SMALLTALK_ZH = (
    ("哎呀，今天天气真好。我本来想说的是，", ""),
    ("你好呀！最近有点忙。对了，", ""),
    ("早上好！刚喝完咖啡。顺便问一下，", ""),
    ("唉，今天好累。话说回来，", "谢谢啦！"),
    ("嗨，周末过得怎么样？我想问问，", ""),
    ("", "不急哈，有空再回我。"),
    ("刚下班，外面下雨了。对了对了，", ""),
    ("", "麻烦你啦，今天问题有点多哈哈。"),
    ("哈喽！我刚吃完午饭。突然想到，", ""),
    ("最近天气忽冷忽热的，你注意身体。另外，", ""),
)


def _lower_first(text: str, lex: Lexicon) -> str:
    """``text`` with its first letter lowercased to follow an opener, unless its first word is a name
    or an acronym (Caroline, IgA, I)."""
    first = text.split(" ", 1)[0].split("'", 1)[0]  # What's: What
    if first[1:].islower() and not lex.is_name(first) or first.lower() in _FUNCTION:
        return text[:1].lower() + text[1:]
    return text


def smalltalk(text: str, lex: Lexicon, rng: random.Random) -> str | None:
    """The question wrapped in small talk in its language: an opener, a closer, or both."""
    opener, closer = rng.choice(SMALLTALK_ZH if zh(text) else SMALLTALK_EN)
    body = text.strip()
    if opener and not zh(text):
        body = _lower_first(body, lex)
    return f"{opener}{body}{(' ' if closer and not zh(text) and not closer.startswith(' ') else '')}{closer}"


_ZH_SWAPS = (("为什么", "为啥"), ("什么", "啥"), ("怎么样", "咋样"), ("怎么", "咋"), ("是否", "是不是"),
             ("哪里", "哪儿"))
_ZH_ASKING = re.compile(r"啥|谁|哪|几|多少|咋|多久|多大|多长|多高|何")
_EN_CONTRACTIONS = (
    (r"\b([Ww]hat|[Ww]ho|[Ww]here|[Ww]hen|[Hh]ow|[Tt]hat|[Ii]t|[Tt]here) is\b", r"\1's"),
    (r"\b([Ww]hat|[Ww]ho|[Ww]here|[Hh]ow) did\b", r"\1'd"),
    (r"\b(is|was|were|did|does|do|has|have|had|could|would|should) not\b", r"\1n't"),
    (r"\bgoing to\b", "gonna"), (r"\bwant to\b", "wanna"),
)


def colloquial(text: str, lex: Lexicon, rng: random.Random) -> str | None:
    """The question as said in passing: Chinese 啥, 咋, 来着 / 呢, 是不是; English contractions and
    "remind me, ...", "... again?" ("is it true that ...?" for a claim)."""
    body = text.strip()
    if zh(body):
        for old, new in _ZH_SWAPS:
            body = body.replace(old, new)
        body = body.rstrip("？?。.! ")
        if body.endswith("吗"):
            return body[:-1] + "，是不是？"
        ending = rng.choice(("来着", "呢")) if _ZH_ASKING.search(body) else "呢"
        return body + ("" if body.endswith(ending) else ending) + "？"
    for pattern, new in _EN_CONTRACTIONS:
        body = re.sub(pattern, new, body)
    if not body.endswith("?"):  # a claim (SciFact): asked whether it holds
        claim = _lower_first(body.rstrip(". "), lex)
        return rng.choice((f"is it true that {claim}?", f"remind me, {claim}?"))
    if re.match(r"(what|who|where|when|how|which|why)\b", body, re.I) and rng.random() < 0.5:
        return body[:-1].rstrip() + " again?"
    return "remind me, " + _lower_first(body, lex)


Transform = Callable[[str, Lexicon, random.Random], str | None]
TRANSFORMS: dict[str, Transform] = {"respelled": respelled, "units": units, "smalltalk": smalltalk,
                                    "colloquial": colloquial, "unheld": unheld}
# what a transform's changed questions are: answerable (recall and [] measured) or out of scope
OUT_OF_SCOPE = frozenset({"unheld"})


def apply(name: str, text: str, lex: Lexicon, key: str) -> str | None:
    """Transform ``name`` of the question ``text`` (``key``, e.g. its id, seeds its choices with the
    lexicon's seed); None when it does not apply or changes nothing."""
    out = TRANSFORMS[name](text, lex, random.Random(f"{lex.seed}|{name}|{key}"))
    return out if out is not None and out != text else None
