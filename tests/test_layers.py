"""Imports run one way: every import in the package, against the layer order the package
docstring states (``ipymemory/__init__.py``), those inside functions and under
``TYPE_CHECKING`` included."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

import ipymemory

PACKAGE = Path(ipymemory.__file__).parent

# Type-only imports against the order (never run, so no cycle at import time), each
# with its reason.
TYPE_ONLY_EXCEPTIONS = {
    ("ipymemory.errors", "ipymemory.model.usage"): (
        "SideQueryReplyError carries the Usage of the reply it refuses (an annotation)"
    ),
}

# Imports inside functions outside the front ends: at most two, each with its reason.
IN_FUNCTION_EXCEPTIONS = {
    ("ipymemory.team.merge_driver", "ipymemory.store.record"): (
        "git starts a driver process per merged file; only a rename needs the record "
        "module (and the YAML library it loads)"
    ),
    ("ipymemory.commands.agents", "ipymemory.agents.mcp_server"): (
        "only `ipymemory mcp` serves: every other command line would load the mcp SDK "
        "and pydantic (the tools' typed models) for nothing"
    ),
}
MAX_IN_FUNCTION_EXCEPTIONS = 2


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # the ipymemory module imported (the package itself for a plain name)
    line: int
    in_function: bool
    type_only: bool
    name: str = ""  # what the line names, dotted (``ipymemory.turn.PendingBatch``)

    @property
    def where(self) -> str:
        return f"{self.module} line {self.line}"


def layers(doc: str) -> dict[str, int]:
    """Unit -> layer number, from the numbered list in the package docstring."""
    out: dict[str, int] = {}
    layer = 0
    for line in doc.splitlines():
        numbered = re.match(r"(\d+)\. ", line)
        if numbered:
            layer = int(numbered.group(1))
        elif not line.startswith("   "):
            layer = 0
        if layer:
            # The unit names come before the "--" that starts the description.
            for name in re.findall(r"``(\w+)``", line.split(" -- ")[0]):
                out[name] = layer
    return out


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports_of(module: str, path: Path, known: set[str]) -> list[Import]:
    """The ipymemory imports of one module, each resolved to the module it names."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: list[Import] = []

    def nearest(name: str) -> str:
        while name not in known and "." in name:
            name = name.rpartition(".")[0]
        return name

    def visit(node: ast.AST, in_function: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                # `from . import durable` names a module; `from .x import f`, a name in x.
                names = [f"{target}.{a.name}" for a in child.names]
            for name in names:
                if name == "ipymemory" or name.startswith("ipymemory."):
                    target = nearest(name)
                    out.append(Import(module, target, child.lineno, in_function, type_only, name))
            visit(
                child,
                in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)),
                type_only
                or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)),
            )

    visit(ast.parse(path.read_text(encoding="utf-8")), False, False)
    return out


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def all_imports() -> list[Import]:
    found = modules()
    return [i for m, p in found.items() for i in imports_of(m, p, set(found))]


LAYERS = layers(ipymemory.__doc__ or "")
FRONT_ENDS = {u for u, n in LAYERS.items() if n == LAYERS["cli"]} | {"ipymemory"}


def against_the_order(imports: list[Import], order: dict[str, int]) -> list[str]:
    bad = []
    for i in imports:
        src, dst = unit(i.module), unit(i.target)
        if src == dst or (i.type_only and (i.module, i.target) in TYPE_ONLY_EXCEPTIONS):
            continue
        if order[dst] >= order[src]:
            side = "a peer" if order[dst] == order[src] else "a higher layer"
            bad.append(f"{i.where}: {src} (layer {order[src]}) imports {i.target}, {side}")
    return bad


def unit_cycles(imports: Sequence[Import]) -> list[list[str]]:
    """The groups of units that import each other round a cycle (imports that run:
    type-only ones left out), each sorted; Tarjan's algorithm over the unit graph."""
    graph: dict[str, set[str]] = {}
    for i in imports:
        src, dst = unit(i.module), unit(i.target)
        graph.setdefault(src, set())
        graph.setdefault(dst, set())
        if src != dst and not i.type_only:
            graph[src].add(dst)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_docstring_names_every_unit_once_in_layers() -> None:
    assert LAYERS["_constants"] == 1
    assert LAYERS["ipymemory"] == max(LAYERS.values())
    units = {unit(m) for m in modules()}
    unlisted = units - set(LAYERS)
    assert not unlisted, f"add {sorted(unlisted)} to the layer list in ipymemory/__init__.py"


def test_every_import_runs_down_the_layers() -> None:
    assert against_the_order(all_imports(), LAYERS) == []


def test_no_units_import_each_other_round_a_cycle() -> None:
    assert unit_cycles(all_imports()) == []


