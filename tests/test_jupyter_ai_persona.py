"""Issue 27 / SPEC §10: ``@ipymemory`` in Jupyter AI's chat runs the turn ``%%agent`` runs.

The chat tests use the session's real JupyterLab with jupyter-ai 3.2 (``ai_lab``): a
``.chat`` file opened over jupyterlab-chat's WebSocket as the chat panel opens it, the
real anthropic SDK against the scripted Messages API. The batch a message leaves is
then decided in JupyterLab in Chromium: the Memory panel lists it, a notebook of the
same directory commits it. The settings tests drive the persona in-process, through
jupyter-ai's own ``PersonaManager`` (as its REST route does), to give it a server
config of their own."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_ai_support import PERSONA_ID, AiLab, ask, open_chat
from lab_support import PANEL, UI_TIMEOUT, chromium, open_page, open_panel, run_all_cells, shot
from messages_server import MessagesServer, Scripted, error, text
from record_support import rec
from turn_support import memory_text, records_reply, role_of

from ipymemory import MemoryStore
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

    with open_chat(ai_lab.lab, path, PERSONA_ID) as chat:
        asked = chat.send("When do we release? We lint with ruff, by the way.", PERSONA_ID)
        chat.until(lambda c: len(c.by(PERSONA_ID)) == 2)
        answer, note = chat.by(PERSONA_ID)
        requests = ai_lab.messages.requests[start:]
        assert [role_of(r) for r in requests] == ["selector", "main", "extractor"]
        # The answer used the injected memory, and was streamed into the chat (one
        # message, updated piece by piece as the model's reply arrived).
        assert "Releases go out on Fridays." in memory_text(requests[1])
        assert answer["body"] == ANSWER
        assert chat.updates[answer["id"]] > len(ANSWER.split()) // 2
        batch = pending_batch(directory)
        assert f"waiting for your review (batch {batch['id']}): uses-ruff" in note["body"]
        assert [item["name"] for item in batch["items"]] == ["uses-ruff"]
        assert [r.name for r in MemoryStore(directory).records()] == [r.name for r in RECORDS]
        # The journal will say which chat and which message (SPEC §6 actor).
        assert batch["provenance"]["caller"] == {"chat": path, "message_id": asked}
        assert batch["provenance"]["query"].startswith("When do we release?")

        # One session per chat: the next message continues the conversation.
        chat.send("And on which day again?", PERSONA_ID)
        chat.until(lambda c: len(c.by(PERSONA_ID)) == 3)
        [main] = [r for r in ai_lab.messages.requests[start:] if role_of(r) == "main"][1:]
        said = json.dumps(main["messages"])
        assert "When do we release?" in said and ANSWER in said


def test_the_rest_route_answers_from_the_server_roots_memory(ai_lab: AiLab) -> None:
    """``POST /api/ai/message/ipymemory`` runs the turn in a throwaway chat at the root."""
    ai_lab.messages.responder = turn_replies([])
    start = len(ai_lab.messages.requests)
    MemoryStore(ai_lab.lab.root).extend([rec("root-only", "kept at the root", "Root note.")])

    response = ask(ai_lab.lab, "ipymemory", "What is kept at the root?")

    assert response == ANSWER  # nothing new to remember: no note
    [main] = [r for r in ai_lab.messages.requests[start:] if role_of(r) == "main"]
    assert "Root note." in memory_text(main)


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as chromium_browser:
        yield chromium_browser


@pytest.mark.browser
@pytest.mark.timeout(240)
def test_the_chats_batch_is_listed_in_the_lab_panel_and_committed_in_the_lab(
    ai_lab: AiLab, browser: Any
) -> None:
    directory = chat_directory(ai_lab)
    path = ai_lab.lab.rel(directory / "ideas.chat")
    ai_lab.messages.responder = turn_replies([RUFF])
    with open_chat(ai_lab.lab, path, PERSONA_ID) as chat:
        asked = chat.send("We lint with ruff.", PERSONA_ID)
        chat.until(lambda c: len(c.by(PERSONA_ID)) == 2)
    batch_id = pending_batch(directory)["id"]
    cells = ["%load_ext ipymemory", f"%memory pending --open {batch_id}"]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in cells],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )
    nbformat.write(notebook, directory / "review.ipynb")

    errors: list[str] = []
    page = open_page(browser, ai_lab.lab, ai_lab.lab.rel(directory / "review.ipynb"), errors)
    try:
        panel = open_panel(page)
        listed = panel.locator(f'.jp-ipymemory-pending-batch[data-batch="{batch_id}"]')
        listed.wait_for(state="visible", timeout=UI_TIMEOUT)
        assert "uses-ruff" in listed.inner_text()
        shot(page, "jupyter-ai", "pending")
        run_all_cells(page)
        page.get_by_role("button", name="Commit").click()
        page.wait_for_function(
            """([panel, name]) => !document.querySelector(panel + ' .jp-ipymemory-pending-batch')
                && !!document.querySelector(`${panel} .jp-ipymemory-row[data-name="${name}"]`)""",
            arg=[PANEL, "uses-ruff"],
            timeout=UI_TIMEOUT,
        )
        shot(page, "jupyter-ai", "committed")
    except BaseException:
        shot(page, "jupyter-ai", "failure")
        raise
    finally:
        page.close()
    store = MemoryStore(directory)
    assert "uses-ruff" in {r.name for r in store.records()}
    entry = store.history(1)[0]
    assert (entry.actor["chat"], entry.actor["message_id"]) == (path, asked)
    assert entry.actor["batch"] == batch_id and entry.actor["decided_by"] == "review"
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

    assert said == [ANSWER, "Remembered: uses-ruff."]
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
