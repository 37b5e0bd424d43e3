"""Secrets in text, replaced by ``[REDACTED]``: API keys and tokens in their published formats,
``name = value`` settings, and secrets as people write them ("my bank PIN is 4921",
"password hunter22", 密码是hunter22, 验证码：482913).

Used wherever text leaves the user's hands for a file that is indexed and searched
(transcripts, memory notes, imports) or for a message (errors quoting a server's reply). Pure
functions. docs/managing.md has what it catches and how often it takes ordinary text
(benchmarks/redaction.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .identifiers import identifiers

REDACTED = "[REDACTED]"


@dataclass(frozen=True)
class Redaction:
    """One secret found: which pattern, and where it is in the text given."""

    kind: str
    start: int
    end: int


# A published key format: the whole match is the secret. Each pattern runs only on a text holding
# one of its hints: a substring test is a hundred times faster than a regular expression that must
# be tried at every position, and most text holds none (the redactor reads every transcript).
_FORMATS = [
    ("private key", ("PRIVATE KEY-----",),
     re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)", re.S)),
    ("openai/anthropic key", ("sk-",), re.compile(r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}")),
    ("stripe key", ("_live_", "_test_"), re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("github token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}")),
    ("gitlab token", ("glpat-",), re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack token", ("xox",), re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("google key", ("AIza",), re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("aws key id", ("AKIA", "ASIA"), re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("hugging face token", ("hf_",), re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("jwt", ("eyJ",), re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
]

# The name is kept, the value (group "value") replaced. Hints are looked for in the lowercased text.
_NAMED = [
    ("bearer", ("bearer",), re.compile(r"(?i)\bbearer\s+(?P<value>[A-Za-z0-9_\-\.=:/+]{12,})")),
    ("url password", ("://",), re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<value>[^\s@/]+)@")),
    # A setting (env line, JSON, config): after ":" or "=" anything of six characters or more is the
    # value, whatever it looks like; prose ("password is …") goes through the shape test below.
    ("setting", ("key", "secret", "token", "passw", "pwd"), re.compile(
        r"(?i)(?:\b|_)(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|access[_\-]?token|auth[_\-]?token|token|"
        r"passw(?:or)?d|pwd|client[_\-]?secret|private[_\-]?key|aws_secret_access_key)"
        r"[\"']?\s*[:=]\s*[\"']?(?P<value>[^\s\"',;]{6,})")),
]

# -- secrets in prose ---------------------------------------------------------------------------
# What a person calls a secret. "code" alone is not one (area code, status code, source code):
# only the kinds of code that are secrets are. Plurals allowed ("passwords: …"); "pass code" in
# two words is a verb phrase ("do not pass code to …").
_EN_LABEL = (
    r"pass(?:word|wd|code|phrase)s?|pass-(?:code|phrase)s?|pwd|"
    r"one[ -]time[ -](?:pass(?:word|code)|code|pin)s?|otp|2fa[ -]codes?|mfa[ -]codes?|"
    r"(?:security|verification|confirmation|authentication|auth|access|login|sign[ -]?in|sms|recovery|backup|"
    r"unlock|door|gate|alarm|garage|lock|locker|safe|entry|wi-?fi)[ -]codes?|"
    r"pin(?:[ -]?(?:code|number))?s?|cvv2?|cvc2?|"
    r"secret(?:[ -]key)?s?|api[ -_]?keys?|api[ -]tokens?|access[ -]tokens?|auth[ -]tokens?|"
    r"recovery[ -](?:key|phrase)s?|seed[ -]phrases?"
)
_ZH_LABEL = (
    r"密[码碼]|口令|密[钥鑰]|令牌|[验驗][证證][码碼]|校[验驗][码碼]|[动動][态態][码碼]|安全[码碼]|提取[码碼]|"
    r"授[权權][码碼]|(?i:pin)[码碼]"
)
_SP = r"[ \t\u00a0\u3000]"  # a value is on its label's line
# A quoted value: what is inside, not starting or ending with a space.
_QUOTED = "|".join(f"{o}(?!\\s){c_not}{{1,100}}(?<!\\s){c}" for o, c, c_not in (
    ('"', '"', '[^"\\n]'), ("'", "'(?![A-Za-z])", "[^'\\n]"), ("“", "”", "[^”\\n]"), ("‘", "’", "[^’\\n]"),
    ("「", "」", "[^」\\n]"), ("『", "』", "[^』\\n]"), ("`", "`", "[^`\\n]")))
# A bare value runs to the next space or punctuation that ends a phrase (a trailing "!" or "#"
# may be part of it; a trailing full stop or comma is not).
_BARE = r"[^\s,;，。；、：:（）()\[\]{}】」』\"“”'‘’<>]+"
# Matched against the lowercased text (without re.I, several times faster); the label's left edge
# is checked apart (_NOT_BEFORE) for the same reason: a pattern that opens with a lookbehind is
# tried at every position.
_EN_PROSE_SOURCE = (
    r"(?P<label>" + _EN_LABEL + r")(?![a-z0-9_]|[-./][a-z0-9])[*_]{0,2}"
    r"(?:"
    # "is", "was", ":", "=", optionally after "for the router" / "of my card"
    r"(?:" + _SP + r"+(?:for|of|on|to|at)(?:" + _SP + r"+[a-z0-9'’-]+){1,3}?)?"
    r"(?:" + _SP + r"*[:：=][*_]{0,2}|" + _SP + r"+(?:is|was|are|were)(?![a-z0-9_])"
    r"(?:" + _SP + r"+(?:now|still|set" + _SP + r"+to|changed" + _SP + r"+to))?" + _SP + r"*[:：]?|"
    + _SP + r"+[-–—])" + _SP + r"*"
    r"|" + _SP + r"+to" + _SP + r"+"  # "changed my password to …"
    r"|" + _SP + r"+"  # or directly followed by it: "password hunter22"
    r")"
    r"(?P<value>" + _QUOTED + "|" + _BARE + ")"
)
_EN_PROSE = re.compile(_EN_PROSE_SOURCE)
_EN_PROSE_ANY_CASE = re.compile(_EN_PROSE_SOURCE, re.I)  # for the rare text whose lowercase is longer
_NOT_BEFORE = set("abcdefghijklmnopqrstuvwxyz0123456789_-./")  # inside a file name or an identifier
_EN_HINTS = ("pass", "pwd", "pin", "otp", "2fa", "mfa", "code", "cvv", "cvc", "secret", "key", "token", "phrase")
_ZH_PROSE = re.compile(
    r"(?P<label>" + _ZH_LABEL + r")"
    r"(?:(?P<said>" + _SP + r"*(?:(?:是|为|為|[设設](?:置)?[为為]|改[为為成]|[换換]成)了?" + _SP + r"*[:：]?|[:：=]))"
    + _SP + r"*|" + _SP + r"*)"
    r"(?P<value>" + _QUOTED + r"|(?:(?![()\[\]{}<>\"'`,;:])[!-~])+)"
)
_ZH_HINTS = ("密", "口令", "令牌", "码", "碼")
_TRAILING = ".?"  # ends the sentence, not the value (a bare value stops before other punctuation)
# A length, not a value: "password: 8-16 characters", "密码为8-16位".
_UNIT = re.compile(r"[ \t]*(?:characters?|chars?|digits?|letters?|numbers?|symbols?|words?|long\b|minutes?|"
                   r"seconds?|hours?|days?|times?|attempts?|tries)\b|[位個个次分秒天周週年月日号號字元块塊条條]", re.I)
_SYMBOL = re.compile(r"[!@#$%^*+=~|]")  # not "/" (and/or), "&", "\\" (an escape), "-" or "_" (identifiers)
# Numbers that are not secrets: a version or a decimal (pwd: 3.0-), a date.
_NOT_A_VALUE = re.compile(r"v?\d+(?:\.\d+)+[-+]?|\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4}")


def _looks_like_value(value: str, min_digits: int) -> bool:
    """A value, not an ordinary word: enough digits, or a token with a digit or a symbol in it.
    Mixed case alone is not enough: after a secret's name it is far more often an identifier
    ("secret KeyObject", "passphrase: NotRequired", "pin macOS") than a secret."""
    core = value.rstrip("!")
    if not any(c.isalnum() for c in core) or _NOT_A_VALUE.fullmatch(core):
        return False
    if core.isdigit():
        return len(core) >= min_digits
    return len(core) >= 4 and (any(c.isdigit() for c in core) or bool(_SYMBOL.search(core)))


def _prose_value(m: re.Match[str], *, chinese: bool = False) -> tuple[int, int] | None:
    """Where the value is in the match (the inside of quotes, trailing punctuation off), or None
    when it does not look like one."""
    start, end = m.span("value")
    value = m.group("value")
    quoted = value[0] in "\"'“‘「『`"
    if quoted:
        start, end, value = start + 1, end - 1, value[1:-1]
    else:
        stripped = value.rstrip(_TRAILING)
        end -= len(value) - len(stripped)
        value = stripped
        if value.startswith("&") or _UNIT.match(m.string, end):  # an HTML entity (&#x3C;), a length
            return None
    label = m.group("label").lower()
    if re.search(r"(?<![a-z])pin", label):
        # a PIN is digits ("pin 'mcp<2'" and "pin macOS" pin versions; "pin 13" is a connector's)
        ok = value.isdigit() and 4 <= len(value) <= 12
    elif quoted:
        ok = any(c.isalnum() for c in value)
    else:
        # Lone digits are a value only this long: a one-time code has four or more, a card's CVV
        # three ("token 2", "verification code 6 digits long" are not secrets).
        min_digits = 3 if label.startswith(("cvv", "cvc")) else 4
        if chinese and m.group("said") and value.isascii():
            # after 是, 为 or ：, an ASCII token in Chinese text is the value whatever its shape
            ok = (any(c.isalnum() for c in value) and not _NOT_A_VALUE.fullmatch(value)
                  and len(value) >= (min_digits if value.isdigit() else 4))
        else:
            ok = _looks_like_value(value, min_digits)
    return (start, end) if ok and value else None


def redactions(text: str) -> list[Redaction]:
    """The secrets in ``text``, in order, none overlapping another."""
    found: list[Redaction] = []
    low = text.lower()
    for kind, hints, pattern in _FORMATS:
        if any(h in text for h in hints):
            found += [Redaction(kind, m.start(), m.end()) for m in pattern.finditer(text)]
    for kind, hints, pattern in _NAMED:
        if any(h in low for h in hints):
            found += [Redaction(kind, *m.span("value")) for m in pattern.finditer(text)]
    if any(h in low for h in _EN_HINTS):
        same = len(low) == len(text)
        for m in (_EN_PROSE.finditer(low) if same else _EN_PROSE_ANY_CASE.finditer(text)):
            if m.start() and text[m.start() - 1].lower() in _NOT_BEFORE:
                continue
            span = _prose_value(m)
            if span:
                found.append(Redaction("prose (en)", *span))
    if any(h in text for h in _ZH_HINTS):
        for m in _ZH_PROSE.finditer(text):
            span = _prose_value(m, chinese=True)
            if span:
                found.append(Redaction("prose (zh)", *span))
    found += [Redaction(kind, start, end) for kind, start, end in identifiers(text)]
    markers = [m.start() for m in re.finditer(re.escape(REDACTED), text)] if REDACTED in text else []
    kept: list[Redaction] = []
    for r in sorted(found, key=lambda r: (r.start, -(r.end - r.start))):
        if any(m < r.end and r.start < m + len(REDACTED) for m in markers):
            continue  # redacted already ("password: [REDACTED]"): redacting twice changes nothing
        if kept and r.start < kept[-1].end:
            if r.end > kept[-1].end:  # overlapping: one span covers both
                kept[-1] = Redaction(kept[-1].kind, kept[-1].start, r.end)
            continue
        kept.append(r)
    return kept


def redact(text: str) -> str:
    """``text`` with each secret replaced by ``[REDACTED]`` (a named one keeps its name:
    "my bank PIN is [REDACTED]")."""
    return redact_counted(text)[0]


def redact_counted(text: str) -> tuple[str, int]:
    """``redact`` and how many secrets it replaced."""
    found = redactions(text)
    if not found:
        return text, 0
    parts, at = [], 0
    for r in found:
        parts += [text[at:r.start], REDACTED]
        at = r.end
    parts.append(text[at:])
    return "".join(parts), len(found)


def redact_url(url: str) -> str:
    """``url`` without its password (for every message, log line and ``status``)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://(unparsable URL)"
    if not parts.password:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
