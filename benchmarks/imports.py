"""Importing a real-size ChatGPT export: how long reading and writing take, and indexing after.

    python benchmarks/imports.py [--conversations 2000] [--scale 3] [--provider auto|none]
                                 [--work-dir bench-results/work/imports] [--out bench-results/imports.json]

Generates conversations.json in ChatGPT's published shape (tests/exports.py: message trees with
a hidden system root, 3-9 turns, a regenerated answer off the kept branch; ``--scale 3`` gives
answers of about a thousand characters), then runs the real import (preview, write) and a sync
with the configured embedder, timing each; a second import must add nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from mnemoclaw.api import Memory  # noqa: E402
from mnemoclaw.config import load_settings  # noqa: E402

from exports import chatgpt_export  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=2000)
    ap.add_argument("--scale", type=int, default=3)
    ap.add_argument("--provider", default="auto")
    ap.add_argument("--work-dir", default="bench-results/work/imports")
    ap.add_argument("--out", default="bench-results/imports.json")
    args = ap.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    ws = os.path.join(args.work_dir, "workspace")
    os.makedirs(os.path.join(ws, "memory"))
    export = os.path.join(args.work_dir, "conversations.json")
    with open(export, "w", encoding="utf-8") as fh:
        json.dump(chatgpt_export(args.conversations, scale=args.scale), fh)
    settings = load_settings(workspace=ws, state_dir=os.path.join(args.work_dir, "state"), config={},
                             overrides={"provider": args.provider}, env={})
    with Memory(settings) as mem:
        t = time.monotonic()
        planned, preview = mem.notes.import_preview("chatgpt", export)
        t_preview = time.monotonic() - t
        t = time.monotonic()
        report = mem.notes.import_files(planned, preview)
        t_write = time.monotonic() - t
        t = time.monotonic()
        index = mem.sync()
        t_index = time.monotonic() - t
        t = time.monotonic()
        again = mem.notes.import_files(*mem.notes.import_preview("chatgpt", export))
        t_again = time.monotonic() - t
    result = {"conversations": args.conversations, "exportMB": round(os.path.getsize(export) / 2**20, 1),
              "files": len(report.added), "markdownMB": round(sum(len(p.text.encode()) for p in planned) / 2**20, 1),
              "previewSeconds": round(t_preview, 1), "writeSeconds": round(t_write, 1),
              "importSeconds": round(t_preview + t_write, 1), "chunks": index.chunks_total,
              "indexSeconds": round(t_index, 1), "provider": mem.provider.id if mem.provider else "none",
              "secondImportAdded": len(again.added) + len(again.updated), "secondImportSeconds": round(t_again, 1)}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
