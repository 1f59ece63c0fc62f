"""Models: the client protocol, the Anthropic client, "no model", a scripted stand-in
and what each call cost. Failures are the typed ``ModelError`` family of
:mod:`ipymemory.errors`."""

from __future__ import annotations

from .anthropic import AnthropicModel
from .client import (
    NO_MODEL_REASON,
    ModelClient,
    ModelReply,
    NoModel,
    StreamingModelClient,
    cached_system,
    calling_as,
    current_role,
    takes_output_schema,
)
from .scripted import ScriptedModel
from .usage import Usage, estimate_cost

__all__ = [
    "NO_MODEL_REASON",
    "AnthropicModel",
    "ModelClient",
    "ModelReply",
    "NoModel",
    "ScriptedModel",
    "StreamingModelClient",
    "Usage",
    "cached_system",
    "calling_as",
    "current_role",
    "estimate_cost",
    "takes_output_schema",
]
