"""Every ``%memory`` line of a cell shows its view where it runs.

IPython displays only a cell's last expression: a cell ``%memory list`` / ``%memory
history`` / ``%memory status`` would show the status alone. :class:`ShowEachLine` is an
AST transformer (``shell.ast_transformers``, IPython's documented hook for rewriting a
cell's code before it runs): each ``%memory`` line that stands alone as a statement --
IPython has made it ``get_ipython().run_line_magic('memory', ...)`` -- is rewritten to
display the view it returns, through IPython's display machinery, at the point where it
runs (in a loop, once per pass). The cell's last statement is left as it is, so its view
is the cell's result as before (``Out[n]``, ``_``, a trailing ``;`` silences it). An
assignment ``x = %memory …`` is not a statement of its own: it shows nothing and ``x``
is the view, as documented; so is what ``shell.run_line_magic("memory", …)`` returns.
"""

from __future__ import annotations

import ast
from typing import Any

from IPython.display import display

__all__ = ["ShowEachLine", "install", "show", "uninstall"]


def show(view: Any) -> None:
    """Display ``view`` (a ``%memory`` line's result) where the line ran."""
    if view is not None:
        display(view)  # type: ignore[no-untyped-call]


class ShowEachLine(ast.NodeTransformer):
    """See the module docstring."""

    def visit_Module(self, node: ast.Module) -> ast.Module:
        last = node.body[-1] if node.body else None
        node.body = [
            stmt if stmt is last and _is_memory_line(stmt) else self.visit(stmt)
            for stmt in node.body
        ]
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        if not _is_memory_line(node):
            return self.generic_visit(node)
        shown = ast.Call(func=_show_function(), args=[node.value], keywords=[])
        return ast.copy_location(ast.Expr(value=shown), node)


def _is_memory_line(stmt: ast.stmt) -> bool:
    """``get_ipython().run_line_magic('memory', ...)`` as a statement of its own."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return False
    call = stmt.value
    method = call.func
    return (
        isinstance(method, ast.Attribute)
        and method.attr == "run_line_magic"
        and isinstance(method.value, ast.Call)
        and isinstance(method.value.func, ast.Name)
        and method.value.func.id == "get_ipython"
        and bool(call.args)
        and isinstance(call.args[0], ast.Constant)
        and call.args[0].value == "memory"
    )


def _show_function() -> ast.expr:
    """``__import__('ipymemory.notebook.shown', fromlist=['show']).show``: reached
    without a name in the user's namespace (which they may rebind)."""
    module = ast.Call(
        func=ast.Name(id="__import__", ctx=ast.Load()),
        args=[ast.Constant(__name__)],
        keywords=[ast.keyword(arg="fromlist", value=ast.List([ast.Constant("show")], ast.Load()))],
    )
    return ast.Attribute(value=module, attr="show", ctx=ast.Load())


def install(shell: Any) -> None:
    """Add the transformer to ``shell`` (once)."""
    if not any(isinstance(t, ShowEachLine) for t in shell.ast_transformers):
        shell.ast_transformers.append(ShowEachLine())


def uninstall(shell: Any) -> None:
    shell.ast_transformers[:] = [
        t for t in shell.ast_transformers if not isinstance(t, ShowEachLine)
    ]
