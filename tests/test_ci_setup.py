"""Issue 43 items 12 and 13: ``.ci/setup`` says what it does while it does it, and
installs the development tools (the ``dev`` extra) the README's checks need.

``.ci/setup`` is run for real, as CI and a newcomer run it, in a copy of the
repository's ``.ci/`` whose system commands (``apt-get``, ``dpkg``, ``node``, ``npm``,
``chromium``) and ``.venv/bin/python`` are small recording stand-ins: the machine is
not changed, and a slow ``pip`` shows the heartbeat.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from importlib.metadata import distribution, packages_distributions
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]


def _stand_in(path: Path, body: str) -> None:
    path.write_text(f"#!/usr/bin/env bash\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def clone(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A copy of ``.ci/`` with stand-ins on PATH; returns (root, log, env)."""
    root = tmp_path / "clone"
    shutil.copytree(ROOT / ".ci", root / ".ci")
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = f'echo "$(basename "$0") $*" >> {log}'
    # chromium and node are there; fonts and npm are not (dpkg -s fails, no npm).
    _stand_in(bin_dir / "chromium", record)
    _stand_in(bin_dir / "node", record)
    _stand_in(bin_dir / "dpkg", f"{record}\nexit 1")
    _stand_in(bin_dir / "apt-get", f"{record}\necho 'apt-get: working'")
    _stand_in(bin_dir / "sudo", f'{record}\n"$@"')
    _stand_in(bin_dir / "id", "echo 1000")  # not root: sudo is used
    venv = root / ".venv" / "bin"
    venv.mkdir(parents=True)
    # pip takes a few heartbeats (the real one builds the lab extension with npm).
    _stand_in(venv / "python", f"{record}\nsleep 2.5\necho 'Successfully installed ipymemory'")
    # Only the ordinary tools the script and the stand-ins use: no real npm, apt-get, …
    for tool in ("bash", "env", "date", "sleep", "basename", "dirname"):
        found = shutil.which(tool)
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    env = {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "IPYMEMORY_SETUP_HEARTBEAT": "1",
    }
    return root, log, env


def _setup(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``bash .ci/setup`` as CI runs it, in ``root``."""
    return subprocess.run(
        ["bash", str(root / ".ci" / "setup")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_setup_says_each_step_and_keeps_saying_it_works(
    clone: tuple[Path, Path, dict[str, str]],
) -> None:
    root, log, env = clone
    done = _setup(root, env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    steps = re.findall(r"^==> \[\d\d:\d\d:\d\d\] (.*)$", out, re.MULTILINE)
    assert steps[0].startswith("installing system packages: fonts-noto-cjk npm (apt-get")
    assert steps[1].startswith("installing ipymemory (editable) with its test and dev extras")
    assert steps[-1].startswith("ready: .venv/bin/python -m pytest runs the tests")
    assert ".venv/bin/ipymemory" in steps[-1]
    # The long step keeps saying it is at work, between its heading and its end.
    pip_part = out.split(steps[1], 1)[1].split(steps[-1], 1)[0]
    assert re.search(r"\.\.\. still working \(0m0\ds\)", pip_part), out
    calls = log.read_text().splitlines()
    assert "sudo apt-get install -y fonts-noto-cjk npm" in calls
    pip = next(c for c in calls if c.startswith("python "))
    assert pip == "python -m pip install -e .[test,dev]"  # no -q: pip's own progress shows
    assert "-q" not in " ".join(c for c in calls if "apt-get install" in c)


def test_a_failing_step_fails_the_setup_and_stops_the_heartbeat(
    clone: tuple[Path, Path, dict[str, str]],
) -> None:
    root, _, env = clone
    _stand_in(root / ".venv" / "bin" / "python", "sleep 1.5\necho 'no network' >&2\nexit 3")
    done = _setup(root, env)
    assert done.returncode == 3 and "no network" in done.stderr
    assert "ready:" not in done.stdout


# --- the dev extra (item 12) -------------------------------------------------------------


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _third_party_imports() -> set[str]:
    """Top-level modules ipymemory imports that are not its own nor the standard library."""
    found: set[str] = set()
    pattern = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", re.MULTILINE)
    for path in (ROOT / "ipymemory").rglob("*.py"):
        found |= set(pattern.findall(path.read_text(encoding="utf-8")))
    return {m for m in found if m not in sys.stdlib_module_names and m != "ipymemory"}


def test_the_dev_extra_holds_what_the_development_checks_need() -> None:
    """Every tool the README's development line runs, and the stubs mypy needs for each
    third-party module that ships no types and that pyproject does not exempt."""
    project = _pyproject()
    extras = project["project"]["optional-dependencies"]  # type: ignore[index]
    dev = {re.split(r"[<>=\[ ]", d)[0].lower() for d in extras["dev"]}
    readme = (ROOT / "README.md").read_text()
    line = next(x for x in readme.splitlines() if "pip install -e '.[dev]'" in x)
    assert line, "the README says how to install the development tools"
    development = readme.split("pip install -e '.[dev]'", 1)[1].split("\n\n", 1)[0]
    for tool in ("ruff", "mypy"):
        assert f"{tool} " in development and tool in dev
    mypy = project["tool"]["mypy"]  # type: ignore[index]
    exempt = {
        m.split(".")[0]
        for override in mypy.get("overrides", [])
        if override.get("ignore_missing_imports")
        for m in override["module"]
    }
    owners = packages_distributions()
    for module in sorted(_third_party_imports() - exempt):
        for dist in owners.get(module, []):
            files = distribution(dist).files or []
            typed = any(f.name == "py.typed" or f.suffix == ".pyi" for f in files)
            if not typed:
                assert f"types-{dist.lower()}" in dev, (
                    f"{module}: no types, and types-{dist} is not in dev"
                )
    assert "types-pyyaml" in dev  # yaml ships none


def test_the_readme_says_where_the_command_line_is() -> None:
    """Item 14: after the setup the command is .venv/bin/ipymemory (it is, here)."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## The command line", 1)[1].split("\n## ", 1)[0]
    assert ".venv/bin/ipymemory" in section and "source .venv/bin/activate" in section
    assert os.access(Path(sys.executable).with_name("ipymemory"), os.X_OK)
