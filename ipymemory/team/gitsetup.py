"""``ipymemory git setup``: make a git repository merge ``.memory/`` as sets.

In the repository enclosing the workspace it

* adds to ``.gitattributes`` (committed with the project, so every clone has it) the
  lines sending every ``.memory/manifest.json`` and ``.memory/MEMORY.md`` to our drivers;
* adds to ``.gitignore`` the local state that never travels (SPEC §6): the lock's
  files, ``history/``, ``pending/``, ``sync/`` and our temp files;
* sets the driver commands in the LOCAL git config (git never shares config, so each
  teammate runs ``ipymemory git setup`` — or the printed ``git config`` lines — once).

Every step checks first, so running it again changes nothing.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import CommandError, MemoryStoreError
from ..store.layout import (
    HISTORY_DIR_NAME,
    INDEX_NAME,
    LOCK_DIR_NAME,
    MANIFEST_NAME,
    MEMORY_DIR_NAME,
    PENDING_DIR_NAME,
    SYNC_DIR_NAME,
    TEMP_PREFIX,
    read_regular,
)

__all__ = [
    "ATTRIBUTE_LINES",
    "DRIVERS",
    "IGNORE_LINES",
    "SetupReport",
    "find_repository",
    "local_config",
    "setup",
]

# driver name -> (the file it merges, the merge_driver kind)
DRIVERS: dict[str, tuple[str, str]] = {
    "ipymemory-manifest": (MANIFEST_NAME, "manifest"),
    "ipymemory-index": (INDEX_NAME, "index"),
}
# Patterns with "**/" match every .memory in the repository, at any depth.
ATTRIBUTE_LINES: tuple[str, ...] = tuple(
    f"**/{MEMORY_DIR_NAME}/{file} merge={driver}" for driver, (file, _) in DRIVERS.items()
)
IGNORE_LINES: tuple[str, ...] = (
    f"**/{MEMORY_DIR_NAME}/{LOCK_DIR_NAME}*",
    f"**/{MEMORY_DIR_NAME}/{HISTORY_DIR_NAME}/",
    f"**/{MEMORY_DIR_NAME}/{PENDING_DIR_NAME}/",
    f"**/{MEMORY_DIR_NAME}/{SYNC_DIR_NAME}/",
    f"**/{MEMORY_DIR_NAME}/{TEMP_PREFIX}*",
)
_MAX_CONFIG_BYTES = 4 << 20  # .gitattributes / .git/info/attributes: far above any real one
_HEADER = "# ipymemory: .memory/ merges as sets (`ipymemory git setup`)"


@dataclass(frozen=True)
class SetupReport:
    """What ``setup`` found and did."""

    repository: Path
    changed_files: tuple[str, ...]  # repository-relative files written
    config_set: tuple[str, ...]  # config keys written
    commands: tuple[str, ...]  # what a teammate runs once (git config lines)

    @property
    def changed(self) -> bool:
        return bool(self.changed_files or self.config_set)

    def text(self) -> str:
        lines = [f"git repository: {self.repository}"]
        if not self.changed:
            lines.append("already set up: nothing changed")
        lines += [f"wrote {f}" for f in self.changed_files]
        lines += [f"set {k} (local git config)" for k in self.config_set]
        if self.changed_files:
            files = " ".join(self.changed_files)
            lines.append(f"commit them so every clone merges .memory/ as sets: git add {files}")
        lines.append(
            "each teammate runs once: ipymemory git setup (or these lines, with their "
            "python in place of this one):"
        )
        lines += [f"  {c}" for c in self.commands]
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        return {
            "repository": str(self.repository),
            "changed_files": list(self.changed_files),
            "config_set": list(self.config_set),
            "commands": list(self.commands),
        }


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError as e:
        raise CommandError("git is not installed (no `git` on PATH)") from e


def find_repository(workspace: Path, doing: str = "set up") -> Path:
    """The top of the git work tree enclosing ``workspace``; :class:`CommandError` if
    there is none (saying there is nothing to ``doing``)."""
    got = _git(["rev-parse", "--show-toplevel"], workspace)
    if got.returncode != 0 or not got.stdout.strip():
        raise CommandError(
            f"{workspace}: not inside a git repository, so there is nothing to {doing} "
            "(run `git init` or clone the project first)"
        )
    return Path(got.stdout.strip())


def local_config(python: str = sys.executable) -> dict[str, str]:
    """The local config keys and values registering both drivers (and the inner
    merge of several merge bases, ``recursive``)."""
    launcher = shlex.quote(str(Path(__file__).with_name("git_driver.py")))
    exe = shlex.quote(python)
    out: dict[str, str] = {}
    for driver, (file, kind) in DRIVERS.items():
        command = f"{exe} {launcher} {kind}"
        out[f"merge.{driver}.name"] = f"ipymemory: merge .memory/{file} as a set"
        out[f"merge.{driver}.driver"] = f"{command} %O %A %B %P"
        out[f"merge.{driver}.recursive"] = f"{driver}-base"
        out[f"merge.{driver}-base.name"] = f"ipymemory: merge bases of .memory/{file}"
        out[f"merge.{driver}-base.driver"] = f"{command} --virtual-base %O %A %B %P"
    return out


def _add_lines(path: Path, lines: Sequence[str]) -> bool:
    """Append the ``lines`` missing from ``path`` (under one header); True if written."""
    try:  # never blocking on a FIFO planted there, nor following a link
        text = read_regular(str(path), _MAX_CONFIG_BYTES).decode("utf-8")
    except FileNotFoundError:
        text = ""
    except (MemoryStoreError, UnicodeDecodeError) as e:
        raise CommandError(f"{path}: cannot read ({e})") from e
    have = {line.strip() for line in text.splitlines()}
    missing = [line for line in lines if line not in have]
    if not missing:
        return False
    block = "\n".join(([] if _HEADER in have else [_HEADER]) + missing) + "\n"
    sep = "" if not text or text.endswith("\n") else "\n"
    sep += "\n" if text and _HEADER not in have else ""
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(sep + block)
    except OSError as e:
        raise CommandError(f"{path}: cannot write ({e})") from e
    return True


def setup(workspace: str | os.PathLike[str], python: str = sys.executable) -> SetupReport:
    """Register the drivers in the repository enclosing ``workspace`` (idempotent)."""
    repo = find_repository(Path(workspace))
    changed = [
        name
        for name, lines in ((".gitattributes", ATTRIBUTE_LINES), (".gitignore", IGNORE_LINES))
        if _add_lines(repo / name, lines)
    ]
    config = local_config(python)
    written: list[str] = []
    for key, value in config.items():
        current = _git(["config", "--local", "--get", key], repo)
        if current.returncode == 0 and current.stdout.rstrip("\n") == value:
            continue
        got = _git(["config", "--local", key, value], repo)
        if got.returncode != 0:
            raise CommandError(f"git config {key}: {got.stderr.strip() or 'failed'}")
        written.append(key)
    commands = tuple(f"git config {k} {shlex.quote(v)}" for k, v in config.items())
    return SetupReport(repo, tuple(changed), tuple(written), commands)
