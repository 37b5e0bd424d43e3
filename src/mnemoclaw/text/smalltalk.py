"""The question inside a message: small talk around it taken off. Pure.

People ask memory the way they talk: "Hi! Lovely weather today. By the way, where did Jon
go last summer?", "哎呀，今天天气真好。我本来想说的是，张伟的职业是什么？". The greeting and the
weather neither answer the question nor say what it is about: a search scores what is left.

A message is cut into clauses at sentence and clause punctuation; a clause that is small talk as
a whole (a greeting, the weather, thanks, "how are you", "by the way") is dropped, and the
phrases that only lead into a question ("by the way", "我本来想说的是", "对了") are taken off the
front of the clause they open. What is left is searched; a message that is small talk alone
is searched as written (what else is there to search), and the searcher scores it as usual.
"""

from __future__ import annotations

import re

# a clause that is small talk as a whole, once its end punctuation and particles are off
_EN_WHOLE = [
    r"(hi|hello|hey|hiya|howdy|yo|greetings|good (morning|afternoon|evening|day))( there| again| friend| buddy| mate|"
    r" everyone| all| guys| [A-Z][a-z]+)?",
    r"(it'?s )?(so )?(good|great|nice|lovely) to (see|hear from|talk to|chat with) you( again| too)?|"
    r"(same|likewise|you too)( here)?|(i'?m|doing) (good|fine|great|well)( thanks| thank you)?( and you)?",
    r"(what an? |it'?s an? |it is an? |such an? )?(lovely|nice|beautiful|great|gorgeous|fine|terrible|awful|"
    r"horrible|rainy|sunny|cloudy|cold|hot|warm|chilly|windy|snowy|grey|gray) (weather|day|morning|afternoon|"
    r"evening)( today| outside| out there| we'?re having| isn'?t it)?",
    r"(the )?weather('s| is) (so |really |very |pretty |quite )?\w+( today| outside)?( isn'?t it)?",
    r"how (are|r) (you|u)( doing| today| doing today)?|how'?s it going|how have you been|what'?s up|sup",
    r"(i )?hope (you'?re|you are|all is|everything is|your day is) (doing )?(well|good|fine|great|going well)",
    r"((i )?hope (you'?re|you are|you'?ve been) having|have|enjoy) (an? |your )?(good|great|nice|lovely|wonderful|"
    r"fine)( one| day| week| weekend| evening| morning| afternoon| time)?( today)?",
    r"no rush|no hurry|take (your )?time|take care|talk (to you )?(soon|later)|see (you|ya) (soon|later)",
    r"thanks?( you)?( so much| a lot| in advance)?|thx|cheers|much appreciated",
    r"(sorry|apologies) (to bother|for bothering) you|long time no see|nice to (see|talk to) you( again)?",
    r"(oh|ah|well|so|ok|okay|um+|uh+|hmm+|ugh|argh|meh|phew|anyway|anyways|by the way|btw|lol|haha+)",
    r"(i )?(just )?(forgot|was going|wanted|meant|have) to ask( you)?( something| a question)?|"
    r"(let me|can i|may i) ask( you)?( something| a question)?|(a )?quick question|one more thing|"
    r"(i was|i'?m) (just )?(curious|wondering)",
]
_ZH_WHOLE = [
    r"(哎呀|哎哟|哎|唉|嗨|嘿|哈喽|你好|您好|早上好|早安|上午好|中午好|下午好|晚上好|晚安|早|在吗|在不在)",
    r"(今天|今儿|最近|外面|这)?(的)?天气?(真|很|挺|好|特别|非常|太|可)?(好|不错|棒|热|冷|晴朗|舒服|糟糕|差)(啊|呀|哦|呢|了)?",
    r"(好久不见|最近怎么样|最近好吗|最近还好吗|你最近好吗|吃了吗|吃饭了吗|忙吗|最近忙吗)",
    r"(谢谢|多谢|感谢|谢啦|麻烦你了|辛苦了|打扰了|不好意思)(你|您)?(啊|呀|哦|了)?",
    r"(对了|顺便问一下|顺便问下|顺便问问|话说|话说回来|嗯+|哈哈+|呵呵|其实吧|那个|就是|然后|还有)",
    r"(我|我就)?(本来|刚才|突然)?(想|要)(问|说)(一下|下|个事|件事)?(的是)?|问你个事|随便问问|有个问题",
]
# the words that only lead into a question, taken off the front of the clause they open
_EN_LEAD = (r"(so|oh|well|anyway|anyways|by the way|btw|also|and|ok|okay|hey|um+|uh+),?\s+|"
            r"(i was|i'?m) (just )?(wondering|curious)( about)?,?\s+|(i )?(just )?(wanted|meant|forgot) to ask,?\s+|"
            r"(a )?quick question[,:]?\s+|let me ask( you)?[,:]?\s+")
