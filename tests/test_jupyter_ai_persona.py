"""Issue 27 / SPEC §10: ``@ipymemory`` in Jupyter AI's chat runs the turn ``%%agent`` runs.

The chat tests use the session's real JupyterLab with jupyter-ai 3.2 (``ai_lab``) and
the real anthropic SDK against the scripted Messages API: a ``.chat`` file opened over
jupyterlab-chat's WebSocket as the chat panel opens it (every frame visible), and the
chat panel itself in Chromium, where the batch a message leaves is listed by the
Memory panel and committed there. The settings tests
drive the persona in-process, through jupyter-ai's own ``PersonaManager`` (as its REST
route does), to give it a server config of their own."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_ai_support import PERSONA_ID, AiLab, ask, open_chat, tool_results
from lab_support import PANEL, UI_TIMEOUT, chromium, open_panel, open_review, review_ticks, shot
from messages_server import MessagesServer, Scripted, error, text, tool_use
from record_support import rec
from turn_support import carried_names, memory_text, records_reply, role_of

from ipymemory import MemoryStore, ScriptedModel
from ipymemory.config import resolve
from ipymemory.turn.choosing import choose_memories
from ipymemory.turn.question import Question
from ipymemory.views.history import describe_actor

RECORDS = [rec(f"note-{i}", f"note number {i}", f"Note {i}.") for i in range(5)] + [
    rec("deploy-friday", "deploys on Friday", "Releases go out on Fridays.", "project"),
]
ANSWER = "We release on Fridays, as your notes say."
RUFF = rec("uses-ruff", "lints with ruff", "The project lints with ruff.", "project")


def turn_replies(extracted: list[Any]) -> Any:
    """The scripted model of one ipymemory turn per message: the selector picks
    deploy-friday, the answer is :data:`ANSWER`, the extractor proposes ``extracted``
    (then nothing)."""
    queue = list(extracted)

    def respond(request: dict[str, Any]) -> Scripted:
        role = role_of(request)
        if role == "selector":
            return text('["deploy-friday"]')
        if role == "extractor":
            return records_reply(queue.pop(0)) if queue else text("[]")
        if role == "main":
            return text(ANSWER)
        return error(500, f"unexpected {role} request")

    return respond


def chat_directory(ai_lab: AiLab) -> Path:
    directory = ai_lab.lab.root / f"chat-{uuid.uuid4().hex[:8]}"
    directory.mkdir()
    MemoryStore(directory).extend(RECORDS)
    return directory


def pending_batch(directory: Path) -> dict[str, Any]:
    [path] = (directory / ".memory" / "pending").iterdir()
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_a_message_is_one_turn_over_the_chats_memory_streamed_into_the_chat(
    ai_lab: AiLab,
) -> None:
    directory = chat_directory(ai_lab)
    path = ai_lab.lab.rel(directory / "ideas.chat")
    ai_lab.messages.responder = turn_replies([RUFF])
    start = len(ai_lab.messages.requests)

    # This chat's own words pick its requests: the lab is shared, and an earlier test's
    # memory work may still reach the model while this one runs.
    query = f"When do we release ({uuid.uuid4().hex[:8]})? We lint with ruff, by the way."
    with open_chat(ai_lab.lab, path, PERSONA_ID) as chat:
        asked = chat.send(query, PERSONA_ID)
        chat.until(lambda c: len(c.by(PERSONA_ID)) == 2)
        answer, note = chat.by(PERSONA_ID)
        requests = [r for r in ai_lab.messages.requests[start:] if query in json.dumps(r)]
        # The chat's small set fits the memory budget: injected whole, no selector call
        # before the answer (SPEC §12), exactly as %%agent does.
        assert [role_of(r) for r in requests] == ["main", "extractor"]
        # The answer used the injected memory, and was streamed into the chat (one
        # message, updated piece by piece as the model's reply arrived).
        assert "Releases go out on Fridays." in memory_text(requests[0])
        assert answer["body"] == ANSWER
        assert chat.updates[answer["id"]] > len(ANSWER.split()) // 2
        batch = pending_batch(directory)
        assert f"waiting for your review (batch {batch['id']}): uses-ruff" in note["body"]
        assert [item["name"] for item in batch["items"]] == ["uses-ruff"]
        assert [r.name for r in MemoryStore(directory).records()] == [r.name for r in RECORDS]
        # The journal will say which chat and which message (SPEC §6 actor).
        assert batch["provenance"]["caller"] == {"chat": path, "message_id": asked}
        assert batch["provenance"]["query"].startswith(query[:30])

        # One session per chat: the next message continues the conversation.
        chat.send("And on which day again?", PERSONA_ID)
        chat.until(lambda c: len(c.by(PERSONA_ID)) == 3)
        [main] = [r for r in ai_lab.messages.requests[start:] if role_of(r) == "main"][1:]
        said = json.dumps(main["messages"])
        assert query in said and ANSWER in said


def test_past_the_budget_the_persona_agrees_with_select_on_the_first_request_and_the_pick(
    ai_lab: AiLab,
) -> None:
    # SPEC §13: a set past the memory budget -- the persona's first request carries the
    # keyword ranking at once, the side model's pick (beside the agent's call) joins the
    # request after the tool step; choose_memories, which %memory select and MCP
    # memory_select call, makes the same selection and pick with the server's settings.
    directory = ai_lab.lab.root / f"chat-{uuid.uuid4().hex[:8]}"
    directory.mkdir()
    padding = [
        rec(f"pipeline-note-{i}", f"pipeline note {i} about exports", "detail " * 60)
        for i in range(60)
    ]
    release = rec("release-day", "Deploys go out on Fridays", "Releases ship on Fridays.")
    MemoryStore(directory).extend([release, *padding])
    question = "Which weekday do we ship on?"  # no word of the record's
    path = ai_lab.lab.rel(directory / "ship.chat")

    def respond(request: dict[str, Any]) -> Scripted:
        role = role_of(request)
        if role == "selector":
            return text('["release-day"]')
        if role == "main":
            last = request["messages"][-1]["content"]
            after_tool = isinstance(last, list) and any(
                b.get("type") == "tool_result" for b in last
            )
            if after_tool:
                return text("On Fridays.")
            return tool_use("list_files", {}, delay=0.5)  # the pick arrives meanwhile
        return text("[]")

    ai_lab.messages.responder = respond
    start = len(ai_lab.messages.requests)
    with open_chat(ai_lab.lab, path, PERSONA_ID) as chat:
        chat.send(question, PERSONA_ID)
        chat.until(
            lambda c: len(c.by(PERSONA_ID)) >= 1 and "Fridays" in c.by(PERSONA_ID)[0]["body"]
        )
    main = [r for r in ai_lab.messages.requests[start:] if role_of(r) == "main"]
    assert len(main) == 2
    # The server's settings (jupyter_ai_support.scripted_models), the defaults otherwise.
    settings = resolve(env={"IPYMEMORY_USER_DIR": "off", "IPYMEMORY_SELECTOR": "model"})
    chosen = choose_memories(
        ScriptedModel(selector=['["release-day"]']),
        Question.of(question),
        MemoryStore(directory),
        None,
        settings,
    )
    assert chosen.selection.source == "keyword" and "release-day" not in chosen.selection.names
    assert [r.name for r in chosen.added] == ["release-day"]
    assert carried_names(main[0]) == list(chosen.selection.names)
    assert carried_names(main[1]) == [r.name for r in chosen.records()]


def test_the_rest_route_answers_from_the_server_roots_memory(ai_lab: AiLab) -> None:
    """``POST /api/ai/message/ipymemory`` runs the turn in a throwaway chat at the root."""
    ai_lab.messages.responder = turn_replies([])
    start = len(ai_lab.messages.requests)
    MemoryStore(ai_lab.lab.root).extend([rec("root-only", "kept at the root", "Root note.")])

    response = ask(ai_lab.lab, "ipymemory", "What is kept at the root?")

    assert response == ANSWER  # nothing new to remember: no note
    [main] = [r for r in ai_lab.messages.requests[start:] if role_of(r) == "main"]
    assert "Root note." in memory_text(main)


# --- issue 41: a chat's turn stays inside its own directory and the root ---------------

SECRET = "the outside secret 7f3d"


def reads_then_answers(paths: list[str]) -> Any:
    """The turn's model asks read_file for each of ``paths`` in turn, then answers;
    nothing to remember."""
    queue = list(paths)

    def respond(request: dict[str, Any]) -> Scripted:
        if role_of(request) != "main":
            return text("[]")
        return tool_use("read_file", {"path": queue.pop(0)}) if queue else text(ANSWER)

    return respond


def test_the_turns_file_tools_never_read_outside_the_chats_directory(
    ai_lab: AiLab, tmp_path: Path
) -> None:
    """``..``, an absolute path, a symlink out of the chat's directory, or a file of
    another directory of the root: each read is refused, and the secret never reaches
    the model."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    directory = chat_directory(ai_lab)
    (directory / "leak").symlink_to(outside / "secret.txt")
    sibling = chat_directory(ai_lab)
    (sibling / "other.txt").write_text(SECRET)
    (directory / "notes.txt").write_text("Fine to read.")
    paths = [
        f"../{sibling.name}/other.txt",
        str(outside / "secret.txt"),
        "leak",
        "../../" + outside.name + "/secret.txt",
        "notes.txt",
    ]
    ai_lab.messages.responder = reads_then_answers(paths)
    start = len(ai_lab.messages.requests)

    with open_chat(ai_lab.lab, ai_lab.lab.rel(directory / "ask.chat"), PERSONA_ID) as chat:
        chat.send("Read those files.", PERSONA_ID)
        chat.until(lambda c: any(m["body"] == ANSWER for m in c.by(PERSONA_ID)))

    mains = [r for r in ai_lab.messages.requests[start:] if role_of(r) == "main"]
    results = tool_results(mains[-1])
    assert len(results) == len(paths)
    assert all(SECRET not in json.dumps(r) for r in mains)
    assert "Fine to read." in results[-1]
    for path, refused in zip(paths[:-1], results[:-1], strict=True):
        assert (
            refused
            == f"read_file: {path!r} is outside the workspace; only paths inside it are allowed"
        )


