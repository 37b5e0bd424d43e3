"""mnemoclaw: long-term memory for AI agents.

Markdown files in the agent's workspace are the source of truth; the index is a
derived, rebuildable cache over them.
"""

from .errors import MnemoclawError

__version__ = "0.1.0"

__all__ = ["Memory", "MnemoclawError", "__version__"]


def __getattr__(name: str):
    # Lazy so `import mnemoclaw` stays cheap for the CLI's start-up time.
    if name == "Memory":
        from .api import Memory

        return Memory
    raise AttributeError(name)
