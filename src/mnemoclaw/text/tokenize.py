"""Tokenization shared by the chunker, the keyword index and MMR. Pure functions.

Chinese, Japanese and Korean text has no spaces between words, so a whitespace or
``unicode61`` tokenizer sees a whole sentence as one token and no query ever
matches it. Every run of CJK characters is therefore indexed as its single
characters plus its overlapping character pairs: one- and two-character queries
match the single characters, longer ones also match the pairs, and BM25's IDF
keeps the very common single characters from dominating.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from .names import han_names
from .script import HAN_RUN, SCHEME, fold

# Ideographs (basic, extensions A-F, compatibility), kana, Hangul syllables and jamo,
# bopomofo. CJK punctuation (U+3000-303F) and full-width forms are deliberately not
# here: they are separators, not word characters.
_CJK_CLASS = (
    "\u1100-\u11ff"
    "\u2e80-\u2fdf"
    "\u3040-\u30ff"
    "\u3100-\u312f"
    "\u3130-\u318f"
    "\u31a0-\u31bf"
    "\u31f0-\u31ff"
    "\u3400-\u4dbf"
    "\u4e00-\u9fff"
    "\ua960-\ua97f"
    "\uac00-\ud7af"
    "\uf900-\ufaff"
    "\U00020000-\U0003134f"
)
CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
_CJK_CHAR = re.compile(f"[{_CJK_CLASS}]")
# Letters and digits that are not CJK: what FTS5's unicode61 tokenizer keeps as a token.
WORD = re.compile(rf"(?:(?![{_CJK_CLASS}])[^\W_])+")

# Version of the scheme below; part of the index fingerprint, so changing how text is
# tokenized forces a rebuild instead of silently mixing two schemes.
TOKENIZER_ID = (f"mnemoclaw-analyzer-v5 (porter stems, irregular English forms but acronyms, CJK unigrams+bigrams, "
                f"lines kept, {SCHEME})")

# English function words dropped from keyword queries (never from the index, so
# phrases still match). Measured on LoCoMo: stemming + stop words lift recall@5.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does
    doesn doing don down during each few for from further had hadn has hasn have haven
    having he her here hers herself him himself his how i if in into is isn it its
    itself just let ll me more most mustn my myself no nor not now of off on once only
    or other ought our ours ourselves out over own re s same shan she should shouldn so
    some such t than that the their theirs them themselves then there these they this
    those through to too under until up ve very was wasn we were weren what when where
    which while who whom why will with would wouldn you your yours yourself
    yourselves d m o y ain also get got gonna done
    """.split()
)

# Chinese question words and sentence-final particles, removed from keyword queries
# (they mark the question, not its topic). Measured on CMRC 2018: recall@1 0.970 -> 0.981.
_ZH_QUESTION_WORDS = sorted(
    "什么时候 为什么 什么 多少 哪个 哪些 哪里 哪儿 哪一 哪年 怎么样 怎么 如何 是谁 谁是 几个 何时 多久 多长 第几 请问 "
    "哪 谁 几 吗 呢 么 "
    # the spoken forms: 啥 (什么), 咋 (怎么), 来着 (… again?), and the particles that soften a question
    "啥时候 为啥 干啥 啥样 咋样 咋办 咋 啥 来着 是不是 有没有 嘛 呀 吧 啦".split(),
    key=len,
    reverse=True,
)
_ZH_QUESTION = re.compile("|".join(map(re.escape, _ZH_QUESTION_WORDS)))

# Words that frame a question about someone ("what did she say about", "他提到过什么") rather
# than name what it is about. They stay in the query; the relevance score also measures a match
# without them (search/relevance.py, content coverage), so a question that shares only its
# frame with a note is not taken for one about it.
FRAME_WORDS = frozenset(
    """
    say said says tell told talk talked talking mention mentioned think thought feel felt like
    liked likes go went going make made kind type sort thing things way happen happened recent
    recently ever often usually usual many much long describe share shared take took start
    started plan plans new first last
    说 说过 提到 提起 认为 觉得 关于 做 做了 有 是 了 的 在 和 过
    """.split()
)

# Words that put a name aside from the question's subject: a place, a companion, a topic
# ("went to Paris", "with Marcus", "about Lisbon"): memory that never mentions it may still hold
# the answer about the person asking (docs/quality.md, "Names memory never mentions")
PREPOSITIONS = frozenset(
    """
    to in at from with about of for on into onto near by via toward towards across through around
    without against among between behind beyond inside outside over under until till since during
    """.split()
)

