"""Which files a proposed memory depends on (SPEC §11 staleness, issue 26).

A record is stale when a file it depends on changed since it was saved -- not when any
file its turn happened to read changed ("keep answers short" does not depend on the
sales CSV read in the same turn). An item depends on a file when

* its text **names** the file -- its path, its file name ("sales.csv"), the file
  name's words in order ("the sales CSV"), its stem when that is not an ordinary word
  ("README", "conftest"), ``make <target>`` for a Makefile -- other than as a
  command's argument ("--config conf/train.yaml", a name in backticks: what the
  command reads, not what the item is about); or the extractor's evidence for it
  quotes the file's output; or
* it **carries the file's words**: terms of the item that the output of a tool call on
  that file holds and the user did not write (so they came from the file, not from
  the user) nor a file the item names, weighing at least :data:`CARRIED_WEIGHT` (an
  identifier or key of the file, a number or a long term weighs 2, another word 1).

Paths are compared in their workspace-relative, forward-slash form. Nothing here opens
a file: the caller gives the paths it knows (what the session read) and hashes them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from .. import _constants as C
from .evidence import code_terms, fold_text, names_file
from .origin import Sources, history_sources
from .terms import content_terms, weight

__all__ = ["CARRIED_WEIGHT", "file_outputs", "item_sources", "normal_path"]

CARRIED_WEIGHT = C.SOURCE_CARRIED_WEIGHT


def normal_path(path: str) -> str:
    """``path`` as compared: forward slashes, no ``./`` segments, no leading ``./``."""
    text = path.strip().replace("\\", "/")
    normal = posixpath.normpath(text) if text else text
    return "" if normal == "." else normal


def file_outputs(history: Sources | Sequence[dict[str, Any]]) -> dict[str, str]:
    """Per file a tool call named (normal path), the text of its tool outputs."""
    sources = history if isinstance(history, Sources) else history_sources(history)
    out: dict[str, list[str]] = {}
    for part in sources.tool_parts:
        for path in dict.fromkeys(normal_path(p) for p in part.pointers):
            if path:
                out.setdefault(path, []).append(part.text)
    return {path: "\n".join(texts) for path, texts in out.items()}


def item_sources(
    item_text: str,
    evidence: Sequence[str],
    outputs: Mapping[str, str],
    user_terms: frozenset[str],
    files: Collection[str],
) -> tuple[str, ...]:
    """The paths of ``files`` the item (description + body) depends on, in the order
    of ``files`` (see the module docstring); ``outputs`` holds what tool calls on each
    file returned (:func:`file_outputs` of the session's history), ``user_terms`` the
    terms of what the user wrote."""
    subject = [fold_text(_ARGUMENTS.sub(" ", item_text))]
    excerpts = [p for e in evidence if (p := fold_text(e).strip(" .\"'")) and len(p) >= 8]
    item = content_terms(item_text)
    known = {normal_path(path): outputs.get(normal_path(path), "") for path in files}
    named = {path for path in known if path and names_file(path, subject, targets_only=True)}
    # Words an item shares with a file it names are that file's, not another's.
    claimed = frozenset().union(*(content_terms(f"{p}\n{known[p]}") for p in named)) | user_terms
    out = []
    for path in files:
        wanted = normal_path(path)
        text = known.get(wanted, "")
        if wanted in named or (text and any(e in fold_text(text) for e in excerpts)):
            out.append(path)
            continue
        carried = item & content_terms(text) - claimed
        code = code_terms(text)
        if sum(2 if t in code else weight(t) for t in carried) >= CARRIED_WEIGHT:
            out.append(path)
    return tuple(out)


# A file named as a command's argument ("--config conf/train.yaml") is what the command
# reads, not what the item is about.
_ARGUMENTS = re.compile(r"(?<!\S)--?[A-Za-z][\w-]*(?:[= ]\S+)?")
