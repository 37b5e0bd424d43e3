"""National identity numbers and payment card numbers in text: only those whose written shape is
rare in ordinary text and that carry a check (a check digit, a birth date, ranges never issued),
so that a phone number, a date, an order number or an ISBN of the same length is left alone.
Shapes ordinary numbers share (a bare nine-digit number, a Canadian SIN's 3-3-3) are taken only
after their name.

Pure functions, called by ``secrets.redactions`` on every text it reads (every transcript), so a
text is first looked at through one cheap search (``_GATE``) that nearly all text fails, and each
pattern opens with a character class, which the regular expression engine skips to, rather than
with a lookbehind, which it would try at every position. docs/managing.md says what is taken
and how often ordinary text is (benchmarks/redaction.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

# A number standing alone: not glued to a word, a path, a decimal, a range, a version or a
# reference ("#123-45-6789", "v1.2", "x123456789"), and not one group of a longer run of digit
# groups (a row of a table, a longer phone number, a card number's first twelve digits). Put
# after the pattern's first character so that the pattern still opens with a character class.
_ALONE_BEFORE = r"(?<![0-9A-Za-z_\-./+#@].)(?<![0-9][ ,][0-9])"
_ALONE_AFTER = r"(?![0-9A-Za-z_]|[-/+@][0-9A-Za-z]|[.,:][0-9]| [0-9]+(?![0-9/.:]))"  # "… 1111 12/27" is fine


def _alone(first: str, rest: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(first + _ALONE_BEFORE + rest + _ALONE_AFTER, flags)


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

# Every number below holds six digits in a row, two groups of digits after a pair (123-45-6789,
# 4111 1111 1111 …, AB 12 34 56 C), 85T10 (a codice fiscale) or 123.456. (a CPF). A text is read
# for them only if it holds one of these, looked for in a copy of its bytes where each digit is 0,
# each ASCII letter a, a space or hyphen -, and anything else but . ( ) is _: a pattern opening
# with a literal ("00") is searched for about ten times faster than one opening with a character
# class ([0-9]), and the copy (an encoding, then a table lookup a byte) costs less than either.
# 222 of the 25 117 texts of the benchmark corpora pass.
_SHAPE = bytes(48 if 48 <= b <= 57 else 97 if 65 <= b <= 90 or 97 <= b <= 122 else 45 if b in (32, 45)
               else b if b in b".()" else 95 for b in range(256))
_GATE = re.compile(rb"00(?:0000|-00+-00|a00|0\.000\.)")

# Each kind: its shapes in that copy (one must be there), its pattern, its check.
_KINDS: list[tuple[str, tuple[bytes, ...], re.Pattern[str], Callable[[str], bool]]] = [
    ("us ssn", (b"000-00-0000",), _alone("[0-9]", r"[0-9]{2}([- ])[0-9]{2}\1[0-9]{4}"), _us_ssn),
    ("india aadhaar", (b"0000-0000-0000",), _alone("[2-9]", r"[0-9]{3}([- ])[0-9]{4}\1[0-9]{4}"), verhoeff),
    ("payment card", (b"0000-0000-0000-0000", b"0000-000000-0000"),
     _alone("[2-6]", r"[0-9]{3}(?:([- ])[0-9]{4}\1[0-9]{4}\1[0-9]{4}(?:\1[0-9]{1,3})?|([- ])[0-9]{6}\2[0-9]{4,5})"),
     _card),
    ("payment card", (b"0" * 13,), _alone("[2-6]", r"[0-9]{12,18}"), _card),
    ("brazil cpf", (b"000.000.000-00",), _alone("[0-9]", r"[0-9]{2}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}"), _brazil_cpf),
    ("korea rrn", (b"000000-0000000",), _alone("[0-9]", r"[0-9]{5}-[1-8][0-9]{6}"), _korea_rrn),
    ("china resident id", (b"0" * 17,), _alone("[1-8]", r"[0-9]{16}[0-9Xx]"), _china_id),
    ("taiwan id", (b"a000000000",), _alone("[A-Z]", r"[1289][0-9]{8}"), _taiwan_id),
    ("hong kong id", (b"000000(",), _alone("[A-Z]", r"[A-Z]?[0-9]{6}\([0-9A]\)"), _hong_kong_id),
    # Only as HMRC prints it, in pairs: unspaced, two letters, six digits and A-D is also how drug
    # candidates are named (SR141716A, rimonabant), so that form is taken only after its name.
    ("uk nino", (b"a-00-00-00-a",), _alone("[A-CEGHJ-PR-TW-Z]", r"[A-CEGHJ-NPR-TW-Z] [0-9]{2} [0-9]{2} [0-9]{2} [A-D]"),
     _uk_nino),
    ("spain dni", (b"00000000",), _alone("[0-9]", r"[0-9]{7}-?[A-Z]"), _spain_dni),
    ("spain nie", (b"0000000",), _alone("[XYZ]", r"-?[0-9]{7}-?[A-Z]"), _spain_nie),
    ("italy codice fiscale", (b"00a00",), _alone("[A-Z]", r"[A-Z]{5}[0-9LMNP-V]{2}[ABCDEHLMPRST][0-9LMNP-V]{2}[A-Z]"
                                                        r"[0-9LMNP-V]{3}[A-Z]", re.I), _italy_cf),
]

# Shapes taken only after their name: a bare nine-digit SSN ("SSN 123456789"), an unspaced NINO
# ("NI number AB123456C"), CPF or Aadhaar, and a Canadian SIN in any form: 3-3-3 is how Spain, Portugal and Poland
# write their phone numbers, and one in ten passes Luhn (benchmarks/redaction.py). A SIN may
# start with 0 here, as the well-known example 046 454 286 does (0 is for fictitious numbers), not
# with 8 (a business number).
_SAID = r"(?:'s)?[ \t]*(?:(?:is|was|number|no\.?|#|:|=|-|\))[ \t]*)*"
_NO = r"(?:[ -](?:number|no\.?|#))?"
_LABELLED: list[tuple[str, tuple[bytes, ...], tuple[str, ...], re.Pattern[str], Callable[[str], bool]]] = [
    ("us ssn", (b"000000000",), ("ssn", "social"), re.compile(
        r"(?i)(?:\bssn|\bsocial[ -]security" + _NO + ")" + _SAID
        + r"(?P<value>[0-9]{9})(?![0-9A-Za-z_])"), _us_ssn),
    ("uk nino", (b"000000",), ("nino", "ni ", "insurance"), re.compile(
        r"(?i)(?:\bnino|\bni[ -](?:number|no\.?|#)|\bnational[ -]insurance" + _NO + ")" + _SAID
        + r"(?P<value>(?-i:[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{6} ?[A-D]))(?![0-9A-Za-z_])"), _uk_nino),
    ("canada sin", (b"000000000", b"000-000-000"), ("sin", "insurance", "nas", "assurance"), re.compile(
        r"(?i)(?:\bsin|\bsocial[ -]insurance" + _NO + r"|\bnas|\bnum[ée]ro d['’]assurance sociale)" + _SAID
        + r"(?P<value>[0-79][0-9]{2}(?P<sep>[- ]?)[0-9]{3}(?P=sep)[0-9]{3})(?![0-9A-Za-z_]| [0-9])"), luhn),
    ("brazil cpf", (b"0" * 11,), ("cpf",), re.compile(
        r"(?i)\bcpf" + _SAID + r"(?P<value>[0-9]{11})(?![0-9A-Za-z_])"), _brazil_cpf),
    ("india aadhaar", (b"0" * 12,), ("aadhaar", "आधार"), re.compile(
        r"(?i)(?:\baadhaa?r|आधार)" + _SAID + r"(?P<value>[2-9][0-9]{11})(?![0-9A-Za-z_])"), verhoeff),
]


def identifiers(text: str, low: str | None = None) -> list[tuple[str, int, int]]:
    """(kind, start, end) of each identity or card number in ``text``, in no particular order and
    possibly overlapping. ``low`` is ``text.lower()`` when the caller has it already."""
    shape = text.encode("utf-8", "surrogatepass").translate(_SHAPE)
    if not _GATE.search(shape):
        return []
    found = [(kind, m.start(), m.end()) for kind, shapes, pattern, check in _KINDS if any(s in shape for s in shapes)
             for m in pattern.finditer(text) if check(m.group())]
    low = text.lower() if low is None else low
    for kind, shapes, hints, pattern, check in _LABELLED:
        if any(s in shape for s in shapes) and any(h in low for h in hints):
            found += [(kind, *m.span("value")) for m in pattern.finditer(text) if check(m.group("value"))]
    return found
