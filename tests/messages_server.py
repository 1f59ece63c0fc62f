"""A small scripted Anthropic Messages-API server for tests (binds 127.0.0.1 only).

The real ``anthropic`` SDK is pointed at it with ``base_url``. Tests enqueue replies in
order; every request body received is recorded in ``requests``.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


@dataclass
class Scripted:
    """One scripted answer: a message (status 200) or an HTTP error."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = "end_turn"
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 10, "output_tokens": 5})
    status: int = 200
    error_type: str = "api_error"
    error_message: str = "scripted error"
    delay: float = 0.0
    raw_body: bytes | None = None  # send these bytes verbatim (malformed responses)
    model: str | None = None
    request_id: str | None = None  # sent as the API's ``request-id`` header

    def body(self, request: dict[str, Any]) -> bytes:
        if self.raw_body is not None:
            return self.raw_body
        if self.status != 200:
            payload: dict[str, Any] = {
                "type": "error",
                "error": {"type": self.error_type, "message": self.error_message},
            }
        else:
            payload = {
                "id": f"msg_{next(_ids):06d}",
                "type": "message",
                "role": "assistant",
                "model": self.model or request.get("model", "scripted"),
                "content": self.content,
                "stop_reason": self.stop_reason,
                "stop_sequence": None,
                "usage": self.usage,
            }
        return json.dumps(payload).encode("utf-8")


def text(s: str, stop_reason: str | None = "end_turn", **kw: Any) -> Scripted:
    """A reply with one text block."""
    return Scripted(content=[{"type": "text", "text": s}], stop_reason=stop_reason, **kw)


def tool_use(
    name: str,
    input: dict[str, Any],
    *,
    id: str | None = None,
    text_before: str | None = None,
    **kw: Any,
) -> Scripted:
    """A reply asking for one tool call (stop_reason ``tool_use``)."""
    blocks: list[dict[str, Any]] = []
    if text_before:
        blocks.append({"type": "text", "text": text_before})
    blocks.append(
        {"type": "tool_use", "id": id or f"toolu_{next(_ids):06d}", "name": name, "input": input}
    )
    return Scripted(content=blocks, stop_reason="tool_use", **kw)


def error(
    status: int, message: str = "scripted error", error_type: str = "api_error", **kw: Any
) -> Scripted:
    return Scripted(status=status, error_message=message, error_type=error_type, **kw)


class MessagesServer:
    """Serve scripted replies on ``POST /v1/messages``; see module docstring."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._queue: deque[Scripted] = deque()
        self.responder: Callable[[dict[str, Any]], Scripted] | None = None
        self.unexpected = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                scripted = server._next(body, dict(self.headers))
                if scripted.delay:
                    time.sleep(scripted.delay)
                data = scripted.body(body)
                try:
                    self.send_response(scripted.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    if scripted.request_id is not None:
                        self.send_header("request-id", scripted.request_id)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval, once per test.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Scripted:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if self._queue:
                return self._queue.popleft()
            if self.responder is not None:
                return self.responder(body)
            self.unexpected += 1
            return error(500, "messages_server: no scripted reply left")

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def enqueue(self, *replies: Scripted) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def start(self) -> MessagesServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
