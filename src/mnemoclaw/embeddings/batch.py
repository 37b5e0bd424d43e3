"""Asynchronous batch jobs in the OpenAI shape (OpenAI, Voyage): upload a JSONL file of
requests, create a batch, poll it, download the output file, match lines by ``custom_id``.

Used for large backfills, where a batch costs less and is not held to the per-minute
rate limits. Any failure raises ``ProviderError``; the provider then embeds inline.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..errors import ProviderError
from ..text import parse
from .http import HttpClient
from .remote import BatchSettings, EmbeddingDataError, vectors_from_data

log = logging.getLogger(__name__)

TERMINAL_FAILED = {"failed", "expired", "cancelled", "cancelling"}


def run_openai_style(
    client: HttpClient,
    texts: list[str],
    *,
    label: str,
    settings: BatchSettings,
    line: Callable[[str, list[str]], dict[str, Any]],
    create: Callable[[str], dict[str, Any]],
    inputs_per_line: int,
    inputs_per_job: int,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Any]:
    jobs = [texts[i : i + inputs_per_job] for i in range(0, len(texts), inputs_per_job)]

    def one(job: list[str]) -> list[Any]:
        return _job(client, job, label, settings, line, create, inputs_per_line, sleep)

    if len(jobs) == 1:
        return one(jobs[0])
    with ThreadPoolExecutor(max_workers=min(settings.concurrency, len(jobs))) as pool:
        parts = list(pool.map(one, jobs))
    return [v for part in parts for v in part]


def _job(client, texts, label, settings, line, create, per_line, sleep) -> list[Any]:
    groups = [texts[i : i + per_line] for i in range(0, len(texts), per_line)]
    body = "".join(json.dumps(line(f"r{i}", g)) + "\n" for i, g in enumerate(groups)).encode()
    uploaded = client.post_file("files", {"purpose": "batch"}, "mnemoclaw-embeddings.jsonl", body)
    file_id = uploaded.get("id") if isinstance(uploaded, dict) else None
    if not file_id:
        raise ProviderError(f"{label} batch: the file upload returned no id")
    batch = client.post_json("batches", create(file_id))
    batch_id = batch.get("id") if isinstance(batch, dict) else None
    if not batch_id:
        raise ProviderError(f"{label} batch: creating the batch returned no id")
    log.info("%s batch %s: %d texts in %d requests", label, batch_id, len(texts), len(groups))
    deadline = time.monotonic() + settings.timeout_s
    status = batch.get("status")
    while status != "completed":
        if status in TERMINAL_FAILED:
            raise ProviderError(f"{label} batch {batch_id} ended as {status}: {client.scrub(_batch_errors(batch))}")
        if time.monotonic() > deadline:
            _cancel(client, batch_id)
            raise ProviderError(f"{label} batch {batch_id} did not finish within "
                                f"{settings.timeout_s / 60:g} minutes (remote.batch.timeoutMinutes)")
        sleep(settings.poll_interval_s)
        batch = client.get_json(f"batches/{batch_id}")
        status = batch.get("status") if isinstance(batch, dict) else None
    out_id = batch.get("output_file_id")
    if not out_id:
        raise ProviderError(f"{label} batch {batch_id} completed without an output file: "
                            f"{client.scrub(_batch_errors(batch))}")
    raw = client.get_bytes(f"files/{out_id}/content")
    by_id: dict[str, list[Any]] = {}
    for text_line in raw.decode("utf-8", "replace").splitlines():
        if not text_line.strip():
            continue
        try:
            item = parse.loads(text_line)
        except ValueError:
            raise EmbeddingDataError(f"{label} batch {batch_id}: an output line is not JSON") from None
        resp = item.get("response") or {}
        if item.get("error") or resp.get("status_code", 200) != 200:
            raise ProviderError(f"{label} batch {batch_id}: request {item.get('custom_id')} failed: "
                                f"{client.scrub(str(item.get('error') or resp.get('body')))}")
        by_id[str(item.get("custom_id"))] = vectors_from_data(resp.get("body"), label)
    vectors: list[Any] = []
    for i, g in enumerate(groups):
        got = by_id.get(f"r{i}")
        if got is None or len(got) != len(g):
            raise EmbeddingDataError(f"{label} batch {batch_id}: output for request r{i} is missing or short")
        vectors.extend(got)
    return vectors


def _batch_errors(batch: Any) -> str:
    errs = batch.get("errors") if isinstance(batch, dict) else None
    if isinstance(errs, dict) and isinstance(errs.get("data"), list) and errs["data"]:
        return "; ".join(str(e.get("message", e)) for e in errs["data"][:3])
    return str(errs or "no details")


def _cancel(client: HttpClient, batch_id: str) -> None:
    try:
        client.post_json(f"batches/{batch_id}/cancel", {})
    except ProviderError as exc:
        log.info("could not cancel batch %s: %s", batch_id, exc)
