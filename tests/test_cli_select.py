"""``ipymemory select QUERY [--json]``: the names, who chose them, and why not the model."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest
from messages_server import MessagesServer, error, text
from sidequery_support import make_store, sample_records

from ipymemory import keyword_select
from ipymemory.cli import main

RECORDS = sample_records()
QUERY = "tabs or spaces for python code"
NO_MODEL = "no model configured (set ANTHROPIC_API_KEY)"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch, messages_server: MessagesServer) -> None:
    """The SDK's own variables point at the scripted server; ours pick the side model."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "cli-test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.base_url)
    monkeypatch.setenv("IPYMEMORY_SIDE_MODEL", "cli-side-model")
    monkeypatch.setenv("IPYMEMORY_MAX_RETRIES", "0")
    monkeypatch.setenv("IPYMEMORY_TIMEOUT", "5")


def _fallback_lines() -> list[str]:
    return [f"{r.name} ({r.type.value}) - {r.description}" for r in keyword_select(QUERY, RECORDS)]


def test_no_key_uses_the_fallback_and_says_why(workspace: str) -> None:
    make_store(workspace)
    status, out, err = run("--dir", workspace, "select", QUERY)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"selected by the deterministic fallback; model not used: {NO_MODEL}"
    assert lines[1:] == _fallback_lines()
    assert lines[1].startswith("prefers-tabs ")


def test_no_key_json(workspace: str) -> None:
    make_store(workspace)
    status, out, _ = run("--dir", workspace, "select", QUERY, "--json")
    assert status == 0
    data = json.loads(out)
    assert data == {
        "view": "selection",
        "query": QUERY,
        "source": "fallback",
        "reason": NO_MODEL,
        "model": None,
        "records": [
            {"name": r.name, "type": r.type.value, "description": r.description}
            for r in keyword_select(QUERY, RECORDS)
        ],
    }


def test_model_chooses(keyed: None, messages_server: MessagesServer, workspace: str) -> None:
    store = make_store(workspace)
    messages_server.enqueue(text('["style-guide", "prefers-tabs"]'))
    status, out, err = run("--dir", workspace, "select", QUERY)
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "selected by the model (cli-side-model)",
        "style-guide (reference) - Docstring style guide lives in docs/STYLE.md",
        "prefers-tabs (user) - User indents Python code with tabs, not spaces",
    ]
    (request,) = messages_server.requests
    assert request["model"] == "cli-side-model" and "tools" not in request
    sent = json.loads(request["messages"][0]["content"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \([A-Z][a-z]+day\)", sent.pop("today"))
    assert sent == {"catalog": store.catalog(), "query": QUERY}
    headers = {k.lower(): v for k, v in messages_server.headers[0].items()}
    # The SDK sends the key from ANTHROPIC_API_KEY (header name varies by SDK version).
    assert "cli-test-key" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])


def test_model_chooses_json(keyed: None, messages_server: MessagesServer, workspace: str) -> None:
    make_store(workspace)
    messages_server.enqueue(text('["db-testing"]'))
    status, out, _ = run("--json", "--dir", workspace, "select", QUERY)
    data = json.loads(out)
    assert (status, data["source"], data["reason"], data["model"]) == (
        0,
        "model",
        None,
        "cli-side-model",
    )
    assert [r["name"] for r in data["records"]] == ["db-testing"]


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (text('```json\n["db-testing"]\n```'), "selector reply is not JSON"),
        (text("[]", "max_tokens"), "selector reply stopped with max_tokens (truncated)"),
        (text('["nope"]'), "'nope' is not the name of a current memory"),
        (error(500, "down"), "selector call failed: model API error: HTTP 500"),
    ],
)
def test_invalid_reply_falls_back_with_the_cause(
    keyed: None, messages_server: MessagesServer, workspace: str, reply: object, why: str
) -> None:
    make_store(workspace)
    messages_server.enqueue(reply)  # type: ignore[arg-type]
    status, out, _ = run("--dir", workspace, "select", QUERY)
    assert status == 0
    head, *names = out.splitlines()
    assert head.startswith("selected by the deterministic fallback; model not used: ")
    assert why in head
    assert names == _fallback_lines()


