"""Typed exceptions. The CLI and the tool wrappers turn these into one clear line."""


class MnemoclawError(Exception):
    """Base class for every error mnemoclaw raises on purpose."""


class ConfigError(MnemoclawError):
    """A configuration file or value is invalid."""


class WorkspaceError(MnemoclawError):
    """The workspace is missing, empty or unusable."""


class ReadOnlyError(MnemoclawError):
    """A write was asked of files mnemoclaw only reads (an OpenClaw agent, a read-only state dir)."""


class PathDeniedError(MnemoclawError):
    """A path is outside what the memory tools may read."""


class ProviderError(MnemoclawError):
    """An embedding provider is unknown, unavailable or failed."""


class ProviderAuthError(ProviderError):
    """The provider refused the credentials (401/403)."""


class ProviderRequestError(ProviderError):
    """The provider refused the request itself (400, 404, 413, ...): retrying will not help."""


class ProviderUnavailableError(ProviderError):
    """The provider kept failing (5xx, 429, timeouts, connection errors) through every retry."""


class ProviderResponseError(ProviderError):
    """The provider answered, but not with what its API promises (bad JSON, wrong shape)."""


class UnknownProviderError(ProviderError, ConfigError):
    """The configured embedding provider name is not registered."""


class StoreError(MnemoclawError):
    """The index database could not be opened or written."""


class IndexCorruptError(StoreError):
    """The index file is damaged; it can be rebuilt from the Markdown files."""


class DiskFullError(StoreError):
    """The disk filled up while writing the index; the message says what the index holds."""


class IndexGoneError(StoreError):
    """The index file was deleted or replaced while a sync wrote to it; a new one is open in its place."""


class LockTimeoutError(StoreError):
    """Another process holds the index's write lock for too long. ``holder`` names it ("process
    1234", "process 1234 on host b"), ``index`` the index it is writing."""

    def __init__(self, message: str, *, holder: str = "another process", index: str = ""):
        super().__init__(message)
        self.holder = holder
        self.index = index


class AddressError(MnemoclawError):
    """An address to serve on cannot be used: a port in use or out of range, a host not on this machine."""


class StoreUnavailableError(StoreError):
    """The index's server cannot be reached or went away (stopped, restarting, the network).
    Nothing committed is lost; ``report`` is what a sync it cut short had written (or None)."""

    report: object = None


class EvalDataError(MnemoclawError):
    """A benchmark directory does not have the expected BEIR layout."""


class EditConflictError(MnemoclawError):
    """A file changed on disk after it was opened for editing; ``current`` is what it holds now."""

    def __init__(self, message: str, current: str):
        super().__init__(message)
        self.current = current
