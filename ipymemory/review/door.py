"""Every way a change enters the memory: one list (issue 42).

A batch's provenance names the door it came by (``TurnProvenance.via``, kept in
``pending/`` and the journal's provenance); a change a command writes at once names it
in the journal's actor (``via``). The values are what earlier versions wrote, so old
files and journals read the same.
"""

from __future__ import annotations

from .._enum import StrEnum

__all__ = ["Door"]


class Door(StrEnum):
    """Where a proposed or written change came from. A ``str``: it compares equal to,
    prints as and serialises to its value."""

    #: A turn's extraction (the memory tool's proposals under ``%%agent`` join it).
    TURN = "turn"
    #: ``%memory consolidate``: a plan asked for directly.
    CONSOLIDATE = "consolidate"
    #: ``%memory undo SEQ`` / ``restore SEQ`` proposed in a notebook (SPEC §6).
    UNDO = "undo"
    RESTORE = "restore"
    #: Another agent through the MCP server's ``memory_propose`` (SPEC §10).
    MCP = "mcp"
    #: Claude's memory tool used on its own (SPEC §10).
    MEMORY_TOOL = "memory-tool"
    #: A sync's pull from an Anthropic memory store (SPEC §13).
    MEMORY_STORE = "memory-store"
    #: ``ipymemory import``: Claude Code's auto memory, held for a person.
    IMPORT = "import"
    #: ``ipymemory import --yes``: the clean imported records, written at once.
    IMPORT_CLAUDE_CODE = "import claude-code"
    #: A command that writes at once: from a terminal, from a notebook, a move between
    #: scopes (its two commits).
    CLI = "cli"
    NOTEBOOK = "notebook"
    MOVE = "move"

    @property
    def agent(self) -> bool:
        """Whether another agent proposed through this door (SPEC §10, §13): what it
        proposes is shown as such wherever it is reviewed."""
        return self in (Door.MCP, Door.MEMORY_TOOL, Door.MEMORY_STORE)

    @classmethod
    def read(cls, value: object) -> Door | None:
        """The door ``value`` names (as a file or the journal says it), or None."""
        try:
            return cls(value) if isinstance(value, str) else None
        except ValueError:
            return None
