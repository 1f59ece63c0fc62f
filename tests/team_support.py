"""Real git repositories for the team tests and benchmarks: clones set up with
``ipymemory git setup``, committed .memory sets, and what a set holds by record id."""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ipymemory import MemoryStore
from ipymemory.store.maintenance import check
from ipymemory.team.gitfinish import finish
from ipymemory.team.gitsetup import setup

_ID = re.compile(r"-([0-9a-f]{32})\.md$")
MARKERS = (b"<<<<<<<", b">>>>>>>", b"=======")
# What the runs met: git stops concluded, by operation (for benchmarks/team_sync.py).
STATS: Counter[str] = Counter()

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
        if not (self.path / ".memory").exists():
            return False
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
        `ipymemory git finish` and continue), as the driver's message says."""
        for _ in range(50):
            op = self.in_progress()
            if op is None:
                return
            self.assert_sound()
            STATS[f"stopped {op}"] += 1
            finish(self.path)  # `ipymemory git finish`: originals out, journal, staged
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


# --- random team work ----------------------------------------------------------------

# (clone, operation, a number the operation interprets)
Op = tuple[int, str, int]
OPERATIONS = ("add", "add", "forget", "consolidate", "commit", "merge", "rebase", "push")
# Few names, so two clones often add the same name (the rename path runs).
NAMES = ("tabs", "db", "deploy", "style", "ci", "review")


@dataclass
class Ledger:
    """The set algebra: every record id ever added, and the ids some clone removed."""

    added: set[str]
    removed: set[str]

    @property
    def expected(self) -> set[str]:
        return self.added - self.removed


def _records(clone: Clone) -> list[tuple[str, object]]:
    return [(record_id(e.file), e.record) for e in clone.store.entries()]


def _consolidate(clone: Clone, ledger: Ledger, seed: int) -> None:
    from ipymemory import MemoryRecord

    entries = clone.store.entries()
    if len(entries) < 2:
        return
    i = seed % (len(entries) - 1)
    sources = entries[i : i + 2]
    merged = MemoryRecord(
        name=sources[0].record.name,
        type=sources[0].record.type,
        description=f"merged {seed}",
        body="\n".join(s.record.body for s in sources),
    )
    new = clone.store.apply_consolidation(
        base_records=[e.record for e in entries],
        source_names=[s.record.name for s in sources],
        replacements=[merged],
    )
    ledger.removed.update(record_id(s.file) for s in sources)
    ledger.added.update(record_id(e.file) for e in new)


def _push(clone: Clone, tries: int = 20) -> None:
    """Commit and push; on a rejection pull (merge), conclude, and try again."""
    clone.commit("work")
    for _ in range(tries):
        if clone.git("push", "-q", "origin", "main", check=False).returncode == 0:
            return
        clone.git("pull", "-q", "--no-rebase", "origin", "main", check=False)
        clone.finish()
    raise AssertionError("push kept being rejected")


def _pull(clone: Clone, rebase: bool) -> None:
    clone.commit("work")
    if rebase:
        clone.git("pull", "-q", "--rebase", "origin", "main", check=False)
    else:
        clone.git("fetch", "-q", "origin")
        clone.git("merge", "-q", "origin/main", check=False)
    clone.assert_sound()  # also while git is stopped: the tree is complete
    clone.finish()


def apply(clone: Clone, ledger: Ledger, op: str, n: int) -> None:
    """One operation of one clone, recorded in ``ledger``."""
    from ipymemory import MemoryRecord

    if op == "add":
        name = NAMES[n % len(NAMES)]
        if name in clone.names():
            return
        record = MemoryRecord(name, "project", f"{name} note {n}", f"{name} body {n}")
        added = clone.store.extend([record])
        ledger.added.update(record_id(e.file) for e in added)
    elif op == "forget":
        entries = clone.store.entries()
        if entries:
            gone = entries[n % len(entries)]
            clone.store.forget([gone.record.name])
            ledger.removed.add(record_id(gone.file))
    elif op == "consolidate":
        _consolidate(clone, ledger, n)
    elif op == "commit":
        clone.commit("work")
    elif op in ("merge", "rebase"):
        _pull(clone, rebase=op == "rebase")
    elif op == "push":
        _push(clone)
    else:
        raise ValueError(op)


def sync_all(clones: list[Clone]) -> None:
    """Everyone pushes, then everyone pulls: afterwards every clone is at one commit."""
    for clone in clones:
        _push(clone)
    for clone in clones:
        _pull(clone, rebase=False)


def run_team(root: Path, ops: list[Op], clones: int = 3) -> tuple[list[Clone], Ledger]:
    """Run ``ops`` on ``clones`` fresh clones of a bare repository, then sync everyone.
    Asserts what the issue asks: the same set everywhere, equal to the set algebra,
    check clean, no conflict marker."""
    team = init_origin(root, clones)
    ledger = Ledger(set(), set())
    for who, op, n in ops:
        apply(team[who % clones], ledger, op, n)
    sync_all(team)
    head = {c.git("rev-parse", "HEAD").stdout for c in team}
    assert len(head) == 1, "clones did not converge on one commit"
    for clone in team:
        clone.assert_sound()
        assert clone.ids() == ledger.expected, (
            f"{clone.path.name}: lost {sorted(ledger.expected - clone.ids())}, "
            f"resurrected {sorted(clone.ids() - ledger.expected)}"
        )
        names = clone.names()
        assert len(names) == len(set(names))
    return team, ledger
