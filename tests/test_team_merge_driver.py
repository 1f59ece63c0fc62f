"""The .memory merge drivers with real git on hand-made bases: both add, both remove,
add vs remove, the same name twice (merge and rebase), a base without .memory/, a
corrupted side, an index over its bound; and the set merge's algebra (hypothesis)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from record_support import rec
from team_support import MARKERS, Clone, init_origin, record_id

from ipymemory import MemoryRecord, MemoryStore
from ipymemory.store import plan as plan_module
from ipymemory.store.index import render_catalog
from ipymemory.store.maintenance import check, reindex
from ipymemory.store.manifest import parse_manifest, render_manifest
from ipymemory.team.gitsetup import local_config
from ipymemory.team.merge_driver import main as driver_main
from ipymemory.team.setmerge import merge_sets, name_of


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Clone, Clone]:
    a, b = init_origin(tmp_path, 2)
    return a, b


def share(a: Clone, b: Clone, message: str = "base") -> None:
    """``a`` commits and pushes; ``b`` pulls it (the common base)."""
    a.commit(message)
    a.git("push", "-q", "origin", "main")
    b.git("pull", "-q", "--no-rebase", "origin", "main")


def merge(a: Clone, b: Clone, *, rebase: bool = False) -> subprocess.CompletedProcess[str]:
    """``b`` commits and pushes; ``a`` commits and pulls (merge or rebase)."""
    b.commit("theirs")
    b.git("push", "-q", "origin", "main")
    a.commit("ours")
    mode = "--rebase" if rebase else "--no-rebase"
    return a.git("pull", mode, "origin", "main", check=False)


def index_matches(clone: Clone) -> None:
    catalog = render_catalog(clone.store.entries()).encode()
    assert (clone.path / ".memory" / "MEMORY.md").read_bytes() == catalog


def test_both_add(pair: tuple[Clone, Clone]) -> None:
    a, b = pair
    a.store.extend([rec("shared")])
    share(a, b)
    a.store.extend([rec("ours-new")])
    b.store.extend([rec("theirs-new")])
    got = merge(a, b)
    assert got.returncode == 0, got.stderr
    assert a.in_progress() is None
    assert sorted(a.names()) == ["ours-new", "shared", "theirs-new"]
    a.assert_sound()
    index_matches(a)
    # Order: the base's records first, then the additions by file name.
    files = a.files()
    assert name_of(files[0]) == "shared"
    assert list(files[1:]) == sorted(files[1:])


def test_both_remove(pair: tuple[Clone, Clone]) -> None:
    a, b = pair
    a.store.extend([rec("one"), rec("two"), rec("three")])
    share(a, b)
    a.store.forget(["one"])
    b.store.forget(["two"])
    got = merge(a, b)
    assert got.returncode == 0, got.stderr
    assert a.names() == ["three"]
    a.assert_sound()
    index_matches(a)


def test_add_vs_remove_of_the_same_record(pair: tuple[Clone, Clone]) -> None:
    """One side removes a record the other replaced (forget + add under the same name):
    the removed file stays removed, the new one arrives. Git's rename detection (which
    merge-ort applies whatever merge.renames says) may pair the old and the new file and
    stop on a rename/delete conflict: the working tree then already holds the right
    files, and staging .memory concludes it."""
    a, b = pair
    a.store.extend([rec("plan", body="old plan"), rec("keep")])
    share(a, b)
    a.store.forget(["plan"])
    a.store.extend([rec("plan", body="new plan")])
    b.store.forget(["plan"])
    b.store.extend([rec("extra")])
    merge(a, b)
    a.assert_sound()
    a.finish()
    assert a.git("status", "--porcelain").stdout == ""
    assert sorted(a.names()) == ["extra", "keep", "plan"]
    assert a.store.get("plan").body == "new plan"
    a.assert_sound()
    index_matches(a)


@pytest.mark.parametrize("rebase", [False, True], ids=["merge", "rebase"])
def test_same_name_twice_keeps_both(pair: tuple[Clone, Clone], rebase: bool) -> None:
    a, b = pair
    a.store.extend([rec("base")])
    share(a, b)
    a.store.extend([rec("tabs", body="ours: tabs")])
    b.store.extend([rec("tabs", body="theirs: tabs, width 4")])
    ids = {Path(f).name for c in (a, b) for f in c.files() if f.startswith("tabs-")}
    got = merge(a, b, rebase=rebase)
    # The renamed record is a new file git cannot stage during the merge: git stops,
    # the working tree holds the complete set, no conflict marker anywhere.
    assert got.returncode != 0
    assert "two records are named 'tabs'" in got.stderr
    assert "git finish" in got.stderr
    a.assert_sound()
    index_matches(a)
    bodies = sorted(r.body for r in a.store.records() if r.name.startswith("tabs"))
    assert bodies == ["ours: tabs", "theirs: tabs, width 4"]
    # The later file keeps its id, under "<name>-<8 hex of its id>".
    later = max(ids)
    ident = later[len("tabs-") : -len(".md")]
    assert f"tabs-{ident[:8]}-{ident}.md" in a.files()
    assert f"tabs-{ident[:8]}" in a.names()
    a.finish()
    assert a.git("status", "--porcelain", ".memory").stdout == ""  # nothing left untracked
    a.git("push", "-q", "origin", "main")
    b.git("pull", "-q", "--no-rebase", "origin", "main")
    assert b.in_progress() is None
    assert b.files() == a.files()
    b.assert_sound()


def test_same_pair_merged_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    """Two clones that resolve the same clash independently agree byte for byte, so
    merging their merges needs nothing more."""
    a, b, c = init_origin(tmp_path, 3)
    a.store.extend([rec("tabs", body="a")])
    a.commit("a")
    a.git("push", "-q", "origin", "main")
    b.store.extend([rec("tabs", body="b")])
    b.commit("b")
    c.git("pull", "-q", "origin", "main")
    c.git("fetch", "-q", str(b.path), "main")
    b.git("pull", "-q", "--no-rebase", "origin", "main", check=False)
    b.finish()
    assert c.git("merge", "FETCH_HEAD", check=False).returncode != 0
    c.finish()
    for name in ("manifest.json", "MEMORY.md"):
        assert (b.path / ".memory" / name).read_bytes() == (c.path / ".memory" / name).read_bytes()
    b.git("push", "-q", "origin", "main")
    got = c.git("pull", "--no-rebase", "origin", "main", check=False)
    assert got.returncode == 0, got.stderr
    c.assert_sound()
    assert sorted(c.names()) == sorted(b.names())


def test_base_without_memory_dir(pair: tuple[Clone, Clone]) -> None:
    """Both sides create .memory/ (add/add: git gives the drivers an empty base)."""
    a, b = pair
    assert not (a.path / ".memory").exists()
    a.store.extend([rec("from-a")])
    b.store.extend([rec("from-b")])
    got = merge(a, b)
    assert got.returncode == 0, got.stderr
    assert sorted(a.names()) == ["from-a", "from-b"]
    a.assert_sound()
    index_matches(a)


@pytest.mark.parametrize("broken", ["theirs", "ours"])
def test_corrupted_side_fails_the_merge(pair: tuple[Clone, Clone], broken: str) -> None:
    a, b = pair
    a.store.extend([rec("base")])
    share(a, b)
    a.store.extend([rec("ours-new")])
    b.store.extend([rec("theirs-new")])
    bad = b'{"version": 1, "files": ["base-'
    victim = b if broken == "theirs" else a
    (victim.path / ".memory" / "manifest.json").write_bytes(bad)
    b.commit("theirs")
    b.git("push", "-q", "origin", "main")
    a.commit("ours")
    ours_bytes = (a.path / ".memory" / "manifest.json").read_bytes()
    got = a.git("pull", "--no-rebase", "origin", "main", check=False)
    assert got.returncode != 0
    assert f"manifest.json ({broken})" in got.stderr
    assert "not valid JSON" in got.stderr
    # Nothing written: the file is our version as it was, never a broken merge result.
    data = (a.path / ".memory" / "manifest.json").read_bytes()
    assert data == ours_bytes
    assert not any(m in data for m in MARKERS)


def test_index_over_its_bound_still_merges(pair: tuple[Clone, Clone]) -> None:
    a, b = pair
    small = 3
    MemoryStore(a.path, max_index_lines=small).extend([rec("base")])
    share(a, b)
    MemoryStore(a.path, max_index_lines=small).extend([rec("a1"), rec("a2")])
    MemoryStore(b.path, max_index_lines=small).extend([rec("b1"), rec("b2")])
    got = merge(a, b)
    assert got.returncode == 0, got.stderr
    assert len(a.files()) == 5
    index_matches(a)  # the driver bounds with the default bounds: all five fit
    report = check(a.path, max_index_lines=small)
    # Issue 31: beyond the bounds is a warning (MEMORY.md lists what fits, nothing refused).
    assert any("consolidate" in p.reason and p.severity == "warning" for p in report)


def test_a_bounded_index_is_kept_and_reindexed_after_the_merge(pair: tuple[Clone, Clone]) -> None:
    # Issue 31: past 4096 bytes each side's MEMORY.md lists only its newest records, so
    # no set can be merged from it: the driver keeps ours and says to reindex; the
    # manifest merges the sets as always.
    a, b = pair
    long = "a description of about a hundred characters, like the ones a real model writes"
    MemoryStore(a.path).extend([rec(f"base-{i}", long) for i in range(45)])
    share(a, b)
    MemoryStore(a.path).extend([rec("a1", long)])
    MemoryStore(b.path).extend([rec("b1", long)])
    got = merge(a, b)
    assert got.returncode == 0, got.stderr
    assert "run `ipymemory reindex`" in got.stderr
    assert len(a.files()) == 47
    reindex(a.path)
    assert check(a.path).ok
    assert len((a.path / ".memory" / "MEMORY.md").read_bytes()) <= 4096


def test_driver_refuses_a_bad_index_line(tmp_path: Path) -> None:
    """The MEMORY.md driver on a side that is not an index: exit 1, %A untouched."""
    base, ours, theirs = (tmp_path / n for n in ("o", "a", "b"))
    base.write_bytes(b"")
    ours.write_bytes(b"- [x](x-" + b"0" * 32 + b".md) - d\n")
    theirs.write_bytes(b"<<<<<<< HEAD\n")
    before = ours.read_bytes()
    code = driver_main(["index", str(base), str(ours), str(theirs), ".memory/MEMORY.md"])
    assert code == 1
    assert ours.read_bytes() == before


@pytest.mark.parametrize("kind", ["manifest", "index"])
def test_driver_runs_as_setup_registers_it(tmp_path: Path, kind: str) -> None:
    """The command in the local config, run through a shell as git runs it."""
    a, b = f"a-{'1' * 32}.md", f"b-{'2' * 32}.md"
    if kind == "manifest":
        sides = [b"", render_manifest([a]), render_manifest([b])]
        expected = render_manifest([a, b])
    else:
        sides = [b"", f"- [a]({a}) - x\n".encode(), f"- [b]({b}) - y\n".encode()]
        expected = sides[1] + sides[2]
    paths = [tmp_path / n for n in ("o", "a", "b")]
    for path, data in zip(paths, sides, strict=True):
        path.write_bytes(data)
    command = local_config()[f"merge.ipymemory-{kind}.driver"]
    for placeholder, path in zip(("%O", "%A", "%B"), paths, strict=True):
        command = command.replace(placeholder, shlex.quote(str(path)))
    command = command.replace("%P", f".memory/{kind}")
    got = subprocess.run(command, shell=True, capture_output=True, cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert paths[1].read_bytes() == expected


def test_virtual_base_never_writes_or_stops(tmp_path: Path) -> None:
    """git's inner merge of several merge bases: a clash is merged, nothing written."""
    paths = [tmp_path / n for n in ("o", "a", "b")]
    paths[0].write_bytes(b"")
    paths[1].write_bytes(render_manifest([f"x-{'1' * 32}.md"]))
    paths[2].write_bytes(render_manifest([f"x-{'2' * 32}.md"]))
    args = ["manifest", "--virtual-base", *map(str, paths), ".memory/manifest.json"]
    assert driver_main(args) == 0
    assert parse_manifest(paths[1].read_bytes(), "m") == (
        f"x-{'1' * 32}.md",
        f"x-22222222-{'2' * 32}.md",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "o"]


