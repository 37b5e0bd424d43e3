"""National identity numbers and payment card numbers in text: only those whose written shape is
rare in ordinary text and that carry a check (a check digit, a birth date, ranges never issued),
so that a phone number, a date, an order number or an ISBN of the same length is left alone.
Shapes ordinary numbers share (a bare nine-digit number, a Canadian SIN's 3-3-3) are taken only
after their name.

Pure functions, called by ``secrets.redactions`` on every text it reads (every transcript), so
no regular expression scans a whole text: the text is turned into its shape (digits, letters,
separators) once, a byte search finds where each kind may be, and only there does the kind's
pattern run. docs/managing.md says what is taken, how often ordinary text is and what it costs
(benchmarks/redaction.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

# A number standing alone: not glued to a word, a path, a decimal, a range, a version or a
# reference ("#123-45-6789", "v1.2", "x123456789"), and not one group of a longer run of digit
# groups (a row of a table, a longer phone number, a card number's first twelve digits; "… 1111
# 12/27", a card and its expiry date, is fine).
_ALONE_BEFORE = r"(?<![0-9A-Za-z_\-./+#@])(?<![0-9][ ,])"
_ALONE_AFTER = r"(?![0-9A-Za-z_]|[-/+@][0-9A-Za-z]|[.,:][0-9]| [0-9]+(?![0-9/.:]))"


def _digits(s: str) -> list[int]:
    return [ord(c) - 48 for c in s if "0" <= c <= "9"]


def _born(year: int, month: int, day: int) -> bool:
    """A birth date: a real day, in 1900 or later, not in the future."""
    try:
        born = date(year, month, day)
    except ValueError:
        return False
    return date(1900, 1, 1) <= born <= date.today()


def luhn(number: str) -> bool:
    """The Luhn check (payment cards, Canada's SIN) over the digits of ``number``."""
    total = 0
    for i, d in enumerate(reversed(_digits(number))):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# Verhoeff's check (Aadhaar), over the dihedral group D5: it catches every single-digit error and
# every swap of two adjacent digits, which Luhn does not.
_VERHOEFF_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
_VERHOEFF_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]


def verhoeff(number: str) -> bool:
    """Verhoeff's check over the digits of ``number``."""
    check = 0
    for i, d in enumerate(reversed(_digits(number))):
        check = _VERHOEFF_D[check][_VERHOEFF_P[i % 8][d]]
    return check == 0


# -- the checks, one a kind: each is given the matched text ------------------------------------

def _us_ssn(s: str) -> bool:
    """The SSA's rules: area not 000, 666 or 900-999, group not 00, serial not 0000."""
    d = "".join(c for c in s if c.isdigit())
    return d[:3] not in ("000", "666") and d[0] != "9" and d[3:5] != "00" and d[5:] != "0000"


_CN_PROVINCES = {11, 12, 13, 14, 15, 21, 22, 23, 31, 32, 33, 34, 35, 36, 37, 41, 42, 43, 44, 45, 46,
                 50, 51, 52, 53, 54, 61, 62, 63, 64, 65, 71, 81, 82, 83}


def _china_id(s: str) -> bool:
    """GB 11643: a province, a birth date (YYYYMMDD at 7-14), the ISO 7064 MOD 11-2 check."""
    if int(s[:2]) not in _CN_PROVINCES or not _born(int(s[6:10]), int(s[10:12]), int(s[12:14])):
        return False
    total = sum(int(c) * w for c, w in zip(s[:17], (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2), strict=True))
    return "10X98765432"[total % 11] == s[17].upper()


# The letter's two-digit code (A=10 … with I, O, W, X, Y, Z placed apart: they were added later).
_TW_LETTERS = {c: n for n, c in enumerate("ABCDEFGHJKLMNPQRSTUVXYWZIO", start=10)}


def _taiwan_id(s: str) -> bool:
    n = _TW_LETTERS[s[0]]
    total = n // 10 + n % 10 * 9 + sum(int(c) * w for c, w in zip(s[1:], (8, 7, 6, 5, 4, 3, 2, 1, 1), strict=True))
    return total % 10 == 0


def _hong_kong_id(s: str) -> bool:
    """A123456(3): one or two letters (a lone letter counts 36 before it), six digits, the check
    digit or A (10) in brackets, all weighted 9 down to 1, a multiple of 11."""
    body, check = s[:-3], s[-2]
    values = ([36] if len(body) == 7 else []) + [ord(c) - 55 if c.isalpha() else int(c) for c in body]
    total = sum(v * w for v, w in zip(values, range(9, 1, -1), strict=True)) + (10 if check == "A" else int(check))
    return total % 11 == 0


def _korea_rrn(s: str) -> bool:
    """YYMMDD-SNNNNNC: a birth date whose century the sex digit S gives, and the check digit
    (numbers issued since October 2020 carry none, and are missed)."""
    d = _digits(s)
    century = 1900 if d[6] in (1, 2, 5, 6) else 2000
    if not _born(century + d[0] * 10 + d[1], d[2] * 10 + d[3], d[4] * 10 + d[5]):
        return False
    total = sum(v * w for v, w in zip(d[:12], (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5), strict=True))
    return (11 - total % 11) % 10 == d[12]


