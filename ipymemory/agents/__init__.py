"""Other agents on the same reviewed memory (SPEC §10): an MCP server for the agents
jupyter-ai and Claude Code run, and Claude's memory tool for Anthropic SDK agents.

Both doors screen what an agent proposes and keep it as one pending batch with
:mod:`ipymemory.turn.proposals` (the turn's layer: ``%%agent --memory-tool`` joins the
tool's proposals to its extractor batch there).

* :mod:`.mcp_server` -- ``ipymemory mcp`` (the ``mcp`` SDK; imported on use);
* :mod:`.memory_tool` -- :class:`MemoryTool`, a ``BetaAbstractMemoryTool`` (the
  ``anthropic`` SDK; imported on use).
"""

from __future__ import annotations
