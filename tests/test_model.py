from __future__ import annotations

import anthropic
import pytest
from messages_server import MessagesServer, Scripted, error, text, tool_use

from ipymemory import (
    AnthropicModel,
    ModelAPIError,
    ModelConnectionError,
    ModelError,
    ModelNotConfigured,
    ModelResponseError,
    ModelTimeout,
    NoModel,
)
from ipymemory.model import cached_system


def _model(srv: MessagesServer, **kw: object) -> AnthropicModel:
    client = anthropic.Anthropic(base_url=srv.base_url, api_key="test", max_retries=0, timeout=5)
    return AnthropicModel("main-model", side_model="side-model", client=client, **kw)  # type: ignore[arg-type]


def test_reply_roundtrip_and_request_shape(messages_server: MessagesServer) -> None:
    messages_server.enqueue(
        text("hello", usage={"input_tokens": 7, "output_tokens": 3, "cache_read_input_tokens": 2})
    )
    reply = _model(messages_server).create(
        system=cached_system("sys"), messages=[{"role": "user", "content": "hi"}], max_tokens=50
    )
    assert reply.text == "hello" and reply.stop_reason == "end_turn"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (7, 3)
    assert reply.usage.cache_read_input_tokens == 2
    req = messages_server.requests[0]
    assert req["model"] == "main-model" and req["max_tokens"] == 50
    assert "tools" not in req
    assert req["system"][0]["cache_control"] == {"type": "ephemeral"}


def test_tool_use_blocks_are_plain_dicts(messages_server: MessagesServer) -> None:
    messages_server.enqueue(tool_use("read_file", {"path": "a.txt"}, id="toolu_1"))
    reply = _model(messages_server).create(
        system="s",
        messages=[{"role": "user", "content": "x"}],
        max_tokens=10,
        tools=[{"name": "read_file", "input_schema": {"type": "object"}}],
    )
    assert reply.stop_reason == "tool_use"
    assert reply.tool_uses == (
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.txt"}},
    )
    assert messages_server.requests[0]["tools"][0]["name"] == "read_file"


@pytest.mark.parametrize("status", [429, 500, 529])
def test_api_errors_are_typed_with_status_type_and_request_id(
    messages_server: MessagesServer, status: int
) -> None:
    messages_server.enqueue(error(status, "boom", "overloaded_error", request_id="req_42"))
    with pytest.raises(ModelAPIError, match=f"HTTP {status}") as caught:
        _model(messages_server).create(
            system="s", messages=[{"role": "user", "content": "x"}], max_tokens=10
        )
    # The API's own type and message, not the SDK's repeat of the status and body dict.
    assert str(caught.value) == f"model API error: HTTP {status}: overloaded_error: boom"
    err = caught.value
    assert (err.status_code, err.error_type, err.request_id) == (
        status,
        "overloaded_error",
        "req_42",
    )
    assert isinstance(err.__cause__, anthropic.APIStatusError)


def test_api_error_without_a_json_error_body(messages_server: MessagesServer) -> None:
    messages_server.enqueue(Scripted(status=502, raw_body=b"<html>bad gateway</html>"))
    with pytest.raises(ModelAPIError) as caught:
        _model(messages_server).create(
            system="s", messages=[{"role": "user", "content": "x"}], max_tokens=10
        )
    assert (caught.value.status_code, caught.value.error_type) == (502, None)
    assert caught.value.request_id is None


def test_a_200_body_that_is_not_json_is_a_response_error(
    messages_server: MessagesServer,
) -> None:
    messages_server.enqueue(Scripted(raw_body=b"{not json"))
    with pytest.raises(ModelResponseError, match="not JSON"):
        _model(messages_server).create(
            system="s", messages=[{"role": "user", "content": "x"}], max_tokens=10
        )


def test_timeout_and_connection_refused(messages_server: MessagesServer) -> None:
    messages_server.enqueue(text("late", delay=1.5))
    client = anthropic.Anthropic(
        base_url=messages_server.base_url, api_key="t", max_retries=0, timeout=0.3
    )
    with pytest.raises(ModelTimeout, match="timed out") as late:
        AnthropicModel(client=client).create(
            system="s", messages=[{"role": "user", "content": "x"}], max_tokens=5
        )
    assert isinstance(late.value.__cause__, anthropic.APITimeoutError)
    dead = anthropic.Anthropic(base_url="http://127.0.0.1:9", api_key="t", max_retries=0, timeout=2)
    with pytest.raises(ModelConnectionError, match="connection") as refused:
        AnthropicModel(client=dead).create(
            system="s", messages=[{"role": "user", "content": "x"}], max_tokens=5
        )
    assert not isinstance(refused.value, ModelTimeout)


def test_model_errors_share_one_type() -> None:
    for kind in (ModelNotConfigured, ModelAPIError, ModelConnectionError, ModelResponseError):
        assert issubclass(kind, ModelError)
    assert issubclass(ModelTimeout, ModelConnectionError)


def test_no_model_is_a_clear_state() -> None:
    with pytest.raises(ModelNotConfigured, match="no model configured"):
        NoModel().create(system="s", messages=[], max_tokens=1)
