"""An OpenAI-compatible chat-completions client with tool calls (OpenAI, Ollama, vLLM,
llama.cpp server, DeepSeek, Qwen, ...), on the same HTTP layer as the embedding
providers: timeouts, retries on 429/5xx, clear errors. A request the model rejects
because it does not fit the context window raises ``ContextOverflowError``, which the
runtime answers with flush, compaction and a retry."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..embeddings.http import HttpClient, ProviderRequestError, RetryPolicy
from ..errors import MnemoclawError
from ..sessions.transcript import message_text

_OVERFLOW = re.compile(
    r"context.?length|maximum context|context window|too many tokens|prompt is too long|"
    r"exceeds? the (?:model's )?(?:maximum|context)|reduce the length|input is too long", re.I)


CHAT_ADVICE = ("Check that a chat model serves there: llm.baseUrl and llm.model in the config (or "
               "MNEMOCLAW_LLM_BASE_URL / MNEMOCLAW_LLM_MODEL), any OpenAI-compatible endpoint such as Ollama's "
               "http://127.0.0.1:11434/v1")


class LLMError(MnemoclawError):
    """The chat model could not be reached or answered with something unusable."""


class ContextOverflowError(LLMError):
    """The request did not fit the model's context window."""


@dataclass
class ChatResult:
    message: dict[str, Any]  # {"role": "assistant", "content": ..., "tool_calls": [...]}
    finish_reason: str | None
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return list(self.message.get("tool_calls") or [])

    @property
    def text(self) -> str:
        return message_text(self.message.get("content"))


class ChatClient:
    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, headers: dict[str, str] | None = None,
                 timeout_s: float = 120.0, retry: RetryPolicy | None = None):
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.http = HttpClient(self.base_url, {**auth, **(headers or {})}, what=f"the chat model at {self.base_url}",
                               key_hint="set llm.apiKey (or MNEMOCLAW_LLM_API_KEY)", timeout_s=timeout_s, retry=retry,
                               advice=CHAT_ADVICE)

    @classmethod
    def from_settings(cls, rs: Any) -> ChatClient:
        """The chat model the runtime settings (``llm.*``) name."""
        return cls(rs.llm_base_url, rs.llm_model, api_key=rs.llm_api_key, headers=rs.llm_headers,
                   timeout_s=rs.llm_timeout_s)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 **params: Any) -> ChatResult:
        body: dict[str, Any] = {"model": self.model, "messages": messages, **params}
        if tools:
            body["tools"] = tools
        try:
            data = self.http.post_json("chat/completions", body)
        except ProviderRequestError as exc:
            if _OVERFLOW.search(str(exc)):
                raise ContextOverflowError(str(exc)) from None
            raise LLMError(str(exc)) from None
        except MnemoclawError as exc:
            raise LLMError(str(exc)) from None
        try:
            choice = data["choices"][0]
            message = dict(choice["message"])
        except (KeyError, IndexError, TypeError):
            raise LLMError(f"the chat model answered without choices[0].message: "
                           f"{self.http.scrub(str(data)[:200])}") from None
        message.setdefault("role", "assistant")
        if choice.get("finish_reason") == "length" and not message.get("content") and not message.get("tool_calls"):
            raise ContextOverflowError("the model stopped at its length limit before answering")
        return ChatResult(message, choice.get("finish_reason"), dict(data.get("usage") or {}))
