"""A memory record: the value object, and its exact file format (SPEC §1).

A record file is ``---`` / YAML frontmatter (name, description, type) / ``---`` / blank
line / body / newline. Frontmatter is written so that both a YAML 1.1 reader (PyYAML) and
the YAML 1.2 reader of the reference TypeScript agent read every value back as the same
string, and read so that plain scalars are always strings (that agent's YAML 1.2 writer
leaves ``no``, ``yes``, ``on``, ``off`` unquoted; it quotes ``null``, ``true``, ``1``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import yaml

from .. import _constants as C
from .._enum import StrEnum
from .._secrets import SecretHit, find_secrets, redact
from ..errors import MemoryFormatError
from .names import check_name

__all__ = [
    "FRONTMATTER_KEYS",
    "MAX_RECORD_BYTES",
    "MAX_RECORD_LINES",
    "RECORD_FIELDS",
    "TEXT_FIELDS",
    "MemoryRecord",
    "MemoryType",
    "StoredRecord",
    "breaks_line",
    "count_lines",
    "is_blank",
    "parse_record",
    "record_secrets",
    "redact_record",
    "redacted_fields",
    "render_record",
]

MAX_RECORD_LINES = C.MAX_RECORD_LINES
MAX_RECORD_BYTES = C.MAX_RECORD_BYTES


class MemoryType(StrEnum):
    """What a memory holds (SPEC §1, "The four types")."""

    USER = "user"  # who the user is, preferences
    FEEDBACK = "feedback"  # how to work, pitfalls met
    PROJECT = "project"  # what is going on now
    REFERENCE = "reference"  # where things are


_TYPE_VALUES = ", ".join(t.value for t in MemoryType)


def _coerce_type(value: object, where: str) -> MemoryType:
    if isinstance(value, MemoryType):
        return value
    if isinstance(value, str):
        try:
            return MemoryType(value)
        except ValueError:
            pass
    raise MemoryFormatError(f"{where}: unknown type {value!r} (expected one of {_TYPE_VALUES})")


# SPEC §1 "on one line" and "non-empty" differ by side, so that every set the reference
# agent writes loads here and nothing written here is refused there.
# Writing: no line break of any kind (every character str.splitlines() breaks on; YAML
# also treats NEL, LS, PS as breaks). Reading: only CR and LF break a description.
_LINE_BOUNDARY = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_CR_LF = re.compile("[\r\n]")
# What JavaScript's String.prototype.trim removes (ECMA-262 WhiteSpace and LineTerminator:
# TAB, VT, FF, ZWNBSP/BOM, every Zs space, LF, CR, LS, PS). A text made only of these is
# blank to the reference agent, which then refuses the whole set.
_JS_BLANK = re.compile(
    "[\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]*"
)


def is_blank(text: str, *, writing: bool) -> bool:
    """SPEC §1 "blank": what JavaScript's ``trim`` removes entirely; when ``writing``,
    also what Python's ``str.strip`` removes entirely (e.g. U+001F, U+0085)."""
    return _JS_BLANK.fullmatch(text) is not None or (writing and not text.strip())


def breaks_line(text: str, *, writing: bool) -> bool:
    """SPEC §1 "not on one line": a CR or LF; when ``writing``, any line break at all."""
    return (_LINE_BOUNDARY if writing else _CR_LF).search(text) is not None


def _normalise_body(body: str) -> str:
    return body.replace("\r\n", "\n").replace("\r", "\n").strip("\n")


