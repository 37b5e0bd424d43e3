"""What the secret redactor would take out of ordinary text: every text of the shared benchmark
corpora (none of which holds a secret), per corpus and per pattern, each span printed with its
surroundings so a person can judge it; and the hand-written phrases (tests/secret_phrases.py),
the tuning half and the held-out half scored apart.

    python benchmarks/redaction.py [--bench DIR] [--also DIR ...] [--context 40] [--max-spans 200]
                                   [--passes 1] [--look-alikes 1000]

Reads the corpora where the other benchmarks do (MNEMOCLAW_BENCH_DIR, or ../shared/bench) and
never copies them. They seldom name a secret, so ``--also`` adds text that often does: each
Markdown, reStructuredText, text, HTML or Python file under DIR (package documentation, say),
one text a file; there a span may be a real example password, to be judged by reading it. Stdout is the report; progress goes to stderr. Run against an older
checkout (PYTHONPATH=that/src) it measures that version: a redactor without ``redactions`` is
measured by diffing its output (slow on large files), its spans named "(unnamed)".
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from mnemoclaw.text import secrets as redactor  # noqa: E402

try:
    from mnemoclaw.text.identifiers import identifiers
except ImportError:  # an older checkout
    identifiers = None  # type: ignore[assignment]

from secret_phrases import HELD_OUT_NEGATIVE, HELD_OUT_POSITIVE, TUNE_NEGATIVE, TUNE_POSITIVE  # noqa: E402

# (label, folder): every document and every query of each. The sentence-level XQuAD sets and
# locomo/sessions hold the same text as these, cut differently.
CORPORA = [
    ("locomo", "locomo/turns"),
    ("xquad-en", "xquad/en-paragraph"),
    ("xquad-zh", "xquad/zh-paragraph"),
    ("cmrc2018", "cmrc2018/dev-paragraph"),
    ("scifact", "scifact/beir-test"),
]


# A secret's name, counted to show how often the redactor had a chance to go wrong: a fixed list,
# the same whatever version of the redactor is measured.
NAMES = re.compile(r"(?i)\b(?:pass(?:word|wd|code|phrase)s?|pin|otp|cvv|secrets?|tokens?|api[ _-]?keys?|"
                   r"(?:verification|security|one-time) codes?)\b|密[码碼]|口令|[验驗][证證][码碼]|密[钥鑰]|令牌")


def bench_dir(given: str | None) -> Path:
    here = HERE.parent.parent
    for c in (given, os.environ.get("MNEMOCLAW_BENCH_DIR"), here / "shared" / "bench", "/work/shared/bench"):
        if c and Path(c, "README.md").exists():
            return Path(c)
    sys.exit("benchmark data not found: pass --bench DIR or set MNEMOCLAW_BENCH_DIR")


FILES = (".md", ".rst", ".txt", ".html", ".py")


def files_under(folder: Path) -> Iterator[str]:
    for dirpath, _, names in os.walk(folder):
        for name in sorted(names):
            if name.endswith(FILES):
                try:
                    yield Path(dirpath, name).read_text("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue


def texts(folder: Path) -> Iterator[str]:
    for name in ("corpus.jsonl", "queries.jsonl"):
        with open(folder / name, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                for field in ("title", "text"):
                    if row.get(field):
                        yield row[field]


def spans(text: str) -> list[tuple[str, int, int]]:
    """(pattern, start, end) of each secret the redactor would replace in ``text``."""
    if hasattr(redactor, "redactions"):
        return [(r.kind, r.start, r.end) for r in redactor.redactions(text)]
    out = redactor.redact(text)  # an older redactor: what changed is what it took
    if out == text:
        return []
    ops = difflib.SequenceMatcher(None, text, out, autojunk=False).get_opcodes()
    return [("(unnamed)", i1, i2) for tag, i1, i2, _, _ in ops if tag != "equal"]


def shown(text: str, start: int, end: int, context: int) -> str:
    before = text[max(0, start - context):start]
    after = text[end:end + context]
    return " ".join(f"{before}⟦{text[start:end]}⟧{after}".split())


def _luhn_digit(body: str) -> str:
    """The digit that makes ``body`` + it pass the Luhn check (an IMEI's last digit)."""
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return str(-total % 10)


def _isbn13(rng: random.Random) -> str:
    body = "978" + "".join(rng.choice("0123456789") for _ in range(9))
    check = -sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body)) % 10
    return f"{body[:3]}-{body[3]}-{body[4:7]}-{body[7:12]}-{check}"


def _isbn10(rng: random.Random) -> str:
    body = "".join(rng.choice("0123456789") for _ in range(9))
    check = -sum(int(c) * (10 - i) for i, c in enumerate(body)) % 11
    return f"{body[0]}-{body[1:4]}-{body[4:9]}-{'X' if check == 10 else check}"


UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def look_alikes(n: int, seed: int = 46) -> list[tuple[str, list[str]]]:
    """Ordinary numbers of the shapes national identifiers and card numbers take (phone numbers
    as each country writes them, dates, ISBNs, order and tracking numbers, coordinates, …), ``n``
    of each, drawn at random (the same ones for a given seed), each in a sentence: none is an
    identifier, so each redaction is a false one."""
    rng = random.Random(seed)

    def d(k: int, first: str = "0123456789") -> str:
        return rng.choice(first) + "".join(rng.choice("0123456789") for _ in range(k - 1))

    shapes: list[tuple[str, Callable[[], str]]] = [
        ("US phone 415-555-0132", lambda: f"{d(3, '23456789')}-{d(3, '23456789')}-{d(4)}"),
        ("US phone (415) 555 0132", lambda: f"({d(3, '23456789')}) {d(3, '23456789')} {d(4)}"),
        ("US phone +1 415 555 0132", lambda: f"+1 {d(3, '23456789')} {d(3, '23456789')} {d(4)}"),
        ("ES/PT/PL mobile 612 345 678", lambda: f"{d(3, '6789')} {d(3)} {d(3)}"),
        ("ES/PT/PL mobile 612-345-678", lambda: f"{d(3, '6789')}-{d(3)}-{d(3)}"),
        ("FR phone 06 12 34 56 78", lambda: f"0{d(1, '1234567')} {d(2)} {d(2)} {d(2)} {d(2)}"),
        ("UK phone 020 7946 0958", lambda: f"0{d(2)} {d(4)} {d(4)}"),
        ("UK mobile 07700 900123", lambda: f"07{d(3)} {d(6)}"),
        ("CN mobile 138 1234 5678", lambda: f"1{d(2, '3456789')} {d(4)} {d(4)}"),
        ("CN mobile 13812345678", lambda: f"1{d(2, '3456789')}{d(8)}"),
        ("IN mobile +91 98765 43210", lambda: f"+91 {d(5, '6789')} {d(5)}"),
        ("DE phone 030 12345678", lambda: f"0{d(2)} {d(8)}"),
        ("ISO date 2023-01-15", lambda: f"{rng.randint(1900, 2030)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}"),
        ("date 20230115", lambda: f"{rng.randint(1900, 2030)}{rng.randint(1, 12):02}{rng.randint(1, 28):02}"),
        ("date 15.01.2023", lambda: f"{rng.randint(1, 28):02}.{rng.randint(1, 12):02}.{rng.randint(1900, 2030)}"),
        ("ISBN-13 978-0-306-40615-7", lambda: _isbn13(rng)),
        ("ISBN-13 9780306406157", lambda: _isbn13(rng).replace("-", "")),
        ("ISBN-10 0-306-40615-2", lambda: _isbn10(rng)),
        ("order 112-1234567-1234567", lambda: f"1{d(2)}-{d(7)}-{d(7)}"),
        ("ZIP+4 94105-1234", lambda: f"{d(5)}-{d(4)}"),
        ("IMEI 352099001761481", lambda: (lambda b: b + _luhn_digit(b))(rng.choice(("35", "86", "01")) + d(12))),
        ("tracking 9400 1000 0000 0000 0000 00", lambda: f"94{d(2)} {d(4)} {d(4)} {d(4)} {d(4)} {d(2)}"),
        ("epoch ms 1700000000000", lambda: f"1{d(12, '4567')}"),
        ("post id 1798765432109876543", lambda: f"1{d(18)}"),
        ("coordinates 40.7128, -74.0060", lambda: f"{rng.uniform(-90, 90):.4f}, {rng.uniform(-180, 180):.4f}"),
        ("amount 1,234,567.89", lambda: f"{rng.randint(1000, 99_999_999):,}.{d(2)}"),
        ("IPv4 192.168.1.100", lambda: ".".join(str(rng.randint(0, 255)) for _ in range(4))),
        ("9 digits 123456789", lambda: d(9, "123456789")),
        ("12 digits 1234 5678 9012", lambda: f"{d(4, '123456789')} {d(4)} {d(4)}"),
        ("16 digits 1234567890123456", lambda: d(16, "123456789")),
        ("18 digits 123456789012345678", lambda: d(18, "123456789")),
        ("6-7 digits 123456-1234567", lambda: f"{d(6)}-{d(7)}"),
        ("letter, 9 digits A123456789", lambda: rng.choice(UPPER) + d(9)),
        ("8 digits, letter 12345678A", lambda: d(8) + rng.choice(UPPER)),
        ("drug code SR141716A", lambda: rng.choice(UPPER) + rng.choice(UPPER) + d(6) + rng.choice("ABCD")),
    ]
    out = []
    for name, make in shapes:
        out.append((name, [f"Ref {make()}, as noted." for _ in range(n)]))
    return out


