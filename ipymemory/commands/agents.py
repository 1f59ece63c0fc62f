"""``mcp``: serve the workspace's memory to other agents (SPEC §10)."""

from __future__ import annotations

import argparse

from ..review.proposals import COMMIT_CHOICES
from ..views import MessageView
from .context import Context, View
from .spec import arg, command

__all__ = ["handle_mcp"]


@command(
    "mcp",
    "serve this memory to other agents over MCP (stdio)",
    arg(
        "--commit",
        choices=COMMIT_CHOICES,
        default="review",
        help="review: every proposal waits for a person (default); auto: clean ones commit at once",
    ),
    section="maintain",
    notebook=False,
)
def handle_mcp(ctx: Context, args: argparse.Namespace) -> View:
    """An MCP server on stdin/stdout (for Claude Code, jupyter-ai personas, Claude
    Desktop) with the tools memory_catalog, memory_select, memory_read, memory_propose
    and memory_history. Proposals are screened (origin agent: credentials redacted,
    instructions flagged) and kept as a pending batch that a person decides in the
    notebook, the Lab panel or with ipymemory commit/discard; with --commit auto the
    unflagged items are committed at once. It runs until the client closes stdin."""
    from ..agents.mcp_server import serve  # here: the mcp SDK is needed only to serve

    serve(ctx.settings, args.commit)
    return MessageView("")
