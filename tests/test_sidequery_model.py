from __future__ import annotations

import anthropic
import pytest
from messages_server import MessagesServer, error, text, tool_use

from ipymemory.errors import ModelNotConfigured, SideQueryError
from ipymemory.sidequery.model import AnthropicModel, NoModel, cached_system


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
def test_api_errors_become_side_query_errors(messages_server: MessagesServer, status: int) -> None:
    messages_server.enqueue(error(status, "boom"))
    with pytest.raises(SideQueryError, match=f"HTTP {status}"):
        _model(messages_server).create(
            system="s", messages=[{"role": "user", "content": "x"}], max_tokens=10
        )


def test_timeout_and_connection_refused(messages_server: MessagesServer) -> None:
    messages_server.enqueue(text("late", delay=1.5))
    client = anthropic.Anthropic(
        base_url=messages_server.base_url, api_key="t", max_retries=0, timeout=0.3
    )
    with pytest.raises(SideQueryError, match="timed out"):
        AnthropicModel(client=client).create(
            system="s", messages=[{"role": "user", "content": "x"}], max_tokens=5
        )
    dead = anthropic.Anthropic(base_url="http://127.0.0.1:9", api_key="t", max_retries=0, timeout=2)
    with pytest.raises(SideQueryError, match="connection"):
        AnthropicModel(client=dead).create(
            system="s", messages=[{"role": "user", "content": "x"}], max_tokens=5
        )


def test_no_model_is_a_clear_state() -> None:
    with pytest.raises(ModelNotConfigured, match="no model configured"):
        NoModel().create(system="s", messages=[], max_tokens=1)
