"""Secrets in text: API keys, tokens and passwords in their common formats, replaced by ``[REDACTED]``.

Used wherever text leaves the user's hands for a file that is indexed and searched
(transcripts, memory notes the runtime writes) or for a message (errors quoting a
server's reply). Pure functions.
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

# Each pattern matches a whole secret (group 0) or, for "name = value" forms, keeps the
# name and replaces the value (group "value").
_SECRET_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)", re.S),
    re.compile(r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),  # OpenAI, Anthropic
    re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),  # Stripe
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}"),  # GitHub
    re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"),  # GitLab
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),  # Slack
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),  # Google
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bhf_[A-Za-z0-9]{30,}"),  # Hugging Face
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # JWT
    re.compile(r"(?i)\bbearer\s+(?P<value>[A-Za-z0-9_\-\.=:/+]{12,})"),
    re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<value>[^\s@/]+)@"),  # user:password@host
    re.compile(
        r"(?i)(?:\b|_)(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|access[_\-]?token|auth[_\-]?token|token|"
        r"passw(?:or)?d|pwd|client[_\-]?secret|private[_\-]?key|aws_secret_access_key)"
        r"[\"']?\s*(?:[:=]|\bis\b)\s*[\"']?(?P<value>[^\s\"',;]{6,})"
    ),
    re.compile(r"(?:密码|口令|密钥|令牌)\s*(?:[:：=是为]|\s)\s*(?P<value>[^\s，。,;；]{4,})"),
]


def redact(text: str) -> str:
    """Replace API keys, tokens and passwords in common formats with ``[REDACTED]``."""
    for pattern in _SECRET_PATTERNS:
        if "value" in pattern.groupindex:
            text = pattern.sub(_replace_value, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def _replace_value(m: re.Match[str]) -> str:
    start, end = m.span("value")
    s0 = m.start()
    whole = m.group(0)
    return whole[: start - s0] + REDACTED + whole[end - s0 :]


def redact_counted(text: str) -> tuple[str, int]:
    """``redact`` and how many secrets it replaced."""
    out = redact(text)
    return out, out.count(REDACTED) - text.count(REDACTED)
