"""``AnthropicModel``: a :class:`~ipymemory.model.client.ModelClient` over the
``anthropic`` SDK's Messages API.

SDK errors become the typed :class:`~ipymemory.errors.ModelError` family here (the
original stays as ``__cause__``), so callers decide by type and never see SDK types.

Structured outputs (SPEC §9): a request with an ``output_schema`` carries
``output_config``. An endpoint that refuses the parameter (HTTP 400 naming it, or an
unknown-parameter error) gets the same request once more without it, and that
answer is remembered for the (base URL, model) pair for the rest of the process, so
each pair costs one extra round trip at most.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .. import _constants as C
from ..errors import (
    ModelAPIError,
    ModelConnectionError,
    ModelError,
    ModelResponseError,
    ModelTimeout,
)
from .client import ModelReply
from .usage import Usage

__all__ = ["SDK_ENVIRONMENT", "AnthropicModel", "refused_output_config", "sdk_environment"]

# What the SDK reads from the environment itself: a client made before one of these
# changed is out of date.
SDK_ENVIRONMENT = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")


def sdk_environment() -> tuple[str | None, ...]:
    """The current values of :data:`SDK_ENVIRONMENT`."""
    return tuple(os.environ.get(name) for name in SDK_ENVIRONMENT)


class AnthropicModel:
    """A :class:`ModelClient` over the ``anthropic`` SDK's Messages API.

    ``api_key`` / ``base_url`` default to what the SDK reads itself
    (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``), so Anthropic-compatible endpoints work.
    """

    def __init__(
        self,
        model: str = C.DEFAULT_MODEL,
        *,
        side_model: str = C.DEFAULT_SIDE_MODEL,
        max_tokens: int = C.DEFAULT_MAX_TOKENS,
        timeout: float = C.DEFAULT_TIMEOUT,
        max_retries: int = C.DEFAULT_MAX_RETRIES,
        api_key: str | None = None,
        base_url: str | None = None,
        client: Any = None,
    ) -> None:
        self.model = model
        self.side_model = side_model
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        if client is None:
            import anthropic

            client = anthropic.Anthropic(
                api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
            )
        self._client = client

    def __repr__(self) -> str:
        return f"AnthropicModel(model={self.model!r}, side_model={self.side_model!r})"

    @staticmethod
    def is_configured(api_key: str | None = None) -> bool:
        """True if a key (argument or ``ANTHROPIC_API_KEY``) or a token is available."""
        return bool(
            api_key or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
        )

    def create(
        self,
        *,
        system: str | list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        tools: list[dict[str, Any]] | None = None,
        model: str | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> ModelReply:
        """One request; with ``output_schema``, as structured outputs (``output_config``)
        unless this endpoint and model refused it before (see :func:`refused_output_config`):
        a refusal gets the same request once more without it, and is remembered."""
        import anthropic

        kwargs = self._request(system, messages, max_tokens, tools, model)
        pair = (self.endpoint, kwargs["model"])
        with _model_errors():
            if output_schema is not None and not refused_output_config(*pair):
                # As a body field, not the keyword: the SDKs this package allows
                # (anthropic>=0.40) include versions that predate the keyword.
                structured = {"format": {"type": "json_schema", "schema": output_schema}}
                try:
                    return _reply_from_message(
                        self._client.messages.create(
                            **kwargs, extra_body={"output_config": structured}
                        )
                    )
                except anthropic.APIStatusError as e:
                    if not _refuses_output_config(e):
                        raise
                    _remember_refusal(pair)
            message = self._client.messages.create(**kwargs)
        return _reply_from_message(message)

    @property
    def endpoint(self) -> str:
        """The base URL requests go to (``""`` when the client does not say)."""
        return str(getattr(self._client, "base_url", "") or "")

    def stream(
        self,
        *,
        system: str | list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        on_text: Callable[[str], None],
        tools: list[dict[str, Any]] | None = None,
        model: str | None = None,
    ) -> ModelReply:
        """Like :meth:`create`, over the SDK's streaming API: ``on_text`` gets each
        piece of text as it arrives. An exception out of ``on_text`` (a
        KeyboardInterrupt) closes the stream, so the connection is released at once."""
        kwargs = self._request(system, messages, max_tokens, tools, model)
        with _model_errors(), self._client.messages.stream(**kwargs) as stream:
            for event in stream:
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    on_text(event.delta.text)
            message = stream.get_final_message()
        return _reply_from_message(message)

    def _request(
        self,
        system: str | list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        tools: list[dict[str, Any]] | None,
        model: str | None,
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": model or self.model,
            "max_tokens": max_tokens,
            "system": system,
            "messages": messages,
        }
        if tools:
            kwargs["tools"] = tools
        return kwargs


# What endpoints that do not know a request parameter answer (HTTP 400, or 422 from
# validating proxies), lowercased; an error naming output_config itself always counts.
_UNKNOWN_PARAMETER = (
    "extra inputs are not permitted",
    "extra_forbidden",
    "unknown parameter",
    "unrecognized request argument",
    "unexpected keyword argument",
    "unknown field",
    "unrecognized field",
    "additional properties are not allowed",
)
_refusals: set[tuple[str, str]] = set()
_refusals_lock = threading.Lock()


def refused_output_config(endpoint: str, model: str) -> bool:
    """Whether ``endpoint`` refused structured outputs for ``model`` in this process
    (then side-queries there are sent without ``output_config``)."""
    with _refusals_lock:
        return (endpoint, model) in _refusals


def _remember_refusal(pair: tuple[str, str]) -> None:
    with _refusals_lock:
        _refusals.add(pair)


def _refuses_output_config(e: Any) -> bool:
    """An API error that says the endpoint does not take ``output_config``."""
    if getattr(e, "status_code", None) not in (400, 422):
        return False
    said = f"{_body_error(e, 'message') or ''} {e}".lower()
    return "output_config" in said or any(phrase in said for phrase in _UNKNOWN_PARAMETER)


@contextlib.contextmanager
def _model_errors() -> Iterator[None]:
    """SDK errors (raised by the request or in the middle of a stream) as the typed
    :class:`ModelError` family."""
    import anthropic

    try:
        yield
    except anthropic.APIStatusError as e:
        raise ModelAPIError(
            f"model API error: HTTP {e.status_code}: {_status_detail(e)}",
            status_code=e.status_code,
            error_type=_error_type(e),
            request_id=getattr(e, "request_id", None),
        ) from e
    except anthropic.APITimeoutError as e:
        raise ModelTimeout("model API error: the request timed out") from e
    except anthropic.APIConnectionError as e:
        raise ModelConnectionError(f"model API error: connection failed: {_short(e)}") from e
    except anthropic.APIError as e:
        raise ModelResponseError(f"model API error: {_short(e)}") from e
    except json.JSONDecodeError as e:
        # A 200 response whose body is not JSON (a broken gateway or proxy).
        raise ModelResponseError(f"model API error: the response is not JSON ({e.msg})") from e
    except anthropic.AnthropicError as e:  # e.g. credentials the SDK cannot load
        raise ModelError(f"model API error: {_short(e)}") from e


def _body_error(e: Any, key: str) -> str | None:
    """``error.<key>`` of an API error's JSON body, if it is a non-empty string."""
    body = getattr(e, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    value = error.get(key) if isinstance(error, dict) else None
    return value if isinstance(value, str) and value else None


def _error_type(e: Any) -> str | None:
    return _body_error(e, "type")


def _status_detail(e: Any) -> str:
    """The API's own ``error.type: error.message`` when the body has them; the SDK's
    text repeats the status and dumps the whole body as a Python dict."""
    message = _body_error(e, "message")
    if message is None:
        return _short(e)
    kind = _error_type(e)
    return _short(f"{kind}: {message}" if kind else message)


def _short(e: object) -> str:
    text = str(e)
    return text if len(text) <= 300 else text[:300] + "…"


def _reply_from_message(message: Any) -> ModelReply:
    blocks: list[dict[str, Any]] = []
    for block in getattr(message, "content", None) or ():
        dumped = (
            block.model_dump(exclude_none=True) if hasattr(block, "model_dump") else dict(block)
        )
        blocks.append(dumped)
    return ModelReply(
        content=tuple(blocks),
        stop_reason=getattr(message, "stop_reason", None),
        usage=Usage.from_api(getattr(message, "usage", None)),
        model=str(getattr(message, "model", "") or ""),
    )
