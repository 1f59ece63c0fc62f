"""A project synced with the local memory-store server: the set here, the memories
there (as an agent session or a person writes them, or as the SDK reads them), the
command line, and deciding pulled batches as a person would (``commit --batch``)."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import pytest
from memory_store_server import API_KEY, MemoryStoreServer, session_actor

from ipymemory import MemoryRecord, MemoryStore
from ipymemory.cli import main
from ipymemory.store.record import render_record
from ipymemory.sync.remote import RemoteStore
from ipymemory.sync.run import Sync

STORE_ID = "memstore_01TestStore"
#: Big enough for the tests' sets (the defaults bound a set to 200 short records).
BIG = {"max_index_lines": 2000, "max_index_bytes": 1 << 20}


def text_of(record: MemoryRecord) -> str:
    """The record file's text: what one memory holds."""
    return render_record(record).decode("utf-8")


def record_text(name: str, body: str, description: str | None = None, type: str = "project") -> str:
    """A record file as an agent writes one through the mount."""
    return (
        f"---\nname: {name}\ndescription: {description or f'about {name}'}\ntype: {type}\n"
        f"---\n\n{body}\n"
    )


@dataclass
class Project:
    server: MemoryStoreServer
    workspace: Path
    monkeypatch: pytest.MonkeyPatch

    @property
    def store(self) -> MemoryStore:
        return MemoryStore(self.workspace, **BIG)

    @property
    def prefix(self) -> str:
        return f"/ipymemory/{self.workspace.name}/"

    def path(self, name: str) -> str:
        return f"{self.prefix}{name}.md"

    def remote(self, max_retries: int = 2) -> RemoteStore:
        client = anthropic.Anthropic(
            api_key=API_KEY, base_url=self.server.base_url, max_retries=max_retries
        )
        return RemoteStore(STORE_ID, client)

    def sync(self, remote: RemoteStore | None = None) -> Sync:
        return Sync(self.store, remote or self.remote(), self.prefix, user_store=self.user_store())

    def user_store(self) -> MemoryStore | None:
        """The user scope as the command line finds it (``IPYMEMORY_USER_DIR``)."""
        user_dir = os.environ.get("IPYMEMORY_USER_DIR", "off")
        return None if user_dir == "off" else MemoryStore(user_dir)

    # --- there ------------------------------------------------------------------------

    def there(self) -> dict[str, str]:
        """name -> content of the memories under the prefix."""
        return {
            path[len(self.prefix) : -len(".md")]: content
            for path, content in self.server.contents(STORE_ID, self.prefix).items()
        }

    def agent_writes(self, name: str, content: str, *, by: dict[str, str] | None = None) -> None:
        """An agent session (or ``by``) writes ``content`` to the record's memory."""
        self.server.write(STORE_ID, self.path(name), content, by=by or session_actor())

    def agent_deletes(self, name: str, *, by: dict[str, str] | None = None) -> None:
        self.server.remove(STORE_ID, self.path(name), by=by or session_actor())

    # --- here -------------------------------------------------------------------------

    def edit(self, name: str, body: str) -> MemoryRecord:
        """A person edits record ``name`` here (one update commit); returns the new one."""
        store = self.store
        old = store.get(name)
        new = MemoryRecord(name=name, type=old.type, description=old.description, body=body)
        store.apply_consolidation(
            base_records=[old], source_names=[name], replacements=[new], updates={name: name}
        )
        return new

    def names(self) -> list[str]:
        return sorted(r.name for r in self.store.records())

    def cli(self, *argv: str) -> tuple[int, str, str]:
        """``ipymemory --dir WORKSPACE ARGV`` in this process (the env points the SDK at
        the server and names the store)."""
        out, err = io.StringIO(), io.StringIO()
        code = main(["--dir", str(self.workspace), *argv], stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def cli_json(self, *argv: str) -> Any:
        code, out, err = self.cli("--json", *argv)
        assert code in (0, 1), err
        return json.loads(out)

    def decide(
        self,
        batch: str,
        *,
        reject: Sequence[str] = (),
        discard: bool = False,
        accept: Sequence[str] = (),
        accept_plan: bool = False,
    ) -> str:
        """A person's decision on the command line; returns what it printed. What is
        held for review is committed only when named (``accept``, ``accept_plan``)."""
        if discard:
            code, out, err = self.cli("discard", "--batch", batch)
        else:
            extra = ["--reject", *reject] if reject else []
            extra += ["--accept", *accept] if accept else []
            extra += ["--accept-plan"] if accept_plan else []
            code, out, err = self.cli("commit", "--batch", batch, *extra)
        assert code == 0, err
        return out


def project(
    server: MemoryStoreServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    records: Sequence[MemoryRecord] = (),
    name: str = "analysis",
) -> Project:
    """A workspace ``name`` holding ``records``, the environment set for the CLI."""
    ws = tmp_path / name
    ws.mkdir()
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("IPYMEMORY_MEMORY_STORE", STORE_ID)
    out = Project(server, ws, monkeypatch)
    if records:
        out.store.extend(records)
    return out
