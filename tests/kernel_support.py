"""Running notebook cells in a real kernel: nbclient drives ipykernel (kept apart from
notebook_support, which every test imports: nbclient takes seconds to import)."""

from __future__ import annotations

import os
from typing import Any

import nbformat
from nbclient import NotebookClient

from ipymemory.config import without_settings


def notebook_in(workspace: str) -> tuple[NotebookClient, nbformat.NotebookNode]:
    """An empty notebook and the nbclient client that runs it in a real ipykernel
    working in ``workspace`` (``client.setup_kernel(env=kernel_env(...))`` starts it)."""
    nb = nbformat.v4.new_notebook()
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": workspace}}
    )
    return client, nb


def kernel_env(**env: str) -> dict[str, str]:
    """This environment without ipymemory's settings (the kernel's defaults), the user
    scope off, and ``env``."""
    out = without_settings(os.environ)
    out.update(IPYMEMORY_USER_DIR="off", **env)
    return out


def run_cell(client: NotebookClient, nb: nbformat.NotebookNode, source: str) -> Any:
    """Append a code cell holding ``source`` to ``nb`` and run it; the cell."""
    cell = nbformat.v4.new_code_cell(source)
    nb.cells.append(cell)
    client.execute_cell(cell, len(nb.cells) - 1)
    return cell
