"""The follow-up checker side-query: does an answer follow the memories given? (SPEC §14)

Asked only for the injected ``feedback``/``user`` memories the exact checks
(:mod:`ipymemory.follow`) left undecided, all of them in one request. Input: sorted-key
JSON ``{"answer": <the answer>, "memories": [{"body", "description", "name", "type"},
…], "query": <the query>}`` (a long answer or query keeps its head and tail). The
reply must be a JSON array with one ``{"name", "reason", "verdict"}`` per memory
(:func:`~.replies.validate_verdicts`); any flaw rejects the whole reply with a
:class:`SideQueryError` naming it, and the caller reports the failure.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import _constants as C
from ..errors import SideQueryError
from ..model import ModelClient, Usage
from ..store.record import MemoryRecord
from .extract import ends
from .prompts import FOLLOW_PROMPT
from .replies import encode_input, side_query, validate_verdicts
from .schemas import FOLLOW_SCHEMA

__all__ = ["FOLLOW_MAX_TOKENS", "follow_input", "judge_followed"]

FOLLOW_MAX_TOKENS = C.FOLLOW_MAX_TOKENS


def follow_input(records: Sequence[MemoryRecord], answer: str, query: str) -> str:
    """The checker's input text for ``records`` (see the module docstring)."""
    return encode_input(
        {
            "answer": ends(answer, C.FOLLOW_ANSWER_CHARS),
            "memories": [record.to_json() for record in records],
            "query": ends(query, C.FOLLOW_QUERY_CHARS),
        }
    )


def judge_followed(
    model: ModelClient,
    records: Sequence[MemoryRecord],
    answer: str,
    query: str,
    *,
    side_model: str | None = None,
    max_tokens: int = FOLLOW_MAX_TOKENS,
) -> tuple[tuple[tuple[str, str, str], ...], Usage]:
    """Ask ``model`` whether ``answer`` (to ``query``) follows each of ``records``:
    (name, verdict, reason) per record, in their order, and the usage.

    Raises :class:`SideQueryError` (message = the exact cause) on no records or
    records sharing a name (no call made), an API failure or an invalid reply.
    """
    if not records:
        raise SideQueryError("the follow-up check has no memories to judge")
    names = [record.name for record in records]
    if len(set(names)) != len(names):
        raise SideQueryError("the follow-up check's memories repeat a name")
    return side_query(
        model,
        system=FOLLOW_PROMPT,
        messages=[{"role": "user", "content": follow_input(records, answer, query)}],
        max_tokens=max_tokens,
        side_model=side_model,
        role="checker",
        schema=FOLLOW_SCHEMA,
        validate=lambda value: validate_verdicts(value, names, role="checker"),
    )
