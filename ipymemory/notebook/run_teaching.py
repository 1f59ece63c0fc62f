"""Run the teaching notebook headless and save the executed copy (with widget state).

    python -m ipymemory.notebook.run_teaching [--notebook PATH] [--output PATH] [--workdir DIR]

By default it runs the notebook shipped inside the package (``lessons/``, found through
the import system, so an installed wheel works as well as a clone). The notebook runs in a
fresh kernel, from a temporary copy of it (or in ``--workdir``, which keeps the
``.memory/`` it makes), with the Anthropic and ``IPYMEMORY_*`` variables removed from the
kernel's environment: it is offline by construction (scripted models) and must not depend
on the machine's settings. Exits 1 (and still writes the partial
notebook) if a cell fails.

It needs nbclient, nbformat and ipykernel, which a bare ``pip install ipymemory`` does
not bring: ``pip install 'ipymemory[teaching]'`` does. Without them it says so and exits
2, no traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _constants as C
from ..config import without_settings
from ..model.anthropic import SDK_ENVIRONMENT

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

__all__ = [
    "INSTALL_HINT",
    "NEEDS",
    "NOTEBOOK_NAME",
    "clean_env",
    "execute",
    "main",
    "missing_modules",
    "packaged_notebook",
]

NOTEBOOK_NAME = "01-memory-lifecycle.ipynb"
# What a run needs beyond a bare install (the "teaching" extra of pyproject.toml).
NEEDS = ("nbclient", "nbformat", "ipykernel")
INSTALL_HINT = "pip install 'ipymemory[teaching]'"


def missing_modules() -> list[str]:
    """The modules of :data:`NEEDS` this environment cannot import."""
    out = []
    for name in NEEDS:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(name)
    return out


def packaged_notebook() -> Traversable:
    """The teaching notebook as package data (``ipymemory/notebook/lessons/``).

    The clone's ``notebooks/01-memory-lifecycle.ipynb`` is a symlink to this one file.
    """
    return resources.files(__package__) / "lessons" / NOTEBOOK_NAME


@contextmanager
def _notebook_path(given: Path | None) -> Iterator[Path]:
    """``given``, or the packaged notebook as a real file for as long as it is needed."""
    if given is not None:
        yield given
        return
    with resources.as_file(packaged_notebook()) as path:
        yield path


def clean_env() -> dict[str, str]:
    """The runner's environment without model credentials and ipymemory settings."""
    return {k: v for k, v in without_settings(os.environ).items() if k not in SDK_ENVIRONMENT}


def execute(
    notebook: Path,
    output: Path,
    *,
    timeout: int = C.TEACHING_CELL_TIMEOUT,
    kernel_name: str = "python3",
    workdir: Path | None = None,
) -> None:
    """Execute ``notebook`` and write the result to ``output``.

    The kernel runs in ``workdir`` if given (the notebook's demo files stay there), else
    in a temporary directory holding a copy of the notebook, removed afterwards.
    Raises ``nbclient.exceptions.CellExecutionError`` after writing the partial result.
    """
    import nbformat

    nb = nbformat.read(str(notebook), as_version=4)  # type: ignore[no-untyped-call]
    try:
        if workdir is not None:
            _run(nb, workdir, timeout=timeout, kernel_name=kernel_name)
        else:
            with tempfile.TemporaryDirectory(prefix="ipymemory-teaching-") as tmp:
                shutil.copy(notebook, Path(tmp) / notebook.name)
                _run(nb, Path(tmp), timeout=timeout, kernel_name=kernel_name)
    finally:
        output.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(output))  # type: ignore[no-untyped-call]


def _run(nb: Any, cwd: Path, *, timeout: int, kernel_name: str) -> None:
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="ipymemory-kernel-") as sockets:
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name=kernel_name,
            store_widget_state=True,
            resources={"metadata": {"path": str(cwd)}},
            config=_transport(Path(sockets)),
        )
        client.execute(env=clean_env())


def _transport(sockets: Path) -> Any:
    """The kernel's transport: local sockets (IPC) in ``sockets`` where the platform has
    them. Over TCP (the default) ipykernel warns that the kernel talks without
    encryption, the first thing a newcomer running the lesson would read; this kernel is
    ours, local and short-lived, and a UNIX socket in a private temp directory is not
    reachable from the network at all, so there is nothing to warn about. (Windows has
    no IPC transport in ZeroMQ: TCP there, with its warning.)"""
    from traitlets.config import Config

    config = Config()
    if os.name == "posix":
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = str(sockets / "kernel")
    return config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ipymemory.notebook.run_teaching",
        description="Execute the ipymemory teaching notebook headless (offline).",
    )
    parser.add_argument(
        "--notebook",
        type=Path,
        help="notebook to run (default: the teaching notebook shipped in the package)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(NOTEBOOK_NAME.replace(".ipynb", ".executed.ipynb")),
        help="where to write the executed copy (default: %(default)s)",
    )
    parser.add_argument(
        "--timeout",
        type=int,
        default=C.TEACHING_CELL_TIMEOUT,
        help="seconds per cell (default: %(default)s)",
    )
    parser.add_argument("--kernel", default="python3", help="kernel name (default: python3)")
    parser.add_argument(
        "--workdir",
        type=Path,
        help="run the kernel in this existing directory and keep the .memory/ the notebook "
        "makes there (default: a temporary directory, removed afterwards)",
    )
    args = parser.parse_args(argv)
    missing = missing_modules()
    if missing:
        print(
            f"ipymemory: the teaching run needs {', '.join(missing)}, which a bare install "
            f"does not have; install them with: {INSTALL_HINT}",
            file=sys.stderr,
        )
        return 2
    if args.notebook is not None and not args.notebook.is_file():
        parser.error(f"notebook not found: {args.notebook} (pass --notebook PATH)")
    if args.workdir is not None and not args.workdir.is_dir():
        parser.error(f"--workdir {args.workdir}: not a directory")

    from nbclient.exceptions import CellExecutionError

    with _notebook_path(args.notebook) as notebook:
        try:
            execute(
                notebook,
                args.output,
                timeout=args.timeout,
                kernel_name=args.kernel,
                workdir=args.workdir.resolve() if args.workdir is not None else None,
            )
        except CellExecutionError as e:
            print(
                f"FAILED: a cell raised an error; partial result in {args.output}", file=sys.stderr
            )
            print(str(e)[-3000:], file=sys.stderr)
            return 1
    print(f"OK: executed {notebook} -> {args.output}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