def test_a_removed_record_stays_removed_though_renamed_elsewhere() -> None:
    """Ours forgot F; theirs holds F under its renamed name (a merge elsewhere renamed
    it): removed by one side since the base, so not in the result."""
    f = f"tabs-{'3' * 32}.md"
    renamed_f = f"tabs-33333333-{'3' * 32}.md"
    g = f"tabs-{'1' * 32}.md"
    result = merge_sets([f], [], [g, renamed_f])
    assert result.files == (g,)
    # Held under two names, the side that changed it wins.
    assert merge_sets([f], [f], [renamed_f]).files == (renamed_f,)


# --- the algebra ---------------------------------------------------------------------

# Few names (clashes are common); every file its own id, as record files have.
_files = st.lists(
    st.builds(lambda n, i: f"{'abc'[n]}-{3 * i + n:032x}.md", st.integers(0, 2), st.integers(0, 5)),
    unique=True,
    max_size=8,
)


@given(_files, _files, _files)
def test_merge_sets_algebra(base: list[str], ours: list[str], theirs: list[str]) -> None:
    result = merge_sets(base, ours, theirs)
    b, o, t = ({record_id(f) for f in side} for side in (base, ours, theirs))
    expected = (o & t) | (o - b) | (t - b)
    # Every expected record is there, under its own file or a renamed copy (same id).
    assert {record_id(f) for f in result.files} == expected
    # Names are unique; the result does not depend on which side is which.
    names = [name_of(f) for f in result.files]
    assert len(names) == len(set(names))
    assert merge_sets(base, theirs, ours) == result
    assert len(result.files) == len(set(result.files))


