"""The CLI prints no terminal escape sequences from stored text (issue 10 #8, SPEC §7)."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import pytest
from escape_support import adversarial_text, hidden
from hypothesis import HealthCheck, given, settings
from messages_server import MessagesServer, text
from turn_support import model_for

from ipymemory import MemoryFormatError, MemoryRecord, MemoryStore, MemoryType
from ipymemory.cli import main

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"  # writes "rm -rf ~" to the user's clipboard
LINE_ERASE = "\x1b[2K\x1b[1G"  # erases the line printed so far
RLO = "\u202e"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def planted(workspace: str) -> str:
    MemoryStore(workspace).extend(
        [
            MemoryRecord(
                name="planted",
                type=MemoryType.PROJECT,
                description=f"innocent{LINE_ERASE}looking {RLO}txt.exe",
                body=f"Deploy with make.{OSC52}{LINE_ERASE}Nothing to see here.\tok",
            )
        ]
    )
    return workspace


SHOWN_DESCRIPTION = "innocent\\u001b[2K\\u001b[1Glooking \\u202etxt.exe"
SHOWN_BODY = "Deploy with make.\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u001b[2K\\u001b[1GNothing"


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (["list"], SHOWN_DESCRIPTION),
        (["show", "planted"], SHOWN_BODY),
        (["select", "innocent", "looking"], SHOWN_DESCRIPTION),
    ],
)
def test_text_output_has_no_escape_sequences(planted: str, command: list[str], shown: str) -> None:
    code, out, err = _run("--dir", planted, *command)
    assert code == 0, err
    assert not hidden(out) and not hidden(err)
    # What is there is shown, visibly: the user can see the record is suspicious.
    assert shown in out


def test_show_prints_the_escaped_body_exactly(planted: str) -> None:
    code, out, _ = _run("--dir", planted, "show", "planted")
    assert code == 0
    assert out.endswith(
        "\n\nDeploy with make.\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u001b[2K\\u001b[1G"
        "Nothing to see here.\tok\n"
    )


@pytest.mark.parametrize("command", [["list"], ["show", "planted"]])
def test_json_output_stays_exact_and_clean(planted: str, command: list[str]) -> None:
    code, out, _ = _run("--dir", planted, "--json", *command)
    assert code == 0 and not hidden(out)
    data = json.loads(out)
    record = data["record"] if command[0] == "show" else data["records"][0]
    assert record["description"] == f"innocent{LINE_ERASE}looking {RLO}txt.exe"
    if command[0] == "show":
        assert OSC52 in record["body"]


def test_error_messages_are_escaped_too(workspace: str) -> None:
    where = str(Path(workspace) / f"no{OSC52}such")
    code, out, err = _run("--dir", where, "list")
    assert code != 0 and out == ""
    assert "no\\u001b]52;c;cm0gLXJmIH4=\\u0007such" in err and not hidden(err)


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much],
)
@given(body=adversarial_text, description=adversarial_text)
def test_any_stored_text_prints_without_control_or_format_characters(
    body: str, description: str
) -> None:
    try:
        record = MemoryRecord("any", MemoryType.USER, " ".join(description.split()) or "d", body)
    except MemoryFormatError:
        return  # not a record the store would hold
    with tempfile.TemporaryDirectory() as workspace:
        MemoryStore(workspace).extend([record])
        for command in (["list"], ["show", "any"], ["--json", "show", "any"]):
            code, out, err = _run("--dir", workspace, *command)
            assert code == 0, err
            assert not hidden(out) and not hidden(err)
        assert json.loads(out)["record"] == record.to_json()


def test_a_views_plain_text_is_escaped_for_a_terminal_ipython() -> None:
    """``%memory show`` in IPython running in a terminal prints the view's text/plain."""
    from ipymemory import StoredRecord
    from ipymemory.views import RecordView

    record = MemoryRecord("planted", MemoryType.USER, f"d{RLO}", f"body{OSC52}{LINE_ERASE}")
    view = RecordView(StoredRecord("planted-1.md", record))
    for plain in (view.bundle()["text/plain"], repr(view)):
        assert not hidden(plain) and "body\\u001b]52;" in plain
    assert view.to_json()["record"]["body"] == record.body  # the data itself is kept


def test_an_agent_answer_prints_without_escape_sequences(
    messages_server: MessagesServer, workspace: str
) -> None:
    """A model can be talked into echoing a file's escape sequences; a terminal IPython
    shows the turn's text/plain."""
    from ipymemory import AgentSession, SessionConfig
    from ipymemory.notebook.output import TurnOutput

    messages_server.enqueue(text(f"Done.{OSC52}{LINE_ERASE}"))
    session = AgentSession(
        workspace,
        model=model_for(messages_server.base_url),
        config=SessionConfig(commit_mode="off"),
    )
    output = TurnOutput("q", session.run_turn("q", use_memory=False), used_memory=False)
    plain = [repr(output), output._repr_mimebundle_()["text/plain"]]
    plain += [p._repr_mimebundle_()["text/plain"] for p in output.parts()[:1]]
    for shown in plain:
        assert not hidden(shown) and "Done.\\u001b]52;" in shown
    assert output.parts()[0]._repr_mimebundle_()["text/markdown"].startswith(f"Done.{OSC52}")


def test_the_progress_line_shows_a_tool_input_without_escape_sequences() -> None:
    from ipymemory.notebook.progress import ProgressLine

    bundle = ProgressLine._bundle(f"⠋ read_file notes{OSC52}.txt")
    assert not hidden(bundle["text/plain"]) and "notes\\u001b]52;" in bundle["text/plain"]
