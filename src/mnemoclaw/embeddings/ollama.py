"""A local Ollama server (``POST /api/embed``, default ``nomic-embed-text``); no key.

The server address comes from ``remote.baseUrl``, else ``OLLAMA_HOST``, else
``http://127.0.0.1:11434``. nomic-embed models are trained with task prefixes, which
are added here.
"""

from __future__ import annotations

import os
from typing import Any

from .remote import EmbeddingDataError, RemoteProvider


class OllamaEmbeddings(RemoteProvider):
    id = "ollama"
    label = "Ollama embeddings"
    default_model = "nomic-embed-text"
    default_base_url = "http://127.0.0.1:11434"
    needs_key = False
    max_batch_items = 128
    max_input_tokens = 2048

    def _env_base_url(self) -> str | None:
        host = os.environ.get("OLLAMA_HOST")
        if not host:
            return None
        return host if host.startswith(("http://", "https://")) else f"http://{host}"

    def _request(self, texts: list[str], query: bool) -> tuple[list[Any], str | None]:
        if self.model.startswith("nomic-embed"):
            prefix = "search_query: " if query else "search_document: "
            texts = [prefix + t for t in texts]
        body = self.client.post_json("api/embed", {"model": self.model, "input": texts})
        if not isinstance(body, dict) or not isinstance(body.get("embeddings"), list):
            raise EmbeddingDataError(f"{self.label} answered without an \"embeddings\" list")
        return body["embeddings"], body.get("model")


def create(settings: dict[str, Any]) -> OllamaEmbeddings:
    return OllamaEmbeddings(settings)
