"""Which directory's memory a Jupyter AI chat may use: only one inside the server root.

A chat (a ``.chat`` file) works on the ``.memory/`` of its directory -- the built-in MCP
tools' calls (:mod:`.jupyter_tools`) and ``@ipymemory``'s turns (:mod:`.jupyter_persona`).
jupyterlab-chat opens no chat whose path climbs out of the root (``..``) or is absolute,
but a directory under the root may be a symlink to anywhere: resolved (symlinks
followed), the chat's directory must stay inside the resolved root, as the Lab panel's
endpoint requires of every directory it serves (``server/listing.py``), or nothing of it
is read or written.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import MemoryConfigError

__all__ = ["chat_workspace"]


def chat_workspace(root_dir: str | os.PathLike[str], directory: str | os.PathLike[str]) -> Path:
    """``directory`` (a chat's) resolved, inside ``root_dir`` (the server's); else
    :class:`MemoryConfigError` saying why (naming the directory as the chat has it)."""
    root = Path(root_dir).resolve()
    resolved = Path(directory).resolve()
    if resolved != root and root not in resolved.parents:
        raise MemoryConfigError(
            f"this chat's directory ({directory}) is outside the Jupyter server's root "
            f"({root}) once its symlinks are followed: its memory is not used from a chat"
        )
    return resolved
