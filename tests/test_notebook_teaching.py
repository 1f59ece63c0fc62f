"""The teaching notebook's reset (it clears only a .memory/ holding nothing but demo
records), and where the runner finds the notebook (package data, not the clone)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from IPython.core.error import UsageError
from record_support import rec

import ipymemory
from ipymemory import ConsolidationPlan, MemoryStore, PendingBatch
from ipymemory.notebook.run_teaching import NOTEBOOK_NAME, packaged_notebook
from ipymemory.notebook.teaching import reset_demo_memory
from ipymemory.review.history_change import HistoryChange
from ipymemory.review.pending import PendingFiles
from ipymemory.store.record import render_record

DEMO = {"prefers-tabs", "sneaky", "indent-with-tabs"}
UUID = "0123456789abcdef0123456789abcdef"


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every entry under ``root`` with its bytes (None for a directory)."""
    return {
        str(p.relative_to(root)): None if p.is_dir() else p.read_bytes()
        for p in sorted(root.rglob("*"))
    }


def demo_set(workspace: Path) -> Path:
    """A store holding demo records only, plus what interrupted commits leave behind."""
    store = MemoryStore(workspace)
    store.extend([rec("prefers-tabs"), rec("indent-with-tabs")])
    memdir = workspace / ".memory"
    (memdir / f"sneaky-{UUID}.md").write_bytes(render_record(rec("sneaky")))  # not listed
    (memdir / f".tmp-{UUID}").write_bytes(b"half a manifest")
    return memdir


def refused(workspace: Path, *fragments: str) -> None:
    before = snapshot(workspace)
    with pytest.raises(UsageError) as caught:
        reset_demo_memory(workspace, DEMO)
    message = str(caught.value)
    assert message.startswith(f"Not resetting {workspace / '.memory'}: ")
    assert "Nothing was deleted" in message
    assert "python -m ipymemory.notebook.run_teaching" in message
    for fragment in fragments:
        assert fragment in message
    assert snapshot(workspace) == before


def test_an_absent_memory_directory_is_left_absent(tmp_path: Path) -> None:
    assert reset_demo_memory(tmp_path, DEMO) == tmp_path / ".memory"
    assert list(tmp_path.iterdir()) == []


def test_demo_records_and_commit_leftovers_are_removed(tmp_path: Path) -> None:
    memdir = demo_set(tmp_path)
    (memdir / ".lock").mkdir()  # the reference agent's lock directory, left by a crash
    (tmp_path / "notes.md").write_text("the user's, next to .memory/")
    reset_demo_memory(tmp_path, DEMO)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]
    assert MemoryStore(tmp_path).records() == ()


def test_the_names_decide_even_when_the_manifest_is_unreadable(tmp_path: Path) -> None:
    memdir = demo_set(tmp_path)
    (memdir / "manifest.json").write_text("{not json")
    reset_demo_memory(tmp_path, DEMO)
    assert not memdir.exists()


def test_the_history_of_demo_records_is_removed_but_not_a_users_forgotten_record(
    tmp_path: Path,
) -> None:
    """history/ (SPEC §6) holds no bodies in its journal, but history/files/ keeps the
    records that left the set: a user's forgotten record there is still theirs."""
    demo_set(tmp_path)
    store = MemoryStore(tmp_path)
    store.forget("prefers-tabs")  # a demo record kept in history/files/: fine
    reset_demo_memory(tmp_path, DEMO)
    assert not (tmp_path / ".memory").exists()

    demo_set(tmp_path)
    store.extend([rec("my-real-note")])
    store.forget("my-real-note")
    assert not [r for r in store.records() if r.name == "my-real-note"]
    refused(tmp_path, "record 'my-real-note'")


def keep_undecided(workspace: Path, *items: str, merged: str | None = None) -> Path:
    """An undecided batch in pending/ (as a kernel leaves it) proposing ``items`` and,
    with ``merged``, a plan replacing the first item by a record of that name."""
    plan = None if merged is None else ConsolidationPlan((items[0],), (rec(merged),))
    batch = PendingBatch("b0123", tuple(rec(n) for n in items), plan, ())
    pending = PendingFiles(workspace / ".memory")
    assert pending.save(batch), pending.last_error
    return pending.directory / "b0123.json"