def test_stash_pop_merges_the_sets(pair: tuple[Clone, Clone]) -> None:
    a, b = pair
    a.store.extend([rec("base")])
    share(a, b)
    b.store.extend([rec("theirs-new")])
    b.commit("theirs")
    b.git("push", "-q", "origin", "main")
    a.store.extend([rec("stashed")])
    a.git("stash", "push", "-q", "-u")
    assert a.names() == ["base"]
    a.git("pull", "-q", "--no-rebase", "origin", "main")
    got = a.git("stash", "pop", check=False)
    assert got.returncode == 0, got.stderr
    assert sorted(a.names()) == ["base", "stashed", "theirs-new"]
    a.assert_sound()
    index_matches(a)


def test_cherry_pick_merges_the_sets(pair: tuple[Clone, Clone]) -> None:
    a, b = pair
    a.store.extend([rec("base")])
    share(a, b)
    a.git("checkout", "-q", "-b", "feature")
    a.store.extend([rec("picked")])
    a.commit("feature")
    a.store.extend([rec("not-picked")])
    a.commit("feature 2")
    b.store.extend([rec("theirs-new")])
    b.commit("theirs")
    b.git("push", "-q", "origin", "main")
    a.git("checkout", "-q", "main")
    a.git("pull", "-q", "--no-rebase", "origin", "main")
    got = a.git("cherry-pick", "feature~1", check=False)
    assert got.returncode == 0, got.stderr
    assert sorted(a.names()) == ["base", "picked", "theirs-new"]
    a.assert_sound()
    index_matches(a)