@dataclass(frozen=True)
class MemoryRecord:
    """One memory. Validated on construction; raises :class:`MemoryFormatError`.

    ``type`` accepts a :class:`MemoryType` or its string value. ``body`` is normalised
    (CRLF/CR to LF, outer newlines stripped). The rendered file must fit the size budget.
    """

    name: str
    type: MemoryType
    description: str
    body: str

    def __post_init__(self) -> None:
        _validate_fields(self, "record")

    def to_json(self) -> dict[str, str]:
        """The record as the side-queries and ``pending/`` exchange it: exactly the
        :data:`RECORD_FIELDS`, each a string."""
        return {key: str(getattr(self, key)) for key in RECORD_FIELDS}

    @classmethod
    def from_json(cls, data: object, where: str = "record") -> MemoryRecord:
        """The record :meth:`to_json` gave: an object with exactly the
        :data:`RECORD_FIELDS`, each a string, fully validated. Raises
        :class:`MemoryFormatError` saying, at ``where``, what is wrong."""
        keys = ", ".join(RECORD_FIELDS)
        if not isinstance(data, Mapping):
            raise MemoryFormatError(
                f"{where}: a record is an object with keys {keys}, got {type(data).__name__}"
            )
        missing = [key for key in RECORD_FIELDS if key not in data]
        unknown = sorted(repr(key) for key in data if key not in RECORD_FIELDS)
        if missing or unknown:
            raise MemoryFormatError(
                f"{where}: a record must have exactly the keys {keys}"
                + (f"; missing: {', '.join(missing)}" if missing else "")
                + (f"; unknown: {', '.join(unknown)}" if unknown else "")
            )
        for key in RECORD_FIELDS:
            if not isinstance(data[key], str):
                raise MemoryFormatError(
                    f"{where}: {key} must be a string, got {type(data[key]).__name__}"
                )
        try:
            return cls(**{key: data[key] for key in RECORD_FIELDS})
        except MemoryFormatError as e:
            raise MemoryFormatError(f"{where}: {e}") from None


# The record's keys, from the dataclass (the one place they are written), and the ones
# holding free text (every key but ``type``, whose value is one of four words).
RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(MemoryRecord))
TEXT_FIELDS: tuple[str, ...] = tuple(name for name in RECORD_FIELDS if name != "type")


def record_secrets(record: MemoryRecord) -> tuple[tuple[str, SecretHit], ...]:
    """Every credential in ``record``'s text, as (field, hit), fields in record order;
    a key split across the end of the description and the start of the body (which a
    reader, or a model, joins again) counts in both, each hit clipped to its field."""
    own = tuple(
        (field, hit) for field in TEXT_FIELDS for hit in find_secrets(getattr(record, field))
    )
    return own + _split_secrets(record)


_SPLIT_WINDOW = 2048
_KEY_CHAR = re.compile(r"[A-Za-z0-9_\-+/=.]")


def _split_secrets(record: MemoryRecord) -> tuple[tuple[str, SecretHit], ...]:
    description, body = record.description, record.body
    if not (_KEY_CHAR.match(description[-1:]) and _KEY_CHAR.match(body[:1])):
        return ()  # a key cannot run across a space or punctuation: the usual case, cheap
    cut = len(description)
    out: list[tuple[str, SecretHit]] = []
    # A key the description (or the body) holds whole is not split, even when the
    # joined text runs it into the next word ("… ghp_x" + "Use ghp_x …"): only a
    # match neither side makes alone is.
    whole_before = [h for h in find_secrets(description) if h.end == cut]
    whole_after = [h for h in find_secrets(body[:_SPLIT_WINDOW]) if h.start == 0]
    # The description is one short line; of the body, the start is enough for any key
    # (the longest shapes are a few hundred characters) and keeps this cheap.
    for hit in find_secrets(description + body[:_SPLIT_WINDOW]):
        if not hit.start < cut < hit.end:
            continue
        if any(h.start <= hit.start for h in whole_before) or any(
            h.end >= hit.end - cut for h in whole_after
        ):
            continue
        out.append(("description", SecretHit(hit.kind, hit.start, cut)))
        out.append(("body", SecretHit(hit.kind, 0, hit.end - cut)))
    return tuple(out)


def _cut_split_secrets(fields: dict[str, str], record: MemoryRecord) -> None:
    """Remove the two halves of each split key from ``fields`` (the marker stays in
    the description), before each field is redacted on its own."""
    split = dict(_split_secrets(record))
    if split:
        head, tail = split["description"], split["body"]
        fields["description"] = fields["description"][: head.start] + head.redaction
        fields["body"] = fields["body"][tail.end :]


def redacted_fields(record: MemoryRecord) -> dict[str, str]:
    """``record.to_json()`` with every credential in its text replaced by
    ``[REDACTED: kind]`` (SPEC §7), for showing or re-making it; a name holding one
    becomes a slug of its redacted form. Not validated: see :func:`redact_record`."""
    out = record.to_json()
    _cut_split_secrets(out, record)
    for key in TEXT_FIELDS:
        out[key] = redact(out[key])
    if out["name"] != record.name:
        out["name"] = re.sub(r"[^a-z0-9]+", "-", out["name"].lower()).strip("-") or "redacted"
    return out


