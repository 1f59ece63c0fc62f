"""The one place where side-query replies are judged (SPEC §3).

A side-query offers no tools, and its reply is used only when it is complete and
exactly well-formed: no tool-use block, ``stop_reason == "end_turn"`` (a
``max_tokens`` stop is a truncation artifact even when the text happens to be ``[]``),
non-empty text, and strict JSON for the WHOLE text -- nothing is cut out of code
fences or prose. Then the value must have the role's exact shape (the validators
below). Every failure raises :class:`SideQueryError` whose message says exactly what
was wrong, without echoing more than a short preview of the reply.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .. import _constants as C
from .._json import DuplicateKeyError, NonJSONConstantError, TooDeepError, loads_strict
from .._text import escape
from ..errors import (
    MemoryFormatError,
    ModelError,
    ModelNotConfigured,
    SideQueryError,
    SideQueryReplyError,
)
from ..model import (
    ModelClient,
    ModelReply,
    Usage,
    cached_system,
    calling_as,
    takes_output_schema,
)
from ..store.record import RECORD_FIELDS, MemoryRecord

__all__ = [
    "ITEM_OPTIONAL_KEYS",
    "MAX_EVIDENCE_CHARS",
    "MAX_EVIDENCE_ITEMS",
    "MAX_REPLY_CHARS",
    "MAX_REPLY_ITEMS",
    "PLAN_KEYS",
    "RECORD_KEYS",
    "STATED_KEYS",
    "VERDICT_KEYS",
    "ExtractedItem",
    "encode_input",
    "reply_text",
    "side_query",
    "side_query_json",
    "side_query_text",
    "validate_extraction",
    "validate_items",
    "validate_names",
    "validate_plan",
    "validate_records",
    "validate_stated",
    "validate_verdicts",
]

# No valid reply comes near these (a set holds at most a few hundred records of at
# most 4 KiB each); anything bigger is rejected before it is parsed or walked.
MAX_REPLY_CHARS = 1_000_000
MAX_REPLY_ITEMS = 1000
_PREVIEW_CHARS = 40

RECORD_KEYS = tuple(sorted(RECORD_FIELDS))  # the four record keys, as the prompts list them
# What an extractor item may carry besides the record (SPEC §9); never stored in the file.
ITEM_OPTIONAL_KEYS = ("evidence", "replaces")
MAX_EVIDENCE_ITEMS = C.MAX_EVIDENCE_ITEMS
MAX_EVIDENCE_CHARS = C.MAX_EVIDENCE_CHARS
PLAN_KEYS = ("records", "source_names")
VERDICT_KEYS = ("name", "reason", "verdict")  # one follow-up verdict (SPEC §14)
STATED_KEYS = ("name", "states")  # one translation-check answer (issue 39)

T = TypeVar("T")


@dataclass(frozen=True)
class ExtractedItem:
    """One valid extractor item: the record, the excerpts the model cites as its
    support (never stored in the record file) and the current record it replaces."""

    record: MemoryRecord
    evidence: tuple[str, ...] = ()
    replaces: str | None = None


def encode_input(value: Any) -> str:
    """The JSON text sent to a side-query: sorted keys, Unicode kept as is, except
    control and format characters, written as JSON ``\\uXXXX`` escapes (the one
    escaping's JSON-safe form, SPEC §7) so that no invisible text reaches the model."""
    return escape(json.dumps(value, sort_keys=True, ensure_ascii=False), "terminal")


def side_query_json(
    model: ModelClient,
    *,
    system: str,
    messages: list[dict[str, Any]],
    max_tokens: int,
    side_model: str | None = None,
    role: str = "side-query",
    schema: dict[str, Any] | None = None,
) -> tuple[Any, Usage]:
    """Call ``model`` with no tools (asking for replies matching ``schema``, when
    given, as structured outputs); return the reply's JSON value and the usage.

    Raises :class:`SideQueryError` on an API failure or no model, and
    :class:`SideQueryReplyError` (with the usage spent) on an invalid reply.
    """
    return side_query(
        model,
        system=system,
        messages=messages,
        max_tokens=max_tokens,
        side_model=side_model,
        role=role,
        validate=_identity,
        schema=schema,
    )


def side_query(
    model: ModelClient,
    *,
    system: str,
    messages: list[dict[str, Any]],
    max_tokens: int,
    validate: Callable[[Any], T],
    side_model: str | None = None,
    role: str = "side-query",
    schema: dict[str, Any] | None = None,
) -> tuple[T, Usage]:
    """Like :func:`side_query_json`, then ``validate`` the value (it raises
    :class:`SideQueryReplyError`); the error gets the call's usage attached. The
    schema never loosens the checks: the reply is judged exactly as without it."""
    return _checked_call(
        model,
        system,
        messages,
        max_tokens,
        side_model,
        role,
        lambda reply: validate(_strict_json(reply_text(reply, role), role)),
        schema,
    )


def side_query_text(
    model: ModelClient,
    *,
    system: str,
    messages: list[dict[str, Any]],
    max_tokens: int,
    side_model: str | None = None,
    role: str = "side-query",
) -> tuple[str, Usage]:
    """A tool-free call whose reply is free text (e.g. a summary): the same envelope
    rules as :func:`side_query_json` (no tool block, ``end_turn``, non-empty text)."""
    return _checked_call(
        model, system, messages, max_tokens, side_model, role, lambda r: reply_text(r, role)
    )


def _checked_call(
    model: ModelClient,
    system: str,
    messages: list[dict[str, Any]],
    max_tokens: int,
    side_model: str | None,
    role: str,
    read: Callable[[ModelReply], T],
    schema: dict[str, Any] | None = None,
) -> tuple[T, Usage]:
    """One tool-free call; ``read`` judges the reply. A rejected reply's error carries
    the usage it cost; a model failure (any ``ModelError``, the cause) becomes a
    :class:`SideQueryError` naming the role."""
    chosen = side_model or getattr(model, "side_model", None)
    # A client whose create() does not take output_schema gets none (ModelClient).
    structured = {"output_schema": schema} if takes_output_schema(model) else {}
    try:
        with calling_as(role):
            reply = model.create(
                system=cached_system(system),
                messages=messages,
                max_tokens=max_tokens,
                tools=None,
                model=chosen if isinstance(chosen, str) and chosen else None,
                **structured,
            )
    except ModelNotConfigured as e:
        # A state, not a failure of this call: its message is already exact.
        raise SideQueryError(str(e)) from e
    except ModelError as e:
        raise SideQueryError(f"{role} call failed: {e}") from e
    except Exception as e:  # a custom ModelClient's bug must not break the turn either
        # Said whole enough to fix it (issue 43): it is the client's own message.
        bug = f"{type(e).__name__}: {_short(str(e), 120)}"
        raise SideQueryError(f"{role} call failed: {bug}") from e
    try:
        return read(reply), reply.usage
    except SideQueryReplyError as e:
        e.usage = reply.usage
        raise


def _identity(value: Any) -> Any:
    return value


def reply_text(reply: ModelReply, role: str = "side-query") -> str:
    """The text of a side-query reply that passes the SPEC §3 envelope checks: no
    tool block, ``stop_reason == "end_turn"``, non-empty text (within the size limit).
    Raises :class:`SideQueryReplyError` naming the flaw."""
    for block in reply.content:
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str) or "tool" in kind:
            raise SideQueryReplyError(
                f"{role} reply contains a {kind!r} block (no tools were offered)"
            )
    stop = reply.stop_reason
    if stop != "end_turn":
        if stop == "max_tokens":
            raise SideQueryReplyError(f"{role} reply stopped with max_tokens (truncated)")
        if stop is None:
            raise SideQueryReplyError(f"{role} reply has no stop_reason (expected 'end_turn')")
        raise SideQueryReplyError(
            f"{role} reply stopped with {_short(str(stop))!r}, not 'end_turn'"
        )
    text = reply.text
    if not text:
        raise SideQueryReplyError(f"{role} reply has no text")
    if not text.strip():
        raise SideQueryReplyError(f"{role} reply text is only whitespace")
    if len(text) > MAX_REPLY_CHARS:
        raise SideQueryReplyError(
            f"{role} reply is {len(text)} characters long, over the {MAX_REPLY_CHARS} limit"
        )
    return text


