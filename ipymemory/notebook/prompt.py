"""The notebook's context in a ``%%agent`` prompt, as jupyter-ai's ``%%ai`` users expect.

``{name}`` is replaced by the value of ``name`` in the user namespace; ``{In[n]}`` /
``{Out[n]}`` by cell ``n``'s input / output; ``{Err}`` by the last error's traceback.
A ``{name}`` that is not defined is left as written (prompts often hold code with
braces); a reference to a cell that has no input or output is a usage error, as is
``{Err}`` when no error happened. ``%%agent --raw`` sends the prompt as written.

``--format code``: :func:`code_of` takes the code out of an answer for a new cell.
"""

from __future__ import annotations

import re
import sys
import traceback
from collections.abc import Mapping
from typing import Any

from .. import _constants as C
from ..errors import CommandUsageError

__all__ = ["CODE_INSTRUCTION", "code_of", "expand_prompt"]

_REFERENCE = re.compile(r"\{(?:(In|Out)\[(-?\d+)\]|(Err)|([A-Za-z_][A-Za-z0-9_]*))\}")
_FENCE = re.compile(r"^```[^\n`]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)

#: Added to the prompt of ``--format code``: the answer is to become a cell.
CODE_INSTRUCTION = (
    "Answer with Python code only, in one fenced code block; explanations go in comments."
)


def _cut(text: str) -> str:
    limit = C.PROMPT_VALUE_LIMIT
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [cut: {len(text) - limit} more characters]"


def _last_error() -> str:
    etype, value, tb = (
        getattr(sys, name, None) for name in ("last_type", "last_value", "last_traceback")
    )
    if value is None:
        raise CommandUsageError("{Err}: no error has happened in this kernel yet")
    return "".join(traceback.format_exception(etype, value, tb))


def _cell(namespace: Mapping[str, Any], kind: str, index: int) -> str:
    table = namespace.get(kind)
    if kind == "In" and isinstance(table, list) and 0 < index < len(table):
        return str(table[index])
    if kind == "Out" and isinstance(table, dict) and index in table:
        return repr(table[index])
    what = "input" if kind == "In" else "output"
    raise CommandUsageError(f"{{{kind}[{index}]}}: cell {index} has no {what} in this kernel")


def expand_prompt(prompt: str, namespace: Mapping[str, Any]) -> str:
    """``prompt`` with its references replaced (see the module docstring); each value
    as ``str`` (``Out`` as ``repr``), cut at ``PROMPT_VALUE_LIMIT`` characters."""

    def replace(match: re.Match[str]) -> str:
        kind, number, err, name = match.groups()
        if kind is not None:
            return _cut(_cell(namespace, kind, int(number)))
        if err is not None:
            return _cut(_last_error())
        if name in namespace and not name.startswith("_"):
            return _cut(str(namespace[name]))
        return match.group(0)

    return _REFERENCE.sub(replace, prompt)


def code_of(answer: str) -> str:
    """The code of an answer: its fenced blocks joined, else the whole answer."""
    blocks = [block.rstrip("\n") for block in _FENCE.findall(answer)]
    return "\n\n".join(blocks) if blocks else answer.strip("\n")
