"""A real HTTP server on 127.0.0.1 speaking OpenAI chat completions, scripted per test.

    with ChatServer(brain) as srv:            # brain(request_body) -> reply (see below)
        client = ChatClient(srv.base_url, "test-model")

``brain`` returns a dict: ``{"content": "..."}`` or ``{"tool_calls": [("name", {args})]}``
(turned into a proper chat-completions response with ids, ``finish_reason`` and
``usage``), or ``(status, body)`` for an error. With ``max_context`` set, a request
longer than that many tokens (characters / 4) gets OpenAI's context-length error.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def request_tokens(body: dict[str, Any]) -> int:
    return len(json.dumps(body.get("messages", []), ensure_ascii=False)) // 4


class ChatServer:
    def __init__(self, brain: Callable[[dict[str, Any]], Any], *, max_context: int | None = None):
        self.brain = brain
        self.max_context = max_context
        self.requests: list[dict[str, Any]] = []
        self.down = False  # answer every request with 500
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                with server._lock:
                    server.requests.append(body)
                if server.down:
                    return self._send(500, {"error": {"message": "The server is down.", "type": "server_error"}})
                tokens = request_tokens(body)
                if server.max_context is not None and tokens > server.max_context:
                    return self._send(400, {"error": {
                        "message": f"This model's maximum context length is {server.max_context} tokens. However, your "
                                   f"messages resulted in {tokens} tokens. Please reduce the length of the messages.",
                        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
                reply = server.brain(body)
                if isinstance(reply, tuple):
                    return self._send(*reply)
                message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
                finish = "stop"
                if reply.get("tool_calls"):
                    message["tool_calls"] = [
                        {"id": "call_" + uuid.uuid4().hex[:10], "type": "function",
                         "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                        for name, args in reply["tool_calls"]]
                    finish = "tool_calls"
                completion = len(json.dumps(message)) // 4
                self._send(200, {"id": "chatcmpl-" + uuid.uuid4().hex[:12], "object": "chat.completion",
                                 "created": 0, "model": body.get("model"),
                                 "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                 "usage": {"prompt_tokens": tokens, "completion_tokens": completion,
                                           "total_tokens": tokens + completion}})

        return Handler