def _strict_json(text: str, role: str) -> Any:
    """The whole text as strict JSON (see :func:`~ipymemory._json.loads_strict`)."""
    try:
        return loads_strict(text)
    except DuplicateKeyError as e:
        raise SideQueryReplyError(
            f"{role} reply is not strict JSON: an object repeats the key {_short(e.key)!r}"
        ) from None
    except NonJSONConstantError as e:
        raise SideQueryReplyError(f"{role} reply is not strict JSON: {e}") from None
    except TooDeepError:
        raise SideQueryReplyError(f"{role} reply is JSON nested too deeply") from None
    except json.JSONDecodeError as e:
        raise SideQueryReplyError(
            f"{role} reply is not JSON ({e.msg} at line {e.lineno} column {e.colno}); "
            f"it starts with {_preview(text)}"
        ) from None


# --- shapes ------------------------------------------------------------------------


def validate_names(
    value: Any, known: Collection[str], *, role: str = "selector"
) -> tuple[str, ...]:
    """A JSON array of unique strings, every one in ``known`` (in reply order)."""
    items = _array(value, role, "an array of memory names")
    return _unique_names(items, known, f"{role} reply", "the name of a current memory")


def validate_records(
    value: Any,
    existing_names: Collection[str] = (),
    *,
    role: str = "extractor",
    where: str = "reply",
    allow_empty: bool = True,
    clash: str = "already exists",
) -> tuple[MemoryRecord, ...]:
    """A JSON array of records with exactly the four keys, each a valid
    :class:`MemoryRecord`, names unique and none in ``existing_names``."""
    items = _array(value, role, "an array of memory records", where)
    if not items and not allow_empty:
        raise SideQueryReplyError(f"{role} {where} must not be empty")
    records: list[MemoryRecord] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        at = f"{role} {where} item {i}"
        record = _record(item, at)
        if record.name in seen:
            raise SideQueryReplyError(f"{at}: the name {record.name!r} is used twice")
        if record.name in existing_names:
            raise SideQueryReplyError(f"{at}: a memory named {record.name!r} {clash}")
        seen.add(record.name)
        records.append(record)
    return tuple(records)