# Words a question puts right before whom it is about ("when did Caroline …", "is Oscar …"): a
# name after one, or written with 's ("Caroline's dog"), is the question's subject
AUXILIARIES = frozenset(
    """
    do does did is was are were has have had will would can could should shall might may must
    """.split()
)

# how far into a question its verb may stand for the name after it to be the subject: "in what
# year did Harvard …", not "what entity said that the punishment was Constitutional"; and only
# its first verb ("would Caroline have Dr. Seuss's books": Caroline, not Dr. Seuss)
AUXILIARY_WITHIN = 6

# Words English capitalises that name no one: the days and months a question dates itself by
CALENDAR_WORDS = frozenset(
    """
    monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec
    """.split()
)


def mostly_cjk(text: str) -> bool:
    """Whether more of the text is CJK than not, counted as the chunker counts tokens (a CJK
    character one, four other letters or digits one, ``estimate_tokens``): a note a Latin name
    may be written in another script in (Hangzhou as 杭州, Caroline as 卡罗琳). Counted by
    characters, a Chinese paragraph that keeps its English names and numbers (Internet2,
    Abilene, 10 Gbit/s) would read as Latin text."""
    cjk = count_cjk(text)
    return cjk > 0 and cjk > (sum(1 for ch in text if ch.isalnum()) - cjk) / 4


def count_cjk(text: str) -> int:
    return len(_CJK_CHAR.findall(text))


# Characters that must stay attached to the character before them.
_JOINERS = {"\u200d", "\u20e3"}


def is_attached(ch: str) -> bool:
    """Whether ``ch`` belongs to the character before it, so text is never cut just before it:
    a combining mark, a joiner, a variation selector, a skin tone."""
    return (
        unicodedata.combining(ch) != 0
        or ch in _JOINERS
        or "\ufe00" <= ch <= "\ufe0f"
        or "\U000e0100" <= ch <= "\U000e01ef"
        or "\U0001f3fb" <= ch <= "\U0001f3ff"  # skin-tone modifiers
        or "\udc00" <= ch <= "\udfff"  # a low surrogate left by lenient decoding
    )


def estimate_tokens(text: str) -> int:
    """Tokens as budgeted by the chunker: 4 characters a token, a CJK character a whole token."""
    cjk = count_cjk(text)
    return cjk + math.ceil((len(text) - cjk) / 4)


def cjk_grams(run: str) -> list[str]:
    """Single characters then overlapping pairs of one CJK run."""
    grams = list(run)
    grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    return grams


_TOKEN = re.compile(rf"[{_CJK_CLASS}]+|(?:(?![{_CJK_CLASS}])[^\W_])+")
# raw word -> index term; the same words recur across chunks, and stemming is the
# slowest step of indexing
_TERMS: dict[str, str] = {}
_TERM_CACHE_MAX = 500_000
_stemmer = None


def _fold(word: str) -> str:
    """Lowercase and strip diacritics (café -> cafe), as FTS5's unicode61 would."""
    word = word.lower()
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def stem(word: str) -> str:
    """Porter stem of a folded word (PyStemmer's C implementation when installed)."""
    global _stemmer
    if _stemmer is None:
        import snowballstemmer

        _stemmer = snowballstemmer.stemmer("porter")
    return _stemmer.stemWord(word) if word.isascii() and not word.isdigit() else word


