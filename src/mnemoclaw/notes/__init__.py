"""The Markdown side of an agent's memory: the files are the truth, and every write to them is
made here — appends, edits, forgetting, clean-up, imports, the session files, scaffolding — by
the one writer (``write.py``) inside the one sandbox (``paths.py``), with one git helper.

``Notes`` is the handle ``Memory.notes`` gives: it changes the files, then tells the index what
changed through ``Index`` (a small interface ``Memory`` implements), never through ``Memory``
itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["CleanupPlan", "ForgetPlan", "Forgotten", "Index", "Notes"]

if TYPE_CHECKING:
    from .handle import CleanupPlan, ForgetPlan, Forgotten, Index, Notes


def __getattr__(name: str) -> Any:
    """The handle's names, imported when first asked for: what the index layer reads of this
    package (``tombstones``, ``discovery``) must not pull in the handle, which reads the config."""
    if name in __all__:
        from . import handle

        return getattr(handle, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