def redact_record(record: MemoryRecord) -> MemoryRecord:
    """``record`` with its credentials redacted (:func:`redacted_fields`); ``record``
    itself when it holds none. Raises :class:`MemoryFormatError` if the redacted record
    breaks the format (e.g. markers push a near-full record over the size limit)."""
    redacted = redacted_fields(record)
    if redacted == record.to_json():
        return record
    return MemoryRecord.from_json(redacted, f"redacted record {redacted['name']!r}")


def _validate_fields(record: MemoryRecord, where: str, *, writing: bool = True) -> None:
    """Check and normalise ``record`` in place. ``writing``: the record is to be written
    (constructed by us); otherwise it was read from a file, whose budget is checked."""
    check_name(record.name, f"{where} name")
    object.__setattr__(record, "type", _coerce_type(record.type, f"{where} {record.name!r}"))
    where = f"{where} {record.name!r}"
    if not isinstance(record.description, str):
        raise MemoryFormatError(f"{where}: description must be a string")
    if not isinstance(record.body, str):
        raise MemoryFormatError(f"{where}: body must be a string")
    object.__setattr__(record, "body", _normalise_body(record.body))
    _check_text(record, where, writing=writing)
    if writing:
        _check_budget(render_record(record), where)


def _check_text(record: MemoryRecord, where: str, *, writing: bool) -> None:
    """SPEC §1 rules on the description and body text, for reading or for writing."""
    desc = record.description
    if is_blank(desc, writing=writing):
        raise MemoryFormatError(f"{where}: description must not be empty (or only whitespace)")
    if breaks_line(desc, writing=writing):
        raise MemoryFormatError(f"{where}: description must be a single line")
    if is_blank(record.body, writing=writing):
        raise MemoryFormatError(f"{where}: body must not be empty (or only whitespace)")
    for field, text in (("description", desc), ("body", record.body)):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            # e.g. a lone surrogate (a YAML "\ud800" escape): a file must be UTF-8.
            raise MemoryFormatError(f"{where}: {field} is not encodable as UTF-8 ({e})") from e


@dataclass(frozen=True)
class StoredRecord:
    """One entry of the current set: the record and the file (in ``.memory/``) holding it."""

    file: str
    record: MemoryRecord


# --- writing -------------------------------------------------------------------------

# Strings that a YAML 1.2 core-schema reader (the reference agent) or a YAML 1.1 reader
# would turn into something other than a string if left plain: always quote these.
_YAML_SPECIAL = re.compile(
    r"""(?x)
    ~|null|Null|NULL|true|True|TRUE|false|False|FALSE
    |y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF
    |[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?
    |[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |0o[0-7]+|0x[0-9a-fA-F_]+|0b[01_]+|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?
    |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
    |[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*
    |=|<<
    """
)
# Conservative set of strings PyYAML is known to emit plain (checked against yaml.dump
# in the tests): these skip the (slow) YAML emitter.
_FAST_PLAIN = re.compile(r"[A-Za-z0-9\u00c0-\uffff][A-Za-z0-9\u00c0-\uffff _.,;()/'+=-]*")
_UNSAFE_FAST = re.compile(r"[\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]|  ")


