"""Other agents on the same reviewed memory (SPEC §10): an MCP server for the agents
jupyter-ai and Claude Code run, the memory inside Jupyter AI (its built-in MCP server's
tools, a chat persona), and Claude's memory tool for Anthropic SDK agents.

Both doors screen what an agent proposes and keep it as one pending batch with
:mod:`ipymemory.review.proposals` (the turn's layer: ``%%agent --memory-tool`` joins the
tool's proposals to its extractor batch there).

* :mod:`.mcp_server` -- ``ipymemory mcp`` (the ``mcp`` SDK, 1.x or 2.x; imported on use)
  and the five tools every MCP host here serves;
* :mod:`.jupyter_tools` -- those tools on Jupyter's built-in MCP server, for every
  jupyter-ai persona (loaded by jupyter-server-mcp through its entry point);
* :mod:`.jupyter_access` -- who may call them: the server's key, handed to jupyter-ai's
  chats (that server listens outside Jupyter's token and XSRF checks);
* :mod:`.chat_dirs` -- a chat's directory, only inside the server root (the tools and
  the persona);
* :mod:`.jupyter_persona` -- ``@ipymemory`` in Jupyter AI's chat: each message one
  ``AgentSession`` turn (loaded by jupyter-ai through its entry point);
* :mod:`.memory_tool` -- :class:`MemoryTool`, a ``BetaAbstractMemoryTool`` (the
  ``anthropic`` SDK; imported on use).
"""

from __future__ import annotations
