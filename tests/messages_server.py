"""A small scripted Anthropic Messages-API server for tests (binds 127.0.0.1 only).

The real ``anthropic`` SDK is pointed at it with ``base_url``. Tests enqueue replies in
order, or per role (``enqueue_for``: a request whose ``role_of`` is that role takes its
role's next reply first -- for calls that race, like the model's memory pick beside the
agent's call); every request body received is recorded in ``requests``, and when its answer
was completely sent (``time.monotonic()``) in ``finished``, or in ``aborted`` that the
client hung up before it was.

A request with ``"stream": true`` (the SDK's ``messages.stream``) gets its reply as
server-sent events, the way the Messages API streams: ``message_start``, per content
block ``content_block_start`` / ``content_block_delta`` (text in word-sized pieces,
tool input as one ``input_json_delta``) / ``content_block_stop``, ``message_delta``
(stop reason, output tokens), ``message_stop``; ``chunk_delay`` seconds pass between
events. A test that interrupts a stream holds it (``hold_after``, ``release``: the reply
waits after that many events, ``held`` says it does) instead of pacing it by time. Other
requests (the side-queries) get one JSON body as before.

An endpoint that does not know structured outputs: with ``refuse_output_config`` set
(``True`` for every model, or a collection of model names), a request whose body holds
``output_config`` is answered HTTP 400 ``invalid_request_error``
:data:`OUTPUT_CONFIG_REFUSAL` without using a scripted reply; its index goes to
``refused``.
"""

from __future__ import annotations

import itertools
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)
# What a proxy validating requests against an older Messages-API schema answers.
OUTPUT_CONFIG_REFUSAL = "output_config: Extra inputs are not permitted"


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
    chunk_delay: float = 0.0  # between the events of a streamed reply
    stream_error: str | None = None  # a streamed reply breaks off with this error event
    # A streamed reply stops after ``hold_after`` events (``held`` is set) until
    # ``release`` is; then, if the client hung up meanwhile, it is ``aborted``.
    hold_after: int | None = None
    release: threading.Event | None = None
    held: threading.Event = field(default_factory=threading.Event)

    def events(self, request: dict[str, Any]) -> list[bytes]:
        """The reply as server-sent events (a 200 reply to a streaming request)."""
        usage = dict(self.usage)
        message = {
            **json.loads(self.body(request)),
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        }
        out = [_sse("message_start", {"message": message})]
        for index, block in enumerate(self.content):
            if block.get("type") == "tool_use":
                start = {**block, "input": {}}
                deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
            else:
                start = {**block, "text": ""}
                pieces = re.findall(r"\S*\s*", str(block.get("text", "")))
                deltas = [{"type": "text_delta", "text": p} for p in pieces if p]
            out.append(_sse("content_block_start", {"index": index, "content_block": start}))
            out.extend(_sse("content_block_delta", {"index": index, "delta": d}) for d in deltas)
            out.append(_sse("content_block_stop", {"index": index}))
            if self.stream_error is not None:
                error = {"error": {"type": "overloaded_error", "message": self.stream_error}}
                return [*out, _sse("error", error)]
        delta = {"stop_reason": self.stop_reason, "stop_sequence": None}
        out.append(
            _sse(
                "message_delta",
                {"delta": delta, "usage": {"output_tokens": usage.get("output_tokens", 0)}},
            )
        )
        out.append(_sse("message_stop", {}))
        return out

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


HOLD_SECONDS = 30.0  # a held reply waits at most this long (only when a test is wrong)


def _peer_closed(connection: socket.socket) -> bool:
    """Whether the client closed its side (its whole request was read: any readable
    byte now is the end of the stream)."""
    try:
        return connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _sse(event: str, data: dict[str, Any]) -> bytes:
    payload = json.dumps({"type": event, **data})
    return f"event: {event}\ndata: {payload}\n\n".encode()


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
        self.finished: dict[int, float] = {}  # request index -> its answer fully sent
        self.aborted: set[int] = set()  # requests whose client hung up mid-answer
        self.headers: list[dict[str, str]] = []
        self._queue: deque[Scripted] = deque()
        self._roles: dict[str, deque[Scripted]] = {}
        #: A request's role (tests/turn_support.role_of), for the replies of enqueue_for.
        self.role_of: Callable[[dict[str, Any]], str] | None = None
        self.responder: Callable[[dict[str, Any]], Scripted] | None = None
        self.refuse_output_config: bool | Collection[str] = False
        self.refused: list[int] = []  # requests answered with OUTPUT_CONFIG_REFUSAL
        self.unexpected = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _hold(self, scripted: Scripted) -> None:
                scripted.held.set()
                if scripted.release is not None:
                    scripted.release.wait(HOLD_SECONDS)
                if _peer_closed(self.connection):
                    raise ConnectionResetError("the client hung up while the reply was held")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                scripted, index = server._next(body, dict(self.headers))
                if scripted.delay:
                    time.sleep(scripted.delay)
                streamed = (
                    body.get("stream") is True
                    and scripted.status == 200
                    and scripted.raw_body is None
                )
                try:
                    self.send_response(scripted.status)
                    if scripted.request_id is not None:
                        self.send_header("request-id", scripted.request_id)
                    if streamed:
                        self.send_header("content-type", "text/event-stream")
                        self.send_header("cache-control", "no-cache")
                        self.send_header("connection", "close")
                        self.end_headers()
                        for i, event in enumerate(scripted.events(body)):
                            if i == scripted.hold_after:
                                self._hold(scripted)
                            elif i and scripted.chunk_delay:
                                time.sleep(scripted.chunk_delay)
                            self.wfile.write(event)
                            self.wfile.flush()
                        self.close_connection = True
                    else:
                        data = scripted.body(body)
                        self.send_header("content-type", "application/json")
                        self.send_header("content-length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data)
                    self.wfile.flush()
                    server.finished[index] = time.monotonic()
                except (BrokenPipeError, ConnectionResetError):
                    server.aborted.add(index)  # the client gave up (timeouts, interrupts)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval, once per test.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[Scripted, int]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            index = len(self.requests) - 1
            if "output_config" in body and self._refuses(body.get("model")):
                self.refused.append(index)
                return error(400, OUTPUT_CONFIG_REFUSAL, "invalid_request_error"), index
            own = self._roles.get(self.role_of(body)) if self.role_of and self._roles else None
            if own:
                return own.popleft(), index
            if self._queue:
                return self._queue.popleft(), index
            if self.responder is not None:
                return self.responder(body), index
            self.unexpected += 1
            return error(500, "messages_server: no scripted reply left"), index

    def _refuses(self, model: Any) -> bool:
        refuse = self.refuse_output_config
        return refuse is True or (not isinstance(refuse, bool) and model in refuse)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def enqueue(self, *replies: Scripted) -> None:
        with self._lock:
            self._queue.extend(replies)

    def enqueue_for(self, role: str, *replies: Scripted) -> None:
        """Replies for the requests of ``role`` only (see the module docstring)."""
        if self.role_of is None:
            raise RuntimeError("enqueue_for needs role_of (tests/turn_support.role_of)")
        with self._lock:
            self._roles.setdefault(role, deque()).extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue) + sum(len(q) for q in self._roles.values())

    def start(self) -> MessagesServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