class _Dumper(yaml.SafeDumper):
    """Safe dumper that quotes strings a YAML 1.2 reader would not read as strings."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "'" if _YAML_SPECIAL.fullmatch(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _yaml_value(value: str) -> str:
    if (
        _FAST_PLAIN.fullmatch(value)
        and not value.endswith(" ")
        and _UNSAFE_FAST.search(value) is None
        and _YAML_SPECIAL.fullmatch(value) is None
    ):
        return value
    dumped = yaml.dump(
        {"k": value},
        Dumper=_Dumper,
        allow_unicode=True,
        width=1 << 30,
        default_flow_style=False,
    )
    assert dumped.startswith("k: ") and dumped.endswith("\n")
    return dumped[3:-1]


def render_frontmatter_value(value: str) -> str:
    """The YAML text written for one frontmatter string value (exposed for tests)."""
    return _yaml_value(value)


def render_record(record: MemoryRecord) -> bytes:
    """The exact bytes of ``record``'s file.

    Refuses (:class:`MemoryFormatError`) a record read from a file whose text only the
    reading rules allow (e.g. a description with a VT or NEL the reference agent wrote):
    what we write holds no line break and nothing blank to either side (SPEC §1).
    """
    _check_text(record, f"record {record.name!r}", writing=True)
    text = (
        "---\n"
        f"name: {_yaml_value(record.name)}\n"
        f"description: {_yaml_value(record.description)}\n"
        f"type: {record.type.value}\n"
        "---\n"
        "\n"
        f"{record.body}\n"
    )
    return text.encode("utf-8")


# --- reading -------------------------------------------------------------------------

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# The frontmatter keys in file order (SPEC §1): every record field but the body.
FRONTMATTER_KEYS: tuple[str, ...] = ("name", "description", "type")
# Frontmatter exactly as our writer emits it for plain values: for these lines the loader
# below (every plain scalar a string) yields the value text itself, so the YAML parser
# (~70 µs, most of a cold read) is skipped. Anything else goes through YAML.
_FAST_FRONT = re.compile(rf"({'|'.join(FRONTMATTER_KEYS)}): ({_FAST_PLAIN.pattern})")


def _fast_frontmatter(lines: list[str]) -> dict[str, str] | None:
    if len(lines) != len(FRONTMATTER_KEYS):
        return None
    meta: dict[str, str] = {}
    for key, line in zip(FRONTMATTER_KEYS, lines, strict=True):
        match = _FAST_FRONT.fullmatch(line)
        if match is None or match.group(1) != key:
            return None
        value = match.group(2)
        if value.endswith(" ") or _UNSAFE_FAST.search(value) is not None:
            return None
        meta[key] = value
    return meta


def count_lines(raw: bytes) -> int:
    """Lines in ``raw`` (a final line break does not start a new line)."""
    if not raw:
        return 0
    # Line breaks are \r\n, \r or \n; counted without a regex split (this runs for
    # every record read, twice).
    breaks = raw.count(b"\n") + raw.count(b"\r") - raw.count(b"\r\n")
    return breaks if raw.endswith((b"\n", b"\r")) else breaks + 1


def _check_budget(raw: bytes, where: str) -> None:
    if len(raw) > MAX_RECORD_BYTES:
        raise MemoryFormatError(
            f"{where}: record file is {len(raw)} bytes, over the {MAX_RECORD_BYTES}-byte limit"
        )
    lines = count_lines(raw)
    if lines > MAX_RECORD_LINES:
        raise MemoryFormatError(
            f"{where}: record file has {lines} lines, over the {MAX_RECORD_LINES}-line limit"
        )


_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc]
    """Safe loader where every plain scalar resolves to a string (no YAML 1.1 bools, ints,
    nulls); only its node tree is used, see :func:`_frontmatter_mapping`."""


_Loader.yaml_implicit_resolvers = {}


_STD_TAG = "tag:yaml.org,2002:"
_STR_TAG = f"{_STD_TAG}str"
_MAP_TAG = f"{_STD_TAG}map"
_NODE_KINDS = {yaml.SequenceNode: "list", yaml.MappingNode: "dict"}
# The tags a safe loader knows; any other (``!!python/...``, ``!local``) is not safe YAML.
_SAFE_KINDS = ("str", "int", "float", "bool", "null", "timestamp", "binary")
_SAFE_TAGS = frozenset(
    f"{_STD_TAG}{kind}" for kind in (*_SAFE_KINDS, "seq", "map", "set", "omap", "pairs")
)

# The reference agent's YAML 1.2 library writes these raw, as ordinary content (checked in
# tests/test_store_interop.py); PyYAML refuses them (DEL, C1 controls, U+FFFE/U+FFFF) or
# reads them as line breaks (NEL, LS, PS: a "a<NEL>b" would silently become "a b"). They are
# parsed as stand-ins from Supplementary Private Use Area-A (plain text to YAML) and swapped
# back, so values are exactly theirs.
_YAML12_CONTENT = re.compile("[\x7f-\x9f\u2028\u2029\ufffe\uffff]")


# The frontmatter's first line in its file (after the opening ``---``): a YAML position
# is said as the file's line, which is what an editor shows (issue 43).
_FRONTMATTER_FIRST_LINE = 2


def _yaml_problem(error: yaml.MarkedYAMLError) -> str:
    """The parser's complaint in one line, at the file's line and column."""
    what = "; ".join(t for t in (error.context, error.problem) if t) or "cannot be parsed"
    mark = error.problem_mark or error.context_mark
    if mark is not None:
        what += f" at line {mark.line + _FRONTMATTER_FIRST_LINE}, column {mark.column + 1}"
    if "mapping values are not allowed" in (error.problem or ""):
        what += "; a value holding ': ' must be quoted"
    return what


def _frontmatter_mapping(text: str, where: str) -> dict[str, str]:
    """The frontmatter as a flat mapping of strings, or :class:`MemoryFormatError`.

    Only the node tree is built (no constructors run): the root must be a mapping whose
    keys and values are all string scalars. So complex keys (``? [a, b]``), nested or
    aliased collections (alias bombs stay shared nodes, never expanded), tags other than
    ``!!str`` and repeated keys are each refused with the file named, before any Python
    object is made from them.
    """
    found = sorted(set(_YAML12_CONTENT.findall(text)))
    back: dict[int, str] = {}
    if found:
        free = (chr(c) for c in range(0xF0000, 0xFFFFE) if chr(c) not in text)
        swap = {ch: next(free) for ch in found}
        back = {ord(stand_in): ch for ch, stand_in in swap.items()}
        text = _YAML12_CONTENT.sub(lambda m: swap[m.group()], text)
    try:
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as e:
        raise MemoryFormatError(
            f"{where}: frontmatter is not valid safe YAML ({_yaml_problem(e)})"
        ) from e
    except yaml.YAMLError as e:
        raise MemoryFormatError(f"{where}: frontmatter is not valid safe YAML ({e})") from e
    except RecursionError as e:  # the pure-Python parser on deep nesting
        raise MemoryFormatError(f"{where}: frontmatter is nested too deeply") from e
    if not isinstance(root, yaml.MappingNode) or root.tag != _MAP_TAG:
        raise MemoryFormatError(
            f"{where}: frontmatter must be a mapping of name, description, type"
        )
    meta: dict[str, str] = {}
    for key_node, value_node in root.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR_TAG:
            raise MemoryFormatError(f"{where}: frontmatter keys must be plain strings")
        key = key_node.value.translate(back)
        if key in meta:
            raise MemoryFormatError(f"{where}: frontmatter repeats the key {key!r}")
        if value_node.tag not in _SAFE_TAGS:
            raise MemoryFormatError(
                f"{where}: frontmatter is not valid safe YAML "
                f"({key} has the unknown tag {value_node.tag.replace(_STD_TAG, '!!')})"
            )
        if isinstance(value_node, yaml.ScalarNode):
            if value_node.tag != _STR_TAG:
                raise MemoryFormatError(
                    f"{where}: frontmatter {key} must be a string, "
                    f"got a value tagged {value_node.tag.replace(_STD_TAG, '!!')}"
                )
            meta[key] = value_node.value.translate(back)
        else:
            kind = _NODE_KINDS.get(type(value_node), "collection")
            raise MemoryFormatError(f"{where}: frontmatter {key} must be a string, got {kind}")
    return meta


def parse_record(raw: bytes, where: str = "record file") -> MemoryRecord:
    """Parse and fully validate a record file's bytes. ``where`` names it in errors."""
    _check_budget(raw, where)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MemoryFormatError(f"{where}: not valid UTF-8 ({e.reason} at byte {e.start})") from e
    lines = _LINE_BREAK.split(text)
    if lines[0] != "---":
        raise MemoryFormatError(f"{where}: does not start with a '---' frontmatter line")
    try:
        end = lines.index("---", 1)
    except ValueError:
        raise MemoryFormatError(f"{where}: frontmatter is not closed by a '---' line") from None
    meta = _fast_frontmatter(lines[1:end])
    if meta is None:
        meta = _frontmatter_mapping("\n".join(lines[1:end]), where)
    keys = set(meta)
    if keys != set(FRONTMATTER_KEYS):
        extra = sorted(keys - set(FRONTMATTER_KEYS))
        missing = sorted(set(FRONTMATTER_KEYS) - keys)
        raise MemoryFormatError(
            f"{where}: frontmatter keys must be exactly {', '.join(FRONTMATTER_KEYS)}"
            + (f"; extra: {', '.join(extra)}" if extra else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
        )
    record = MemoryRecord.__new__(MemoryRecord)
    for key in FRONTMATTER_KEYS:
        object.__setattr__(record, key, meta[key])
    object.__setattr__(record, "body", "\n".join(lines[end + 1 :]))
    _validate_fields(record, where, writing=False)
    return record
