"""``session``: this kernel's conversation so far (turns, tokens, cost)."""

from __future__ import annotations

import argparse

from ..views.conversation import ConversationView
from .context import Context, View
from .spec import command

__all__ = ["handle_session"]


@command("session", "this conversation: turns, tokens and cost so far", cli=False)
def handle_session(ctx: Context, args: argparse.Namespace) -> View:
    """The kernel's session for the directory: turns run, messages in the conversation
    history, tokens used by the agent and by memory work, the estimated cost, and per
    feedback or user memory how often the answers followed it, and per recent turn which
    memories each request carried and when the model's pick arrived. %%agent --new
    starts a fresh conversation; memory is kept."""
    session = ctx.session
    return ConversationView(
        session.id,
        str(session.store.root),
        len(session.history),
        session.usage,
        session.followed.counts(),
        session.traces,
    )
