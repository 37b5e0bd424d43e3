"""A real HTTP server on 127.0.0.1 that speaks the embedding APIs of OpenAI, Gemini,
Voyage, Mistral and Ollama (paths, auth headers, request and response JSON, error
bodies, and the OpenAI-style and Gemini batch job flows), with scripted failures.

    with ProviderServer("openai") as srv:
        srv.script = ["429", "ok"]      # the next embedding requests answer like this
        ... provider with remote.baseUrl = srv.base_url ...

Vectors are a deterministic function of the text, so tests can compare batch results
with inline ones.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

KEY = "test-key-123"
DIMS = 16


def fake_vector(text: str, dims: int = DIMS) -> list[float]:
    h = hashlib.sha256(text.encode()).digest()
    v = [(b - 127.5) / 127.5 for b in h[:dims]]
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]


def _error_body(flavor: str, status: int, message: str) -> dict[str, Any]:
    if flavor == "openai":
        kind = "invalid_request_error" if status < 500 else "server_error"
        code = "invalid_api_key" if status == 401 else ("rate_limit_exceeded" if status == 429 else None)
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}
    if flavor == "gemini":
        names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
        return {"error": {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}}
    if flavor == "voyage":
        return {"detail": message}
    if flavor == "mistral":
        return {"object": "error", "message": message, "type": "invalid_request_error", "param": None, "code": None}
    return {"error": message}  # ollama


class ProviderServer:
    def __init__(self, flavor: str, *, key: str = KEY, dims: int = DIMS):
        self.flavor = flavor
        self.key = key
        self.dims = dims
        self.script: list[str] = []  # actions for the next embedding requests; then "ok"
        self.batch_script: list[str] = []  # "complete" | "fail" for the next batch jobs; then "complete"
        self.batch_polls = 2  # polls that see the job still running
        self.delay = 0.0  # seconds every embedding request takes
        self.echo_headers = False  # error bodies quote the request headers back (some proxies do)
        self.hang_s = 2.0  # how long a "timeout" action sleeps
        self.log: list[dict[str, Any]] = []  # every request: method, path, headers, body
        self.in_flight = 0
        self.max_in_flight = 0
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        root = f"http://127.0.0.1:{self.port}"
        return {"gemini": f"{root}/v1beta", "ollama": root}.get(self.flavor, f"{root}/v1")

    def __enter__(self) -> ProviderServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def embedding_requests(self) -> list[dict[str, Any]]:
        marks = ("/embeddings", ":batchEmbedContents", "/api/embed")
        return [r for r in self.log if r["method"] == "POST" and r["path"].endswith(marks)]

    def _next(self, script: list[str], default: str) -> str:
        with self._lock:
            return script.pop(0) if script else default

    # -- the handler ------------------------------------------------------------------
    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: Any, raw: bytes | None = None, headers: dict[str, str] | None = None):
                data = raw if raw is not None else json.dumps(body).encode()
                self._answered()  # the client may send its next request as soon as this one is answered
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _error(self, status: int, message: str, headers: dict[str, str] | None = None):
                if server.echo_headers:
                    message += f" (request headers: {dict(self.headers.items())})"
                self._send(status, _error_body(server.flavor, status, message), headers=headers)

            def _authorized(self) -> bool:
                if server.flavor == "ollama":
                    return True
                if server.flavor == "gemini":
                    ok = self.headers.get("x-goog-api-key") == server.key
                else:
                    ok = self.headers.get("Authorization") == f"Bearer {server.key}"
                if not ok:
                    msg = {"openai": "Incorrect API key provided.", "gemini": "API key not valid. Please pass a valid API key.",
                           "voyage": "Provided API key is invalid.", "mistral": "Unauthorized"}[server.flavor]
                    if server.flavor == "gemini":  # Gemini answers a bad key with 400 INVALID_ARGUMENT
                        self._send(400, {"error": {"code": 400, "message": msg, "status": "INVALID_ARGUMENT",
                                                   "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                                                "reason": "API_KEY_INVALID",
                                                                "domain": "googleapis.com"}]}})
                    else:
                        self._error(401, msg)
                return ok

            def do_GET(self) -> None:
                self._dispatch("GET")

            def do_POST(self) -> None:
                self._dispatch("POST")

            def _dispatch(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                path = urlparse(self.path).path
                entry: dict[str, Any] = {"method": method, "path": path, "headers": {k.lower(): v for k, v in self.headers.items()}}
                if self.headers.get("Content-Type", "").startswith("application/json") and raw:
                    entry["body"] = json.loads(raw)
                with server._lock:
                    server.log.append(entry)
                if not self._authorized():
                    return
                try:
                    self._route(method, path, raw, entry.get("body"))
                except Exception as exc:  # a bug in the fake: make it visible
                    self._send(500, {"error": {"message": f"fake server bug: {exc!r}"}})

            # -- routes ------------------------------------------------------------
            def _route(self, method: str, path: str, raw: bytes, body: Any) -> None:
                f = server.flavor
                if method == "POST" and (
                    (f in ("openai", "voyage", "mistral") and path == "/v1/embeddings")
                    or (f == "gemini" and path.endswith(":batchEmbedContents"))
                    or (f == "ollama" and path == "/api/embed")
                ):
                    return self._embed(path, body)
                if f in ("openai", "voyage") and path.startswith(("/v1/files", "/v1/batches")):
                    return self._openai_batch(method, path, raw, body)
                if f == "gemini" and (path.endswith(":asyncBatchEmbedContent") or path.startswith("/v1beta/batches/")):
                    return self._gemini_batch(method, path, body)
                self._error(404, f"no route {method} {path}")

            def _texts(self, path: str, body: Any) -> tuple[list[str], str]:
                f = server.flavor
                if f == "gemini":
                    model = re.search(r"/models/([^/:]+):", path).group(1)
                    reqs = body["requests"]
                    for r in reqs:
                        assert r["model"] == f"models/{model}", r["model"]
                        assert r["taskType"] in ("RETRIEVAL_DOCUMENT", "RETRIEVAL_QUERY")
                    return [r["content"]["parts"][0]["text"] for r in reqs], model
                if f == "voyage":
                    assert body["input_type"] in ("document", "query")
                inputs = body["input"]
                return ([inputs] if isinstance(inputs, str) else list(inputs)), body["model"]

            def _answered(self) -> None:
                if getattr(self, "_counted", False):
                    self._counted = False
                    with server._lock:
                        server.in_flight -= 1

            def _embed(self, path: str, body: Any) -> None:
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                self._counted = True  # in flight from here until the answer starts (_send)
                try:
                    if server.delay:
                        time.sleep(server.delay)
                    action = server._next(server.script, "ok")
                    texts, model = self._texts(path, body)
                    if action == "429":
                        return self._error(429, "Rate limit reached for requests", {"Retry-After": "0"})
                    if action in ("500", "503"):
                        return self._error(int(action), "The server had an error while processing your request.")
                    if action == "400":
                        return self._error(400, "Invalid input: the input is too long.")
                    if action == "echo_raw":  # a proxy's plain-text error page quoting the request
                        page = f"502 Bad Gateway\n{self.headers}".encode()
                        return self._send(502, None, raw=page)
                    if action == "malformed":
                        return self._send(200, None, raw=b'{"data": [{"embedding": [0.1, 0.2,')
                    if action == "timeout":
                        time.sleep(server.hang_s)
                    vecs = [fake_vector(t, server.dims) for t in texts]
                    if action == "wrong_dims":
                        vecs = [v + [0.5] for v in vecs]
                    elif action == "nan":
                        vecs[0][0] = float("nan")
                    elif action == "empty":
                        vecs = []
                    elif action == "short":
                        vecs = vecs[:-1]
                    if action == "other_model":
                        model = "some-other-model"
                    self._send(200, None, raw=self._shape(vecs, model).encode())
                finally:
                    self._answered()

            def _shape(self, vecs: list[list[float]], model: str) -> str:
                f = server.flavor
                # json.dumps would refuse NaN by default in strict clients: write it the way servers do
                if f == "gemini":
                    return json.dumps({"embeddings": [{"values": v} for v in vecs]})
                if f == "ollama":
                    return json.dumps({"model": f"{model}:latest" if ":" not in model else model, "embeddings": vecs,
                                       "total_duration": 1000, "load_duration": 10, "prompt_eval_count": 3})
                data = [{"object": "embedding", "embedding": v, "index": i} for i, v in enumerate(vecs)]
                return json.dumps({"object": "list", "data": data, "model": model,
                                   "usage": {"prompt_tokens": 3, "total_tokens": 3}})

            # -- OpenAI-style files and batches (OpenAI, Voyage) ---------------------
            def _openai_batch(self, method: str, path: str, raw: bytes, body: Any) -> None:
                if method == "POST" and path == "/v1/files":
                    content = _multipart_file(raw, self.headers.get("Content-Type", ""))
                    assert b'name="purpose"' in raw and b"batch" in raw
                    fid = "file-" + uuid.uuid4().hex[:12]
                    server.files[fid] = content
                    return self._send(200, {"id": fid, "object": "file", "bytes": len(content),
                                            "filename": "input.jsonl", "purpose": "batch"})
                m = re.fullmatch(r"/v1/files/([^/]+)/content", path)
                if method == "GET" and m:
                    return self._send(200, None, raw=server.files[m.group(1)])
                if method == "POST" and path == "/v1/batches":
                    assert body["endpoint"] == "/v1/embeddings"
                    if server.flavor == "voyage":
                        assert body["request_params"]["model"]
                    bid = "batch_" + uuid.uuid4().hex[:12]
                    outcome = server._next(server.batch_script, "complete")
                    server.batches[bid] = {"id": bid, "object": "batch", "endpoint": "/v1/embeddings",
                                           "input_file_id": body["input_file_id"], "status": "validating",
                                           "_polls": 0, "_outcome": outcome, "_params": body.get("request_params")}
                    return self._send(200, self._public(server.batches[bid]))
                m = re.fullmatch(r"/v1/batches/([^/]+)(/cancel)?", path)
                if m and m.group(1) in server.batches:
                    b = server.batches[m.group(1)]
                    if m.group(2):
                        b["status"] = "cancelled"
                    elif method == "GET":
                        b["_polls"] += 1
                        if b["_polls"] > server.batch_polls and b["status"] not in ("completed", "failed"):
                            self._finish_openai(b)
                        elif b["status"] == "validating":
                            b["status"] = "in_progress"
                    return self._send(200, self._public(b))
                self._error(404, f"no route {method} {path}")

            def _public(self, b: dict[str, Any]) -> dict[str, Any]:
                return {k: v for k, v in b.items() if not k.startswith("_")}

            def _finish_openai(self, b: dict[str, Any]) -> None:
                if b["_outcome"] == "fail":
                    b["status"] = "failed"
                    b["errors"] = {"object": "list", "data": [{"code": "batch_failed", "message": "The batch failed.", "line": None}]}
                    return
                lines = []
                for line in server.files[b["input_file_id"]].decode().splitlines():
                    req = json.loads(line)
                    body = req["body"]
                    if server.flavor == "openai":
                        assert req["method"] == "POST" and req["url"] == "/v1/embeddings"
                        model = body["model"]
                    else:
                        model = b["_params"]["model"]
                    vecs = [fake_vector(t, server.dims) for t in body["input"]]
                    resp = json.loads(self._shape(vecs, model))
                    lines.append(json.dumps({"id": "req_" + uuid.uuid4().hex[:8], "custom_id": req["custom_id"],
                                             "response": {"status_code": 200, "request_id": "x", "body": resp},
                                             "error": None}))
                lines.reverse()  # output order is not input order
                out = "file-" + uuid.uuid4().hex[:12]
                server.files[out] = ("\n".join(lines) + "\n").encode()
                b["status"] = "completed"
                b["output_file_id"] = out

            # -- Gemini batch ------------------------------------------------------
            def _gemini_batch(self, method: str, path: str, body: Any) -> None:
                if method == "POST":
                    model = re.search(r"/models/([^/:]+):", path).group(1)
                    reqs = body["batch"]["inputConfig"]["requests"]["requests"]
                    bid = "batches/" + uuid.uuid4().hex[:12]
                    server.batches[bid] = {"reqs": reqs, "model": model, "polls": 0,
                                           "outcome": server._next(server.batch_script, "complete")}
                    return self._send(200, {"name": bid, "metadata": {"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.EmbedContentBatch",
                                                                       "state": "BATCH_STATE_PENDING", "name": bid}})
                bid = path.removeprefix("/v1beta/")
                b = server.batches.get(bid)
                if b is None:
                    return self._error(404, f"batch {bid} not found")
                b["polls"] += 1
                meta: dict[str, Any] = {"name": bid, "state": "BATCH_STATE_RUNNING"}
                out: dict[str, Any] = {"name": bid, "metadata": meta, "done": False}
                if b["polls"] > server.batch_polls:
                    out["done"] = True
                    if b["outcome"] == "fail":
                        meta["state"] = "BATCH_STATE_FAILED"
                        out["error"] = {"code": 13, "message": "internal error"}
                    else:
                        meta["state"] = "BATCH_STATE_SUCCEEDED"
                        responses = [{"response": {"embedding": {"values": fake_vector(r["request"]["content"]["parts"][0]["text"], server.dims)}},
                                      "metadata": r.get("metadata", {})} for r in b["reqs"]]
                        meta["output"] = {"inlinedResponses": {"inlinedResponses": responses}}
                self._send(200, out)

        return Handler


def _multipart_file(raw: bytes, content_type: str) -> bytes:
    boundary = content_type.split("boundary=")[-1].encode()
    for part in raw.split(b"--" + boundary):
        if b'name="file"' in part:
            body = part.split(b"\r\n\r\n", 1)[1]
            return body.rsplit(b"\r\n", 1)[0]
    raise ValueError("no file part")
