"""What the server endpoint answers: a directory confined to the server root, and its set.

Pure and synchronous (the handlers run it off the event loop). Nothing here writes.
Every failure becomes a JSON-ready payload with an ``error`` message; a broken
``.memory/`` is data to show, not an exception to propagate.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from jupyter_core.paths import is_hidden

from .. import _constants as C
from ..errors import MemoryStoreError
from ..review.listing import listing
from ..review.pending import PendingFiles
from ..review.scopes import read_user_scope, unreadable_note
from ..screen import redact_data
from ..store.layout import MANIFEST_NAME, MEMORY_DIR_NAME
from ..store.record import StoredRecord, redacted_fields
from ..store.store import MemoryStore

__all__ = [
    "Refusal",
    "Workspace",
    "confine",
    "escaping_link",
    "list_memory",
    "read_record",
    "shown_path",
]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Refusal:
    """A request the endpoint will not serve: HTTP status and a message for the user."""

    status: int
    message: str

    def payload(self, directory: str) -> dict[str, Any]:
        return {"directory": directory, "records": [], "mtime": None, "error": self.message}


@dataclass(frozen=True)
class Workspace:
    """A directory inside the server root (both resolved, symlinks followed)."""

    root: Path
    directory: Path

    @property
    def rel(self) -> str:
        """The directory relative to the server root, POSIX style; ``""`` for the root."""
        rel = self.directory.relative_to(self.root).as_posix()
        return "" if rel == "." else rel

    @property
    def memory_dir(self) -> Path:
        return self.directory / MEMORY_DIR_NAME

    @property
    def rel_memory(self) -> str:
        """``.memory`` relative to the server root."""
        return str(PurePosixPath(self.rel, MEMORY_DIR_NAME))

    def rel_file(self, file: str) -> str:
        """Path of a record file relative to the server root (what the Contents API takes)."""
        return str(PurePosixPath(self.rel, MEMORY_DIR_NAME, file))

    def scrub(self, message: str) -> str:
        """Show paths in messages relative to the server root, as the client knows them."""
        return message.replace(str(self.root) + os.sep, "")


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def confine(root_dir: str, requested: str, *, allow_hidden: bool = False) -> Workspace | Refusal:
    """Map ``requested`` (a directory relative to the server root) into the root, or refuse.

    Absolute paths are a bad request (400); anything resolving outside the root after
    following symlinks, ``..`` included, is forbidden (403). Unless ``allow_hidden`` (the
    server's ``ContentsManager.allow_hidden``), a directory that is hidden or inside a
    hidden directory, as requested or as resolved, is not found (404), as the Contents
    API answers; the ``.memory`` directory itself is what we serve, so it is exempt.
    """
    if "\x00" in requested:
        return Refusal(400, "path contains a NUL character")
    if requested.startswith(("/", "\\")) or PureWindowsPath(requested).drive:
        return Refusal(400, f"path must be relative to the server root, got {requested!r}")
    root = Path(root_dir).resolve()
    directory = (root / requested).resolve()
    if not _inside(directory, root):
        return Refusal(403, f"path {requested!r} is outside the server root")
    if not directory.exists():
        return Refusal(404, f"no such directory: {requested!r}")
    if not directory.is_dir():
        return Refusal(400, f"not a directory: {requested!r}")
    if not allow_hidden and _hidden(root, requested, directory):
        return Refusal(404, f"no such directory: {requested!r} (hidden paths are not served)")
    return Workspace(root=root, directory=directory)


def _hidden(root: Path, requested: str, directory: Path) -> bool:
    """Jupyter's rule (a dot name or the UF_HIDDEN flag on any part below the root),
    for the path as requested and as resolved."""
    as_requested = Path(os.path.normpath(root / requested))
    return any(
        _inside(path, root) and is_hidden(str(path), str(root))
        for path in (as_requested, directory)
    )


def escaping_link(ws: Workspace) -> Refusal | None:
    """Refuse a ``.memory/`` whose directory or files are symlinks leading out of the root.

    Checked before the store reads anything, so no file outside the root is ever opened.
    """
    memory = ws.memory_dir
    if not _inside(memory.resolve(), ws.root):
        return Refusal(403, f"{ws.rel_memory!r} links outside the server root")
    try:
        with os.scandir(memory) as entries:
            links = [Path(entry.path) for entry in entries if entry.is_symlink()]
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        return Refusal(403, f"cannot read {ws.rel_memory!r}: {e.strerror}")
    for link in links:
        if not _inside(link.resolve(), ws.root):
            return Refusal(403, f"{ws.rel_file(link.name)!r} links outside the server root")
    return None


def _manifest_mtime(ws: Workspace) -> float | None:
    try:
        return (ws.memory_dir / MANIFEST_NAME).stat().st_mtime
    except OSError:
        return None


def _read_set(ws: Workspace) -> tuple[tuple[StoredRecord, ...], str | None]:
    """The entries of the set, or ``()`` and the error message to show; a record file
    that does not load is left out and named in the message (issue 43)."""
    try:
        readable = MemoryStore(ws.directory).readable()
        if readable.unreadable:
            note = unreadable_note(readable.unreadable, len(readable.entries))
            return readable.entries, ws.scrub(note)
        return readable.entries, None
    except (MemoryStoreError, OSError, UnicodeError, ValueError) as e:
        return (), ws.scrub(str(e) or type(e).__name__)
    except Exception as e:  # a reader bug must still answer with a message, not a 500
        _log.exception("ipymemory: reading %s failed", ws.memory_dir)
        return (), ws.scrub(f"could not read {ws.rel_memory}: {type(e).__name__}: {e}")


def _pending(ws: Workspace) -> list[dict[str, Any]]:
    """The batches awaiting review in ``.memory/pending/`` (newest first, at most
    ``PANEL_PENDING_LIMIT``), read only: nothing is pruned or changed here."""
    listed, _problems = listing(PendingFiles(ws.memory_dir), prune=False)
    return [
        {
            "id": entry.id,
            "names": list(entry.names),
            "plan": entry.plan_text,
            "saved_at": entry.saved_at,
            # Which agent proposed it (SPEC §10: the MCP server, the memory tool, a
            # memory store's pull); None for a notebook turn's batch.
            "agent": entry.agent,
            # Where it came from in words (another agent, a Jupyter AI chat).
            "source": entry.source,
        }
        for entry in reversed(listed[-C.PANEL_PENDING_LIMIT :])
    ]


def shown_path(path: Path) -> str:
    """``path`` as the panel shows it: under the home directory as ``~/…``."""
    home = Path.home()
    return f"~/{path.relative_to(home).as_posix()}" if _inside(path, home) else str(path)


def _user_listing(user: MemoryStore | None) -> dict[str, Any] | None:
    """The user scope's set (SPEC §11) for the panel, or None when it is off. Its read
    is bounded in time like a turn's; a failure is the section's ``error``."""
    if user is None:
        return None
    entries, error = read_user_scope(user)
    return {
        "directory": shown_path(user.root),
        "records": [
            {
                "name": entry.record.name,
                "type": entry.record.type.value,
                "description": redacted_fields(entry.record)["description"],
                "file": entry.file,
            }
            for entry in entries
        ],
        "error": None if error is None else error.replace(str(user.root), shown_path(user.root)),
    }


def list_memory(ws: Workspace, user: MemoryStore | None = None) -> tuple[int, dict[str, Any]]:
    """The set of ``ws`` as ``(status, payload)``; a broken store is status 200 with ``error``.
    ``user`` (the user scope's store) adds its records under ``user`` (None: off).

    ``etag`` changes whenever what the panel shows would change (it hashes the payload).
    """
    refusal = escaping_link(ws)
    if refusal is not None:
        return refusal.status, refusal.payload(ws.rel)
    entries, error = _read_set(ws)
    records = [
        {
            "name": entry.record.name,
            "type": entry.record.type.value,
            # A credential a stored record holds never reaches the panel (SPEC §7).
            "description": redacted_fields(entry.record)["description"],
            "file": entry.file,
            "path": ws.rel_file(entry.file),
        }
        for entry in entries
    ]
    payload: dict[str, Any] = {
        "directory": ws.rel,
        "records": records,
        "mtime": _manifest_mtime(ws),
        "error": error,
        "pending": _pending(ws),
        "user": _user_listing(user),
    }
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8"))
    payload["etag"] = digest.hexdigest()[:20]
    return 200, payload


def read_record(
    ws: Workspace, file: str, user: MemoryStore | None = None
) -> tuple[int, dict[str, Any]]:
    """One record of the current set by file name, as ``(status, payload)``; with
    ``user``, of the user scope's set instead.

    Only files the manifest lists are served: other files in ``.memory/`` (temp files,
    old records, the lock) are not part of the set.
    """
    base: dict[str, Any] = {"directory": ws.rel, "file": file, "record": None, "error": None}
    if user is not None:
        return _read_user_record(user, file, base)
    refusal = escaping_link(ws)
    if refusal is not None:
        return refusal.status, {**base, "error": refusal.message}
    entries, error = _read_set(ws)
    for entry in entries:  # a record that loads is served beside one that does not
        if entry.file == file:
            shown = redact_data(entry.record.to_json())  # (SPEC §7, as above)
            return 200, {**base, "path": ws.rel_file(file), "record": shown}
    if error is not None:
        return 200, {**base, "error": error}
    return 404, {**base, "error": f"{file!r} is not in the memory set of {ws.rel or '/'!r}"}


def _read_user_record(
    user: MemoryStore, file: str, base: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    entries, error = read_user_scope(user)
    where = shown_path(user.root)
    for entry in entries:
        if entry.file == file:
            shown = redact_data(entry.record.to_json())  # (SPEC §7, as above)
            return 200, {**base, "scope": "user", "path": f"{where}/{file}", "record": shown}
    if error is not None:
        return 200, {**base, "scope": "user", "error": error.replace(str(user.root), where)}
    return 404, {**base, "scope": "user", "error": f"{file!r} is not in the user scope's set"}