def phrases() -> list[str]:
    lines = []
    for name, positive, negative in (("tuning half", TUNE_POSITIVE, TUNE_NEGATIVE),
                                     ("held-out half", HELD_OUT_POSITIVE, HELD_OUT_NEGATIVE)):
        caught = [t for t, secret in positive if redactor.redact(t) == t.replace(secret, redactor.REDACTED)]
        left = [t for t in negative if redactor.redact(t) == t]
        lines.append(f"{name}: secrets redacted exactly {len(caught)}/{len(positive)}, "
                     f"look-alikes left unchanged {len(left)}/{len(negative)}")
        lines += [f"  missed: {t!r} -> {redactor.redact(t)!r}" for t, _ in positive if t not in caught]
        lines += [f"  wrongly redacted: {t!r} -> {redactor.redact(t)!r}" for t in negative if t not in left]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", help="the shared benchmark folder (default: MNEMOCLAW_BENCH_DIR or ../shared/bench)")
    ap.add_argument("--also", action="append", default=[], metavar="DIR", help="text files under DIR too")
    ap.add_argument("--context", type=int, default=40, help="characters shown either side of a span")
    ap.add_argument("--max-spans", type=int, default=200, help="spans printed per corpus at most")
    ap.add_argument("--passes", type=int, default=1, metavar="N",
                    help="time the redactor over each corpus N times and keep the fastest (a loaded machine)")
    ap.add_argument("--look-alikes", type=int, default=1000, metavar="N",
                    help="ordinary numbers of each identifier-like shape to draw at random")
    args = ap.parse_args()
    bench = bench_dir(args.bench)
    total: Counter[str] = Counter()
    took_ids: dict[str, float] = {}  # the identity and card numbers' part, when the redactor has one
    rows = []
    sets: list[tuple[str, str, Callable[[], Iterator[str]]]] = [
        (label, folder, lambda folder=folder: texts(bench / folder)) for label, folder in CORPORA]
    sets += [(f"also {i}", d, lambda d=d: files_under(Path(d))) for i, d in enumerate(args.also, 1)]
    for label, folder, read in sets:
        took = 0.0
        n_texts = n_chars = n_names = 0
        kinds: Counter[str] = Counter()
        found = []
        for text in read():
            n_texts += 1
            n_chars += len(text)
            n_names += len(NAMES.findall(text))
            started = time.perf_counter()
            found_here = spans(text)
            took += time.perf_counter() - started
            for kind, start, end in found_here:
                kinds[kind] += 1
                found.append(f"  [{kind}] {shown(text, start, end, args.context)}")
        if args.passes > 1 and hasattr(redactor, "redactions"):  # the redactor alone, over all its texts
            kept = list(read())
            for _ in range(args.passes - 1):
                started = time.perf_counter()
                for text in kept:
                    redactor.redactions(text)
                took = min(took, time.perf_counter() - started)
                if identifiers:
                    started = time.perf_counter()
                    for text in kept:
                        identifiers(text)
                    took_ids[label] = min(took_ids.get(label, float("inf")), time.perf_counter() - started)
        print(f"{label}: {n_texts} texts scanned, {took:.1f} s in the redactor", file=sys.stderr, flush=True)
        total.update(kinds)
        rows.append((label, folder, n_texts, n_chars, n_names, kinds, found, took))
    print("# Redactions in the shared benchmark corpora (none holds a secret: each one is a false redaction)"
          + (" and in the folders given with --also (where some may be example passwords)" if args.also else "")
          + "\n")
    print("| corpus | texts | characters | a secret's name | redactions | by pattern | redactor seconds |")
    print("|---|---|---|---|---|---|---|")
    for label, folder, n_texts, n_chars, n_names, kinds, _, took in rows:
        by = ", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "-"
        print(f"| {label} ({folder}) | {n_texts} | {n_chars} | {n_names} | {sum(kinds.values())} | {by} | {took:.2f} |")
    chars, seconds = sum(r[3] for r in rows), sum(r[-1] for r in rows)
    print(f"\nthe redactor read {chars / 1e6:.1f} M characters in {seconds:.2f} s ({chars / 1e6 / seconds:.1f} M/s; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})"
          + (f"; identity and card numbers alone: {sum(took_ids.values()):.2f} s" if took_ids else ""))
    print(f"total: {sum(total.values())} redaction(s)"
          + (" (" + ", ".join(f"{k} {n}" for k, n in total.most_common()) + ")" if total else ""))
    for label, *_, found, _ in rows:
        if found:
            print(f"\n## {label}\n")
            print("\n".join(found[:args.max_spans]))
            if len(found) > args.max_spans:
                print(f"  ... and {len(found) - args.max_spans} more")
    print(f"\n# Ordinary numbers shaped like identifiers, {args.look_alikes} of each drawn at random "
          "(none is one: each redaction is a false one)\n")
    print("| shape | taken | by pattern |")
    print("|---|---|---|")
    for name, sentences in look_alikes(args.look_alikes):
        kinds = Counter(kind for text in sentences for kind, _, _ in spans(text))
        by = ", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "-"
        print(f"| {name} | {sum(kinds.values())} | {by} |")
    print("\n# Hand-written phrases (tests/secret_phrases.py)\n")
    print("\n".join(phrases()))


if __name__ == "__main__":
    main()