def _uk_nino(s: str) -> bool:
    """Prefixes never issued: BG, GB, KN, NK, NT, TN, ZZ (the letters excluded are in the pattern)."""
    return s[:2] not in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ")


def _brazil_cpf(s: str) -> bool:
    d = _digits(s)
    if len(set(d)) == 1:  # 111.111.111-11 passes the checks and is no one's
        return False
    first = sum(v * w for v, w in zip(d[:9], range(10, 1, -1), strict=True)) * 10 % 11 % 10
    second = sum(v * w for v, w in zip(d[:10], range(11, 1, -1), strict=True)) * 10 % 11 % 10
    return d[9] == first and d[10] == second


_ES_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def _spain_dni(s: str) -> bool:
    return _ES_LETTERS[int(s[:8]) % 23] == s[-1]


def _spain_nie(s: str) -> bool:
    digits = "XYZ".index(s[0]) * 10_000_000 + int("".join(c for c in s[1:-1] if c.isdigit()))
    return _ES_LETTERS[digits % 23] == s[-1]


# Codice fiscale: characters at odd places (1st, 3rd, …) count by this table, at even places by
# their value (0-9, A-Z as 0-25); a digit the Agenzia moved aside for a namesake ("omocodia") is
# written as one of LMNPQRSTUV.
_IT_ODD = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                   (1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6,
                    8, 12, 14, 16, 10, 22, 25, 24, 23), strict=True))
_IT_DIGIT = dict(zip("LMNPQRSTUV", "0123456789", strict=True))


def _italy_cf(s: str) -> bool:
    if not (s.isupper() or s.islower()):
        return False
    s = s.upper()
    day = int("".join(_IT_DIGIT.get(c, c) for c in s[9:11]))
    if not (1 <= day <= 31 or 41 <= day <= 71):  # a woman's day is counted from 41
        return False
    total = sum(_IT_ODD[c] if i % 2 == 0 else (int(c) if c.isdigit() else ord(c) - 65) for i, c in enumerate(s[:15]))
    return chr(65 + total % 26) == s[15]


def _card(s: str) -> bool:
    """Luhn, and a length an issuer uses for that prefix (Visa, Mastercard, American Express,
    Discover, JCB, Diners Club, UnionPay); Maestro's 12 to 19 digits after almost any 5 or 6
    would take too many ordinary numbers."""
    d = "".join(c for c in s if c.isdigit())
    n, p2, p3, p4 = len(d), int(d[:2]), int(d[:3]), int(d[:4])
    issued = (d[0] == "4" and n in (13, 16, 19)
              or (51 <= p2 <= 55 or 2221 <= p4 <= 2720) and n == 16
              or p2 in (34, 37) and n == 15
              or (p4 == 6011 or 644 <= p3 <= 649 or p2 == 65 or 3528 <= p4 <= 3589 or p2 == 62) and 16 <= n <= 19
              or (p2 == 36 or 300 <= p3 <= 305) and n == 14)
    return issued and luhn(d)


# -- the kinds ------------------------------------------------------------------------------------

# Every number below is looked for in a copy of the text, one byte a character (latin-1, anything
# else "?"), where each digit is 0, each ASCII letter a, a space or a hyphen -, and anything but .
# and brackets _. There a number's shape is a plain substring ("000-00-0000"), found by a byte
# search many times faster than a regular expression opening with a character class ([0-9]);
# the number's own pattern and check run only where its shape is. One search first turns away a
# text holding none of the shapes (six digits in a row, two digit groups after a pair as in
# 123-45-6789, 4111 1111 … or AB 12 34 56 C, 85T10 of a codice fiscale, 123.456. of a CPF): it
# opens with a literal, "00", which the engine also finds fast. 222 of the 26 787 texts of the
# benchmark corpora pass it.
_SHAPE = bytes(48 if 48 <= b <= 57 else 97 if 65 <= b <= 90 or 97 <= b <= 122 else 45 if b in (32, 45)
               else b if b in b".()" else 95 for b in range(256))
_GATE = re.compile(rb"00(?:0000|-00+-00|a00|0\.000\.)")


def _shape(text: str) -> bytes:
    return text.encode("latin-1", "replace").translate(_SHAPE)


@dataclass(frozen=True)
class _Kind:
    """A kind of number: its shape in that copy (a literal, mostly of digits, so that it is found
    fast), how many characters before the shape the number may start, its pattern there, its
    check, and the name that must come before it, for a shape ordinary numbers share."""

    name: str
    shape: bytes
    back: tuple[int, ...]
    pattern: re.Pattern[str]
    check: Callable[[str], bool]
    label: re.Pattern[str] | None = None


# A name is looked for in the few characters before the number: "SSN: ", "my SIN is ".
_SAID = r"(?:'s)?[ \t]*(?:(?:is|was|number|no\.?|#|:|=|-|\))[ \t]*)*\Z"
_NO = r"(?:[ -](?:number|no\.?|#))?"
_BEFORE = 60


