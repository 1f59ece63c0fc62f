"""``AnthropicModel``: a :class:`~ipymemory.model.client.ModelClient` over the
``anthropic`` SDK's Messages API.

SDK errors become the typed :class:`~ipymemory.errors.ModelError` family here (the
original stays as ``__cause__``), so callers decide by type and never see SDK types.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, TypeVar

from .._env import check_seconds, parse_int, parse_seconds
from ..errors import (
    MemoryConfigError,
    ModelAPIError,
    ModelConnectionError,
    ModelError,
    ModelResponseError,
    ModelTimeout,
)
from .client import NO_MODEL_REASON, ModelReply, NoModel
from .usage import Usage

__all__ = [
    "DEFAULT_MAIN_MODEL",
    "DEFAULT_SIDE_MODEL",
    "AnthropicModel",
    "model_from_env",
]

DEFAULT_MAIN_MODEL = "claude-sonnet-5-5"
DEFAULT_SIDE_MODEL = "claude-haiku-5-5"

T = TypeVar("T")


class AnthropicModel:
    """A :class:`ModelClient` over the ``anthropic`` SDK's Messages API.

    ``api_key`` / ``base_url`` default to what the SDK reads itself
    (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``), so Anthropic-compatible endpoints work.
    """

    def __init__(
        self,
        model: str = DEFAULT_MAIN_MODEL,
        *,
        side_model: str = DEFAULT_SIDE_MODEL,
        max_tokens: int = 4096,
        timeout: float = 120.0,
        max_retries: int = 2,
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
    ) -> ModelReply:
        import anthropic

        kwargs: dict[str, Any] = {
            "model": model or self.model,
            "max_tokens": max_tokens,
            "system": system,
            "messages": messages,
        }
        if tools:
            kwargs["tools"] = tools
        try:
            message = self._client.messages.create(**kwargs)
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
        return _reply_from_message(message)


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


def model_from_env(
    *,
    model: str | None = None,
    side_model: str | None = None,
    max_tokens: int | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
) -> AnthropicModel | NoModel:
    """The configured model: arguments first, then ``IPYMEMORY_*`` variables, then defaults.

    ``IPYMEMORY_MODEL``, ``IPYMEMORY_SIDE_MODEL``, ``IPYMEMORY_MAX_TOKENS``,
    ``IPYMEMORY_TIMEOUT`` (seconds), ``IPYMEMORY_MAX_RETRIES``. Key and endpoint are the
    SDK's own (``ANTHROPIC_API_KEY`` / ``ANTHROPIC_AUTH_TOKEN``, ``ANTHROPIC_BASE_URL``);
    without a key the result is :class:`NoModel`. A malformed setting raises
    :class:`MemoryConfigError` naming the variable, even without a key.
    """
    main = model or _env_str("IPYMEMORY_MODEL") or DEFAULT_MAIN_MODEL
    side = side_model or _env_str("IPYMEMORY_SIDE_MODEL") or DEFAULT_SIDE_MODEL
    tokens = _int_setting(max_tokens, "IPYMEMORY_MAX_TOKENS", 4096, minimum=1)
    seconds = _float_setting(timeout, "IPYMEMORY_TIMEOUT", 120.0)
    retries = _int_setting(max_retries, "IPYMEMORY_MAX_RETRIES", 2, minimum=0)
    if not AnthropicModel.is_configured(api_key):
        return NoModel(NO_MODEL_REASON)
    return AnthropicModel(
        main,
        side_model=side,
        max_tokens=tokens,
        timeout=seconds,
        max_retries=retries,
        api_key=api_key,
        base_url=base_url,
    )


def _env_str(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _int_setting(given: int | None, name: str, default: int, *, minimum: int) -> int:
    if given is None:
        raw = _env_str(name)
        return default if raw is None else _setting(name, parse_int, raw, minimum)
    if isinstance(given, bool) or not isinstance(given, int):
        raise MemoryConfigError(f"{name} (argument): expected an integer, got {given!r}")
    # An int round-trips through str, so one parser checks the bound for both sources.
    return _setting(name, parse_int, str(given), minimum)


def _float_setting(given: float | None, name: str, default: float) -> float:
    if given is None:
        raw = _env_str(name)
        return default if raw is None else _setting(name, parse_seconds, raw)
    if isinstance(given, bool) or not isinstance(given, (int, float)):
        raise MemoryConfigError(f"{name} (argument): expected a number, got {given!r}")
    return _setting(name, check_seconds, given)


def _setting(name: str, parse: Callable[..., T], *args: Any) -> T:
    """``parse(*args)``; its ValueError becomes a MemoryConfigError naming ``name``."""
    try:
        return parse(*args)
    except ValueError as e:
        raise MemoryConfigError(f"{name}: {e}") from None