def test_a_hand_named_file_is_renamed_deterministically() -> None:
    ident = "4" * 32
    result = merge_sets([], ["notes.md"], [f"notes-{ident}.md"])
    (rename,) = result.renames
    assert rename.old_file == "notes.md"
    assert re.fullmatch(r"notes-([0-9a-f]{8})-[0-9a-f]{32}\.md", rename.new_file)
    assert result == merge_sets([], [f"notes-{ident}.md"], ["notes.md"])
    assert f"notes-{ident}.md" in result.files


@pytest.mark.parametrize("rebase", [False, True], ids=["merge", "rebase"])
@pytest.mark.parametrize("crafted", ["ours", "theirs"])
def test_clashes_are_decided_by_the_names_inside_the_files(
    pair: tuple[Clone, Clone], rebase: bool, crafted: str
) -> None:
    """Issue 19 #7: a record named ``tabs`` in a file ``notes-<id>.md`` (a hand edit, or
    another writer) clashes with the other side's ``tabs``; the merge renames one
    instead of completing into a set that does not load."""
    a, b = pair
    a.store.extend([rec("base")])
    share(a, b)
    odd, plain = (a, b) if crafted == "ours" else (b, a)
    odd.store.extend([rec("tabs", body="in notes-<id>.md")])
    memory = odd.path / ".memory"
    [file] = [f for f in odd.files() if f.startswith("tabs-")]
    renamed_file = "notes-" + file.removeprefix("tabs-")
    (memory / file).rename(memory / renamed_file)
    files = [renamed_file if f == file else f for f in odd.files()]
    (memory / "manifest.json").write_bytes(render_manifest(files))
    (memory / "MEMORY.md").write_bytes(render_catalog(odd.store.entries()).encode())
    assert sorted(odd.names()) == ["base", "tabs"]
    plain.store.extend([rec("tabs", body="tabs-<id>.md")])
    got = merge(a, b, rebase=rebase)
    assert got.returncode != 0
    assert "two records are named 'tabs'" in got.stderr
    a.assert_sound()
    index_matches(a)
    bodies = sorted(r.body for r in a.store.records() if r.name.startswith("tabs"))
    assert bodies == ["in notes-<id>.md", "tabs-<id>.md"]
    a.finish()
    a.assert_sound()
    assert len(set(a.names())) == 3


