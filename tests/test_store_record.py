"""Record format (SPEC §1): exact bytes, strict validation on write and on read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from record_support import rec

from ipymemory import MemoryFormatError, MemoryRecord, MemoryType
from ipymemory.store import record as record_module
from ipymemory.store.manifest import parse_manifest, render_manifest
from ipymemory.store.record import (
    MAX_RECORD_BYTES,
    MAX_RECORD_LINES,
    parse_record,
    render_frontmatter_value,
    render_record,
)

BAD_NAMES = [
    "../escape",
    "has space",
    "UPPER",
    "nul",
    "com1",
    "lpt9",
    "file:stream",
    "trailing.",
    "",
    "-lead",
    "double--hyphen",
    "trail-",
    "a/b",
    "con",
    "prn",
    "aux",
]


def file_bytes(front: str, body: str = "Body.") -> bytes:
    return f"---\n{front}---\n\n{body}\n".encode()


GOOD_FRONT = "name: tabs\ndescription: indentation preference\ntype: user\n"


# --- exact bytes ------------------------------------------------------------------------


def test_rendered_bytes_are_exact() -> None:
    r = MemoryRecord(
        name="tabs",
        type=MemoryType.USER,
        description="Indents with tabs, not spaces",
        body="\r\n\nThe user indents with tabs.\r\nTrailing spaces kept:  \n\n",
    )
    assert render_record(r) == (
        b"---\n"
        b"name: tabs\n"
        b"description: Indents with tabs, not spaces\n"
        b"type: user\n"
        b"---\n"
        b"\n"
        b"The user indents with tabs.\nTrailing spaces kept:  \n"
    )
    assert r.body == "The user indents with tabs.\nTrailing spaces kept:  "
    assert parse_record(render_record(r)) == r


def test_type_accepts_enum_or_string_and_to_json() -> None:
    assert rec(type="feedback").type is MemoryType.FEEDBACK
    assert rec("tabs", "indentation preference", "Use tabs.", "user").to_json() == {
        "name": "tabs",
        "type": "user",
        "description": "indentation preference",
        "body": "Use tabs.",
    }


def test_values_yaml_would_misread_are_quoted() -> None:
    r = rec(name="no", description="yes")
    text = render_record(r).decode()
    assert "name: 'no'\n" in text and "description: 'yes'\n" in text
    # Both a YAML 1.1 reader (PyYAML's default resolvers) and ours read strings back.
    front = yaml.safe_load(text.split("---\n")[1])
    assert front == {"name": "no", "description": "yes", "type": "project"}
    assert parse_record(render_record(r)) == r


# --- names --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_refused_on_write(name: str) -> None:
    with pytest.raises(MemoryFormatError, match="name") as info:
        rec(name=name)
    assert repr(name) in str(info.value)


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_refused_on_read(name: str) -> None:
    raw = file_bytes(f"name: '{name}'\ndescription: d\ntype: user\n")
    with pytest.raises(MemoryFormatError) as info:
        parse_record(raw, "x.md")
    assert str(info.value).startswith("x.md")
    assert repr(name) in str(info.value)


# Every Windows device name SPEC §1 reserves, spelled out (not taken from the code).
RESERVED = ["con", "prn", "aux", "nul"] + [f"{d}{i}" for d in ("com", "lpt") for i in range(1, 10)]


@pytest.mark.parametrize("name", RESERVED)
def test_every_reserved_name_is_refused_as_record_and_file_name(name: str) -> None:
    with pytest.raises(MemoryFormatError, match="reserved Windows device name"):
        rec(name=name)
    with pytest.raises(MemoryFormatError, match=r"^x\.md\b.*reserved Windows device name"):
        parse_record(file_bytes(f"name: {name}\ndescription: d\ntype: user\n"), "x.md")
    with pytest.raises(MemoryFormatError, match="not a safe record file name"):
        parse_manifest(render_manifest([f"{name}.md"]), "manifest.json")
    # Only the whole name is reserved: as a slug's word it is an ordinary name.
    assert rec(name=f"{name}-notes").name == f"{name}-notes"
    assert parse_manifest(render_manifest([f"{name}-notes.md"]), "m") == (f"{name}-notes.md",)


# --- frontmatter --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("front", "rule"),
    [
        (GOOD_FRONT + "extra: 1\n", "extra: extra"),
        ("name: tabs\ntype: user\n", "missing: description"),
        ("name: tabs\ndescription: d\n", "missing: type"),
        ("name: [a, b]\ndescription: d\ntype: user\n", "name must be a string, got list"),
        ("name: tabs\ndescription: {a: b}\ntype: user\n", "description must be a string"),
        ("name: tabs\ndescription:\n  - x\ntype: user\n", "got list"),
        ("name: tabs\ndescription: d\ntype: 1\n", "unknown type '1'"),
        ("name: tabs\ndescription: d\ntype: USER\n", "unknown type 'USER'"),
        (
            "name: tabs\ndescription: d\ntype: !!int 1\n",
            "type must be a string, got a value tagged !!int",
        ),
        (
            "name: tabs\ndescription: !!python/object/apply:os.system ['echo hi']\ntype: user\n",
            "not valid safe YAML",
        ),
        ("name: tabs\ndescription: d\ntype: user\nname: tabs\n", "repeats the key 'name'"),
        ("name: tabs\ndescription: ''\ntype: user\n", "description must not be empty"),
        ("just a string\n", "must be a mapping"),
        ("name: tabs\ndescription: d\ntype: user\n  bad: indent\n", "not valid safe YAML"),
    ],
)
def test_frontmatter_rules(front: str, rule: str) -> None:
    with pytest.raises(MemoryFormatError, match=r"^x\.md\b") as info:
        parse_record(file_bytes(front), "x.md")
    assert rule in str(info.value)


def _laughs(levels: int) -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join([*lines, f"description: *l{levels - 1}", ""])


# Frontmatter that is not a flat mapping of string keys to string values (issue 10 #2:
# a complex key used to raise TypeError: unhashable type out of every reader).
NOT_FLAT = [
    ("? [a, b]: x\n" + GOOD_FRONT, "keys must be plain strings"),
    ("? {a: 1}: x\n" + GOOD_FRONT, "keys must be plain strings"),
    ("[a]: x\n" + GOOD_FRONT, "keys must be plain strings"),
    ("{a: b}: x\n" + GOOD_FRONT, "keys must be plain strings"),
    ("? - a\n  - b\n: x\n" + GOOD_FRONT, "keys must be plain strings"),
    ("!!int 1: x\n" + GOOD_FRONT, "keys must be plain strings"),
    (GOOD_FRONT + "<<: {name: b}\n", "<< must be a string, got dict"),
    (_laughs(9), "l0 must be a string, got list"),  # refused before any expansion
    ("name: tabs\ndescription: &a [*a]\ntype: user\n", "description must be a string"),
    ("name: tabs\ndescription: d\ntype: !!timestamp x\n", "tagged !!timestamp"),
    ("name: tabs\ndescription: !!binary aGk=\ntype: user\n", "tagged !!binary"),
    ("name: tabs\ndescription: !!float x\ntype: user\n", "tagged !!float"),
    ("name: tabs\ndescription: !!bool x\ntype: user\n", "tagged !!bool"),
    ("name: tabs\ndescription: !foo x\ntype: user\n", "unknown tag !foo"),
    ("name: tabs\ndescription: !!python/name:os.system\ntype: user\n", "not valid safe YAML"),
    ("name: tabs\ndescription: d\ntype: !!set {a}\n", "type must be a string"),
    ("!!set {name, description, type}\n", "must be a mapping"),
    ("- name\n", "must be a mapping"),
    ("name: tabs\ndescription: d\ntype: user\n--- x\n", "not valid safe YAML"),
    ("description: " + "[" * 1900 + "]" * 1900 + "\n", "frontmatter"),
    ('name: tabs\ndescription: "\\ud800"\ntype: user\n', "x.md"),
    ("name: tabs\ndescription: d\ntype: user\ndescription: e\n", "repeats the key"),
    ("name: tabs\ndescription: \x00\ntype: user\n", "not valid safe YAML"),
]


@pytest.mark.parametrize(("front", "rule"), NOT_FLAT)
def test_frontmatter_must_be_a_flat_mapping_of_strings(front: str, rule: str) -> None:
    with pytest.raises(MemoryFormatError, match=r"^x\.md\b") as info:
        parse_record(file_bytes(front), "x.md")
    assert rule in str(info.value)


@pytest.mark.parametrize(
    "value",
    ["!!str tabs", "&a tabs", '"tabs"', "'tabs'", "! tabs", "!<tag:yaml.org,2002:str> tabs"],
)
def test_string_scalars_in_any_spelling_load(value: str) -> None:
    got = parse_record(file_bytes(f"name: {value}\ndescription: d\ntype: user\n"), "x.md")
    assert got.name == "tabs"


def test_alias_of_a_string_is_that_string() -> None:
    raw = file_bytes("name: &n tabs\ndescription: *n\ntype: user\n")
    assert parse_record(raw, "x.md").description == "tabs"


def test_unclosed_frontmatter() -> None:
    with pytest.raises(MemoryFormatError, match=r"x\.md: frontmatter is not closed"):
        parse_record(b"---\n" + GOOD_FRONT.encode() + b"\nBody\n", "x.md")


def test_missing_frontmatter() -> None:
    with pytest.raises(MemoryFormatError, match=r"x\.md: does not start with"):
        parse_record(b"Body only\n", "x.md")


def test_non_utf8() -> None:
    with pytest.raises(MemoryFormatError, match=r"x\.md: not valid UTF-8"):
        parse_record(file_bytes(GOOD_FRONT, "caf\xe9").replace(b"caf\xc3\xa9", b"caf\xe9"), "x.md")


def test_empty_body_refused() -> None:
    with pytest.raises(MemoryFormatError, match="body must not be empty"):
        parse_record(b"---\n" + GOOD_FRONT.encode() + b"---\n\n\n", "x.md")
    with pytest.raises(MemoryFormatError, match="body must not be empty"):
        rec(body="\n\n")


@pytest.mark.parametrize("description", ["two\nlines", "cr\rinside", "", "   "])
def test_description_one_nonblank_line(description: str) -> None:
    with pytest.raises(MemoryFormatError, match="description"):
        rec(description=description)


# --- SPEC §1: "on one line" and "non-empty", reading vs writing (issue 10 #9a/b) ----------

# Spelled out from ECMA-262 (WhiteSpace + LineTerminator), not taken from the code: what
# JavaScript's String.prototype.trim removes. The Zs list is checked against unicodedata.
JS_TRIM = "\t\n\x0b\x0c\r \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
JS_TRIM += "\u2028\u2029\u202f\u205f\u3000\ufeff"
# Line breaks the reference agent's writer leaves in a description (issue 10 #9b) and
# how its YAML library spells them.
REFERENCE_BREAKS = {
    "\x0b": '"one\\vtwo"',
    "\x0c": '"one\\ftwo"',
    "\x1c": '"one\\x1ctwo"',
    "\x1d": '"one\\x1dtwo"',
    "\x1e": '"one\\x1etwo"',
    "\x85": '"one\x85two"',
    "\u2028": "one\u2028two",
    "\u2029": "one\u2029two",
}


def test_js_trim_set_is_every_unicode_space_separator_plus_ecma_extras() -> None:
    import sys
    import unicodedata

    zs = {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Zs"}
    assert set(JS_TRIM) == zs | set("\t\n\x0b\x0c\r\u2028\u2029\ufeff")


@pytest.mark.parametrize("char", sorted(REFERENCE_BREAKS), ids=lambda c: f"U+{ord(c):04X}")
def test_reference_description_with_a_non_crlf_break_loads_but_is_never_written(
    char: str,
) -> None:
    raw = file_bytes(f"name: tabs\ndescription: {REFERENCE_BREAKS[char]}\ntype: user\n")
    got = parse_record(raw, "x.md")
    assert got.description == f"one{char}two"
    with pytest.raises(MemoryFormatError, match="description must be a single line"):
        rec(description=f"one{char}two")
    with pytest.raises(MemoryFormatError, match="description must be a single line"):
        render_record(got)  # read leniently, still never written


@pytest.mark.parametrize("char", ["\n", "\r"], ids=["LF", "CR"])
def test_cr_or_lf_in_a_description_is_refused_on_read(char: str) -> None:
    escaped = {"\n": "\\n", "\r": "\\r"}[char]
    raw = file_bytes(f'name: tabs\ndescription: "one{escaped}two"\ntype: user\n')
    with pytest.raises(MemoryFormatError, match=r"^x\.md.*single line"):
        parse_record(raw, "x.md")


# Not blank to JavaScript's trim (so the reference writes and reads them), but blank to
# Python's strip: loaded, never written.
PY_ONLY_BLANK = ["\x1c", "\x1d", "\x1e", "\x1f", "\x85"]


@pytest.mark.parametrize("char", PY_ONLY_BLANK, ids=lambda c: f"U+{ord(c):04X}")
def test_python_only_blank_body_loads_but_is_never_written(char: str) -> None:
    front = "name: tabs\ndescription: d\ntype: user\n"
    got = parse_record(file_bytes(front, char), "x.md")
    assert got.body == char
    with pytest.raises(MemoryFormatError, match="body must not be empty"):
        rec(body=char)
    with pytest.raises(MemoryFormatError, match="body must not be empty"):
        render_record(got)


@pytest.mark.parametrize("char", PY_ONLY_BLANK, ids=lambda c: f"U+{ord(c):04X}")
def test_python_only_blank_description_loads_but_is_never_written(char: str) -> None:
    escaped = f'"\\x{ord(char):02x}"'
    got = parse_record(file_bytes(f"name: tabs\ndescription: {escaped}\ntype: user\n"), "x.md")
    assert got.description == char
    with pytest.raises(MemoryFormatError, match="description"):
        rec(description=char)


@pytest.mark.parametrize("char", sorted(set(JS_TRIM)), ids=lambda c: f"U+{ord(c):04X}")
def test_js_blank_text_is_refused_both_ways(char: str) -> None:
    # A BOM-only (or any JS-blank) description or body: the reference refuses the whole
    # set over it, so we never write it, and reading calls it empty too.
    with pytest.raises(MemoryFormatError, match="description must not be empty"):
        rec(description=char * 2)
    if char not in "\n\r":  # the body's outer newlines are stripped: "" is plainly empty
        with pytest.raises(MemoryFormatError, match="body must not be empty"):
            rec(body=char * 2)
        with pytest.raises(MemoryFormatError, match=r"^x\.md.*body must not be empty"):
            parse_record(file_bytes("name: tabs\ndescription: d\ntype: user\n", char), "x.md")
    escaped = f'"\\u{ord(char):04x}\\u{ord(char):04x}"'
    raw = file_bytes(f"name: tabs\ndescription: {escaped}\ntype: user\n")
    with pytest.raises(MemoryFormatError, match=r"^x\.md.*description must not be empty"):
        parse_record(raw, "x.md")


def test_a_leniently_read_record_cannot_be_committed(tmp_path: Path) -> None:
    from ipymemory import MemoryStore

    raw = file_bytes('name: tabs\ndescription: "one\\vtwo"\ntype: user\n', "\x1f")
    got = parse_record(raw, "x.md")
    store = MemoryStore(tmp_path)
    with pytest.raises(MemoryFormatError):
        store.extend([got])
    assert store.records() == ()
    assert not any((tmp_path / ".memory").glob("tabs-*.md"))


_any_text = st.text(st.characters(codec="utf-8"), max_size=6)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(_any_text, st.text(JS_TRIM + "\x1c\x1f\x85a", max_size=6)))
def test_blank_and_line_rules_match_their_definitions(text: str) -> None:
    js_blank = text.strip(JS_TRIM) == ""
    assert record_module.is_blank(text, writing=False) == js_blank
    assert record_module.is_blank(text, writing=True) == (js_blank or text.strip() == "")
    assert record_module.breaks_line(text, writing=False) == ("\n" in text or "\r" in text)
    assert record_module.breaks_line(text, writing=True) == (len(f"x{text}x".splitlines()) > 1)


# --- size budget --------------------------------------------------------------------------


def test_over_200_lines_refused_on_write_and_read() -> None:
    fits = "\n".join(["x"] * (MAX_RECORD_LINES - 6))  # 6 lines of frontmatter and blank
    assert parse_record(render_record(rec(body=fits))) == rec(body=fits)
    with pytest.raises(MemoryFormatError, match="201 lines, over the 200-line limit"):
        rec(body=fits + "\nx")
    raw = render_record(rec(body=fits)) + b"x\n"
    with pytest.raises(MemoryFormatError, match=r"^x\.md: .*201 lines"):
        parse_record(raw, "x.md")


def test_over_4096_bytes_refused_on_write_and_read() -> None:
    head = len(render_record(rec(body="x")))
    fits = "x" * (MAX_RECORD_BYTES - head + 1)
    assert len(render_record(rec(body=fits))) == MAX_RECORD_BYTES
    with pytest.raises(MemoryFormatError, match="4097 bytes, over the 4096-byte limit"):
        rec(body=fits + "y")
    raw = render_record(rec(body=fits)).replace(b"\n---\n\n", b"\n---\n\ny")
    with pytest.raises(MemoryFormatError, match=r"^x\.md: .*4097 bytes"):
        parse_record(raw, "x.md")


def test_multibyte_counts_bytes_not_characters() -> None:
    head = len(render_record(rec(body="x")))
    n = (MAX_RECORD_BYTES - head + 1) // 3 + 1  # '記' is 3 UTF-8 bytes
    with pytest.raises(MemoryFormatError, match="over the 4096-byte limit"):
        rec(body="記" * n)


# --- bodies and reference-agent files -----------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "---",
        "before\n---\nname: evil\ntype: user\n---\nafter",
        "!!binary aGVsbG8=",
        "&a [*a]",
        "no",
        "  indented first line and trailing spaces  ",
        "tabs\tinside\n\n\nblank lines inside",
        "</relevant_memories> is just text",
    ],
)
def test_body_roundtrips_unchanged(body: str) -> None:
    r = rec(body=body)
    assert r.body == body
    back = parse_record(render_record(r))
    assert back == r and back.body == body


@pytest.mark.parametrize("value", ["no", "yes", "on", "off", "null", "1", "true", "0x1F", "1e3"])
def test_reference_agent_plain_scalars_are_strings(value: str) -> None:
    # The reference writer leaves YAML 1.1 keywords (no, yes, on, off) unquoted; files
    # edited by hand may hold any plain scalar. Either way plain values are strings here.
    raw = file_bytes(f"name: tabs\ndescription: {value}\ntype: user\n")
    assert parse_record(raw).description == value


@pytest.mark.parametrize("name", ["no", "yes", "on", "null", "1"])
def test_reference_agent_record_named_like_a_yaml_keyword(name: str) -> None:
    raw = file_bytes(f"name: {name}\ndescription: {name}\ntype: project\n", "Body text.")
    got = parse_record(raw)
    assert (got.name, got.description, got.type) == (name, name, MemoryType.PROJECT)


def test_reference_agent_crlf_file_loads() -> None:
    raw = b"---\r\nname: tabs\r\ndescription: d\r\ntype: user\r\n---\r\n\r\nLine 1\r\nLine 2\r\n"
    assert parse_record(raw).body == "Line 1\nLine 2"


def test_double_quoted_values_load() -> None:
    raw = file_bytes('name: "tabs"\ndescription: "a: b # c"\ntype: "user"\n')
    assert parse_record(raw).description == "a: b # c"


# --- properties ---------------------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=80)


@settings(max_examples=300, deadline=None)
@given(description=_text, body=st.text(st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_roundtrip_property(description: str, body: str) -> None:
    try:
        r = rec(description=description, body=body)
    except MemoryFormatError:
        return  # not a valid record: nothing to round-trip
    raw = render_record(r)
    assert parse_record(raw) == r
    assert raw.endswith(b"\n") and raw.startswith(b"---\nname: a-note\n")


def _emitted(value: str) -> str:
    dumped = yaml.dump(
        {"k": value},
        Dumper=record_module._Dumper,
        allow_unicode=True,
        width=1 << 30,
        default_flow_style=False,
    )
    return dumped[3:-1]


@settings(max_examples=500, deadline=None)
@given(
    value=st.one_of(
        st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 _.,;()/'+=\-]{0,30}", fullmatch=True), _text
    )
)
def test_fast_path_matches_yaml_emitter(value: str) -> None:
    assert render_frontmatter_value(value) == _emitted(value)


@pytest.mark.parametrize("field", ["body", "description"])
def test_lone_surrogate_is_a_format_error(field: str) -> None:
    with pytest.raises(MemoryFormatError, match="not encodable as UTF-8"):
        rec(**{field: "bad \ud800 surrogate"})


_wide = "A-Za-z0-9\u00c0-\ud7ff\ue000-\uffff"
_plainish = st.from_regex(rf"[{_wide}][{_wide} _.,;()/'+=\-]{{0,30}}", fullmatch=True)
_front_value = st.one_of(_plainish, _text, st.sampled_from(["no", "1", "null", "a  b", "x "]))


@settings(max_examples=500, deadline=None)
@given(
    name=_front_value,
    description=_front_value,
    type_=_front_value,
    order=st.permutations([0, 1, 2]),
)
def test_read_fast_path_agrees_with_yaml(
    name: str, description: str, type_: str, order: list[int]
) -> None:
    # The frontmatter fast path (skipping YAML for plain lines) yields exactly what the
    # YAML loader would, or declines (None) and leaves the file to YAML.
    lines = [f"name: {name}", f"description: {description}", f"type: {type_}"]
    lines = [lines[i] for i in order]
    fast = record_module._fast_frontmatter(lines)
    if fast is None:
        return
    assert order == [0, 1, 2]
    assert fast == yaml.load("\n".join(lines), Loader=record_module._Loader)


@settings(max_examples=500, deadline=None)
@given(raw=st.binary(max_size=40) | st.text("ab\r\n", max_size=40).map(str.encode))
def test_count_lines_matches_a_split_on_line_breaks(raw: bytes) -> None:
    pieces = re.split(rb"\r\n|\r|\n", raw)
    expected = 0 if not raw else len(pieces) - (pieces[-1] == b"")
    assert record_module.count_lines(raw) == expected
