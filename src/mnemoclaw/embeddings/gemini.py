"""Google Gemini embeddings (``models/{model}:batchEmbedContents``, default
``gemini-embedding-001``), with the retrieval task types: ``RETRIEVAL_DOCUMENT`` for
notes, ``RETRIEVAL_QUERY`` for searches. Large backfills can use the asynchronous
``:asyncBatchEmbedContent`` job instead."""

from __future__ import annotations

import logging
import time
from typing import Any

from ..errors import ProviderError
from .remote import EmbeddingDataError, RemoteProvider

log = logging.getLogger(__name__)

FAILED_STATES = {"BATCH_STATE_FAILED", "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED",
                 "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}
DONE_STATES = {"BATCH_STATE_SUCCEEDED", "JOB_STATE_SUCCEEDED"}


class GeminiEmbeddings(RemoteProvider):
    id = "gemini"
    label = "Gemini embeddings"
    default_model = "gemini-embedding-001"
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"
    key_env = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    max_batch_items = 100
    max_input_tokens = 2048
    supports_batch_api = True

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"x-goog-api-key": key}

    @property
    def _model_path(self) -> str:
        return self.model if self.model.startswith("models/") else f"models/{self.model}"

    def _one(self, text: str, query: bool) -> dict[str, Any]:
        return {"model": self._model_path, "content": {"parts": [{"text": text}]},
                "taskType": "RETRIEVAL_QUERY" if query else "RETRIEVAL_DOCUMENT"}

    def _request(self, texts: list[str], query: bool) -> tuple[list[Any], str | None]:
        body = self.client.post_json(f"{self._model_path}:batchEmbedContents",
                                     {"requests": [self._one(t, query) for t in texts]})
        embs = body.get("embeddings") if isinstance(body, dict) else None
        if not isinstance(embs, list):
            raise EmbeddingDataError(f"{self.label} answered without an \"embeddings\" list")
        try:
            return [e["values"] for e in embs], None
        except (TypeError, KeyError):
            raise EmbeddingDataError(f"{self.label} answered with embeddings that have no \"values\"") from None

    def _batch_job(self, texts: list[str]) -> list[Any]:
        requests = [{"request": self._one(t, False), "metadata": {"key": f"k{i}"}} for i, t in enumerate(texts)]
        op = self.client.post_json(f"{self._model_path}:asyncBatchEmbedContent", {
            "batch": {"displayName": "mnemoclaw-embeddings", "inputConfig": {"requests": {"requests": requests}}},
        })
        name = op.get("name") if isinstance(op, dict) else None
        if not name:
            raise ProviderError(f"{self.label} batch: creating the job returned no name")
        deadline = time.monotonic() + self.batch.timeout_s
        while True:
            state = _state(op)
            if state in FAILED_STATES or op.get("error"):
                raise ProviderError(f"{self.label} batch {name} ended as {state}: "
                                    f"{self.client.scrub(str(op.get('error') or 'no details'))}")
            if state in DONE_STATES or (op.get("done") and state not in FAILED_STATES):
                break
            if time.monotonic() > deadline:
                raise ProviderError(f"{self.label} batch {name} did not finish within "
                                    f"{self.batch.timeout_s / 60:g} minutes (remote.batch.timeoutMinutes)")
            time.sleep(self.batch.poll_interval_s)
            op = self.client.get_json(name)
        by_key: dict[str, Any] = {}
        for item in _inlined(op):
            key = (item.get("metadata") or {}).get("key")
            if item.get("error"):
                why = self.client.scrub(str(item["error"]))
                raise ProviderError(f"{self.label} batch {name}: request {key} failed: {why}")
            try:
                by_key[str(key)] = item["response"]["embedding"]["values"]
            except (TypeError, KeyError):
                raise EmbeddingDataError(f"{self.label} batch {name}: a response has no embedding values") from None
        missing = [i for i in range(len(texts)) if f"k{i}" not in by_key]
        if missing:
            raise EmbeddingDataError(f"{self.label} batch {name}: {len(missing)} of {len(texts)} results missing")
        return [by_key[f"k{i}"] for i in range(len(texts))]


def _state(op: dict[str, Any]) -> str:
    meta = op.get("metadata") or {}
    return str(meta.get("state") or op.get("state") or "")


def _inlined(op: dict[str, Any]) -> list[dict[str, Any]]:
    for holder in (op.get("metadata") or {}, op.get("response") or {}, op):
        out = holder.get("output") or holder.get("dest") or {}
        for key in ("inlinedResponses", "inlinedEmbedContentResponses"):
            box = out.get(key)
            if isinstance(box, dict) and isinstance(box.get("inlinedResponses"), list):
                return box["inlinedResponses"]
            if isinstance(box, list):
                return box
    raise EmbeddingDataError("Gemini embeddings batch finished without inlined responses")


def create(settings: dict[str, Any]) -> GeminiEmbeddings:
    return GeminiEmbeddings(settings)
