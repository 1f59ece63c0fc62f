"""Where a record lives in a memory store (ipymemory/sync/paths.py): the prefix is checked
against the store's path rules once, so no push is refused for its path."""

from __future__ import annotations

from pathlib import Path

import pytest

from ipymemory import MemoryConfigError
from ipymemory.sync.paths import check_prefix, default_prefix, name_of, path_of


@pytest.mark.parametrize("prefix", ["/", "/ipymemory/analysis/", "/équipe/données/", "/a b/"])
def test_a_prefix_the_store_takes(prefix: str) -> None:
    assert check_prefix(prefix) == prefix


@pytest.mark.parametrize(
    ("prefix", "complaint"),
    [
        ("ipymemory/x/", "start and end with '/'"),
        ("/ipymemory/x", "start and end with '/'"),
        ("/a//b/", "empty, '.' or '..'"),
        ("/a/../b/", "empty, '.' or '..'"),
        ("/a\u202eb/", "format character (U+202E)"),
        ("/a\nb/", "control or format character (U+000A)"),
        ("/a\u2028/", "U+2028"),
        ("/e\u0301/", "NFC"),
        ("/" + "s/" * 20, "segments"),
        ("/" + "x" * 900 + "/", "too long"),
    ],
)
def test_a_prefix_the_store_would_refuse_is_refused_with_why(prefix: str, complaint: str) -> None:
    with pytest.raises(MemoryConfigError) as caught:
        check_prefix(prefix, "--prefix")
    assert complaint in str(caught.value) and str(caught.value).startswith("--prefix: ")


def test_the_default_prefix_is_the_project_directorys_name_or_the_user_scopes(
    tmp_path: Path,
) -> None:
    assert default_prefix("project", tmp_path / "churn-analysis") == "/ipymemory/churn-analysis/"
    assert default_prefix("user", tmp_path / "anything") == "/ipymemory-user/"
    with pytest.raises(MemoryConfigError, match="give one with --prefix"):
        default_prefix("project", tmp_path / "bad\u200bname")


def test_one_record_is_one_memory_named_after_it() -> None:
    prefix = "/ipymemory/p/"
    assert path_of(prefix, "prefers-tabs") == "/ipymemory/p/prefers-tabs.md"
    assert name_of(prefix, "/ipymemory/p/prefers-tabs.md") == "prefers-tabs"
    for other in ("/ipymemory/p/sub/x.md", "/ipymemory/p/X.md", "/ipymemory/p/x.txt", "/x/y.md"):
        assert name_of(prefix, other) is None
