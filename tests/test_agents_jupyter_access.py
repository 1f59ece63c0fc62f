"""Issue 41: the key of the memory tools on Jupyter's built-in MCP server, as handed to
jupyter-ai's persona managers (``PersonaManager.builtin_mcp_servers``). The real server
and chats are in test_jupyter_ai_tools.py; this is the rule for the entries."""

from __future__ import annotations

from ipymemory.agents.jupyter_access import KEY_HEADER, authorized, with_key

NAME = "Jupyter MCP Server"


def test_jupyter_ais_default_becomes_the_bound_port_with_the_key() -> None:
    entries, found = with_key(None, 40123, NAME, "k", default=True)
    assert found
    assert entries == [
        {
            "type": "http",
            "name": NAME,
            "url": "http://localhost:40123/mcp",
            "headers": [{"name": KEY_HEADER, "value": "k"}],
        }
    ]


def test_configured_entries_get_the_key_only_where_they_point_at_the_built_in_server() -> None:
    configured = [
        {"type": "http", "name": "builtin", "url": "http://127.0.0.1:40123/mcp",
         "headers": [{"name": "X-Other", "value": "1"},
                     {"name": "x-ipymemory-key", "value": "stale"}]},
        {"type": "http", "name": "elsewhere", "url": "http://example.org:40123/mcp"},
        {"type": "http", "name": "other-port", "url": "http://localhost:3001/mcp"},
        {"name": "stdio", "command": "ipymemory", "args": ["mcp"]},
    ]  # fmt: skip
    entries, found = with_key(configured, 40123, NAME, "k", default=False)
    assert found
    assert entries[0]["headers"] == [
        {"name": "X-Other", "value": "1"},
        {"name": KEY_HEADER, "value": "k"},
    ]
    assert entries[1:] == configured[1:]  # the key goes nowhere else
    assert configured[0]["headers"][1]["value"] == "stale"  # the config given is not changed
    _, found = with_key(configured[1:], 40123, NAME, "k", default=False)
    assert not found


def test_no_key_made_means_no_call_is_authorized() -> None:
    assert not authorized({})
    assert not authorized({KEY_HEADER.lower(): ""})
