"""The agent tools: their specs and bounds (``specs.py``), their answers on the wire
(``wire.py``), what a handler needs of memory and who calls (``services.py``), the handlers
(``handlers.py``), one dispatch table (``dispatch.py``: ``call`` and ``Tools``) and what comes
before the reply unasked (``recall.py``). This face hands on the specs, which every edge reads.
"""

from .specs import (
    ALL_CORPORA_RESULTS,
    ANNOTATION_PARAMS,
    APPEND,
    CORPORA,
    FLUSH_APPEND,
    FORGET,
    GET,
    INSTRUCTIONS,
    MAX_QUERY_CHARS,
    MAX_RESULTS,
    READ_ONLY_NOTE,
    SEARCH,
    SESSIONS,
    SNIPPET_MAX_CHARS,
    STATUS,
    TOOLS,
    Param,
    ToolArgumentError,
    ToolSpec,
    tools_for,
)

__all__ = ["ALL_CORPORA_RESULTS", "ANNOTATION_PARAMS", "APPEND", "CORPORA", "FLUSH_APPEND", "FORGET", "GET",
           "INSTRUCTIONS", "MAX_QUERY_CHARS", "MAX_RESULTS", "Param", "READ_ONLY_NOTE", "SEARCH", "SESSIONS",
           "SNIPPET_MAX_CHARS", "STATUS", "TOOLS", "ToolArgumentError", "ToolSpec", "tools_for"]
