"""OpenAI embeddings (``POST /v1/embeddings``), and any OpenAI-compatible server
(vLLM, OpenRouter, LiteLLM, a proxy) through ``remote.baseUrl``."""

from __future__ import annotations

from typing import Any

from .batch import run_openai_style
from .remote import RemoteProvider, vectors_from_data


class OpenAIEmbeddings(RemoteProvider):
    id = "openai"
    label = "OpenAI embeddings"
    default_model = "text-embedding-3-small"
    default_base_url = "https://api.openai.com/v1"
    key_env = ("OPENAI_API_KEY",)
    max_batch_items = 2048
    max_batch_tokens = 300_000
    max_input_tokens = 8192
    supports_batch_api = True

    def _request(self, texts: list[str], query: bool) -> tuple[list[Any], str | None]:
        body = self.client.post_json("embeddings", {"model": self.model, "input": texts, "encoding_format": "float"})
        return vectors_from_data(body, self.label), body.get("model") if isinstance(body, dict) else None

    def _batch_job(self, texts: list[str]) -> list[Any]:
        return run_openai_style(
            self.client, texts, label=self.label, settings=self.batch,
            line=lambda cid, group: {"custom_id": cid, "method": "POST", "url": "/v1/embeddings",
                                     "body": {"model": self.model, "input": group, "encoding_format": "float"}},
            create=lambda file_id: {"input_file_id": file_id, "endpoint": "/v1/embeddings",
                                    "completion_window": "24h"},
            inputs_per_line=self.max_batch_items, inputs_per_job=50_000,
        )


def create(settings: dict[str, Any]) -> OpenAIEmbeddings:
    return OpenAIEmbeddings(settings)
