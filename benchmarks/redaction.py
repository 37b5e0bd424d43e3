"""What the secret redactor would take out of ordinary text: every text of the shared benchmark
corpora (none of which holds a secret), per corpus and per pattern, each span printed with its
surroundings so a person can judge it; and the hand-written phrases (tests/secret_phrases.py),
the tuning half and the held-out half scored apart.

    python benchmarks/redaction.py [--bench DIR] [--also DIR ...] [--context 40] [--max-spans 200]

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
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from mnemoclaw.text import secrets as redactor  # noqa: E402

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
    args = ap.parse_args()
    bench = bench_dir(args.bench)
    total: Counter[str] = Counter()
    rows = []
    sets = [(label, folder, texts(bench / folder)) for label, folder in CORPORA]
    sets += [(f"also {i}", d, files_under(Path(d))) for i, d in enumerate(args.also, 1)]
    for label, folder, each in sets:
        took = 0.0
        n_texts = n_chars = n_names = 0
        kinds: Counter[str] = Counter()
        found = []
        for text in each:
            n_texts += 1
            n_chars += len(text)
            n_names += len(NAMES.findall(text))
            started = time.perf_counter()
            found_here = spans(text)
            took += time.perf_counter() - started
            for kind, start, end in found_here:
                kinds[kind] += 1
                found.append(f"  [{kind}] {shown(text, start, end, args.context)}")
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
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})")
    print(f"total: {sum(total.values())} redaction(s)"
          + (" (" + ", ".join(f"{k} {n}" for k, n in total.most_common()) + ")" if total else ""))
    for label, *_, found, _ in rows:
        if found:
            print(f"\n## {label}\n")
            print("\n".join(found[:args.max_spans]))
            if len(found) > args.max_spans:
                print(f"  ... and {len(found) - args.max_spans} more")
    print("\n# Hand-written phrases (tests/secret_phrases.py)\n")
    print("\n".join(phrases()))


if __name__ == "__main__":
    main()