# English verbs whose past tense a stemmer cannot reach ("won" is not "win"), and a few plurals,
# as their base word: a question asks "did she win", the note says "I won". Left out: forms that
# are as often another word ("left", "rose", "thought", "bit", "drew", "sat", "lay", "shot",
# "born", "stuck", "lit"); kept where the other word is rare in notes (a saw, to found a company,
# a bicycle's spoke, to fell a tree).
_BASE_FORMS = {
    "win": "won", "run": "ran", "go": "went gone", "make": "made", "take": "took taken", "buy": "bought",
    "tell": "told", "say": "said", "keep": "kept", "lose": "lost", "find": "found", "feel": "felt",
    "hear": "heard", "know": "knew known", "see": "saw seen", "eat": "ate eaten", "drink": "drank drunk",
    "fly": "flew flown", "drive": "drove driven", "ride": "rode ridden", "write": "wrote written",
    "begin": "began begun", "swim": "swam swum", "sing": "sang sung", "give": "gave given", "come": "came",
    "become": "became", "choose": "chose chosen", "break": "broke broken", "forget": "forgot forgotten",
    "grow": "grew grown", "throw": "threw thrown", "teach": "taught", "catch": "caught", "bring": "brought",
    "fight": "fought", "seek": "sought", "build": "built", "send": "sent", "spend": "spent", "pay": "paid",
    "sell": "sold", "hold": "held", "sleep": "slept", "meet": "met", "mean": "meant", "stand": "stood",
    "understand": "understood", "feed": "fed", "hang": "hung", "shake": "shook shaken", "wake": "woke woken",
    "wear": "wore worn", "tear": "tore torn", "steal": "stole stolen", "freeze": "froze frozen",
    "hide": "hid hidden", "lead": "led", "deal": "dealt", "lend": "lent", "strike": "struck", "dig": "dug",
    "speak": "spoke spoken", "fall": "fell fallen", "draw": "drawn", "forgive": "forgave forgiven",
    "overcome": "overcame", "rebuild": "rebuilt", "rewrite": "rewrote rewritten", "swear": "swore sworn",
    "ring": "rang rung", "dream": "dreamt", "learn": "learnt", "burn": "burnt",
    "child": "children", "man": "men", "woman": "women", "foot": "feet", "tooth": "teeth", "mouse": "mice",
    "wife": "wives", "knife": "knives",
}
IRREGULAR = {form: base for base, forms in _BASE_FORMS.items() for form in forms.split()}


# "won't" is "will not", not a form of "win" (both are stop words)
_WONT = re.compile(r"\bwon['’]t\b", re.IGNORECASE)


def _wont(text: str) -> str:
    return _WONT.sub("will not", text) if "'" in text or "’" in text else text


def spellings(term: str) -> tuple[str, ...]:
    """``term`` and the irregular forms analysed as it ("win": "won"): what to look for in raw
    text that holds the term."""
    if not _SPELLINGS:  # filled whole, once: a thread never sees half of it
        _SPELLINGS.update({stem(base): (stem(base), *forms.split()) for base, forms in _BASE_FORMS.items()})
    return _SPELLINGS.get(term, (term,))


_SPELLINGS: dict[str, tuple[str, ...]] = {}


def irregular_in(text: str, words: Iterable[str]) -> list[str]:
    """The words of ``text``, as written, that are an irregular form of one of ``words`` and not
    that word itself ("won" for "win", "went" for "go"): what a highlighter marks besides the
    words typed."""
    wanted: set[str] = set()
    for word in words:
        for tok in _WORDISH.findall(word):
            if tok.isascii():
                wanted.update(w for w in spellings(_term(tok)) if w != tok.lower())
    if not wanted:
        return []
    return list(dict.fromkeys(m.group() for m in _WORDISH.finditer(text) if m.group().lower() in wanted))


def _term(word: str) -> str:
    if len(_TERMS) >= _TERM_CACHE_MAX:
        _TERMS.clear()
    folded = _fold(word)
    # a word in capitals is an acronym before it is a past tense (LED, SAW)
    term = _TERMS[word] = stem(folded if word.isupper() and len(word) > 1 else IRREGULAR.get(folded, folded))
    return term


_WORDISH = re.compile(r"[^\W_]+")


def has_terms(text: str) -> bool:
    """Whether ``analyze(text)`` is not empty (cheaper than analysing)."""
    return _WORDISH.search(text) is not None


def analyze(text: str) -> list[str]:
    """Index terms of ``text``: stemmed words and CJK grams (Chinese in Simplified script,
    text/script.py), in reading order."""
    if _CJK_CHAR.search(text):
        text = fold(text)
    text = _wont(text)
    out: list[str] = []
    append = out.append
    terms = _TERMS
    for tok in _WORDISH.findall(text):
        term = terms.get(tok)
        if term is not None:
            append(term)
        elif tok.isascii() or not _CJK_CHAR.search(tok):
            append(_term(tok))
        else:  # CJK, possibly glued to letters or digits: "NFL黑豹", "2010年"
            for piece in _TOKEN.findall(tok):
                if _CJK_CHAR.match(piece):
                    out.extend(cjk_grams(piece))
                else:
                    append(terms.get(piece) or _term(piece))
    return out


