"""A Traditional Chinese copy of a benchmark set, converted with OpenCC (Simplified -> Traditional).

    python benchmarks/zh_hant.py [--bench ../shared/bench] [--set cmrc2018/dev-paragraph]
                                 [--out bench-results/zh-hant]

Titles, texts and questions go through OpenCC's ``s2t`` table; ids and qrels are kept, so
the converted set measures the same questions in the other script. The copy is written
under bench-results only (OpenCC comes with mnemoclaw).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality import default_bench  # noqa: E402


def convert(source: str, dest: str, table: str = "s2t",
            parts: tuple[str, ...] = ("corpus.jsonl", "queries.jsonl")) -> str:
    """Write the Traditional copy of the BEIR folder ``source`` to ``dest`` (once) and return it:
    the files of ``parts`` through OpenCC's ``table`` (``s2twp``: Taiwan's script and words), the
    others copied as they are."""
    if os.path.isfile(os.path.join(dest, "qrels.tsv")):
        return dest
    try:
        from opencc import OpenCC
    except ImportError:
        sys.exit("the zh-Hant set needs OpenCC: pip install opencc")
    cc = OpenCC(table)
    tmp = dest + ".tmp"
    os.makedirs(tmp, exist_ok=True)
    for name in ("corpus.jsonl", "queries.jsonl"):
        with open(os.path.join(source, name), encoding="utf-8") as src, \
                open(os.path.join(tmp, name), "w", encoding="utf-8") as out:
            for line in src:
                row = json.loads(line)
                for key in ("title", "text") if name in parts else ():
                    if row.get(key):
                        row[key] = cc.convert(row[key])
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    shutil.copy(os.path.join(source, "qrels.tsv"), os.path.join(tmp, "qrels.tsv"))
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.replace(tmp, dest)
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=None)
    ap.add_argument("--set", default="cmrc2018/dev-paragraph")
    ap.add_argument("--out", default="bench-results/zh-hant")
    args = ap.parse_args()
    bench = args.bench or default_bench()
    dest = convert(os.path.join(bench, args.set), os.path.join(os.path.abspath(args.out), args.set.replace("/", "-")))
    print(dest)


if __name__ == "__main__":
    main()
