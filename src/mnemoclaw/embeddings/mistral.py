"""Mistral embeddings (``POST /v1/embeddings``, ``mistral-embed``)."""

from __future__ import annotations

from typing import Any

from .remote import RemoteProvider, vectors_from_data


class MistralEmbeddings(RemoteProvider):
    id = "mistral"
    label = "Mistral embeddings"
    default_model = "mistral-embed"
    default_base_url = "https://api.mistral.ai/v1"
    key_env = ("MISTRAL_API_KEY",)
    max_batch_items = 128
    max_batch_tokens = 16_000
    max_input_tokens = 8192

    def _request(self, texts: list[str], query: bool) -> tuple[list[Any], str | None]:
        body = self.client.post_json("embeddings", {"model": self.model, "input": texts})
        return vectors_from_data(body, self.label), body.get("model") if isinstance(body, dict) else None


def create(settings: dict[str, Any]) -> MistralEmbeddings:
    return MistralEmbeddings(settings)