def test_undecided_demo_batches_are_removed_with_the_demo(tmp_path: Path) -> None:
    demo_set(tmp_path)
    keep_undecided(tmp_path, "sneaky", merged="indent-with-tabs")
    reset_demo_memory(tmp_path, DEMO)
    assert not (tmp_path / ".memory").exists()

    demo_set(tmp_path)
    (tmp_path / ".memory" / "pending").mkdir()  # what a decided batch leaves
    reset_demo_memory(tmp_path, DEMO)
    assert not (tmp_path / ".memory").exists()


@pytest.mark.parametrize("where", ["item", "plan"])
def test_an_undecided_batch_proposing_another_record_stops_the_reset(
    tmp_path: Path, where: str
) -> None:
    demo_set(tmp_path)
    if where == "item":
        keep_undecided(tmp_path, "sneaky", "my-real-note")
    else:
        keep_undecided(tmp_path, "sneaky", merged="my-real-note")
    refused(tmp_path, "pending record 'my-real-note'")


def test_an_undecided_undo_of_another_record_stops_the_reset(tmp_path: Path) -> None:
    demo_set(tmp_path)
    change = HistoryChange("undo", 1, "forget", "2026-12-01T00:00:00Z", (), ("my-real-note",))
    pending = PendingFiles(tmp_path / ".memory")
    assert pending.save(PendingBatch("b0456", (), None, (), history=change)), pending.last_error
    refused(tmp_path, "pending undo of 'my-real-note'")


def test_an_expired_or_unknown_pending_file_stops_the_reset_and_stays(tmp_path: Path) -> None:
    # Reading pending/ normally deletes expired batches: the reset must delete nothing.
    demo_set(tmp_path)
    path = keep_undecided(tmp_path, "my-real-note")
    path.write_text(path.read_text().replace('"saved_at": ', '"saved_at": 1.0, "_was": '))
    refused(tmp_path, "pending record 'my-real-note'")
    path.unlink()
    (path.parent / "notes.txt").write_text("mine")
    refused(tmp_path, "'pending/notes.txt' (not a pending batch)")


def test_a_record_of_someone_else_stops_the_reset(tmp_path: Path) -> None:
    demo_set(tmp_path)
    MemoryStore(tmp_path).extend([rec("my-real-preference")])
    refused(tmp_path, "record 'my-real-preference'")


def test_an_unlisted_record_of_someone_else_stops_the_reset(tmp_path: Path) -> None:
    memdir = demo_set(tmp_path)
    (memdir / f"old-note-{UUID}.md").write_bytes(render_record(rec("old-note")))
    refused(tmp_path, "record 'old-note'")


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("notes.txt", "'notes.txt' (not part of the memory format)"),
        ("archive", "'archive' (not part of the memory format)"),
        (f"broken-{UUID}.md", f"'broken-{UUID}.md' (an unreadable record file)"),
    ],
)
def test_anything_unknown_stops_the_reset(tmp_path: Path, entry: str, why: str) -> None:
    memdir = demo_set(tmp_path)
    if entry == "archive":
        (memdir / entry).mkdir()
    else:
        (memdir / entry).write_bytes(b"no frontmatter here\n")
    refused(tmp_path, why)


def test_many_foreign_records_are_counted_not_all_listed(tmp_path: Path) -> None:
    MemoryStore(tmp_path).extend([rec(f"mine-{i}") for i in range(8)])
    refused(tmp_path, "record 'mine-0'", "record 'mine-4'", "and 3 more")


def test_a_symlink_or_a_file_is_not_removed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    demo_set(elsewhere)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.symlink(elsewhere / ".memory", workspace / ".memory")
    before = snapshot(elsewhere)
    refused(workspace, "not a plain directory")
    assert snapshot(elsewhere) == before

    (workspace / ".memory").unlink()
    (workspace / ".memory").write_text("a file")
    refused(workspace, "not a plain directory")