def test_in_function_imports_are_only_the_listed_exceptions() -> None:
    inside = {
        (i.module, i.target): i.where
        for i in all_imports()
        if i.in_function and unit(i.module) not in FRONT_ENDS
    }
    assert len(IN_FUNCTION_EXCEPTIONS) <= MAX_IN_FUNCTION_EXCEPTIONS
    assert {k: v for k, v in inside.items() if k not in IN_FUNCTION_EXCEPTIONS} == {}
    # A listed exception that no longer exists is dropped from the list, not kept.
    assert set(IN_FUNCTION_EXCEPTIONS) <= set(inside)
    assert set(TYPE_ONLY_EXCEPTIONS) <= {(i.module, i.target) for i in all_imports()}


# The review queue (issue 42): a proposed change is one service, ``review/``, whatever
# door it comes by; the turn keeps only the turn.
TURN_FREE_UNITS = ("sync", "server")
QUEUE_FROM_REVIEW_UNITS = ("agents", "commands", "views")


def queue_names_through_turn(imports: Sequence[Import]) -> list[str]:
    """Imports naming a review-queue concept through ``ipymemory.turn`` (its re-exports,
    kept for code outside the package)."""
    import importlib

    bad = []
    for i in imports:
        if i.target != "ipymemory.turn" and not i.target.startswith("ipymemory.turn."):
            continue
        module, _, attr = i.name.rpartition(".")
        value = getattr(importlib.import_module(module), attr, None) if module else None
        if getattr(value, "__module__", "").startswith("ipymemory.review"):
            bad.append(f"{i.where}: {i.name} (import it from ipymemory.review)")
    return bad


def test_sync_and_the_server_never_import_the_turn() -> None:
    assert [
        f"{i.where}: {i.target}"
        for i in all_imports()
        if unit(i.module) in TURN_FREE_UNITS and unit(i.target) == "turn"
    ] == []


def test_queue_concepts_come_from_review_not_the_turn() -> None:
    imports = [i for i in all_imports() if unit(i.module) in QUEUE_FROM_REVIEW_UNITS]
    assert queue_names_through_turn(imports) == []
    # ... and the turn imports nothing of what sits above it, the review queue included
    # (a cycle would be caught above; the queue never needs the turn).
    assert [
        i.where for i in all_imports() if unit(i.module) == "review" and unit(i.target) == "turn"
    ] == []


def test_a_queue_concept_through_the_turn_is_named() -> None:
    found = queue_names_through_turn(
        [
            Import(
                "ipymemory.views.x", "ipymemory.turn", 3, False, True, "ipymemory.turn.PendingBatch"
            ),
            Import(
                "ipymemory.views.x",
                "ipymemory.turn",
                4,
                False,
                False,
                "ipymemory.turn.AgentSession",
            ),
        ]
    )
    assert found == [
        "ipymemory.views.x line 3: ipymemory.turn.PendingBatch (import it from ipymemory.review)"
    ]


MAX_REVIEW_PARAMETERS = 5
MAX_STORE_CLASS_LINES = 500


def parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many parameters a caller may pass (``self`` / ``cls`` not counted)."""
    a = function.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names) + (a.vararg is not None) + (a.kwarg is not None)


def widest_functions(root: Path, limit: int) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if parameters(node) > limit:
                out.append(f"{path.name}:{node.lineno} {node.name}: {parameters(node)}")
    return out


def test_no_function_of_the_review_queue_takes_more_than_five_parameters() -> None:
    assert widest_functions(PACKAGE / "review", MAX_REVIEW_PARAMETERS) == []


def test_a_batch_keeps_each_items_facts_in_the_item_not_in_maps_by_name() -> None:
    import dataclasses

    from ipymemory import PendingBatch

    maps = [f.name for f in dataclasses.fields(PendingBatch) if "Mapping" in str(f.type)]
    assert maps == []


# Names the decision of a batch went by before it was one value (issue 42): the plan's
# choice as a loose flag, the plan as a pseudo item. Only the decision module may say
# them (reading what older callers and files say).
LOOSE_DECISION_NAMES = {"accept_plan", "PLAN_FLAG"}
PLAN_PSEUDO_NAME = "(consolidation plan)"


def loose_decision_names(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        name = None
        if isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, (ast.arg, ast.keyword)):
            name = node.arg
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = node.name
        elif isinstance(node, ast.Constant) and node.value == PLAN_PSEUDO_NAME:
            name = PLAN_PSEUDO_NAME
        if name in LOOSE_DECISION_NAMES or name == PLAN_PSEUDO_NAME:
            out.append(f"{path.relative_to(root)}:{getattr(node, 'lineno', '?')} {name}")
    return out


def test_the_plan_choice_and_the_plan_name_live_only_in_the_decision() -> None:
    allowed = PACKAGE / "review" / "decision.py"
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != allowed
        for hit in loose_decision_names(path)
    ]
    assert found == []


def test_the_store_class_stays_small() -> None:
    tree = ast.parse((PACKAGE / "store" / "store.py").read_text(encoding="utf-8"))
    (store,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MemoryStore"]
    assert store.end_lineno is not None
    assert store.end_lineno - store.lineno + 1 <= MAX_STORE_CLASS_LINES


def test_the_shape_checkers_find_what_they_are_for(tmp_path: Path) -> None:
    wide = tmp_path / "wide.py"
    wide.write_text(
        "def f(self, a, b, c, d, e, *, g=1):\n    pass\ndef ok(a, *b, **c):\n    pass\n"
    )
    assert widest_functions(tmp_path, MAX_REVIEW_PARAMETERS) == ["wide.py:1 f: 6"]
    loose = tmp_path / "loose.py"
    loose.write_text("def f(accept_plan=True):\n    return x.PLAN_FLAG, '(consolidation plan)'\n")
    hits = [hit.split(" ", 1)[1] for hit in loose_decision_names(loose, tmp_path)]
    assert sorted(hits) == sorted(["accept_plan", "PLAN_FLAG", PLAN_PSEUDO_NAME])


# --- the checker itself finds what it is for --------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> list[Import]:
    root = tmp_path / "ipymemory"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    found = modules(root)
    return [i for m, p in found.items() for i in imports_of(m, p, set(found))]


ORDER = {"_constants": 1, "store": 2, "model": 2, "screen": 3, "ipymemory": 4}


@pytest.mark.parametrize(
    ("source", "complaint"),
    [
        ("from ..screen import x\n", "store (layer 2) imports ipymemory.screen, a higher layer"),
        ("def f():\n    from ..screen.a import x\n", "imports ipymemory.screen.a, a higher"),
        ("from .. import model\n", "imports ipymemory.model, a peer"),
        ("import ipymemory.model.client\n", "imports ipymemory.model.client, a peer"),
        ("from .. import __version__\n", "imports ipymemory, a higher layer"),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..screen import x\n",
            "imports ipymemory.screen, a higher layer",
        ),
    ],
)
def test_an_import_against_the_order_is_named(tmp_path: Path, source: str, complaint: str) -> None:
    imports = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "_constants.py": "",
            "model/__init__.py": "",
            "model/client.py": "",
            "screen/__init__.py": "",
            "screen/a.py": "",
            "store/__init__.py": "",
            "store/s.py": "from .. import _constants\nfrom . import t\n" + source,
            "store/t.py": "",
        },
    )
    (bad,) = against_the_order(imports, ORDER)
    assert bad.startswith("ipymemory.store.s line ")
    assert complaint in bad


def test_downward_and_own_unit_imports_pass(tmp_path: Path) -> None:
    imports = _tree(
        tmp_path,
        {
            "__init__.py": "from .screen import a\nfrom .store import s\n",
            "_constants.py": "",
            "screen/__init__.py": "from .a import x\n",
            "screen/a.py": "from ..store.s import y\nfrom .. import _constants as C\n",
            "store/__init__.py": "",
            "store/s.py": "def f():\n    from . import t\n",
            "store/t.py": "",
        },
    )
    assert len(imports) == 6
    assert against_the_order(imports, ORDER) == []
    (inside,) = [i for i in imports if i.in_function]
    assert (inside.module, inside.target) == ("ipymemory.store.s", "ipymemory.store.t")


def test_a_cycle_of_units_is_found(tmp_path: Path) -> None:
    imports = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "_constants.py": "",
            "model/__init__.py": "from ..store import s\n",
            "screen/__init__.py": "def f():\n    from ..store.s import x\n",
            "store/__init__.py": "",
            "store/s.py": "from ..screen import y\nfrom ..model import z\n",
        },
    )
    assert unit_cycles(imports) == [["model", "screen", "store"]]


# --- measuring: python tests/test_layers.py [TREE] (TREE holds an ipymemory/) --------


def main(argv: Sequence[str]) -> None:
    root = Path(argv[0]) / "ipymemory" if argv else PACKAGE
    found = modules(root)
    imports = [i for m, p in found.items() for i in imports_of(m, p, set(found))]
    cycles = unit_cycles(imports)
    print(f"unit-level import cycles: {len(cycles)}")
    for group in cycles:
        print(f"  {' '.join(group)}")
    inside = sorted({(i.module, i.line, i.target) for i in imports if i.in_function})
    outside = [x for x in inside if unit(x[0]) not in FRONT_ENDS]
    print(f"imports inside functions: {len(inside)}, outside the front ends: {len(outside)}")
    for module, line, target in inside:
        print(f"  {module} line {line}: {target}")


if __name__ == "__main__":
    main(sys.argv[1:])
