"""The notebook tools the agent may call: ``list_files``, ``read_file``, ``run_python``.

``list_files`` and ``read_file`` see only the workspace (the notebook's directory):
every path is resolved (symlinks included) and refused unless it stays inside it.
Hidden files and directories -- any path part below the workspace starting with ``.``
(``.env``, ``.git``, ``.ssh``, ``.memory`` ...), as asked for or as resolved through
symlinks -- are refused and not listed, unless the user allows them for the turn
(``allow_hidden``): they are where credentials and the memory itself live.
The threat model is the model asking for paths it should not see; a local process
racing symlinks under us is out of scope (the final component is still opened with
``O_NOFOLLOW``). ``run_python`` is offered only when the user enables it for a turn
and runs code in the user's namespace -- it is not a sandbox, it is the user's kernel.
It runs under a time limit, with only its own output captured (:mod:`.pyrun`).

A tool never raises for bad input or a failing call: it returns a :class:`ToolOutcome`
with ``is_error=True``, which becomes a ``tool_result`` with ``is_error: true``.
"""

from __future__ import annotations

import ast
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .. import _constants as C
from .._encodable import encodable
from .pyrun import run_with_limit

__all__ = ["OfferedTool", "ToolBox", "ToolOutcome", "tool_definitions"]

_LIST_FILES = {
    "name": "list_files",
    "description": (
        "List files under a directory of the notebook's workspace (recursively, "
        "hidden entries skipped unless the user allowed them, bounded count). Paths are "
        "relative to the workspace."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Directory relative to the workspace; default '.'",
            }
        },
    },
}
_READ_FILE = {
    "name": "read_file",
    "description": (
        "Read a UTF-8 text file inside the notebook's workspace (size-capped; longer "
        "files are truncated with a note). Hidden files and directories (a path part "
        "starting with '.') are refused unless the user allowed them for this turn."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the workspace"}
        },
        "required": ["path"],
    },
}
_RUN_PYTHON = {
    "name": "run_python",
    "description": (
        "Run Python code in the user's live notebook namespace. Returns stdout, stderr "
        "and the repr of the last expression (bounded). Variables you define persist. "
        "Runs under a time limit; long computations are stopped."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"code": {"type": "string", "description": "Python source to run"}},
        "required": ["code"],
    },
}

# Directories never worth walking into (and huge): skipped by list_files.
_SKIP_DIRS = frozenset({"__pycache__", "node_modules"})


def _is_hidden(part: str) -> bool:
    return part.startswith(".") and part not in (".", "..")


def tool_definitions(*, allow_python: bool) -> list[dict[str, Any]]:
    """The ``tools`` parameter of a main request."""
    tools = [dict(_LIST_FILES), dict(_READ_FILE)]
    if allow_python:
        tools.append(dict(_RUN_PYTHON))
    return tools


