"""The public API is what ``ipymemory.__all__`` says, and tests use it from there."""

from __future__ import annotations
import __future__

import ast
import inspect
import re
import textwrap
import types
from pathlib import Path

import ipymemory
import ipymemory.errors

TESTS = Path(__file__).parent


def _public_names(module: types.ModuleType) -> set[str]:
    """Names a user sees in ``module``: not private, not a submodule, not a __future__ flag."""
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, (types.ModuleType, __future__._Feature))
    }


def test_all_lists_exactly_the_public_names() -> None:
    exported = set(ipymemory.__all__)
    assert len(exported) == len(ipymemory.__all__), "a name is listed twice"
    # Lazily imported names (ipymemory._LAZY) are in the module only once used.
    assert exported - {"__version__"} == _public_names(ipymemory) | set(ipymemory._LAZY)
    assert ipymemory.__all__ == sorted(ipymemory.__all__)
    for name in ipymemory.__all__:
        assert hasattr(ipymemory, name), name


def test_every_error_is_exported_and_under_the_one_root() -> None:
    errors = {
        name: value
        for name, value in vars(ipymemory.errors).items()
        if inspect.isclass(value) and issubclass(value, BaseException)
    }
    assert set(errors) == set(ipymemory.errors.__all__)
    for name, error in errors.items():
        assert issubclass(error, ipymemory.IPyMemoryError), name
        assert getattr(ipymemory, name) is error, f"{name} is not exported by ipymemory"


def test_the_drawn_error_tree_is_the_real_one() -> None:
    """The ASCII tree in ``ipymemory.errors``'s docstring names every error once, each
    under its real base class -- a second base written "(also a X)" on its line -- (the
    drawing cannot drift from the code)."""
    drawing = textwrap.dedent((ipymemory.errors.__doc__ or "").partition("::")[2])
    drawn: dict[str, str | None] = {}
    also: dict[str, list[str]] = {}
    stack: list[tuple[int, str]] = []
    for line in drawing.splitlines():
        match = re.match(r"([│ ]*(?:[├└]── )?)([A-Z]\w+)\b", line)
        if not match or not hasattr(ipymemory.errors, match.group(2)):
            continue
        depth, name = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        assert name not in drawn, f"{name} is drawn twice"
        drawn[name] = stack[-1][1] if stack else None
        also[name] = re.findall(r"\(also an? ([A-Z]\w+)\)", line)
        stack.append((depth, name))
    assert set(drawn) == set(ipymemory.errors.__all__)
    for name, parent in drawn.items():
        error = getattr(ipymemory.errors, name)
        ours = [b for b in error.__bases__ if issubclass(b, ipymemory.IPyMemoryError)]
        expected = [getattr(ipymemory.errors, p) for p in ([parent] if parent else [])]
        expected += [getattr(ipymemory.errors, other) for other in also[name]]
        assert ours == expected, f"{name}: drawn under {parent}, derives from {ours}"


def _imports_of_public_names(path: Path) -> list[str]:
    """``from ipymemory.<sub> import X`` where X is the very object ``ipymemory.X``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ipymemory.")):
            continue
        module = __import__(node.module or "", fromlist=["_"])
        for alias in node.names:
            value = getattr(module, alias.name, None)
            if alias.name in ipymemory.__all__ and value is getattr(ipymemory, alias.name):
                found.append(f"{path.name}:{node.lineno}: {alias.name} from {node.module}")
    return found


def test_tests_import_the_public_api_from_the_package() -> None:
    offenders = [
        hit for path in sorted(TESTS.rglob("*.py")) for hit in _imports_of_public_names(path)
    ]
    assert offenders == []