def fts_document(text: str) -> str:
    """The analyzed text handed to the full-text index: terms separated by spaces.

    Stemming and CJK splitting happen here, in one place, so documents and queries
    are analyzed identically and the index's own tokenizer only splits on spaces.
    Each non-empty line stays on a line of its own, so a search can score a chunk's
    lines separately (search/bm25.py ``best_line``).
    """
    lines = (" ".join(analyze(line)) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


@dataclass(frozen=True, slots=True)
class KeywordQuery:
    """A query reduced to what a keyword index can match, independent of SQL dialect.

    ``terms`` are OR-ed index terms; ``phrases`` are runs of terms that must be
    adjacent (identifiers such as ``PR-4821`` or ``memory_search``) and earn a bonus.
    """

    terms: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...] = ()
    # the terms of the words that name someone or something: capitalised past the query's first
    # word ("Caroline", "IT", "Dr"), letters mixed with digits ("PR-4821", "v2"), or a Chinese
    # name (张伟, 杭州: text/names.py), written as the query writes it
    names: tuple[str, ...] = ()
    # for each name, the terms it is written as apart ("miR7a" as "miR-7a", "400mg" as "400 mg"):
    # memory that holds those mentions the name (name_parts; empty when it does not split)
    parts: tuple[tuple[str, ...], ...] = ()
    # the names in Latin letters as the query writes them, each word and each run of such words
    # ("Denver Broncos", "Denver", "Broncos"): what a note in another script may translate
    written: tuple[str, ...] = ()
    # of ``names``, the people the question is about: a capitalised word right after a question's
    # verb ("when did Caroline …") or written with 's ("Caroline's dog"), with the names written
    # on after it ("Graham Twigg"); a question none of whose subject memory ever mentions is about
    # someone else, whatever other names it shares with memory
    subjects: tuple[tuple[str, ...], ...] = ()
    # terms that say one thing in other forms (175cm, 175 and 175厘米; 60kg and 120斤): of each
    # group, the forms memory holds count, the others are not held against a note (measurements)
    variants: tuple[tuple[str, ...], ...] = ()
    cjk: bool = False  # the query is written mostly in CJK characters (mostly_cjk)
    forms: tuple[str, ...] = ()  # the terms of ``variants`` the query does not write itself ("five" for 5)

    @property
    def empty(self) -> bool:
        return not self.terms

    @property
    def as_written(self) -> tuple[str, ...]:
        """The terms of the words the query writes, without the other forms of its numbers and
        measurements: what a line must hold to say what the query says."""
        return tuple(t for t in self.terms if t not in self.forms) if self.forms else self.terms

    @property
    def counted(self) -> tuple[str, ...]:
        """The terms whose document frequency a search needs: the query's, and its names' parts."""
        extra = [t for p in self.parts for t in p if t not in self.terms]
        return (*self.terms, *dict.fromkeys(extra)) if extra else self.terms