class OfferedTool(Protocol):
    """A tool object offered to the model as it is (Claude's memory tool,
    ``%%agent --memory-tool``): its API definition, and a call that returns the
    result's text or raises with the message for the model."""

    @property
    def name(self) -> str: ...

    def to_dict(self) -> Any: ...

    def call(self, input: object) -> Any: ...


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call returned: the text for the ``tool_result`` and whether it failed."""

    content: str
    is_error: bool = False

    def __post_init__(self) -> None:
        # Tool output enters here (a file name or printed text may not encode).
        object.__setattr__(self, "content", encodable(self.content))


class ToolError(Exception):
    """A tool refused its input or failed; the message goes back to the model."""


class ToolBox:
    """The tools of one turn, bound to the workspace (and, if enabled, a namespace)."""

    def __init__(
        self,
        workspace: str | Path,
        *,
        allow_python: bool = False,
        namespace: dict[str, Any] | None = None,
        read_limit: int = C.DEFAULT_FILE_READ_LIMIT,
        list_limit: int = C.DEFAULT_LIST_FILES_LIMIT,
        output_limit: int = C.DEFAULT_PYTHON_OUTPUT_LIMIT,
        allow_hidden: bool = C.DEFAULT_ALLOW_HIDDEN,
        python_timeout: float = C.DEFAULT_PYTHON_TIMEOUT,
        offered: OfferedTool | None = None,
    ) -> None:
        self.root = Path(workspace).resolve()
        self.offered = offered
        self.allow_python = allow_python
        self.allow_hidden = allow_hidden
        self.python_timeout = python_timeout
        self.namespace: dict[str, Any] = namespace if namespace is not None else {}
        self.read_limit = read_limit
        self.list_limit = list_limit
        self.output_limit = output_limit
        # Workspace-relative paths read_file returned, in first-read order (provenance).
        self.files_read: list[str] = []
        # Their sha256 as read (SPEC §11: a record drawn from them can tell they changed).
        self.files_sha256: dict[str, str] = {}
        self._tools: dict[str, Callable[[dict[str, Any]], str]] = {
            "list_files": self._list_files,
            "read_file": self._read_file,
        }
        if allow_python:
            self._tools["run_python"] = self._run_python

    @property
    def definitions(self) -> list[dict[str, Any]]:
        tools = tool_definitions(allow_python=self.allow_python)
        if self.offered is not None:
            tools.append(dict(self.offered.to_dict()))
        return tools

    def run(self, name: str, tool_input: Any) -> ToolOutcome:
        """Run tool ``name``; every failure becomes an error outcome (KeyboardInterrupt
        and other non-``Exception`` signals still propagate)."""
        if self.offered is not None and name == self.offered.name:
            return self._run_offered(self.offered, tool_input)
        tool = self._tools.get(name)
        if tool is None:
            offered = ", ".join(sorted(self._tools))
            hint = " (run_python is not enabled for this turn)" if name == "run_python" else ""
            return ToolOutcome(f"unknown tool {name!r}{hint}; available: {offered}", True)
        if not isinstance(tool_input, dict):
            return ToolOutcome(f"{name}: input must be an object", True)
        try:
            return ToolOutcome(tool(tool_input))
        except ToolError as e:
            return ToolOutcome(f"{name}: {e}", True)
        except Exception as e:  # a tool bug is reported to the model, not raised
            return ToolOutcome(f"{name} failed: {type(e).__name__}: {e}", True)

    @staticmethod
    def _run_offered(tool: OfferedTool, tool_input: Any) -> ToolOutcome:
        try:
            result = tool.call(tool_input)
        except Exception as e:  # the tool's refusal (the SDK's ToolError) goes to the model
            return ToolOutcome(f"{tool.name}: {e}", True)
        return ToolOutcome(result if isinstance(result, str) else str(result))

    # --- path confinement --------------------------------------------------------------

    def _resolve(self, raw: Any, *, what: str) -> Path:
        if not isinstance(raw, str) or not raw.strip():
            raise ToolError(f"{what} must be a non-empty string")
        if "\x00" in raw:
            raise ToolError(f"{what} contains a NUL character")
        candidate = Path(raw)
        joined = candidate if candidate.is_absolute() else self.root / candidate
        resolved = joined.resolve()  # follows every symlink, so escapes show up here
        if resolved != self.root and self.root not in resolved.parents:
            raise ToolError(f"{raw!r} is outside the workspace; only paths inside it are allowed")
        if not self.allow_hidden:
            # Both as written (".git/../x" names .git) and as resolved (a link into .ssh).
            asked = joined.relative_to(self.root) if joined.is_relative_to(self.root) else None
            for parts in (asked.parts if asked else (), resolved.relative_to(self.root).parts):
                hidden = next((p for p in parts if _is_hidden(p)), None)
                if hidden is not None:
                    raise ToolError(
                        f"{raw!r} is hidden ({hidden!r}); hidden files and directories "
                        "are not shown unless the user allows them for the turn"
                    )
        return resolved

    def _listed(self, name: str) -> bool:
        return self.allow_hidden or not _is_hidden(name)

    def _readable(self, path: Path) -> bool:
        """Whether read_file would accept ``path``: a symlink is listed only if its
        target stays inside the workspace and out of hidden places."""
        if not path.is_symlink():
            return True
        try:
            self._resolve(str(path), what="path")
        except ToolError:
            return False
        return True

    def _relative(self, path: Path) -> str:
        rel = path.relative_to(self.root).as_posix()
        return rel or "."

    # --- tools -------------------------------------------------------------------------

    def _list_files(self, tool_input: dict[str, Any]) -> str:
        base = self._resolve(tool_input.get("path", ".") or ".", what="path")
        if not base.is_dir():
            raise ToolError(f"{self._relative(base)!r} is not a directory")
        found: list[str] = []
        more = 0
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if self._listed(d) and d not in _SKIP_DIRS)
            for filename in sorted(filenames):
                if not self._listed(filename) or not self._readable(Path(dirpath, filename)):
                    continue
                if len(found) < self.list_limit:
                    found.append(self._relative(Path(dirpath) / filename))
                else:
                    more += 1
        if not found:
            return f"(no files under {self._relative(base)})"
        lines = "\n".join(found)
        if more:
            lines += f"\n… and {more} more files not shown (limit {self.list_limit})"
        return lines

    def _read_file(self, tool_input: dict[str, Any]) -> str:
        path = self._resolve(tool_input.get("path"), what="path")
        rel = self._relative(path)
        try:
            # O_NONBLOCK: opening a FIFO must not hang the turn; it is refused below.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            raise ToolError(f"{rel!r} does not exist") from None
        except OSError as e:
            raise ToolError(f"cannot open {rel!r}: {e.strerror}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"{rel!r} is not a regular file")
            chunks: list[bytes] = []
            size = 0
            while size <= self.read_limit:
                chunk = os.read(fd, min(1 << 20, self.read_limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            data = b"".join(chunks)
            digest = _rest_digest(fd, data)
        finally:
            os.close(fd)
        if b"\x00" in data[:8192]:
            raise ToolError(f"{rel!r} looks binary ({info.st_size} bytes); not shown")
        if rel not in self.files_read:
            self.files_read.append(rel)
        if digest is not None:
            self.files_sha256[rel] = digest
        else:
            self.files_sha256.pop(rel, None)
        truncated = len(data) > self.read_limit
        text = data[: self.read_limit].decode("utf-8", errors="replace")
        if truncated:
            text += (
                f"\n… [truncated: {rel} is {info.st_size} bytes; "
                f"only the first {self.read_limit} are shown]"
            )
        return text

    def _run_python(self, tool_input: dict[str, Any]) -> str:
        code = tool_input.get("code")
        if not isinstance(code, str):
            raise ToolError("code must be a string")
        try:
            tree = ast.parse(code, "<run_python>", "exec")
        except SyntaxError as e:
            raise ToolError(f"syntax error: {e.msg} (line {e.lineno})") from None
        last: ast.expr | None = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = tree.body[-1].value
            tree.body.pop()
        compiled = compile(tree, "<run_python>", "exec")
        expression = (
            compile(ast.Expression(last), "<run_python>", "eval") if last is not None else None
        )

        def body() -> str | None:
            exec(compiled, self.namespace)
            if expression is None:
                return None
            value = eval(expression, self.namespace)
            return None if value is None else repr(value)

        outcome = run_with_limit(body, timeout=self.python_timeout, output_limit=self.output_limit)
        parts = []
        if outcome.stdout:
            parts.append("stdout:\n" + outcome.stdout)
        if outcome.stderr or outcome.error:
            parts.append("stderr:\n" + outcome.stderr + (outcome.error or ""))
        if outcome.value_repr is not None:
            parts.append("result:\n" + outcome.value_repr)
        text = "\n".join(parts) or "(no output)"
        if len(text) > self.output_limit or outcome.dropped:
            text = (
                text[: self.output_limit]
                + f"\n… [output truncated at {self.output_limit} characters]"
            )
        if outcome.timed_out:
            raise ToolError(_timeout_note(self.python_timeout, outcome.still_running) + text)
        if outcome.error is not None:
            raise ToolError("the code raised an exception\n" + text)
        return text


def _timeout_note(limit: float, still_running: bool) -> str:
    if still_running:
        return (
            f"timed out after {limit:g} s and could not be stopped (it is blocked outside "
            "Python, e.g. in sleep or I/O, or catches every exception): it is still running "
            "in the background, may still change variables, and prints to the notebook\n"
        )
    return f"timed out after {limit:g} s; the code was stopped\n"


def _rest_digest(fd: int, head: bytes) -> str | None:
    """The sha256 of the whole file: ``head`` (what was read) and the rest of ``fd``;
    None past ``SOURCE_HASH_LIMIT`` bytes (too big to hash on every check)."""
    limit = C.SOURCE_HASH_LIMIT
    if len(head) > limit or os.fstat(fd).st_size > limit:  # too big: read no further
        return None
    digest = hashlib.sha256(head)
    size = len(head)
    while chunk := os.read(fd, 1 << 20):
        size += len(chunk)
        if size > limit:
            return None
        digest.update(chunk)
    return digest.hexdigest() if size <= limit else None