def test_a_chat_in_a_directory_linked_out_of_the_root_runs_no_turn(
    ai_lab: AiLab, tmp_path: Path
) -> None:
    """A chat in a directory of the root that is a symlink to elsewhere: ``@ipymemory``
    says why it will not work there; no model is asked, nothing is written there."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    MemoryStore(outside).extend([rec("outside-note", "kept outside the root", "Outside.")])
    (outside / "secret.txt").write_text(SECRET)
    link = ai_lab.lab.root / f"out-{uuid.uuid4().hex[:6]}"
    link.symlink_to(outside)
    ai_lab.messages.responder = turn_replies([RUFF])
    start = len(ai_lab.messages.requests)
    before = sorted(p.name for p in (outside / ".memory").iterdir())

    # This chat's own words: the lab is shared, and an earlier test's memory work may
    # still reach the model while this one runs.
    query = f"What is kept here ({uuid.uuid4().hex[:8]})? We lint with ruff."
    with open_chat(ai_lab.lab, ai_lab.lab.rel(link / "x.chat"), PERSONA_ID) as chat:
        chat.send(query, PERSONA_ID)
        chat.until(lambda c: bool(c.by(PERSONA_ID)))
        [said] = chat.by(PERSONA_ID)

    assert said["body"].startswith("ipymemory: this chat's directory")
    assert "outside the Jupyter server's root" in said["body"]
    asked = [r for r in ai_lab.messages.requests[start:] if query in json.dumps(r)]
    assert asked == []
    assert sorted(p.name for p in (outside / ".memory").iterdir()) == before


def test_the_rest_route_parts_the_memory_note_from_the_answer(ai_lab: AiLab) -> None:
    """Issue 43: the route joins the persona's messages into one text; the note about
    the memory starts a paragraph of its own (it used to read "…memory).Proposed…"), and
    ``ipymemory pending`` says the batch came from the chat."""
    ai_lab.messages.responder = turn_replies([rec("uses-ruff", "lints with ruff", "Ruff.")])
    response = ask(ai_lab.lab, "ipymemory", "We lint with ruff.")
    assert response.startswith(ANSWER + "\n\nProposed for memory, waiting for your review")
    done = subprocess.run(
        [sys.executable, "-m", "ipymemory.cli", "--dir", str(ai_lab.lab.root), "pending"],
        capture_output=True,
        text=True,
        env={**os.environ, "IPYMEMORY_USER_DIR": "off"},
    )
    data = subprocess.run(
        [sys.executable, "-m", "ipymemory.cli", "--dir", str(ai_lab.lab.root), "--json", "pending"],
        capture_output=True,
        text=True,
        env={**os.environ, "IPYMEMORY_USER_DIR": "off"},
    )
    [batch] = [b for b in json.loads(data.stdout)["batches"] if b["names"] == ["uses-ruff"]]
    assert batch["source"].startswith("from the chat ") and batch["source"].endswith(".chat")
    assert "from the chat " in done.stdout  # the table says it too


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as chromium_browser:
        yield chromium_browser


@pytest.mark.browser
@pytest.mark.timeout(240)
def test_in_the_lab_chat_then_the_memory_panel_commits_the_batch(
    ai_lab: AiLab, browser: Any
) -> None:
    """As a person does it: pick ipymemory in the chat's persona picker, send, read the
    answer; the Memory panel (of a notebook in that directory: the panel follows the
    notebook in focus) lists the batch, and its review commits it."""
    directory = chat_directory(ai_lab)
    chat_file = directory / "ideas.chat"
    chat_file.write_text(json.dumps({"messages": [], "users": {}, "attachments": {}}))
    path = ai_lab.lab.rel(chat_file)
    ai_lab.messages.responder = turn_replies([RUFF])
    errors: list[str] = []
    page = browser.new_page(viewport={"width": 1500, "height": 1000})
    page.set_default_timeout(UI_TIMEOUT)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{ai_lab.lab.url}lab/tree/{path}?token={ai_lab.lab.token}")
        composer = page.locator(".jp-chat-input-container")
        composer.wait_for(timeout=60_000)
        composer.get_by_text("No one").click()  # the persona picker
        page.get_by_text("ipymemory", exact=True).first.click()
        box = composer.locator("textarea").first
        box.fill("We lint with ruff.")
        box.press("Enter")
        page.get_by_text(ANSWER).wait_for()
        page.get_by_text("waiting for your review").wait_for()
        shot(page, "jupyter-ai", "chat")
        batch = pending_batch(directory)
        [asked] = [m["id"] for m in json.loads(chat_file.read_text())["messages"]
                   if m["body"] == "We lint with ruff."]  # fmt: skip
        assert batch["provenance"]["caller"] == {"chat": path, "message_id": asked}

        notebook = nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_markdown_cell("# Notes beside the chat")],
            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        )
        nbformat.write(notebook, directory / "review.ipynb")
        page.goto(f"{ai_lab.lab.url}lab/tree/{ai_lab.lab.rel(directory / 'review.ipynb')}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
        panel = open_panel(page)
        listed = panel.locator(f'.jp-ipymemory-pending-batch[data-batch="{batch["id"]}"]')
        listed.wait_for(state="visible")
        assert "uses-ruff" in listed.inner_text()
        shot(page, "jupyter-ai", "pending")
        review = open_review(panel, batch["id"])
        assert review_ticks(review) == {"uses-ruff": True}  # the user said it: not held
        review.get_by_role("button", name="Commit").click()
        page.wait_for_function(
            """([panel, name]) => !document.querySelector(panel + ' .jp-ipymemory-pending-batch')
                && !!document.querySelector(`${panel} .jp-ipymemory-row[data-name="${name}"]`)""",
            arg=[PANEL, "uses-ruff"],
        )
        shot(page, "jupyter-ai", "committed")
    except BaseException:
        shot(page, "jupyter-ai", "failure")
        raise
    finally:
        page.close()
    store = MemoryStore(directory)
    assert [r.name for r in store.records()] == [*(r.name for r in RECORDS), "uses-ruff"]
    entry = store.history(1)[0]
    assert (entry.actor["chat"], entry.actor["message_id"]) == (path, asked)
    assert entry.actor["batch"] == batch["id"] and entry.actor["decided_by"] == "lab-panel"
    assert describe_actor(entry.actor) == f"ideas.chat message {asked[:8]}"
    assert not [e for e in errors if "ipymemory" in e], errors


# --- in-process: the persona under jupyter-ai's PersonaManager, a config of its own ------


@pytest.fixture(autouse=True)
def no_litellm_fetch(monkeypatch: pytest.MonkeyPatch) -> None:
    # LiteLLM (Jupyternaut's, loaded with the personas) would fetch its price list.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def run_persona(root: Path, config: dict[str, Any], body: str) -> list[str]:
    """One message to ``@ipymemory`` in a throwaway chat at ``root`` (what jupyter-ai's
    REST route builds), the server's traitlets ``config`` given; the chat's messages."""
    from jupyter_ai_persona_manager import PersonaManager
    from jupyterlab_chat.models import Message
    from jupyterlab_chat.ychat import YChat
    from traitlets.config import Config

    async def main() -> list[str]:
        chat = YChat()
        chat.initial_path = f"{uuid.uuid4()}.chat"
        manager = PersonaManager(
            chat=chat,
            root_dir=str(root),
            event_loop=asyncio.get_running_loop(),
            config=Config(config),
        )
        persona = manager.personas[PERSONA_ID]
        message = Message(id="m-1", body=body, time=time.time(), sender="user")
        await persona.on_message(message)
        return [m.body for m in chat.get_messages()]

    return asyncio.run(main())


def test_auto_mode_in_the_servers_config_commits_and_the_chat_says_so(
    tmp_path: Path, messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``c.IPyMemory.commit_mode = "auto"`` in the Jupyter server's config plays
    ``%config``'s part: the clean item is committed at once."""
    MemoryStore(tmp_path).extend(RECORDS)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.base_url)
    messages_server.responder = turn_replies([RUFF])

    said = run_persona(tmp_path, {"IPyMemory": {"commit_mode": "auto"}}, "We lint with ruff.")

    # (The note starts with a blank line: where the REST route joins the messages, it is
    # a paragraph of its own; Markdown shows nothing of it in the chat.)
    assert said == [ANSWER, "\n\nRemembered: uses-ruff."]
    store = MemoryStore(tmp_path)
    assert "uses-ruff" in {r.name for r in store.records()}
    entry = store.history(1)[0]
    assert entry.actor["decided_by"] == "auto" and entry.actor["message_id"] == "m-1"
    assert not (tmp_path / ".memory" / "pending").exists() or not any(
        (tmp_path / ".memory" / "pending").iterdir()
    )


def test_without_a_model_the_chat_is_told_what_to_set(tmp_path: Path) -> None:
    said = run_persona(tmp_path, {}, "Hello?")
    [message] = said
    assert message.startswith("ipymemory could not answer:") and "ANTHROPIC_API_KEY" in message
