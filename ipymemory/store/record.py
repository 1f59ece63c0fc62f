"""A memory record: the value object, and its exact file format (SPEC §1).

A record file is ``---`` / YAML frontmatter (name, description, type) / ``---`` / blank
line / body / newline. Frontmatter is written so that both a YAML 1.1 reader (PyYAML) and
the YAML 1.2 reader of the reference TypeScript agent read every value back as the same
string, and read so that plain scalars are always strings (that agent's YAML 1.2 writer
leaves ``no``, ``yes``, ``on``, ``off`` unquoted; it quotes ``null``, ``true``, ``1``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

import yaml

from .. import _constants as C
from ..errors import MemoryFormatError
from .names import check_name

__all__ = [
    "MAX_RECORD_BYTES",
    "MAX_RECORD_LINES",
    "MemoryRecord",
    "MemoryType",
    "StoredRecord",
    "count_lines",
    "parse_record",
    "render_record",
]

MAX_RECORD_LINES = C.MAX_RECORD_LINES
MAX_RECORD_BYTES = C.MAX_RECORD_BYTES


class MemoryType(str, Enum):
    """What a memory holds (SPEC §1, "The four types")."""

    USER = "user"  # who the user is, preferences
    FEEDBACK = "feedback"  # how to work, pitfalls met
    PROJECT = "project"  # what is going on now
    REFERENCE = "reference"  # where things are

    def __str__(self) -> str:
        return self.value


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


# Every character str.splitlines() breaks on (YAML also treats NEL, LS, PS as breaks):
# a description containing any of them would not stay on its MEMORY.md line.
_LINE_BOUNDARY = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


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
        """The record as the side-queries exchange it (exactly four string keys)."""
        return {
            "name": self.name,
            "type": self.type.value,
            "description": self.description,
            "body": self.body,
        }


def _validate_fields(record: MemoryRecord, where: str) -> None:
    check_name(record.name, f"{where} name")
    object.__setattr__(record, "type", _coerce_type(record.type, f"{where} {record.name!r}"))
    where = f"{where} {record.name!r}"
    desc = record.description
    if not isinstance(desc, str):
        raise MemoryFormatError(f"{where}: description must be a string")
    if not desc.strip():
        raise MemoryFormatError(f"{where}: description must not be empty")
    if _LINE_BOUNDARY.search(desc):
        raise MemoryFormatError(f"{where}: description must be a single line")
    if not isinstance(record.body, str):
        raise MemoryFormatError(f"{where}: body must be a string")
    body = _normalise_body(record.body)
    if not body.strip():
        raise MemoryFormatError(f"{where}: body must not be empty")
    object.__setattr__(record, "body", body)
    try:
        desc.encode("utf-8")  # the YAML emitter would escape a lone surrogate, not refuse it
        raw = render_record(record)
    except (UnicodeEncodeError, yaml.YAMLError) as e:
        # e.g. a lone surrogate: a file must be UTF-8, so such text cannot be stored.
        raise MemoryFormatError(f"{where}: text is not encodable as UTF-8 ({e})") from e
    _check_budget(raw, where)


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
    """The exact bytes of ``record``'s file."""
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
_FRONT_KEYS = ("name", "description", "type")
# Frontmatter exactly as our writer emits it for plain values: for these lines the loader
# below (every plain scalar a string) yields the value text itself, so the YAML parser
# (~70 µs, most of a cold read) is skipped. Anything else goes through YAML.
_FAST_FRONT = re.compile(rf"({'|'.join(_FRONT_KEYS)}): ({_FAST_PLAIN.pattern})")


def _fast_frontmatter(lines: list[str]) -> dict[str, str] | None:
    if len(lines) != len(_FRONT_KEYS):
        return None
    meta: dict[str, str] = {}
    for key, line in zip(_FRONT_KEYS, lines, strict=True):
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
    """Safe loader where every plain scalar is a string (no YAML 1.1 bools, ints, nulls)."""


_Loader.yaml_implicit_resolvers = {}


class _DuplicateKey(Exception):
    pass


def _construct_mapping(loader: Any, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise _DuplicateKey(key)
        seen.add(key)
    return dict(loader.construct_pairs(node, deep=True))


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)

# The reference agent's YAML 1.2 library writes these raw, as ordinary content (checked in
# tests/test_store_interop.py); PyYAML refuses them (DEL, C1 controls, U+FFFE/U+FFFF) or
# reads them as line breaks (NEL, LS, PS: a "a<NEL>b" would silently become "a b"). They are
# parsed as stand-ins from Supplementary Private Use Area-A (plain text to YAML) and swapped
# back, so values are exactly theirs (a NEL, LS or PS then fails the one-line rule clearly).
_YAML12_CONTENT = re.compile("[\x7f-\x9f\u2028\u2029\ufffe\uffff]")


def _load_frontmatter(text: str) -> Any:
    found = sorted(set(_YAML12_CONTENT.findall(text)))
    if not found:
        return yaml.load(text, Loader=_Loader)
    free = (chr(c) for c in range(0xF0000, 0xFFFFE) if chr(c) not in text)
    swap = {ch: next(free) for ch in found}
    meta = yaml.load(_YAML12_CONTENT.sub(lambda m: swap[m.group()], text), Loader=_Loader)
    if not isinstance(meta, dict):
        return meta
    back = {ord(stand_in): ch for ch, stand_in in swap.items()}
    return {
        (k.translate(back) if isinstance(k, str) else k): (
            v.translate(back) if isinstance(v, str) else v
        )
        for k, v in meta.items()
    }


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
    meta: Any = _fast_frontmatter(lines[1:end])
    try:
        if meta is None:
            meta = _load_frontmatter("\n".join(lines[1:end]))
    except _DuplicateKey as e:
        raise MemoryFormatError(f"{where}: frontmatter repeats the key {e.args[0]!r}") from e
    except yaml.YAMLError as e:
        raise MemoryFormatError(f"{where}: frontmatter is not valid safe YAML ({e})") from e
    if not isinstance(meta, dict):
        raise MemoryFormatError(
            f"{where}: frontmatter must be a mapping of name, description, type"
        )
    keys = set(meta)
    if keys != set(_FRONT_KEYS):
        extra = sorted(map(str, keys - set(_FRONT_KEYS)))
        missing = sorted(set(_FRONT_KEYS) - keys)
        raise MemoryFormatError(
            f"{where}: frontmatter keys must be exactly name, description, type"
            + (f"; extra: {', '.join(extra)}" if extra else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
        )
    for key in _FRONT_KEYS:
        if not isinstance(meta[key], str):
            raise MemoryFormatError(
                f"{where}: frontmatter {key} must be a string, got {type(meta[key]).__name__}"
            )
    record = MemoryRecord.__new__(MemoryRecord)
    object.__setattr__(record, "name", meta["name"])
    object.__setattr__(record, "type", meta["type"])
    object.__setattr__(record, "description", meta["description"])
    object.__setattr__(record, "body", "\n".join(lines[end + 1 :]))
    _validate_fields(record, where)
    return record