def _kind(name: str, shape: bytes, back: tuple[int, ...], pattern: str, check: Callable[[str], bool], *,
          flags: int = 0, label: str | None = None) -> _Kind:
    return _Kind(name, shape, back, re.compile(_ALONE_BEFORE + pattern + _ALONE_AFTER, flags), check,
                 re.compile("(?i)(?:" + label + ")" + _SAID) if label else None)


_SIN = r"\bsin|\bsocial[ -]insurance" + _NO + r"|\bnas|\bnum[ée]ro d['’]assurance sociale"

_KINDS = [
    _kind("us ssn", b"000-00-0000", (0,), r"[0-9]{3}([- ])[0-9]{2}\1[0-9]{4}", _us_ssn),
    _kind("india aadhaar", b"0000-0000-0000", (0,), r"[2-9][0-9]{3}([- ])[0-9]{4}\1[0-9]{4}", verhoeff),
    _kind("payment card", b"0000-0000-0000-0000", (0,),
          r"[2-6][0-9]{3}([- ])[0-9]{4}\1[0-9]{4}\1[0-9]{4}(?:\1[0-9]{1,3})?", _card),
    _kind("payment card", b"0000-000000-0000", (0,), r"3[0-9]{3}([- ])[0-9]{6}\1[0-9]{4,5}", _card),  # Amex, Diners
    _kind("payment card", b"0" * 13, (0,), "[2-6][0-9]{12,18}", _card),
    _kind("brazil cpf", b"000.000.000-00", (0,), r"[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}", _brazil_cpf),
    _kind("korea rrn", b"000000-0000000", (0,), "[0-9]{6}-[1-8][0-9]{6}", _korea_rrn),
    _kind("china resident id", b"0" * 17, (0,), "[1-8][0-9]{16}[0-9Xx]", _china_id),
    _kind("taiwan id", b"0" * 9, (1,), "[A-Z][1289][0-9]{8}", _taiwan_id),
    _kind("hong kong id", b"000000(", (2, 1), r"[A-Z]{1,2}[0-9]{6}\([0-9A]\)", _hong_kong_id),
    # As HMRC prints it, in pairs; unspaced, two letters, six digits and A-D is also how drug
    # candidates are named (SR141716A, rimonabant), so that form needs its name (below).
    _kind("uk nino", b"00-00-00-a", (3,), "[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] [0-9]{2} [0-9]{2} [0-9]{2} [A-D]",
          _uk_nino),
    _kind("spain dni", b"0" * 8, (0,), "[0-9]{8}-?[A-Z]", _spain_dni),
    _kind("spain nie", b"0" * 7, (1, 2), "[XYZ]-?[0-9]{7}-?[A-Z]", _spain_nie),
    _kind("italy codice fiscale", b"00a00", (6,),
          "[A-Z]{6}[0-9LMNP-V]{2}[ABCDEHLMPRST][0-9LMNP-V]{2}[A-Z][0-9LMNP-V]{3}[A-Z]", _italy_cf, flags=re.I),
    # Shapes ordinary numbers share, taken only after their name: nine, eleven or twelve bare
    # digits, an unspaced NINO, and a Canadian SIN in any form: 3-3-3 is how Spain, Portugal and
    # Poland write their phone numbers, and one in ten passes Luhn (benchmarks/redaction.py). A SIN
    # may start with 0 here, as the well-known example 046 454 286 does (0 is for fictitious
    # numbers), not with 8 (a business number).
    _kind("us ssn", b"0" * 9, (0,), "[0-9]{9}", _us_ssn, label=r"\bssn|\bsocial[ -]security" + _NO),
    _kind("uk nino", b"0" * 6, (2, 3), "[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{6} ?[A-D]", _uk_nino,
          label=r"\bnino|\bni[ -](?:number|no\.?|#)|\bnational[ -]insurance" + _NO),
    _kind("canada sin", b"000-000-000", (0,), r"[0-79][0-9]{2}([- ])[0-9]{3}\1[0-9]{3}", luhn, label=_SIN),
    _kind("canada sin", b"0" * 9, (0,), "[0-79][0-9]{8}", luhn, label=_SIN),
    _kind("brazil cpf", b"0" * 11, (0,), "[0-9]{11}", _brazil_cpf, label=r"\bcpf"),
    _kind("india aadhaar", b"0" * 12, (0,), "[2-9][0-9]{11}", verhoeff, label=r"\baadhaa?r|आधार"),
]


def identifiers(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of each identity or card number in ``text``, in no particular order and
    possibly overlapping."""
    shape = _shape(text)
    if not _GATE.search(shape):
        return []
    found = []
    for kind in _KINDS:
        at = 0
        while (w := shape.find(kind.shape, at)) >= 0:
            at = w + len(kind.shape)
            for b in kind.back:
                m = kind.pattern.match(text, w - b) if w >= b else None
                if m:
                    if kind.check(m.group()) and (
                            kind.label is None or kind.label.search(text, max(0, m.start() - _BEFORE), m.start())):
                        found.append((kind.name, m.start(), m.end()))
                    break
    return found