# The runner's default notebook, printed from a process that imports a copy of the package.
_FIND = """
import ipymemory, nbformat
from ipymemory.notebook import run_teaching
with run_teaching._notebook_path(None) as path:
    nb = nbformat.read(str(path), as_version=4)
    print(ipymemory.__file__, path, len(nb.cells), sep="\\n")
"""


def test_the_runner_finds_the_notebook_through_the_package_not_the_clone(
    tmp_path: Path,
) -> None:
    # As installed from a wheel: the package alone, no notebooks/ or repository around it,
    # imported from another working directory.
    site = tmp_path / "site"
    shutil.copytree(
        Path(ipymemory.__file__).parent,
        site / "ipymemory",
        ignore=shutil.ignore_patterns("__pycache__", "labextension"),
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _FIND],
        cwd=elsewhere,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    module, notebook, cells = done.stdout.splitlines()
    assert Path(module) == site / "ipymemory" / "__init__.py"
    assert Path(notebook) == site / "ipymemory" / "notebook" / "lessons" / NOTEBOOK_NAME
    packaged = nbformat.read(str(packaged_notebook()), as_version=4)
    assert int(cells) == len(packaged.cells) > 0


# --- the runner from a bare install (issue 19 #13) ---------------------------------


def _runner(
    tmp_path: Path, *args: str, hide: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """``python -m ipymemory.notebook.run_teaching`` in a real process; the modules in
    ``hide`` are absent as from a bare ``pip install ipymemory``: a meta path finder
    (installed by a ``sitecustomize`` ahead of site-packages) reports them missing."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "sitecustomize.py").write_text(
        "import sys\n"
        f"HIDDEN = {set(hide)!r}\n"
        "class _Absent:\n"
        "    @staticmethod\n"
        "    def find_spec(name, path=None, target=None):\n"
        "        if name.split('.')[0] in HIDDEN:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Absent)\n"
    )
    package_root = Path(ipymemory.__file__).parent.parent
    return subprocess.run(
        [sys.executable, "-m", "ipymemory.notebook.run_teaching", *args],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), str(package_root)])},
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.parametrize("hide", [("nbclient",), ("nbclient", "nbformat", "ipykernel")])
def test_without_the_teaching_extra_the_runner_says_what_to_install(
    tmp_path: Path, hide: tuple[str, ...]
) -> None:
    done = _runner(tmp_path, hide=hide)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "pip install 'ipymemory[teaching]'" in done.stderr
    assert all(name in done.stderr for name in hide)


def test_the_teaching_extra_holds_what_the_runner_needs() -> None:
    import tomllib

    from ipymemory.notebook.run_teaching import NEEDS

    project = tomllib.loads((Path(ipymemory.__file__).parent.parent / "pyproject.toml").read_text())
    extra = project["project"]["optional-dependencies"]["teaching"]
    assert sorted(d.split(">")[0].split("=")[0] for d in extra) == sorted(NEEDS)
    readme = (Path(ipymemory.__file__).parent.parent / "README.md").read_text()
    assert "pip install 'ipymemory[teaching]'" in readme


@pytest.mark.skipif(os.name != "posix", reason="IPC sockets are POSIX-only; TCP elsewhere")
def test_a_teaching_run_does_not_greet_with_a_transport_warning(tmp_path: Path) -> None:
    notebook = tmp_path / "tiny.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print('hello from the kernel')")]
    nbformat.write(nb, str(notebook))
    output = tmp_path / "tiny.executed.ipynb"
    done = _runner(tmp_path, "--notebook", str(notebook), "--output", str(output))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("OK: executed")
    assert "without encryption" not in done.stdout + done.stderr
    assert "WARNING" not in done.stderr
    ran = nbformat.read(str(output), as_version=4)
    assert ran.cells[0].outputs[0]["text"] == "hello from the kernel\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "shadow",
        "tiny.executed.ipynb",
        "tiny.ipynb",
    ]


def test_the_runner_help_says_each_default(tmp_path: Path) -> None:
    """Issue 43: ``--timeout`` shows its default, like the runner's other options."""
    done = _runner(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "--timeout TIMEOUT seconds per cell (default: 300)" in said
    assert "kernel name (default: python3)" in said