def validate_items(
    value: Any, current_names: Collection[str], *, role: str = "extractor"
) -> tuple[ExtractedItem, ...]:
    """The extractor's reply (SPEC §3, §9): a JSON array of records, each with the four
    keys plus optional ``evidence`` (1-3 non-empty excerpts of at most
    :data:`MAX_EVIDENCE_CHARS` characters) and ``replaces`` (a current record's name,
    replaced by at most one item). Names are unique and new, except that an item may
    keep the name of the record it replaces."""
    return validate_extraction(value, current_names, current_names, role=role)[0]


def validate_extraction(
    value: Any, current_names: Collection[str], shown: Collection[str], *, role: str = "extractor"
) -> tuple[tuple[ExtractedItem, ...], tuple[str, ...]]:
    """:func:`validate_items` for an extractor shown only the records ``shown`` of the
    current ones: an item whose new name is taken by a current record it was NOT shown
    is no flaw of the reply -- that item alone is dropped, and said in the second value;
    a name taken by a record it was shown rejects the reply, as ever."""
    items = _array(value, role, "an array of memory records")
    out: list[ExtractedItem] = []
    dropped: list[str] = []
    seen: set[str] = set()
    replaced: set[str] = set()
    for i, item in enumerate(items):
        at = f"{role} reply item {i}"
        record = _record(item, at, ITEM_OPTIONAL_KEYS)
        evidence = _evidence(item.get("evidence"), at) if "evidence" in item else ()
        replaces = (
            _replaces(item.get("replaces"), at, current_names) if "replaces" in item else None
        )
        if replaces is not None and replaces in replaced:
            raise SideQueryReplyError(f"{at}: {replaces!r} is already replaced by an earlier item")
        if record.name in seen:
            raise SideQueryReplyError(f"{at}: the name {record.name!r} is used twice")
        if record.name in current_names and record.name != replaces:
            if record.name in shown:
                raise SideQueryReplyError(
                    f"{at}: a memory named {record.name!r} already exists "
                    "(an item may reuse a name only of the record it replaces)"
                )
            dropped.append(
                f"{at} ({record.name!r}) was dropped: a memory of that name exists that "
                "the extractor was not shown (its catalog was a part of the set); the "
                "batch's other items are kept"
            )
            seen.add(record.name)
            continue
        if replaces is not None:
            replaced.add(replaces)
        seen.add(record.name)
        out.append(ExtractedItem(record, evidence, replaces))
    return tuple(out), tuple(dropped)


