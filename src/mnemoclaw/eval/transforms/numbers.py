"""Numbers and measurements written another way: 175cm, 175厘米, 1.75 m, 一米七五. Pure.

A person asks about a number in whatever form comes to mind, not in the form the note wrote:
Arabic digits or Chinese numerals (2019年, 二〇一九年), digits or English words (3, three), a
year cut short ('23), a length in centimetres or metres, a weight in kilograms, 公斤 or 斤
(exactly half a kilogram). ``forms`` lists what a mention can become, exact conversions only;
``rewrite`` rewrites every mention of a question, one of its forms each.
"""

from __future__ import annotations

import random
import re
from decimal import Decimal

from ...text.script import HAN

_DIGITS = "零一二三四五六七八九"
_YEAR_DIGITS = "〇一二三四五六七八九"
_CN_VALUE = {c: i for i, c in enumerate(_DIGITS)} | {"〇": 0, "两": 2}
_CN_UNIT = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_VALUE = {w: i for i, w in enumerate(_ONES)} | {w: 10 * i for i, w in enumerate(_TENS) if i >= 2}


def chinese(n: int) -> str:
    """An integer in Chinese numerals, as written in prose: 175 -> 一百七十五, 10 -> 十, 6600万 -> 六千六百万."""
    if n < 0:
        return "负" + chinese(-n)
    if n < 10:
        return _DIGITS[n]
    for unit, size in (("亿", 100_000_000), ("万", 10_000)):
        if n >= size:
            high, low = divmod(n, size)
            tail = "" if low == 0 else ("零" if low < size // 10 else "") + _below_10k(low)
            return chinese(high) + unit + tail
    out = _below_10k(n)
    return out[1:] if out.startswith("一十") else out  # 十五, not 一十五


def _below_10k(n: int) -> str:
    out, zero = "", False
    for size, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit, n = divmod(n, size)
        if digit:
            out += ("零" if zero and out else "") + _DIGITS[digit] + unit
            zero = False
        else:
            zero = True
    return out


def year_chinese(digits: str) -> str:
    """A year digit by digit, as a year is read: 2019 -> 二〇一九."""
    return "".join(_YEAR_DIGITS[int(d)] for d in digits)


def parse_chinese(text: str) -> int | None:
    """The value of Chinese numerals (三十八, 一千五百, 两万, 二〇一九 read digit by digit); None if not a number."""
    if not text:
        return None
    if len(text) >= 2 and all(c in _YEAR_DIGITS or c == "零" for c in text):
        return int("".join(str(_CN_VALUE[c]) for c in text))
    total, section, digit = 0, 0, None
    for c in text:
        if c in "零〇":
            continue  # 一百零五: a place held empty
        if c in _CN_VALUE:
            if digit is not None:
                return None  # two digits in a row outside a year: not a number we read
            digit = _CN_VALUE[c]
        elif c in _CN_UNIT:
            section += (1 if digit is None else digit) * _CN_UNIT[c]
            digit = None
        elif c in _CN_BIG:
            total = (total + section + (digit or 0)) * _CN_BIG[c]
            section, digit = 0, None
        else:
            return None
    return total + section + (digit or 0)


def words(n: int) -> str:
    """An integer under a million in English words: 38 -> thirty-eight, 1500 -> one thousand five hundred."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_ONES[hundreds]} hundred" + (f" {words(rest)}" if rest else "")
    thousands, rest = divmod(n, 1000)
    return f"{words(thousands)} thousand" + (f" {words(rest)}" if rest else "")


def _decimal(value: Decimal) -> str:
    """A number as digits without a trailing zero: 1.750 -> 1.75, 175.0 -> 175."""
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _chinese_decimal(value: Decimal) -> str:
    whole, _, frac = _decimal(value).partition(".")
    return chinese(int(whole)) + ("点" + "".join(_DIGITS[int(d)] for d in frac) if frac else "")


# unit -> (dimension, size in the dimension's base unit); written forms per language
_UNITS = {
    "cm": ("length", Decimal("0.01")), "厘米": ("length", Decimal("0.01")), "公分": ("length", Decimal("0.01")),
    "centimeters": ("length", Decimal("0.01")), "centimetres": ("length", Decimal("0.01")),
    "m": ("length", Decimal(1)), "米": ("length", Decimal(1)), "meters": ("length", Decimal(1)),
    "metres": ("length", Decimal(1)),
    "km": ("length", Decimal(1000)), "公里": ("length", Decimal(1000)), "千米": ("length", Decimal(1000)),
    "kilometers": ("length", Decimal(1000)), "kilometres": ("length", Decimal(1000)),
    "kg": ("mass", Decimal(1)), "公斤": ("mass", Decimal(1)), "千克": ("mass", Decimal(1)),
    "kilograms": ("mass", Decimal(1)), "kilos": ("mass", Decimal(1)), "斤": ("mass", Decimal("0.5")),
    "g": ("mass", Decimal("0.001")), "克": ("mass", Decimal("0.001")), "grams": ("mass", Decimal("0.001")),
}
# how each dimension is written: (unit, Chinese?) in the order forms are offered
_WRITTEN = {
    "length": (("厘米", True), ("cm", False), ("米", True), ("m", False), ("公里", True), ("km", False),
               ("公分", True), ("千米", True), ("centimeters", False), ("meters", False), ("kilometers", False)),
    "mass": (("公斤", True), ("kg", False), ("斤", True), ("千克", True), ("克", True), ("g", False),
             ("kilograms", False), ("grams", False)),
}
_UNIT_RE = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
# a number standing alone (not part of an identifier like K63, LC-34, PGE2 or 3,4-biphosphate, nor a decade:
# the 70's), with a unit or a percent sign
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.,\-/])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
    rf"(?:\s?(%|(?:{_UNIT_RE})(?![A-Za-z])|percent\b))?(?![A-Za-z0-9_]|[.,]\d|-\d|'s)")
# Chinese numerals a reader takes as a number: after 第, or before a counter or a unit
_COUNTERS = ("个|位|名|次|岁|届|号线|号|场|人|条|种|家|座|项|年|月|日|天|周|本|部|首|件|张|枚|架|辆|艘|台|层|期|"
             "世纪|倍|元|美元|吨|度|" + "|".join(u for u in _UNITS if HAN.search(u)))
_CN_DIGITS = "[〇零一二两三四五六七八九十百千万亿]+"
_CN_NUMBER = re.compile(rf"(第)?({_CN_DIGITS})(?=(?:{_COUNTERS}))|(第)({_CN_DIGITS})")
_EN_WORD = re.compile(r"\b(" + "|".join(sorted((w for w in _WORD_VALUE if _WORD_VALUE[w] >= 2), key=len,
                                                reverse=True)) + r")(?:-(" + "|".join(_ONES[1:10]) + r"))?\b", re.I)
_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
          r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)")
_DAY_BEFORE_MONTH = re.compile(rf"\b(\d{{1,2}})(st|nd|rd|th)?(\s+(?:of\s+)?{_MONTH}\b)")
_DAY_AFTER_MONTH = re.compile(rf"(\b{_MONTH}\s+)(\d{{1,2}})(st|nd|rd|th)?\b(?!:)")


def _ordinal(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def measure_forms(value: Decimal, unit: str, zh: bool) -> list[str]:
    """The same measurement in the other units of its dimension, exactly: 175 cm -> 175厘米, 1.75米,
    一米七五 (a height as it is said), 1.75 m; Chinese forms first in Chinese text."""
    dimension, size = _UNITS[unit]
    base = value * size
    out: list[str] = []
    for other, han in sorted(_WRITTEN[dimension], key=lambda w: w[1] != zh):
        amount = base / _UNITS[other][1]
        if (han if not zh else not han and len(other) > 2) or not Decimal("0.1") <= amount < 10_000 \
                or amount != amount.quantize(Decimal("0.01")):
            continue  # no 厘米 in an English question, no "kilograms" in a Chinese one; no 0.00175 km
        out.append(f"{_decimal(amount)}{other}" if zh else f"{_decimal(amount)} {other}")
    if zh and dimension == "length" and Decimal(1) <= base < 3 and (base * 100) % 1 == 0:
        metres, rest = divmod(int(base * 100), 100)  # 一米七五, 一米八: how a height is said
        if rest:
            tail = _DIGITS[rest // 10] + (_DIGITS[rest % 10] if rest % 10 else "")
            out.insert(1, f"{_DIGITS[metres]}米{tail}")
    return out


def forms(mention: str, zh: bool, year: bool = False) -> list[str]:
    """What one number mention can be written as instead (empty when nothing exact is known);
    ``year``: a Chinese text's number before 年, read digit by digit."""
    m = _NUMBER.fullmatch(mention)
    if m:
        return _digit_forms(mention, m.group(1), m.group(2), zh, year)
    parsed = parse_chinese(mention)
    if parsed is not None:
        return [str(parsed)]
    first, _, second = mention.lower().partition("-")
    if first in _WORD_VALUE and (not second or second in _ONES):
        return [str(_WORD_VALUE[first] + (_ONES.index(second) if second else 0))]
    return []


def _digit_forms(mention: str, number: str, unit: str | None, zh: bool, year: bool) -> list[str]:
    value = Decimal(number.replace(",", ""))
    if unit and unit in _UNITS:
        same = mention.replace(" ", "").replace(",", "")
        return [f for f in measure_forms(value, unit, zh) if f.replace(" ", "") != same]
    if unit in ("%", "percent"):
        if zh:
            return ["百分之" + _chinese_decimal(value)]
        alt = [f"{_decimal(value)} percent" if unit == "%" else f"{_decimal(value)}%"]
        return alt + ([f"{words(int(value))} percent"] if value == int(value) and value < 1000 else [])
    if "," in number:
        return [number.replace(",", "")]
    if "." in number:
        return [_chinese_decimal(value)] if zh else []
    n = int(number)
    if zh:
        return [year_chinese(number)] if year and len(number) == 4 else [chinese(n)]
    if len(number) == 4 and 1900 <= n <= 2099:
        return [f"'{number[2:]}"]
    if n < 1000 or n % 1000 == 0 and n < 1_000_000:
        return [words(n)]
    return [f"{n:,}"] if n >= 10_000 else []


def _pick(options: list[str], rng: random.Random) -> str | None:
    return rng.choice(options) if options else None


def rewrite(text: str, rng: random.Random) -> str | None:
    """Every number of ``text`` written another way, one form each chosen by ``rng``; None when the
    text holds no number that has another form."""
    zh = bool(HAN.search(text))
    edits: list[tuple[int, int, str]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b, _ in edits)

    if not zh:  # dates: the day with or without its ordinal suffix, before or after the month
        for m in _DAY_BEFORE_MONTH.finditer(text):
            day = int(m.group(1))
            if 1 <= day <= 31:
                new = m.group(1) + ("" if m.group(2) else _ordinal(day)) + m.group(3)
                edits.append((m.start(), m.end(), new))
        for m in _DAY_AFTER_MONTH.finditer(text):
            day = int(m.group(2))
            if 1 <= day <= 31 and free(m.start(), m.end()):
                edits.append((m.start(), m.end(), m.group(1) + m.group(2) + ("" if m.group(3) else _ordinal(day))))
    for m in _NUMBER.finditer(text):
        if not free(m.start(), m.end()):
            continue
        year = zh and text.startswith("年", m.end() + (text[m.end():m.end() + 1] == " "))
        new = _pick(forms(m.group(0), zh, year), rng)
        if new is not None:
            edits.append((m.start(), m.end(), new))
    if zh:
        for m in _CN_NUMBER.finditer(text):
            prefix, digits = (m.group(1) or m.group(3) or ""), (m.group(2) or m.group(4))
            asking = len(digits) == 1 and m.start() > 0 and text[m.start() - 1] in "哪几"
            if digits in ("一", "〇", "零", "百", "千", "万", "亿") or asking or not free(m.start(), m.end()):
                continue  # 一个, 哪一年, 哪两个, 百度, 千克: words, not numbers anyone writes in digits
            new = _pick(forms(digits, zh), rng)
            if new is not None:
                edits.append((m.start(), m.end(), prefix + new))
    else:
        for m in _EN_WORD.finditer(text):
            if free(m.start(), m.end()):
                new = _pick(forms(m.group(0), zh), rng)
                if new is not None:
                    edits.append((m.start(), m.end(), new))
    if not edits:
        return None
    out = text
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    return out if out != text else None
