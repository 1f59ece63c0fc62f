"""Shared fixtures: a scripted Messages-API server and a fresh workspace."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from messages_server import MessagesServer


@pytest.fixture
def messages_server() -> Iterator[MessagesServer]:
    srv = MessagesServer().start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> str:
    ws = tmp_path / "ws"
    ws.mkdir()
    return str(ws)
