"""The doors a change enters by (ipymemory/review/door.py, issue 42): one list, no free
strings, and what pending/ and the journal say of them reads back the same."""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path
from typing import Any

import pytest

import ipymemory
from ipymemory.review.door import Door
from ipymemory.review.pending import PendingFiles
from ipymemory.review.provenance import TurnProvenance

PACKAGE = Path(ipymemory.__file__).parent


def _saved(tmp_path: Path, provenance: dict[str, Any] | None) -> Path:
    """A pending file as an earlier version (or a person) wrote it."""
    pending = tmp_path / ".memory" / "pending"
    pending.mkdir(parents=True)
    data = {
        "version": 1,
        "id": "d00r",
        "saved_at": time.time(),
        "status": "pending",
        "items": [{"name": "a", "type": "project", "description": "A", "body": "Runs at 2am."}],
        "plan": None,
        "base": [],
        "provenance": provenance,
        "origins": {"a": "user"},
    }
    (pending / "d00r.json").write_text(json.dumps(data), encoding="utf-8")
    return tmp_path / ".memory"


def test_every_value_written_before_is_a_door() -> None:
    written = ["turn", "consolidate", "undo", "restore", "mcp", "memory-tool", "memory-store"]
    written += ["import", "import claude-code", "cli", "notebook", "move"]
    assert sorted(Door(v).value for v in written) == sorted(d.value for d in Door)
    assert {d for d in Door if d.agent} == {Door.MCP, Door.MEMORY_TOOL, Door.MEMORY_STORE}
    assert json.dumps({"via": Door.MEMORY_TOOL}) == '{"via": "memory-tool"}'


def test_a_provenance_takes_a_door_or_its_value_and_nothing_else() -> None:
    assert TurnProvenance("s", via="mcp").via is Door.MCP  # type: ignore[arg-type]
    assert TurnProvenance("s").via is Door.TURN
    with pytest.raises(ValueError):
        TurnProvenance("s", via="telepathy")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("via", "door"),
    [(None, Door.TURN), ("memory-store", Door.MEMORY_STORE), ("undo", Door.UNDO)],
)
def test_a_saved_batch_reads_its_door(tmp_path: Path, via: str | None, door: Door) -> None:
    provenance: dict[str, Any] = {"session": "s", "query": "when?"}
    if via is not None:
        provenance["via"] = via
    files = PendingFiles(_saved(tmp_path, provenance))
    [saved], problems = files.load()
    assert problems == [] and saved.via is door
    assert saved.batch.provenance is not None and saved.batch.provenance.via is door


def test_a_saved_batch_naming_no_known_door_keeps_no_provenance(tmp_path: Path) -> None:
    """A hand-edited door is not believed: the batch opens without its provenance, so
    its items are trusted no more than an unknown turn's (at most ``assistant``)."""
    files = PendingFiles(_saved(tmp_path, {"session": "s", "via": "backdoor", "query": "q"}))
    [saved], problems = files.load()
    assert problems == [] and saved.via is None
    batch = saved.batch
    assert batch.provenance is None and batch.names == ("a",)
    assert dict(batch.origins) == {"a": "assistant"}


def _free_string_doors(source: str) -> list[int]:
    """Lines passing a door as a string literal: ``via="…"`` or ``{"via": "…"}``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.keyword) and node.arg == "via":
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.append(node.value.lineno)
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and key.value == "via"
                    and isinstance(value, ast.Constant)
                    and isinstance(value.value, str)
                ):
                    lines.append(key.lineno)
        if isinstance(node, ast.Compare) and any(
            isinstance(c, ast.Constant) and c.value in {d.value for d in Door}
            for c in node.comparators
        ):
            text = ast.unparse(node.left)
            if "via" in text:
                lines.append(node.lineno)
    return sorted(lines)


def test_no_door_is_a_free_string_in_the_package() -> None:
    found = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := _free_string_doors(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_free_string_check_finds_each_form() -> None:
    source = 'f(via="mcp")\nx = {"via": "cli"}\nif actor.get("via") == "move":\n    pass\n'
    assert _free_string_doors(source) == [1, 2, 3]
    assert _free_string_doors("f(via=Door.MCP)\nx = {'via': Door.CLI}\n") == []
