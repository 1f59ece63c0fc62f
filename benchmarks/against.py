"""Run a benchmark against another commit's package: the "before" of a before/after.

    python benchmarks/against.py COMMIT benchmarks/latency.py --turns 5
    python benchmarks/against.py --own COMMIT benchmarks/mcp_roundtrip.py

The commit's ``ipymemory`` is exported (``git archive``) to a temporary directory and
put first on the path of the benchmark's process and of every Python process it starts
(a ``sitecustomize`` there steps over the editable install of this worktree); the
benchmark runs from that directory. By default it is this tree's script (the same
measurement of both packages); with ``--own`` the commit's own script and test helpers,
for a benchmark whose child processes set their own ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SITECUSTOMIZE = """\
# This commit's ipymemory, not the editable install of the worktree (benchmarks/against.py).
import sys

sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, {tree!r})
"""


def export(commit: str, tree: Path, paths: list[str]) -> None:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, *paths], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    (tree / "sitecustomize.py").write_text(SITECUSTOMIZE.format(tree=str(tree)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--own", action="store_true", help="the commit's own script")
    parser.add_argument("commit")
    parser.add_argument("script", type=Path)
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ipymemory-before-") as tmp:
        tree = Path(tmp)
        export(args.commit, tree, ["ipymemory", *(["benchmarks", "tests"] if args.own else [])])
        script = tree / args.script if args.own else args.script.resolve()
        env = {**os.environ, "PYTHONPATH": str(tree)}
        return subprocess.run(
            [sys.executable, str(script), *args.args], cwd=tree, env=env
        ).returncode


if __name__ == "__main__":
    sys.exit(main())