def _evidence(value: Any, at: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise SideQueryReplyError(
            f"{at}: evidence must be an array of excerpt strings, got {_json_type(value)}"
        )
    if not 1 <= len(value) <= C.MAX_EVIDENCE_GIVEN:
        raise SideQueryReplyError(
            f"{at}: evidence must hold 1 to {C.MAX_EVIDENCE_GIVEN} excerpts (the first "
            f"{MAX_EVIDENCE_ITEMS} are kept), got {len(value)}"
        )
    for j, excerpt in enumerate(value):
        where = f"{at}: evidence item {j}"
        if not isinstance(excerpt, str):
            raise SideQueryReplyError(f"{where} must be a string, got {_json_type(excerpt)}")
        if not excerpt.strip():
            raise SideQueryReplyError(f"{where} is empty")
        if len(excerpt) > MAX_EVIDENCE_CHARS:
            raise SideQueryReplyError(
                f"{where} is {len(excerpt)} characters long, over the {MAX_EVIDENCE_CHARS} limit"
            )
        if _has_surrogate(excerpt):
            raise SideQueryReplyError(f"{where} is not valid Unicode text")
    # More than the kept number is no flaw of the batch: every excerpt is checked, the
    # first ones kept (heldout5: a batch was lost to a fourth excerpt).
    return tuple(value[:MAX_EVIDENCE_ITEMS])


def _replaces(value: Any, at: str, current_names: Collection[str]) -> str:
    if not isinstance(value, str):
        raise SideQueryReplyError(
            f"{at}: replaces must be the name of a current memory, got {_json_type(value)}"
        )
    if value not in current_names:
        raise SideQueryReplyError(
            f"{at}: replaces {_short(value)!r}, which is not a current memory"
        )
    return value


def validate_plan(
    value: Any, candidate_names: Sequence[str], *, role: str = "consolidator"
) -> tuple[tuple[str, ...], tuple[MemoryRecord, ...]]:
    """An object with exactly ``source_names`` (unique, all candidates) and ``records``
    (valid, unique, not reusing a kept candidate's name), both non-empty -- or both
    empty, which says "nothing to merge" (SPEC §9)."""
    if not isinstance(value, dict):
        raise SideQueryReplyError(
            f"{role} reply must be an object with source_names and records, got {_json_type(value)}"
        )
    _exact_keys(value, PLAN_KEYS, f"{role} reply")
    sources = _array(value["source_names"], role, "an array of candidate names", "source_names")
    replacements = _array(value["records"], role, "an array of memory records", "reply records")
    if not sources and not replacements:
        return (), ()
    if not sources or not replacements:
        empty, given = ("source_names", "records") if not sources else ("records", "source_names")
        raise SideQueryReplyError(
            f"{role} reply {empty} must not be empty when {given} are given "
            '(both empty says "nothing to merge")'
        )
    candidates = set(candidate_names)
    names = _unique_names(
        sources, candidates, f"{role} reply source_names", "one of the candidates"
    )
    kept = candidates - set(names)
    records = validate_records(
        value["records"],
        kept,
        role=role,
        where="reply records",
        allow_empty=False,
        clash="is a candidate that is kept (not in source_names)",
    )
    return names, records


def validate_verdicts(
    value: Any, asked: Sequence[str], *, role: str = "checker"
) -> tuple[tuple[str, str, str], ...]:
    """The follow-up checker's reply (SPEC §14): a JSON array of objects with exactly
    ``name`` (one of ``asked``), ``verdict`` (one of :data:`FOLLOW_VERDICTS`) and
    ``reason`` (one line of at most :data:`FOLLOW_REASON_CHARS` characters); every
    asked name exactly once. Returns (name, verdict, reason) in the order of ``asked``."""

    def read(at: str, name: str, item: dict[str, Any]) -> tuple[str, str, str]:
        for key in VERDICT_KEYS:
            if not isinstance(item[key], str):
                raise SideQueryReplyError(
                    f"{at}: {key} must be a string, got {_json_type(item[key])}"
                )
        verdict, reason = item["verdict"], item["reason"].strip()
        if verdict not in C.FOLLOW_VERDICTS:
            raise SideQueryReplyError(
                f"{at}: verdict {_short(verdict)!r} is not one of {', '.join(C.FOLLOW_VERDICTS)}"
            )
        if not reason or _has_surrogate(reason) or any(c in reason for c in "\r\n"):
            raise SideQueryReplyError(f"{at}: reason must be one non-empty line of text")
        if len(reason) > C.FOLLOW_REASON_CHARS:
            raise SideQueryReplyError(
                f"{at}: reason is {len(reason)} characters long, over the "
                f"{C.FOLLOW_REASON_CHARS} limit"
            )
        return (name, verdict, reason)

    found = _one_per_name(value, asked, VERDICT_KEYS, read, _VERDICTS, role)
    return tuple(found[name] for name in asked)


def validate_stated(
    value: Any, asked: Mapping[str, int], *, role: str = "screener"
) -> dict[str, frozenset[int]]:
    """The translation check's reply (issue 39): a JSON array of objects with exactly
    ``name`` (one of ``asked``, each once, every one) and ``states`` (an array of the
    numbers, 1 to ``asked[name]``, of the sentences the item states; each once).
    Returns name -> those numbers."""

    def read(at: str, name: str, item: dict[str, Any]) -> frozenset[int]:
        states = item["states"]
        if not isinstance(states, list):
            raise SideQueryReplyError(f"{at}: states must be an array, got {_json_type(states)}")
        numbers: set[int] = set()
        for number in states:
            # A boolean is an int in Python, never a number of words.
            if isinstance(number, bool) or not isinstance(number, int):
                raise SideQueryReplyError(
                    f"{at}: states holds {_json_type(number)}, not a number of the words"
                )
            if not 1 <= number <= asked[name]:
                raise SideQueryReplyError(
                    f"{at}: states holds {number}, not one of 1 to {asked[name]}"
                )
            if number in numbers:
                raise SideQueryReplyError(f"{at}: states lists {number} twice")
            numbers.add(number)
        return frozenset(numbers)

    return _one_per_name(value, asked, STATED_KEYS, read, _STATED, role)


@dataclass(frozen=True)
class _Answers:
    """How a reply of one answer per asked name calls its parts, in its errors."""

    answer: str  # one object of the reply
    subject: str  # what was asked about
    twice: str  # what answering a subject twice is


_VERDICTS = _Answers("verdict", "memory", "judged")
_STATED = _Answers("answer", "item", "answered")


def _one_per_name(
    value: Any,
    asked: Collection[str],
    keys: Sequence[str],
    read: Callable[[str, str, dict[str, Any]], T],
    words: _Answers,
    role: str,
) -> dict[str, T]:
    """A reply of one object per asked name: a JSON array of objects with exactly
    ``keys``, a string ``name`` among ``asked``, each once, every one; ``read`` judges
    the rest of each (``at`` names where, for its errors). Name -> what ``read`` gave."""
    items = _array(value, role, f"an array of {words.answer}s")
    found: dict[str, T] = {}
    for i, item in enumerate(items):
        at = f"{role} reply item {i}"
        if not isinstance(item, dict):
            raise SideQueryReplyError(
                f"{at} must be {_with_article(words.answer)} object, got {_json_type(item)}"
            )
        _exact_keys(item, keys, at)
        name = item["name"]
        if not isinstance(name, str):
            raise SideQueryReplyError(f"{at}: name must be a string, got {_json_type(name)}")
        if name not in asked:
            raise SideQueryReplyError(
                f"{at}: {_short(name)!r} is not {_with_article(words.subject)} that was asked"
            )
        if name in found:
            raise SideQueryReplyError(f"{at}: the {words.subject} {name!r} is {words.twice} twice")
        found[name] = read(at, name, item)
    missing = [name for name in asked if name not in found]
    if missing:
        shown = ", ".join(repr(_short(n)) for n in missing[:5])
        raise SideQueryReplyError(f"{role} reply has no {words.answer} for {shown}")
    return found


def _with_article(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def _unique_names(
    items: list[Any], allowed: Collection[str], where: str, what: str
) -> tuple[str, ...]:
    """``items`` as names: strings, each listed once, each in ``allowed`` (else "not <what>")."""
    seen: set[str] = set()
    for i, name in enumerate(items):
        at = f"{where} item {i}"
        if not isinstance(name, str):
            raise SideQueryReplyError(f"{at} must be a name string, got {_json_type(name)}")
        if name in seen:
            raise SideQueryReplyError(f"{at}: the name {_short(name)!r} is listed twice")
        if name not in allowed:
            raise SideQueryReplyError(f"{at}: {_short(name)!r} is not {what}")
        seen.add(name)
    return tuple(items)


def _array(value: Any, role: str, what: str, where: str = "reply") -> list[Any]:
    if not isinstance(value, list):
        raise SideQueryReplyError(f"{role} {where} must be {what}, got {_json_type(value)}")
    if len(value) > MAX_REPLY_ITEMS:
        raise SideQueryReplyError(
            f"{role} {where} has {len(value)} items, over the {MAX_REPLY_ITEMS} limit"
        )
    return value


def _exact_keys(
    obj: dict[str, Any], keys: Sequence[str], where: str, optional: Sequence[str] = ()
) -> None:
    """``obj`` has every one of ``keys``, may have any of ``optional``, and nothing else."""
    extra = sorted(set(obj) - set(keys) - set(optional))
    missing = sorted(set(keys) - set(obj))
    if not extra and not missing:
        return
    detail = []
    if missing:
        detail.append("missing " + ", ".join(missing))
    if extra:
        shown = ", ".join(repr(_short(k, 30)) for k in extra[:5])
        detail.append(
            "unexpected " + shown + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        )
    allowed = f"exactly the keys {', '.join(keys)}"
    if optional:
        allowed += f" (and optionally {', '.join(optional)})"
    raise SideQueryReplyError(f"{where} must have {allowed}: {'; '.join(detail)}")


def _record(item: Any, at: str, optional: Sequence[str] = ()) -> MemoryRecord:
    if not isinstance(item, dict):
        raise SideQueryReplyError(f"{at} must be a record object, got {_json_type(item)}")
    _exact_keys(item, RECORD_KEYS, at, optional)
    for key in RECORD_KEYS:
        field = item[key]
        if not isinstance(field, str):
            raise SideQueryReplyError(f"{at}: {key} must be a string, got {_json_type(field)}")
        if _has_surrogate(field):
            # JSON escapes can spell lone surrogates, which cannot be written as UTF-8.
            raise SideQueryReplyError(f"{at}: {key} is not valid Unicode text")
    try:
        return MemoryRecord(**{key: item[key] for key in RECORD_KEYS})
    except MemoryFormatError as e:
        raise SideQueryReplyError(f"{at}: {_short(str(e), 200)}") from None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _short(text: str, limit: int = _PREVIEW_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _preview(text: str) -> str:
    return repr(_short(text))