def _with_id(
    monkeypatch: pytest.MonkeyPatch, clone: Clone, record: MemoryRecord, ident: str
) -> None:
    """``clone`` commits ``record`` in a file of id ``ident`` (so a test says which of two
    clashing files sorts later, the one renamed)."""
    fixed = uuid.UUID(hex=ident)
    with monkeypatch.context() as m:
        m.setattr(plan_module, "uuid", SimpleNamespace(uuid4=lambda: fixed))
        clone.store.extend([record])


@pytest.mark.parametrize("renamed", ["ours", "theirs"])
@pytest.mark.parametrize("rebase", [False, True], ids=["merge", "rebase"])
def test_git_finish_then_commit_leaves_a_set_check_finds_clean(
    pair: tuple[Clone, Clone], monkeypatch: pytest.MonkeyPatch, renamed: str, rebase: bool
) -> None:
    """Issue 33 #4: after the documented `git add .memory && git commit` the replaced
    original stayed (unlisted, committed) and the journal lagged the set. `ipymemory git
    finish` takes the original out, records the set and stages; `check` finds nothing."""
    a, b = pair
    a.store.extend([rec("base")])
    share(a, b)
    early, late = "1" * 32, "f" * 32
    ours, theirs = (late, early) if renamed == "ours" else (early, late)
    _with_id(monkeypatch, a, rec("tabs", body="ours: tabs"), ours)
    _with_id(monkeypatch, b, rec("tabs", body="theirs: tabs, width 4"), theirs)
    got = merge(a, b, rebase=rebase)
    assert got.returncode != 0 and "git finish` (it takes the replaced original out" in got.stderr
    cli = [sys.executable, "-m", "ipymemory.cli", "--dir", str(a.path)]
    done = subprocess.run([*cli, "git", "finish"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert f"took out tabs-{late}.md: replaced by its renamed copy" in done.stdout
    assert "staged .memory; now commit" in done.stdout
    if rebase:
        a.git("-c", "core.editor=true", "rebase", "--continue")
    else:
        a.git("commit", "-q", "--no-edit")
    assert a.in_progress() is None
    assert [str(p) for p in check(a.path)] == []
    tracked = a.git("ls-files", ".memory").stdout.split()
    assert sorted(tracked) == sorted(
        [".memory/MEMORY.md", ".memory/manifest.json", *(f".memory/{f}" for f in a.files())]
    )
    assert f"tabs-{late[:8]}-{late}.md" in a.files()
    assert sorted(a.names()) == ["base", "tabs", f"tabs-{late[:8]}"]
    listing = subprocess.run([*cli, "check"], capture_output=True, text=True, check=False)
    assert (listing.returncode, listing.stdout.strip()) == (0, f"{a.path / '.memory'}: ok")
    # The other clone gets the same clean set.
    a.git("push", "-q", "origin", "main")
    b.git("pull", "-q", "--no-rebase", "origin", "main")
    assert b.files() == a.files()
    assert [str(p) for p in check(b.path) if p.severity == "error"] == []


def test_git_finish_outside_a_repository_refuses(tmp_path: Path) -> None:
    MemoryStore(tmp_path).extend([rec("a")])
    cli = [sys.executable, "-m", "ipymemory.cli", "--dir", str(tmp_path), "git", "finish"]
    done = subprocess.run(cli, capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "not inside a git repository" in done.stderr
    assert [r.name for r in MemoryStore(tmp_path).records()] == ["a"]
