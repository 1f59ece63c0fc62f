"""manifest.json (SPEC §1): exact bytes and strict parsing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ipymemory import MemoryFormatError, MemoryRecord, StoredRecord
from ipymemory.store.index import index_line, omitted_count, omitted_note, render_index
from ipymemory.store.manifest import parse_manifest, render_manifest

ID = "0123456789abcdef0123456789abcdef"
WHERE = "/ws/.memory/manifest.json"


def test_render_exact_bytes() -> None:
    assert render_manifest([]) == b'{"version":1,"files":[]}'
    assert render_manifest([f"a-{ID}.md", f"b-{ID}.md"]) == (
        b'{"version":1,"files":["a-' + ID.encode() + b'.md","b-' + ID.encode() + b'.md"]}'
    )


def test_roundtrip_and_spaced_json_accepted() -> None:
    files = (f"a-{ID}.md", f"b-{ID}.md")
    assert parse_manifest(render_manifest(files), WHERE) == files
    spaced = json.dumps({"files": list(files), "version": 1}, indent=2).encode() + b"\n"
    assert parse_manifest(spaced, WHERE) == files


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}", fullmatch=True),
        unique=True,
        max_size=20,
    )
)
def test_roundtrip_property(names: list[str]) -> None:
    files = tuple(f"{n}-{ID}.md" for n in names)
    assert parse_manifest(render_manifest(files), WHERE) == files


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        (b'{"version":1,"files":["a.md"', "not valid JSON"),
        (b"", "not valid JSON"),
        (b'{"version":1,"files":["caf\xe9.md"]}', "not valid UTF-8"),
        (b'{"version":1,"files":[],"extra":0}', "extra: 'extra'"),
        (b'{"version":1}', "missing: files"),
        (b'{"files":[]}', "missing: version"),
        (b'{"version":true,"files":[]}', "version must be the JSON number 1, got true"),
        (b'{"version":1.0,"files":[]}', "got 1.0"),
        (b'{"version":2,"files":[]}', "got 2"),
        (b'{"version":"1","files":[]}', 'got "1"'),
        (b'{"version":1,"version":1,"files":[]}', "the key 'version' appears twice"),
        (b'{"version":1,"files":{}}', "files must be an array"),
        (b'{"version":1,"files":[1]}', "files[0] must be a string"),
        (b'{"version":1,"files":["a.md","a.md"]}', "lists 'a.md' more than once"),
        (b'{"version":1,"files":["../x.md"]}', "'../x.md' is not a safe record file name"),
        (b'{"version":1,"files":["NUL.md"]}', "'NUL.md' is not a safe"),
        (b'{"version":1,"files":["nul.md"]}', "'nul.md' is not a safe"),
        (b'{"version":1,"files":["com1.md"]}', "'com1.md' is not a safe"),
        (b'{"version":1,"files":["a.md:stream"]}', "'a.md:stream' is not a safe"),
        (b'{"version":1,"files":["/etc/passwd.md"]}', "'/etc/passwd.md' is not a safe"),
        (b'{"version":1,"files":["sub/a.md"]}', "'sub/a.md' is not a safe"),
        (b'{"version":1,"files":["a.txt"]}', "'a.txt' is not a safe"),
        (b'{"version":1,"files":["manifest.json"]}', "is not a safe"),
        (b'{"version":1,"files":[NaN]}', "not valid JSON (NaN is not a JSON value)"),
        (b'{"version":1,"files":[-Infinity]}', "-Infinity is not a JSON value"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON (nested too deeply)"),
        (b'["a.md"]', "must be a JSON object"),
        (b"\xef\xbb\xbf{}", "not valid JSON"),
    ],
)
def test_bad_manifest(raw: bytes, rule: str) -> None:
    with pytest.raises(MemoryFormatError) as info:
        parse_manifest(raw, WHERE)
    message = str(info.value)
    assert message.startswith(WHERE + ": ")
    assert rule in message


def test_entry_bound() -> None:
    raw = render_manifest([f"r{i}.md" for i in range(3)])
    assert len(parse_manifest(raw, WHERE, max_entries=3)) == 3
    with pytest.raises(MemoryFormatError, match="lists 3 files, over the limit of 2"):
        parse_manifest(raw, WHERE, max_entries=2)


# --- MEMORY.md lines (index.py) -------------------------------------------------------


def _entry(name: str, description: str = "d") -> StoredRecord:
    record = MemoryRecord(name=name, type="user", description=description, body="b")  # type: ignore[arg-type]
    return StoredRecord(f"{name}-{ID}.md", record)


def test_index_line_exact() -> None:
    assert index_line(_entry("tabs", "Indents with tabs")) == (
        f"- [tabs](tabs-{ID}.md) - Indents with tabs\n"
    )
    assert render_index([], 200, 4096) == b""
    two = render_index([_entry("a"), _entry("b", "記憶")], 200, 4096)
    assert two == f"- [a](a-{ID}.md) - d\n- [b](b-{ID}.md) - 記憶\n".encode()


def test_index_bounds_shape_the_catalog_and_refuse_nothing() -> None:
    entries = [_entry(f"r{i}") for i in range(4)]
    lines = [index_line(e) for e in entries]
    size = len("".join(lines[:3]).encode())
    assert render_index(entries[:3], 3, size) == "".join(lines[:3]).encode()  # fits: as before
    # One line too many: the newest that fit with the note (it counts as a line).
    assert render_index(entries, 3, 4096) == (lines[2] + lines[3] + omitted_note(2)).encode()
    assert omitted_count(omitted_note(2).rstrip("\n")) == 2
    assert omitted_note(1) == (
        "<!-- 1 more record is listed only in manifest.json (MEMORY.md is bounded) -->\n"
    )
    # One byte too few: the same, bounded by bytes.
    data = render_index(entries[:3], 3, size - 1)
    assert len(data) <= size - 1 and data.endswith(
        omitted_note(len(entries[:3]) - data.count(b"- [")).encode()
    )
    # Not even the note fits: an empty catalog, never an error.
    assert render_index(entries, 3, 10) == b""
    assert omitted_count("- [r0](r0.md) - d") is None
