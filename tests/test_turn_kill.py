"""A kernel killed during the memory work after an answer (issue 13): the store holds
the set from before or the whole new one (items and consolidation in one swap), never a
part of it, and what earlier turns committed stays."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
from typing import Any

import pytest
from messages_server import MessagesServer, Scripted, text
from record_support import rec
from turn_support import plan_reply, records_reply, role_of

from ipymemory import MemoryStore
from ipymemory.store.maintenance import check

_CHILD = """
import sys
import anthropic
from ipymemory import AgentSession, AnthropicModel, SessionConfig

workspace, base_url = sys.argv[1:3]
client = anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0, timeout=30)
model = AnthropicModel("child-main", side_model="child-side", client=client)
config = SessionConfig(commit_mode="auto", consolidate_threshold=3, consolidate_every=1)
session = AgentSession(workspace, model=model, config=config)
session.run_turn("first")
session.run_turn("second")
print("finished", flush=True)
"""

BEFORE = ["x-note", "a-note"]  # the first turn commits a-note onto x-note
AFTER = ["b-note", "xa-merged"]  # the second: b-note and a merge of x and a


@pytest.mark.parametrize("seed", range(3))
def test_a_kill_during_the_memory_work_leaves_no_partial_set(
    messages_server: MessagesServer, workspace: str, seed: int
) -> None:
    MemoryStore(workspace).extend([rec("x-note")])
    rng = random.Random(seed)
    child: dict[str, subprocess.Popen[str]] = {}
    extracts = 0

    def respond(body: dict[str, Any]) -> Scripted:
        nonlocal extracts
        role = role_of(body)
        if role == "main":
            return text("An answer.")
        if role == "extractor":
            extracts += 1
            return records_reply(rec("a-note") if extracts == 1 else rec("b-note"))
        assert role == "consolidator"
        # The plan is on its way; the kernel dies at some moment of the commit after it.
        delay = rng.uniform(0.0, 0.06)
        threading.Timer(delay, lambda: os.kill(child["p"].pid, signal.SIGKILL)).start()
        return plan_reply(["x-note", "a-note"], [rec("xa-merged", body="x and a")])

    messages_server.responder = respond
    child["p"] = subprocess.Popen(
        [sys.executable, "-c", _CHILD, workspace, messages_server.base_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, err = child["p"].communicate(timeout=120)
    assert child["p"].returncode in (-signal.SIGKILL, 0), err
    names = [r.name for r in MemoryStore(workspace).records()]
    # The first turn's commit is kept; the second's is all there or not at all.
    assert names in (BEFORE, AFTER), names
    report = check(workspace)
    assert report.ok, json.dumps([str(p) for p in report])
