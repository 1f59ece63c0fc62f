"""Real git repositories for the team tests and benchmarks: clones set up with
``ipymemory git setup``, committed .memory sets, and what a set holds by record id."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ipymemory import MemoryStore
from ipymemory.store.maintenance import check
from ipymemory.team.gitsetup import setup

_ID = re.compile(r"-([0-9a-f]{32})\.md$")
MARKERS = (b"<<<<<<<", b">>>>>>>", b"=======")

GIT_ENV: Mapping[str, str] = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_EDITOR": "true",
    "GIT_MERGE_AUTOEDIT": "no",
}


def git(cwd: str | Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV}
    got = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if check and got.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({got.returncode}):\n{got.stderr}")
    return got


def record_id(file: str) -> str:
    match = _ID.search(file)
    assert match is not None, file
    return match.group(1)


@dataclass
class Clone:
    """One working copy (the workspace is its top, .memory right there)."""

    path: Path

    @property
    def store(self) -> MemoryStore:
        return MemoryStore(self.path)

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return git(self.path, *args, check=check)

    def commit(self, message: str) -> bool:
        """Stage .memory and commit; False if there was nothing to commit."""
        self.git("add", "-A", ".memory")
        if self.git("diff", "--cached", "--quiet", check=False).returncode == 0:
            return False
        self.git("commit", "-q", "-m", message)
        return True

    def files(self) -> tuple[str, ...]:
        return self.store.listed_files()

    def ids(self) -> frozenset[str]:
        return frozenset(record_id(f) for f in self.files())

    def names(self) -> list[str]:
        return [r.name for r in self.store.records()]

    def assert_sound(self) -> None:
        """check finds no error, the index matches, no conflict marker in either file."""
        report = check(self.path)
        assert report.ok, [str(p) for p in report.errors]
        for name in ("manifest.json", "MEMORY.md"):
            path = self.path / ".memory" / name
            if path.exists():
                data = path.read_bytes()
                assert not any(m in data for m in MARKERS), (name, data[:300])

    def in_progress(self) -> str | None:
        """The operation git stopped in (merge, rebase, cherry-pick), if any."""
        gitdir = self.path / ".git"
        for marker, op in (
            ("rebase-merge", "rebase"),
            ("rebase-apply", "rebase"),
            ("MERGE_HEAD", "merge"),
            ("CHERRY_PICK_HEAD", "cherry-pick"),
        ):
            if (gitdir / marker).exists():
                return op
        return None

    def finish(self) -> None:
        """Conclude a merge/rebase the driver stopped (the working tree is complete:
        stage .memory and continue), as the driver's message says."""
        for _ in range(50):
            op = self.in_progress()
            if op is None:
                return
            self.assert_sound()
            self.git("add", "-A", ".memory")
            if op == "merge":
                self.git("commit", "-q", "--no-edit")
            else:
                got = self.git(op, "--continue", check=False)
                if got.returncode != 0 and self.in_progress() is None:
                    raise AssertionError(got.stderr)
        raise AssertionError("git kept stopping")


def init_origin(root: Path, clones: int) -> list[Clone]:
    """A bare repository with one commit (the setup files) and ``clones`` clones of it,
    each set up with ``ipymemory git setup``."""
    bare = root / "origin.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    first = root / "seed"
    git(root, "clone", "-q", str(bare), str(first))
    git(first, "checkout", "-q", "-b", "main")
    setup(first)
    (first / "README").write_text("project\n")
    git(first, "add", ".gitattributes", ".gitignore", "README")
    git(first, "commit", "-q", "-m", "setup")
    git(first, "push", "-q", "origin", "main")
    out = []
    for i in range(clones):
        path = root / f"clone{i}"
        git(root, "clone", "-q", "-b", "main", str(bare), str(path))
        setup(path)
        out.append(Clone(path))
    return out