def test_timeout_setting_reaches_the_client(
    keyed: None, monkeypatch: pytest.MonkeyPatch, messages_server: MessagesServer, workspace: str
) -> None:
    make_store(workspace)
    monkeypatch.setenv("IPYMEMORY_TIMEOUT", "0.2")
    messages_server.enqueue(text('["db-testing"]', delay=0.8))
    status, out, _ = run("--dir", workspace, "select", QUERY)
    assert status == 0 and "timed out" in out.splitlines()[0]


def test_retries_setting_reaches_the_client(
    keyed: None, monkeypatch: pytest.MonkeyPatch, messages_server: MessagesServer, workspace: str
) -> None:
    make_store(workspace)
    monkeypatch.setenv("IPYMEMORY_MAX_RETRIES", "1")
    messages_server.enqueue(error(529, "overloaded", "overloaded_error"), text('["db-testing"]'))
    status, out, _ = run("--dir", workspace, "select", QUERY)
    assert status == 0 and out.splitlines()[0] == "selected by the model (cli-side-model)"
    assert len(messages_server.requests) == 2


def test_empty_store_makes_no_request(
    keyed: None, messages_server: MessagesServer, workspace: str
) -> None:
    status, out, _ = run("--dir", workspace, "select", QUERY)
    assert status == 0
    assert out == f"nothing to select: {os.path.join(workspace, '.memory')} holds no records\n"
    assert messages_server.requests == []


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (("select",), "the following arguments are required: query"),
        (("select", "q", "--limit", "0"), "--limit: expected an integer >= 1, got 0"),
        (("select", "q", "--limit", "x"), "--limit: expected an integer, got 'x'"),
    ],
)
def test_bad_usage_exits_2(
    workspace: str,
    argv: tuple[str, ...],
    why: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run("--dir", workspace, *argv)
    assert status == 2 and out == ""
    err = capsys.readouterr().err  # argparse writes to sys.stderr
    assert "usage: ipymemory select" in err and why in err


def test_an_unquoted_query_is_the_words_joined(workspace: str) -> None:
    make_store(workspace)
    quoted = run("--dir", workspace, "--json", "select", "python tabs database")
    unquoted = run("--dir", workspace, "select", "python", "tabs", "database", "--json")
    assert quoted[0] == unquoted[0] == 0 and quoted[1] == unquoted[1]
    assert json.loads(unquoted[1])["query"] == "python tabs database"


def test_limit(workspace: str) -> None:
    make_store(workspace)
    query = "python tabs database deploy auth ingest style"
    status, out, _ = run("--dir", workspace, "select", query, "--limit", "2")
    assert status == 0 and len(out.splitlines()) == 3


def test_bad_setting_is_a_clear_error(
    keyed: None, monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    make_store(workspace)
    monkeypatch.setenv("IPYMEMORY_TIMEOUT", "soon")
    status, out, err = run("--dir", workspace, "select", QUERY)
    assert (status, out) == (1, "")
    assert err == "ipymemory: error: IPYMEMORY_TIMEOUT: expected a number of seconds, got 'soon'\n"


def test_real_command_line(workspace: str) -> None:
    make_store(workspace)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "IPYMEMORY_"))}
    argv = [sys.executable, "-m", "ipymemory.cli", "--dir", workspace, "select", QUERY]
    # The real defaults (issue 31): seven short records fit the memory budget, whole.
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("no selection needed: all 7 records: they fit the memory budget (")
    assert len(lines) == 8
    # Without the budget, the model selector's fallback (no key): the keyword ranking.
    env.update(IPYMEMORY_MEMORY_BUDGET="0", IPYMEMORY_SELECTOR="model")
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].endswith(NO_MODEL)
    assert proc.stdout.splitlines()[1:] == _fallback_lines()


def test_model_chooses_none_says_so(
    keyed: None, messages_server: MessagesServer, workspace: str
) -> None:
    """Issue 43: the model found nothing relevant -- said, not a heading over nothing."""
    make_store(workspace)
    messages_server.enqueue(text("[]"))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("IPYMEMORY_USER")},
        "IPYMEMORY_USER_DIR": "off",
    }
    done = subprocess.run(
        [sys.executable, "-m", "ipymemory.cli", "--dir", workspace, "select", QUERY],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "nothing selected: the model (cli-side-model) found none relevant\n"
