"""Which files a proposed memory depends on (SPEC §11 staleness, issue 26).

A record is stale when a file it depends on changed since it was saved -- not when any
file its turn happened to read changed ("keep answers short" does not depend on the
sales CSV read in the same turn). An item depends on a file when

* its text or the extractor's evidence for it **names** the file: its path, its file
  name ("sales.csv"), the file name's words in order ("the sales CSV"), or its stem
  when that is not an ordinary word ("README", "conftest"); or
* it **carries the file's words**: terms of the item that the output of a tool call on
  that file holds and the user did not write (so they came from the file, not from
  the user), weighing at least :data:`CARRIED_WEIGHT` (an identifier or key of the
  file, a number or a long term weighs 2, another word 1).

Paths are compared in their workspace-relative, forward-slash form. Nothing here opens
a file: the caller gives the paths it knows (what the session read) and hashes them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Sequence
from typing import Any

from .. import _constants as C
from .evidence import code_terms, fold_text, names_file
from .origin import Sources, history_sources
from .terms import content_terms, weight

__all__ = ["CARRIED_WEIGHT", "item_sources", "normal_path"]

CARRIED_WEIGHT = C.SOURCE_CARRIED_WEIGHT


def normal_path(path: str) -> str:
    """``path`` as compared: forward slashes, no ``./`` segments, no leading ``./``."""
    text = path.strip().replace("\\", "/")
    normal = posixpath.normpath(text) if text else text
    return "" if normal == "." else normal


def item_sources(
    item_text: str,
    evidence: Sequence[str],
    history: Sources | Sequence[dict[str, Any]],
    files: Collection[str],
) -> tuple[str, ...]:
    """The paths of ``files`` the item (description + body) depends on, in the order
    of ``files`` (see the module docstring); ``history`` is the canonical history the
    item was extracted from (or its :class:`Sources`)."""
    sources = history if isinstance(history, Sources) else history_sources(history)
    texts = [fold_text(item_text), *(fold_text(e) for e in evidence)]
    item = content_terms(item_text)
    user_terms = sources.terms[0]
    out = []
    for path in files:
        wanted = normal_path(path)
        if not wanted:
            continue
        if names_file(wanted, texts):
            out.append(path)
            continue
        carried: set[str] = set()
        code: set[str] = set()
        for part in sources.tool_parts:
            if any(normal_path(p) == wanted for p in part.pointers):
                carried |= item & content_terms(part.text)
                code |= code_terms(part.text)
        carried -= user_terms
        if sum(2 if t in code else weight(t) for t in carried) >= CARRIED_WEIGHT:
            out.append(path)
    return tuple(out)
