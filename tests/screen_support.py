"""Loading a benchmark script as a module, so tests can run it on a reduced input."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` imported under ``name`` (once per process); the corpus
    loaders (``scenes``, ``histories``, ``labelled_texts``) import each other by name."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def reading_turn(
    query: str, *files: tuple[str, str], answer: str = "Done."
) -> list[dict[str, Any]]:
    """A turn's canonical history: the user's query, a ``read_file`` call per file (the
    call names it, as a real turn's does) with its result, the answer."""
    out: list[dict[str, Any]] = [{"role": "user", "content": query}]
    for i, (path, text) in enumerate(files):
        call = {"type": "tool_use", "id": f"t{i}", "name": "read_file", "input": {"path": path}}
        out.append({"role": "assistant", "content": [call]})
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": text}
        out.append({"role": "user", "content": [result]})
    out.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
    return out
