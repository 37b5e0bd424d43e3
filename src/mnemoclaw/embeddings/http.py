"""JSON over HTTP for the remote providers: timeouts, retries, errors a user can act on.

Standard library only. A request is retried on 429, on 5xx, on a dropped connection or
a timeout, and on error texts that mean "slow down" ("rate limit", "too many requests",
"tokens per day"); never on 400, 401 or 403, which no retry can fix. Three attempts,
500 ms doubling, up to 20 % jitter, at most 8 s between attempts (``Retry-After``
is honoured within that cap).
"""

from __future__ import annotations

import json
import logging
import random
import re
import socket
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import (  # noqa: F401 - the provider errors are part of this module's interface
    ProviderAuthError,
    ProviderError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderUnavailableError,
)
from ..text import parse
from ..text.secrets import redact

log = logging.getLogger(__name__)

_BAD_KEY = re.compile(r"api.?key not valid|api_key_invalid|invalid.?api.?key|incorrect api key", re.I)
_SLOW_DOWN = re.compile(r"rate.?limit|too many requests|tokens per day|quota exceeded|overloaded", re.I)
NEVER_RETRY = (400, 401, 403)
SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|password", re.I)


@dataclass
class RetryPolicy:
    attempts: int = 3
    base_s: float = 0.5
    factor: float = 2.0
    jitter: float = 0.2
    cap_s: float = 8.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        d = self.base_s * self.factor ** (attempt - 1)
        d *= 1 + random.uniform(-self.jitter, self.jitter)
        if retry_after is not None:
            d = max(d, retry_after)
        return min(d, self.cap_s)


def public_headers(headers: dict[str, str]) -> dict[str, str]:
    """The headers that may identify a vector space (no credentials)."""
    return {k.lower(): v for k, v in headers.items() if not SECRET_HEADER.search(k)}


UNAVAILABLE_ADVICE = "The index was left as it was; try again later or set memorySearch.fallback"


class HttpClient:
    def __init__(self, base_url: str, headers: dict[str, str], *, what: str, key_hint: str = "",
                 timeout_s: float = 60.0, retry: RetryPolicy | None = None, advice: str = UNAVAILABLE_ADVICE):
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers)
        self.what = what  # "OpenAI embeddings" - names the service in every error
        self.key_hint = key_hint  # how to set the key, for 401 messages
        self.advice = advice  # what to do when the service keeps failing
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        # credentials this client sends: a server that echoes them back (in an error body,
        # say) must not get them into a message, a warning or a log
        secrets = set()
        for name, value in self.headers.items():
            if SECRET_HEADER.search(name) and value:
                secrets.add(value)
                scheme, _, credential = value.partition(" ")
                if credential.strip() and scheme.isalpha():
                    secrets.add(credential.strip())
        self._secrets = sorted((v for v in secrets if len(v) >= 4), key=len, reverse=True)

    def scrub(self, text: str) -> str:
        """``text`` with this client's credentials and anything that looks like a secret replaced."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return redact(text)

    def url(self, path: str) -> str:
        if path.startswith(("http://", "https://")):
            return path
        return f"{self.base_url}/{path.lstrip('/')}"

    # -- verbs ------------------------------------------------------------------
    def post_json(self, path: str, body: Any) -> Any:
        data = json.dumps(body).encode()
        return self._json(self.request("POST", path, data, {"Content-Type": "application/json"}), path)

    def get_json(self, path: str) -> Any:
        return self._json(self.request("GET", path), path)

    def get_bytes(self, path: str) -> bytes:
        return self.request("GET", path)

    def post_file(self, path: str, fields: dict[str, str], filename: str, content: bytes,
                  content_type: str = "application/jsonl") -> Any:
        boundary = uuid.uuid4().hex
        parts = []
        for k, v in fields.items():
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode())
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
            f"Content-Type: {content_type}\r\n\r\n".encode() + content + b"\r\n"
        )
        parts.append(f"--{boundary}--\r\n".encode())
        body = b"".join(parts)
        kind = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        return self._json(self.request("POST", path, body, kind), path)

    # -- the loop ----------------------------------------------------------------
    def request(self, method: str, path: str, data: bytes | None = None, extra: dict[str, str] | None = None) -> bytes:
        url = self.url(path)
        last = ""
        for attempt in range(1, self.retry.attempts + 1):
            req = urllib.request.Request(url, data=data, method=method, headers={**self.headers, **(extra or {})})
            retry_after = None
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    return resp.read()
            except urllib.error.HTTPError as exc:
                body = _read_quietly(exc)
                message = self.scrub(_error_message(body) or str(exc.reason or ""))
                status = exc.code
                if status in (401, 403) or (status == 400 and _BAD_KEY.search(body.decode("utf-8", "replace"))):
                    raise ProviderAuthError(
                        f"{self.what} rejected the API key (HTTP {status}: {message}). Check your key"
                        + (f": {self.key_hint}" if self.key_hint else "")
                    ) from None
                retryable = status == 429 or status >= 500 or (status not in NEVER_RETRY and _SLOW_DOWN.search(message))
                if not retryable:
                    raise ProviderRequestError(
                        f"{self.what} refused the request (HTTP {status} at {url}): {message}") from None
                last = f"HTTP {status}: {message}" if message else f"HTTP {status}"
                retry_after = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
            except TimeoutError:
                last = f"no answer within {self.timeout_s:g}s"
            except urllib.error.URLError as exc:
                reason = exc.reason
                if isinstance(reason, (TimeoutError, socket.timeout)):
                    last = f"no answer within {self.timeout_s:g}s"
                else:
                    last = f"cannot connect to {url} ({reason})"
            except (ConnectionError, OSError) as exc:  # reset mid-response, ...
                last = f"connection failed ({exc})"
            last = self.scrub(last)
            if attempt < self.retry.attempts:
                wait = self.retry.delay(attempt, retry_after)
                log.info("%s: %s; retrying in %.1fs (attempt %d of %d)", self.what, last, wait, attempt + 1,
                         self.retry.attempts)
                self.retry.sleep(wait)
        raise ProviderUnavailableError(
            f"{self.what} failed {self.retry.attempts} times, giving up: {last}. {self.advice}"
        )

    def _json(self, raw: bytes, path: str) -> Any:
        try:
            return parse.loads(raw)
        except ValueError:
            snippet = self.scrub(raw[:120].decode("utf-8", "replace"))
            raise ProviderResponseError(
                f"{self.what} answered {self.url(path)} with something that is not JSON: {snippet!r}"
            ) from None


def _read_quietly(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read()
    except Exception:
        return b""


def _error_message(body: bytes) -> str:
    """The human part of an error body, in any of the usual shapes."""
    if not body:
        return ""
    try:
        data = parse.loads(body)
    except ValueError:
        return body[:300].decode("utf-8", "replace").strip()
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            for key in ("message", "detail", "error"):
                if isinstance(err.get(key), str):
                    return err[key]
        if isinstance(err, str):
            return err
        for key in ("detail", "message"):
            if isinstance(data.get(key), str):
                return data[key]
    return json.dumps(data)[:300]


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
