"""The record schema said once: the keys come from the dataclass, a record is read back
from JSON in one validated way (``MemoryRecord.from_json``), and redacted in one function
that every showing and saving path uses."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from record_support import rec

from ipymemory import MemoryFormatError, MemoryRecord, MemoryType, StoredRecord
from ipymemory.agents import mcp_server
from ipymemory.review.pending import PendingFiles
from ipymemory.screen import screen_records
from ipymemory.sidequery.replies import ITEM_OPTIONAL_KEYS, RECORD_KEYS
from ipymemory.store.record import (
    FRONTMATTER_KEYS,
    RECORD_FIELDS,
    TEXT_FIELDS,
    parse_record,
    record_secrets,
    redact_record,
    redacted_fields,
    render_record,
)
from ipymemory.views.record import RecordView

GH_TOKEN = "ghp_" + "A1b2C3d4" * 4 + "Zz9Y"
AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"
# A Slack token is lowercase and hyphens: it fits in a record name.
SLUG_KEY = "xoxb-123456789012-123456789012-abcdefghij0123456789klmn"


def test_the_keys_are_the_dataclass_fields() -> None:
    assert tuple(f.name for f in dataclasses.fields(MemoryRecord)) == RECORD_FIELDS
    assert RECORD_FIELDS == ("name", "type", "description", "body")
    assert TEXT_FIELDS == ("name", "description", "body")
    assert set(FRONTMATTER_KEYS) == set(RECORD_FIELDS) - {"body"}
    assert RECORD_KEYS == ("body", "description", "name", "type")  # the four, sorted
    assert tuple(rec().to_json()) == RECORD_FIELDS
    # The MCP tools' typed models state the same keys (a test keeps them in step).
    assert tuple(mcp_server.Record.model_fields) == RECORD_FIELDS
    assert set(mcp_server.ProposedRecord.model_fields) == {*RECORD_FIELDS, *ITEM_OPTIONAL_KEYS}


@pytest.mark.parametrize(
    "record",
    [
        rec(),
        rec("zh-note", "数据库 用 mock", "测试时 mock 数据库。\n\n第二段", MemoryType.FEEDBACK),
        rec("quoted", "no: yes, 'on' #1", "- a list\n- of lines", "reference"),
    ],
)
def test_from_json_reads_back_what_to_json_wrote(record: MemoryRecord) -> None:
    data = json.loads(json.dumps(record.to_json()))
    assert MemoryRecord.from_json(data) == record
    assert parse_record(render_record(MemoryRecord.from_json(data))) == record


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (["a-note"], "items[2]: a record is an object with keys name, type, description, body"),
        ({"name": "a", "type": "user", "body": "b"}, "items[2]: a record must have exactly"),
        ({"name": "a", "type": "user", "body": "b"}, "; missing: description"),
        (
            {"name": "a", "type": "user", "description": "d", "body": "b", "evidence": "x"},
            "; unknown: 'evidence'",
        ),
        ({"name": "a", "type": "user", "description": 3, "body": "b"}, "description must be a"),
        ({"name": "a", "type": "user", "description": 3, "body": "b"}, "string, got int"),
        ({"name": "A B", "type": "user", "description": "d", "body": "b"}, "items[2]: record name"),
        ({"name": "a", "type": "idea", "description": "d", "body": "b"}, "unknown type 'idea'"),
        ({"name": "a", "type": "user", "description": "d\nx", "body": "b"}, "a single line"),
    ],
)
def test_from_json_says_what_is_wrong_and_where(data: object, said: str) -> None:
    with pytest.raises(MemoryFormatError) as e:
        MemoryRecord.from_json(data, "items[2]")
    assert said in str(e.value)
    assert str(e.value).startswith("items[2]: ")


def test_a_record_without_a_credential_is_kept_as_it_is() -> None:
    record = rec("tabs", "indentation", "Use tabs, never spaces.")
    assert redact_record(record) is record
    assert redacted_fields(record) == record.to_json()
    assert record_secrets(record) == ()


def test_redaction_replaces_the_credential_in_every_text_field() -> None:
    record = rec(SLUG_KEY, f"token {GH_TOKEN}", f"Push with {GH_TOKEN}.")
    assert [field for field, _ in record_secrets(record)] == ["name", "description", "body"]
    out = redact_record(record)
    for field in TEXT_FIELDS:
        assert "a1b2c3d4" not in getattr(out, field).lower()
        assert "0123456789klmn" not in getattr(out, field)
    assert out.body == "Push with [REDACTED: github-token]."
    assert out.description == "token [REDACTED: github-token]"
    assert out.name == "redacted-slack-token"  # a slug of the redacted name
    assert out.type is record.type
    # Every path that shows or keeps a redacted record gives this same one.
    (screening,) = screen_records([record])
    assert screening.redacted() == out
    assert RecordView(_stored(record)).stored.record == out


def test_a_redaction_that_breaks_the_format_is_an_error_naming_no_credential() -> None:
    # Each 20-character key becomes a 29-character marker: the record no longer fits.
    record = rec("big", "a full record", " ".join([AWS_KEY] * 180))
    with pytest.raises(MemoryFormatError) as e:
        redact_record(record)
    assert AWS_KEY not in str(e.value)
    # %memory show then shows none of the text rather than the credential.
    shown = RecordView(_stored(record)).stored.record
    assert AWS_KEY not in shown.body and shown.name == "big"


def _stored(record: MemoryRecord) -> StoredRecord:
    return StoredRecord(f"{record.name}-0.md", record)


def test_a_pending_item_with_a_stray_key_is_reported_with_its_place(tmp_path: Path) -> None:
    files = PendingFiles(tmp_path / ".memory")
    files.directory.mkdir(parents=True)
    item = {**rec("tabs").to_json(), "replaces": "spaces"}
    data = {"version": 1, "id": "abc", "saved_at": 1e12, "base": [], "items": [item]}
    (files.directory / "abc.json").write_text(json.dumps(data))
    saved, (problem,) = files.load(now=0.0)
    assert saved == []
    assert "abc.json items[0]: a record must have exactly the keys" in problem
    assert "unknown: 'replaces'" in problem