def keyword_query(query: str) -> KeywordQuery:
    """Turn free text into OR-able index terms. Never fails: FTS syntax is just text here."""
    terms: list[str] = []
    phrases: list[tuple[str, ...]] = []
    dropped: list[str] = []
    names: list[str] = []
    subjects: list[list[str]] = []
    subject: list[str] | None = None  # the subject the name run under way names
    written: list[str] = []
    run: list[str] = []  # the names of letters written one after another
    first = True
    cjk = mostly_cjk(query)
    prev = ""  # the word before, folded
    words_before = 0  # the words of letters before this one
    verbs = 0  # the question's verbs (AUXILIARIES) so far: the first is the question's own
    aside = False  # the name run under way follows a preposition
    asides: set[str] = set()  # the names written after a preposition so far
    for piece in _ZH_QUESTION.sub(" ", fold(_wont(query))).split():
        words = []
        named = False
        for m in _TOKEN.finditer(piece):
            tok = m.group()
            if _CJK_CHAR.match(tok):
                terms.extend(cjk_grams(tok))
                first = False
                continue
            folded = _fold(tok)
            term = _TERMS.get(tok) or _term(tok)
            if not term:  # the "s" of "Caroline's" stems to nothing: neither a term nor half a phrase
                continue
            words.append(term)
            stop = folded in STOP_WORDS
            (dropped if stop else terms).append(term)
            framing = folded in FRAME_WORDS or folded in CALENDAR_WORDS
            if not stop and not framing and _names_something(tok, first) and not (cjk and not tok.istitle()):
                # a name after a preposition (in Paris, with Marcus) is not whom the question is
                # about, nor is the rest of its run (at Super Bowl 50); an identifier is (of PR-4821)
                # but one written with 's is (the names of Caroline's dogs); a word once aside stays
                # aside when written again (for April 6-7 and April 8)
                owner = tok.istitle() and tok.isalpha() and piece[m.end():m.end() + 2] in _POSSESSIVE
                aside = ((aside and bool(run)) or prev in PREPOSITIONS or term in asides) and tok.istitle() \
                    and tok.isalpha() and not owner
                if aside:
                    asides.add(term)
                else:
                    names.append(term)
                    if run and subject is not None:
                        subject.append(term)
                    elif not run:
                        quoted = m.start() > 0 and piece[m.start() - 1] in _QUOTES  # a title ("Fifty Shades")
                        subject = [term] if not quoted and (owner or tok.istitle() and tok.isalpha()
                                                            and prev in AUXILIARIES and verbs == 1
                                                            and words_before <= AUXILIARY_WITHIN) else None
                        if subject is not None:
                            subjects.append(subject)
                    elif owner:
                        subjects.append([term])
                written.append(tok)
                run.append(tok)
                named = True
            elif run:
                _end_run(run, written)
            prev = folded
            words_before += 1
            verbs += folded in AUXILIARIES
            first = False
        if len(words) > 1 and not CJK_RUN.search(piece):
            phrases.append(tuple(words))
        if run and (not named or not piece[-1].isalnum()):  # a name run ends at punctuation
            _end_run(run, written)
    _end_run(run, written)
    if not terms:
        # a query of nothing but stop words ("what was it") still searches for them
        terms = dropped
    grams = set(terms)
    for name in han_names(fold(query)):
        # a Chinese name is mentioned where its character pairs are: a pair is a term itself
        if len(name) == 2 and name in grams:
            names.append(name)
        elif len(name) > 2:
            names.append(name)
    unique = tuple(dict.fromkeys(names))
    groups = (*measurements(query), *number_forms(query))
    own = set(terms)
    forms = tuple(dict.fromkeys(t for g in groups for t in g if t not in own))
    terms += forms
    return KeywordQuery(tuple(dict.fromkeys(terms)), tuple(dict.fromkeys(phrases)), unique,
                        tuple(name_parts(n) for n in unique), tuple(dict.fromkeys(written)),
                        tuple(dict.fromkeys(tuple(s) for s in subjects)), groups, cjk, forms)


_QUOTES = "\"'\u201c\u2018\u00ab\u300c\u300e"
_POSSESSIVE = frozenset({"'s", "\u2019s", "'S", "\u2019S"})


# A number with a unit: what a question measures, not whom it names ("175cm", "400mg", "2nd")
_UNITS = ("cm|mm|km|m|kg|g|mg|mcg|lb|lbs|oz|ml|l|gb|mb|kb|tb|hz|khz|mhz|ghz|kw|kwh|w|v|mah|h|hr|hrs|min|mins|"
          "s|sec|secs|ms|yo|k|x|ft|in|mph|kmh|kph|c|f|yr|yrs|y|d|wk|wks|mo|px|pt|p|st|nd|rd|th|am|pm")
_MEASURE = re.compile(rf"\d+(?:\.\d+)?(?:{_UNITS})", re.IGNORECASE)
_ZH_DIGITS = {ch: i for i, ch in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
# a length or a weight in the forms a note may write it: (what it says, its value, the unit it is in)
_LENGTHS = (
    (re.compile(r"(\d+(?:\.\d+)?)\s*(?:cm|厘米|公分)(?![A-Za-z])", re.IGNORECASE), 1.0, "cm"),
    (re.compile(r"(\d+\.\d+)\s*(?:m|米)(?![A-Za-z])", re.IGNORECASE), 100.0, "cm"),
    (re.compile(r"(\d+(?:\.\d+)?)\s*(?:kg|公斤|千克)(?![A-Za-z])", re.IGNORECASE), 1.0, "kg"),
    (re.compile(r"(\d+(?:\.\d+)?)\s*斤"), 0.5, "kg"),
)
_ZH_HEIGHT = re.compile(r"([一两])米([一二三四五六七八九])([一二三四五六七八九])?")


_EN_NUMBERS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
               "sixteen seventeen eighteen nineteen twenty").split()
