"""What the kernel knows about the running cell, for the journal's provenance.

* ``notebook``: the path Jupyter started the kernel for (``JPY_SESSION_NAME``, which
  ipykernel also puts into the namespace as ``__session__``), or VS Code's
  ``__vsc_ipynb_file__``;
* ``cell_id``: the ``cellId`` JupyterLab / Notebook 7 send in the execute request's
  metadata (``kernel.get_parent()``);
* ``execution_count``: the running cell's number (the ``[12]`` of ``In [12]``).

Each is left out when not known (a terminal IPython has no notebook or cell id).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["cell_context"]


def cell_context(shell: Any) -> dict[str, Any]:
    """The notebook, cell id and execution count of the cell ``shell`` is running."""
    out: dict[str, Any] = {}
    namespace = getattr(shell, "user_ns", None)
    ns: Mapping[str, Any] = namespace if isinstance(namespace, Mapping) else {}
    notebook = ns.get("__vsc_ipynb_file__") or ns.get("__session__")
    notebook = notebook or os.environ.get("JPY_SESSION_NAME")
    if isinstance(notebook, str) and notebook:
        out["notebook"] = notebook
    cell_id = _cell_id(shell)
    if cell_id is not None:
        out["cell_id"] = cell_id
    count = _execution_count(shell)
    if count is not None:
        out["execution_count"] = count
    return out


def _execution_count(shell: Any) -> int | None:
    """The running cell's number: IPython hands the cell's ExecutionResult to the
    display hook while it runs (the shell's own counter may already point at the next
    cell). None outside a cell."""
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    return count if type(count) is int else None


def _cell_id(shell: Any) -> str | None:
    kernel = getattr(shell, "kernel", None)
    get_parent = getattr(kernel, "get_parent", None)
    if get_parent is None:
        return None
    parent = get_parent()
    metadata = parent.get("metadata") if isinstance(parent, Mapping) else None
    cell_id = metadata.get("cellId") if isinstance(metadata, Mapping) else None
    return cell_id if isinstance(cell_id, str) and cell_id else None