_ZH_LEAD = (r"(对了|顺便问一下|顺便问下|顺便问问|话说|话说回来|其实|那个|就是|然后|还有|"
            r"(我|我就)?(本来|刚才|突然)?(想|要)(问|说)(一下|下|的是)?|我问你|问一下)[，,：:]?")

_EN = re.compile(rf"(?:{'|'.join(_EN_WHOLE)})", re.IGNORECASE)
_ZH = re.compile(rf"(?:{'|'.join(_ZH_WHOLE)})")
_LEAD = re.compile(rf"^(?:{_EN_LEAD}|{_ZH_LEAD})", re.IGNORECASE)
# where a clause ends: sentence and clause punctuation (a comma too: "Hi, where did …")
# (a full stop only before a space or the end: 1.75 m and e.g. stay whole)
_CLAUSE = re.compile(r"(?<=[。！？!?；;…~～，,\n])|(?<=\.)(?=\s)")
_TRIM = " \t\"'“”‘’()（）[]【】。！？!?；;…~～，,.:：、-—"
_PARTICLES = re.compile(r"[啊呀哦呢吧啦嘛哈~～]+$")


def _small_talk(clause: str) -> bool:
    bare = _PARTICLES.sub("", clause.strip(_TRIM)).strip(_TRIM)
    return not bare or bool(_EN.fullmatch(bare) or _ZH.fullmatch(bare))


def _unlead(clause: str) -> str:
    """``clause`` without the words that only lead into it."""
    while True:
        m = _LEAD.match(clause.lstrip(_TRIM))
        if not m or not m.group().strip():
            return clause
        rest = clause.lstrip(_TRIM)[m.end():]
        if not rest.strip(_TRIM):
            return clause
        clause = rest


# what a line of a conversation's log opens with: "- **Caroline** (D1:2):", "**user**:", "> "
_SPEAKER = re.compile(r"^\s*(?:[->]\s*|\*\s+)*(?:\*\*[^*]{1,60}\*\*|[\w .'-]{1,40}(?=\s*[(:：]))?"
                      r"\s*(?:\([^)]{0,40}\))?\s*[:：]?\s*")


_VOCATIVE = re.compile(r"[A-Z][a-z]+(?: [A-Z][a-z]+)?")


def is_small_talk(text: str) -> bool:
    """Whether ``text`` (a message, or a line of a conversation's log without who said it) is
    small talk and nothing else: it gives nothing to look for, and a line of it in memory answers
    nothing."""
    bare = _SPEAKER.sub("", text, count=1) if _SPEAKER.match(text) else text
    clauses = [c for c in _CLAUSE.split(bare) if c.strip(_TRIM)]
    talk = [_small_talk(c) for c in clauses]
    # the name a greeting is said to ("Good morning, Gina!") is part of it
    return any(talk) and all(t or _VOCATIVE.fullmatch(c.strip(_TRIM)) for c, t in zip(clauses, talk, strict=True))


def question_of(text: str) -> str:
    """``text`` without the small talk around its question; ``text`` itself when it holds no
    small talk or nothing but small talk."""
    clauses = [c for c in _CLAUSE.split(text) if c]
    if len(clauses) < 2 and not (clauses and _LEAD.match(clauses[0].lstrip(_TRIM))):
        return text
    kept = [_unlead(c) for c in clauses if not _small_talk(c)]
    out = "".join(kept).strip()
    return out if out and out != text.strip() else text
