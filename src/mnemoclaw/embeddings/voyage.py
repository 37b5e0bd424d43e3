"""Voyage AI embeddings (``POST /v1/embeddings`` with ``input_type`` document or query)."""

from __future__ import annotations

from typing import Any

from .batch import run_openai_style
from .remote import RemoteProvider, vectors_from_data


class VoyageEmbeddings(RemoteProvider):
    id = "voyage"
    label = "Voyage embeddings"
    default_model = "voyage-4-large"
    default_base_url = "https://api.voyageai.com/v1"
    key_env = ("VOYAGE_API_KEY",)
    max_batch_items = 1000
    max_batch_tokens = 120_000
    max_input_tokens = 32_000
    supports_batch_api = True

    def _request(self, texts: list[str], query: bool) -> tuple[list[Any], str | None]:
        body = self.client.post_json("embeddings", {"model": self.model, "input": texts,
                                                    "input_type": "query" if query else "document"})
        return vectors_from_data(body, self.label), body.get("model") if isinstance(body, dict) else None

    def _batch_job(self, texts: list[str]) -> list[Any]:
        # model and input type are batch-level parameters; each line carries only its input
        return run_openai_style(
            self.client, texts, label=self.label, settings=self.batch,
            line=lambda cid, group: {"custom_id": cid, "body": {"input": group}},
            create=lambda file_id: {"input_file_id": file_id, "endpoint": "/v1/embeddings",
                                    "completion_window": "12h",
                                    "request_params": {"model": self.model, "input_type": "document"}},
            inputs_per_line=self.max_batch_items, inputs_per_job=100_000,
        )


def create(settings: dict[str, Any]) -> VoyageEmbeddings:
    return VoyageEmbeddings(settings)
