"""Issue 43 item 2: ``%%agent`` in a terminal IPython writes its live parts once.

Terminal IPython is run for real -- under a pseudo-terminal (stdout a TTY), and with
its input and output piped (not a TTY) -- against the local Messages API, which streams
an answer word by word over a few seconds. On a TTY the progress line is redrawn in
place and the answer appended once; through a pipe everything is plain appended text.
What a TTY shows is read back through a small terminal model (carriage return, erase
line, new line), as the person at the terminal would see it.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from messages_server import MessagesServer, Scripted, text
from turn_support import role_of

ANSWER = " ".join(f"word{i}" for i in range(60)) + "."
QUESTION = b"%%agent\nHow should I indent?\n\n\n"


@pytest.fixture
def streaming(messages_server: MessagesServer) -> MessagesServer:
    """The agent's answer streams word by word (~2 s); the extractor finds nothing."""

    def respond(body: dict[str, Any]) -> Scripted:
        return text(ANSWER, chunk_delay=0.03) if role_of(body) == "main" else text("[]")

    messages_server.responder = respond
    return messages_server


def _env(server: MessagesServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IPYMEMORY_", "ANTHROPIC_"))}
    return {
        **env,
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": server.base_url,
        "IPYMEMORY_USER_DIR": "off",
        "IPYMEMORY_FOLLOW_CHECK": "false",
        "TERM": "xterm",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }


IPYTHON = [
    sys.executable,
    "-m",
    "IPython",
    "--simple-prompt",
    "--no-banner",
    "--colors=NoColor",
    "--HistoryManager.enabled=False",
]


@pytest.fixture
def terminal(
    streaming: MessagesServer, workspace: str
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """Terminal IPython on a pseudo-terminal; yields it and the master side."""
    master, slave = pty.openpty()
    child = subprocess.Popen(
        IPYTHON, stdin=slave, stdout=slave, stderr=slave, cwd=workspace, env=_env(streaming)
    )
    os.close(slave)
    try:
        yield child, master
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(30)
        os.close(master)


def _read_until(master: int, seen: bytearray, marker: bytes, timeout: float = 90) -> None:
    end = time.monotonic() + timeout
    # poll, not select: a worker that has run many tests may hold descriptors past 1024.
    poller = select.poll()
    poller.register(master, select.POLLIN)
    while marker not in seen:
        assert time.monotonic() < end, f"no {marker!r} in {bytes(seen)!r}"
        if poller.poll(200):
            try:
                seen += os.read(master, 65536)
            except OSError:  # the child is gone
                break


def screen(raw: str) -> list[str]:
    """The lines a terminal shows for ``raw``: CR goes to the line's start, ``ESC[2K``
    erases it, LF starts a new one; other escape sequences (the window title) draw
    nothing."""
    lines: list[list[str]] = [[]]
    col = 0
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\x1b":
            if raw.startswith("\x1b[2K", i):
                lines[-1] = []
                i += 4
                continue
            match = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07]*\x07)").match(raw, i)
            i = match.end() if match else i + 1
            continue
        if ch == "\r":
            col = 0
        elif ch == "\n":
            lines.append([])
            col = 0
        else:
            line = lines[-1]
            line[col : col + 1] = [ch]
            col += 1
        i += 1
    return ["".join(line) for line in lines]


def test_on_a_tty_the_answer_is_written_once_and_the_progress_line_in_place(
    terminal: tuple[subprocess.Popen[bytes], int],
) -> None:
    _, master = terminal
    seen = bytearray()
    _read_until(master, seen, b"In [1]")
    os.write(master, b"%load_ext ipymemory\n")
    _read_until(master, seen, b"In [2]")
    start = len(seen)
    os.write(master, QUESTION)
    _read_until(master, seen, b"In [3]")
    os.write(master, b"exit\n")
    raw = bytes(seen[start:]).decode("utf-8", "replace")
    # Each word of the answer reached the terminal once (not once per re-render).
    assert raw.count("word59.") == 1 and raw.count("word0 ") == 1
    # The progress line was redrawn in place: a carriage return and an erase, never a
    # new line per frame; only its final summary stays.
    assert "\r\x1b[2K" in raw
    shown = [line for line in screen(raw) if line.strip()]
    turn = shown[next(i for i, line in enumerate(shown) if "How should I indent?" in line) :]
    assert [line for line in turn if ANSWER in line] == [ANSWER]
    assert not any("waiting for the model" in line for line in turn)
    assert sum("answered in" in line for line in turn) == 1
    assert len(turn) <= 8, turn
    # Scrollback in proportion to the answer (it was 30 times its size).
    assert len(raw.encode()) < 4 * len(ANSWER) + 2000


def test_through_a_pipe_it_is_plain_appended_text(
    streaming: MessagesServer, workspace: str
) -> None:
    done = subprocess.run(
        IPYTHON,
        input=b"%load_ext ipymemory\n" + QUESTION + b"exit\n",
        capture_output=True,
        cwd=workspace,
        env=_env(streaming),
        timeout=180,
    )
    out = done.stdout.decode()
    turn = out.split("How should I indent?", 1)[-1] if "How should I indent?" in out else out
    assert "answered in" in turn, out
    assert "\r" not in turn and "\x1b" not in turn
    assert turn.count("word59.") == 1 and ANSWER in turn
    # The progress line only when its phase changes: no frame repeated.
    frames = [line for line in turn.splitlines() if line and line[0] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"]
    phases = [re.sub(r"\(\d+\.\d s\)", "", line[2:]) for line in frames]
    assert frames and len(phases) == len(set(phases)), (frames, out)
