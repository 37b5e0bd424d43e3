"""The demo: a small English + Chinese workspace, indexed offline, searched four ways."""

from __future__ import annotations

import os
from pathlib import Path

SAMPLE_FILES: dict[str, str] = {
    "MEMORY.md": """# MEMORY.md

## Preferences
- Alex prefers PostgreSQL for new services; avoid MySQL unless a client requires it.
- Reports go out as PDF, never as Word files.

## Decisions
- 2026-10-02: the billing service moves to event sourcing; ADR-0042 records why.

## Rules
- Never email the customer list without Alex's explicit "go".
""",
    "memory/2026-11-24.md": """# 2026-11-24

- Incident INC-20931: checkout latency spiked to 4.2 s after deploy a3f9c2e; rolled back at 14:10.
- Root cause: an N+1 query in the coupon lookup. Follow-up ticket PAY-1187.
- Alex asked for a postmortem draft by Friday.
""",
    "memory/2026-11-26.md": """# 2026-11-26

- 和王芳开会讨论了新版数据看板，她希望下周三之前上线。
- 服务器迁移到杭州机房，旧服务器 12 月 15 日下线。
- 小李请假到周五，代码评审交给张伟。
""",
    "memory/2026-11-27.md": """# 2026-11-27

- Tried the new embedding model on the support tickets; recall went from 0.61 to 0.74.
- Renewed the TLS certificate for api.example.com; it expires on 2027-11-27.
""",
    "memory/2026-11-28.md": """# 2026-11-28

- 团队聚餐定在周六晚上，地点是海底捞，王芳负责订位。
- 用户偏好：周报用中文写，技术文档用英文写。
""",
    "memory/projects/garden.md": """# Garden project

- Tomatoes went onto the balcony in April; the basil does better in the shade.
- Water the tomatoes every morning in July and August.
""",
}

SAMPLE_QUERIES: list[tuple[str, str]] = [
    ("Chinese", "旧服务器什么时候下线"),
    ("English", "what caused the checkout slowdown"),
    ("cross-lingual (English query, Chinese note)", "where is the team dinner on Saturday"),
    ("exact identifier", "INC-20931"),
]


def write_sample_workspace(workspace: Path) -> list[str]:
    """Write the sample notes (never overwriting a file that exists); return what was written."""
    written = []
    for rel, text in SAMPLE_FILES.items():
        path = workspace / rel
        if path.exists():
            continue
        os.makedirs(path.parent, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(rel)
    return written