_EN_TENS = {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_EN_VALUE = {w: i for i, w in enumerate(_EN_NUMBERS)} | _EN_TENS
_EN_WORD = {v: w for w, v in _EN_VALUE.items()}
_EN_NUMBER = re.compile(rf"\b(?:{'|'.join(_EN_VALUE)}|\d{{1,2}})\b", re.IGNORECASE)
def number_forms(text: str) -> tuple[tuple[str, ...], ...]:
    """The numbers ``text`` writes in a form a note may write another way, each as the index terms
    of its forms: "three" and "3" as ("3", "three")."""
    out: list[tuple[str, ...]] = []
    for m in _EN_NUMBER.finditer(text):
        word = m.group().lower()
        value = int(word) if word.isdigit() else _EN_VALUE[word]
        if value in _EN_WORD and not (word.isdigit() and len(word) > 1 and word[0] == "0"):
            out.append((str(value), _EN_WORD[value]))
    # Chinese numerals are not read as digits: a Chinese question's 三 or 第一 then matches every
    # English paragraph's 3 and 1, and Chinese questions of English notes lost 0.028 of recall@5
    # (docs/quality.md, "Asked another way"); heights in 一米七五 form are (measurements)
    return tuple(dict.fromkeys(out))


def measurements(text: str) -> tuple[tuple[str, ...], ...]:
    """The lengths and weights ``text`` gives, each as the index terms of its forms: "175厘米",
    "1.75 m", "一米七五" and "175cm" all as ("175cm", "175"); "120斤" as ("60kg", "60", "120")."""
    out: list[tuple[str, ...]] = []
    for pattern, scale, unit in _LENGTHS:
        for m in pattern.finditer(text):
            value = float(m.group(1)) * scale
            number = f"{value:g}" if value != int(value) else str(int(value))
            written = m.group(1) if scale != 1.0 and m.group(1).isdigit() else number
            out.append(tuple(t for t in dict.fromkeys((f"{number}{unit}", number, written)) if "." not in t))
    for m in _ZH_HEIGHT.finditer(text):
        cm = 100 * _ZH_DIGITS[m.group(1)] + 10 * _ZH_DIGITS[m.group(2)] + (_ZH_DIGITS[m.group(3)] if m.group(3) else 0)
        out.append((f"{cm}cm", str(cm)))
    return tuple(dict.fromkeys(out))


def _end_run(run: list[str], written: list[str]) -> None:
    if len(run) > 1:
        written.append(" ".join(run))
    run.clear()


_LETTERS_DIGITS = re.compile(r"^([^\W\d_]+)(\d[^\W_]*)$|^(\d+)([^\W\d_][^\W_]*)$")


def name_parts(term: str) -> tuple[str, ...]:
    """The two terms a name of letters then digits (or digits then letters) is split into at
    the first change: how an index holds it written with a space or a hyphen ("mir7a" ->
    "mir", "7a"; "400mg" -> "400", "mg"); a Chinese name of three characters or more, its
    character pairs (李老师 -> 李老, 老师). Empty for any other name."""
    if len(term) > 2 and HAN_RUN.fullmatch(term):
        return tuple(dict.fromkeys(term[i : i + 2] for i in range(len(term) - 1)))
    m = _LETTERS_DIGITS.match(term)
    if not m:
        return ()
    left, right = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return (_term(left), _term(right))


def _names_something(word: str, first: bool) -> bool:
    """A capitalised word (past the first, which any sentence capitalises; an acronym anywhere),
    or one of letters and digits both: the name of a person, place or thing."""
    if len(word) < 2 or _MEASURE.fullmatch(word):
        return False
    if any(ch.isdigit() for ch in word):
        return any(ch.isalpha() for ch in word)
    if word.isupper():
        return True
    return word[0].isupper() and not first


def similarity_tokens(text: str) -> frozenset[str]:
    """Token set for Jaccard similarity (MMR): lowercase words plus CJK pairs."""
    out = {w.lower() for w in WORD.findall(text)}
    for run in CJK_RUN.findall(text):
        if len(run) == 1:
            out.add(run)
        else:
            out.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(out)


# Chinese characters that say nothing of a topic alone: pronouns, particles, the commonest verbs
_ZH_FUNCTION = frozenset("我你您他她它们咱这那个的地得了是在和与过有就都也还又把被给对着啊吧呀哦嗯么呢吗嘛哈")


def content_words(text: str) -> list[str]:
    """The words of ``text`` that say what it is about: a Latin word (letters or digits) of two
    characters or more that is not an English stop word, or a CJK run that keeps two characters
    or more once its question words and function characters (我, 的, 了, ...) are taken out.
    Empty for "the", "a", "I", "你好", "的": what nearly every message says."""
    out = [w for w in WORD.findall(text) if len(w) >= 2 and _fold(w) not in STOP_WORDS]
    for run in CJK_RUN.findall(_ZH_QUESTION.sub(" ", fold(text))):
        kept = "".join(ch for ch in run if ch not in _ZH_FUNCTION)
        if len(kept) >= 2:
            out.append(run)
    return out
