"""What an answer's code uses, and its prose (SPEC §14).

Only code counts as use: a library an answer imports in a fenced Python block (``import
x``, ``import x as y``, ``from x import y``, ``from x.y import z``), installs in a shell
line (``pip install x``, ``%pip install x``, ``!pip install``, ``python -m pip``, ``uv
add``, ``conda install``, ``poetry add``, ``pipenv install``), loads in an R block
(``library(x)``, ``require(x)``, ``x::f``), or calls through its conventional alias
without importing it (``pd.read_csv`` with no ``pd`` bound in the code). A library the
prose names -- "we don't use pandas here" -- is mentioned, not used.

A Python block is parsed with :mod:`ast` once IPython's ``%`` and ``!`` lines are taken
out (they are shell lines); a block that does not parse is read line by line for
``import`` / ``from`` statements outside comments. Unlabelled blocks are tried as
Python, then as shell. The prose is the answer without its fenced blocks, inline code,
URLs and Markdown markup: what the language check reads.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from .libraries import API_SIGNS

__all__ = [
    "ALIASES",
    "CodeBlock",
    "ReadAnswer",
    "code_blocks",
    "inline_uses",
    "prose_of",
    "python_source",
    "read_answer",
]

_PYTHON = frozenset({"python", "py", "python3", "ipython", "ipython3", "jupyter", "pycon"})
_SHELL = frozenset(
    {"bash", "sh", "shell", "console", "zsh", "terminal", "powershell", "ps", "cmd", "fish"}
)
_R = frozenset({"r", "rscript"})
# Aliases so conventional that code using them means the library (``pd.`` is pandas).
ALIASES = {
    "pd": "pandas",
    "pl": "polars",
    "np": "numpy",
    "plt": "matplotlib",
    "sns": "seaborn",
    "px": "plotly",
    "go": "plotly",
    "tf": "tensorflow",
    "dd": "dask",
    "alt": "altair",
    "sm": "statsmodels",
}
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*)$")
_INSTALL = re.compile(
    r"(?:^|[\s;&|(!%])(?:python3?\s+-m\s+)?(?P<tool>pip3?|uv\s+pip|uv|conda|mamba|micromamba|"
    r"poetry|pipenv|pipx)\s+(?:install|add)\b(?P<args>[^\n;&|]*)"
)
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+(?P<src>[\w.]+)\s+import\b|import\s+(?P<names>[^#\n]+))")
_R_LIBRARY = re.compile(r"\b(?:library|require|requireNamespace)\s*\(\s*[\"']?(?P<name>[\w.]+)")
_R_NAMESPACE = re.compile(r"\b(?P<name>[A-Za-z][\w.]*)::")
_REQUIREMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_URL = re.compile(r"(?:https?://|www\.)\S+|\S+@\S+\.\w+")
_MARKUP = re.compile(r"<[^>\n]+>|!?\[([^\]\n]*)\]\([^)\n]*\)|[*_#>|~=-]{2,}|^\s*[-*+>#|]+\s", re.M)


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block: its info string's first word (lowercased, ``""`` if none) and text."""

    lang: str
    text: str


@dataclass(frozen=True)
class ReadAnswer:
    """What :func:`read_answer` found: the libraries the code uses (names as written,
    lowercased, e.g. ``pandas``, ``sklearn``, ``scikit-learn``) with how (``imports``,
    ``installs``, ``uses``, ``loads``), the blocks, whether every block is code we read
    (Python, shell or R), and the prose."""

    blocks: tuple[CodeBlock, ...]
    uses: Mapping[str, str]
    all_read: bool
    prose: str
    inline_code: bool = False  # `code` in the prose
    text: str = ""  # the whole answer
    inline_uses: Mapping[str, str] = field(default_factory=dict)  # of that inline code

    @property
    def has_code(self) -> bool:
        return bool(self.blocks)

    @property
    def code_words(self) -> frozenset[str]:
        """The identifiers of the answer's code, blocks and inline code, lowercased
        (``AsyncClient``, ``scan_csv``)."""
        inline = " ".join(m.group(0) for m in _INLINE_CODE.finditer(self.text))
        code = "\n".join([*(block.text for block in self.blocks), inline])
        return frozenset(word.lower() for word in _IDENTIFIER.findall(code))


def code_blocks(text: str) -> tuple[CodeBlock, ...]:
    """The fenced code blocks of Markdown ``text`` (``` or ~~~, indented fences in lists
    included, their indent taken off); an unclosed fence runs to the end."""
    return tuple(block for block, _ in _split(text) if block is not None)


def prose_of(text: str) -> str:
    """``text`` without its fenced blocks, inline code, URLs and Markdown markup."""
    parts = [part for block, part in _split(text, keep_prose=True) if block is None]
    prose = "\n".join(parts)
    prose = _INLINE_CODE.sub(" ", prose)
    prose = _URL.sub(" ", prose)
    return _MARKUP.sub(lambda m: f" {m.group(1) or ''} ", prose)


def read_answer(text: str) -> ReadAnswer:
    """Everything the checks need from an answer (see the module docstring)."""
    blocks = code_blocks(text)
    uses: dict[str, str] = {}
    all_read = True
    for block in blocks:
        found = _uses(block)
        if found is None:
            all_read = False
        else:
            _merge(uses, found)
    between = "\n".join(part for block, part in _split(text, keep_prose=True) if block is None)
    inline = _INLINE_CODE.search(between) is not None
    spans = inline_uses(between) if inline else {}
    return ReadAnswer(blocks, uses, all_read, prose_of(text), inline, text, spans)


_HOW = ("imports", "uses", "loads", "installs", "runs")  # what a reason says, first wins


def _merge(into: dict[str, str], found: Mapping[str, str]) -> None:
    for name, how in found.items():
        if name not in into or _HOW.index(how) < _HOW.index(into[name]):
            into[name] = how


def python_source(read: ReadAnswer) -> list[str]:
    """The Python of the answer's blocks (labelled Python, or unlabelled and parsing),
    IPython's ``%``/``!`` lines blanked."""
    return [
        _without_magics(block.text)[0]
        for block in read.blocks
        if block.lang in _PYTHON or (block.lang == "" and _parses(block.text))
    ]


# --- blocks -----------------------------------------------------------------------------


def _split(text: str, *, keep_prose: bool = False) -> Iterator[tuple[CodeBlock | None, str]]:
    """(block, "") for each fenced block and, with ``keep_prose``, (None, text) for the
    prose between them."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    prose: list[str] = []
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if opened is None or ("`" in opened["info"] and opened["fence"][0] == "`"):
            prose.append(lines[i])
            i += 1
            continue
        if keep_prose and prose:
            yield None, "\n".join(prose)
        prose = []
        fence, indent = opened["fence"], len(opened["indent"])
        lang = (opened["info"].split() or [""])[0].strip("{}.").lower()
        body: list[str] = []
        i += 1
        while i < len(lines):
            closing = _FENCE.match(lines[i])
            if (
                closing is not None
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
                and not closing["info"].strip()
            ):
                i += 1
                break
            line = lines[i]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            i += 1
        yield CodeBlock(lang, "\n".join(body)), ""
    if keep_prose and prose:
        yield None, "\n".join(prose)


def _uses(block: CodeBlock) -> dict[str, str] | None:
    """The libraries ``block`` uses, or None for a block that is not code we read."""
    if block.lang in _PYTHON:
        return _python_uses(block.text)
    if block.lang in _SHELL:
        return _installs(block.text)
    if block.lang in _R:
        return _r_uses(block.text)
    if block.lang == "":
        if _parses(block.text):
            return _python_uses(block.text)
        found = _installs(block.text)
        return found if found else None
    return None


def _parses(text: str) -> bool:
    try:
        ast.parse(_without_magics(text)[0])
    except (SyntaxError, ValueError):
        return False
    return any(line.strip() for line in text.splitlines())


def _without_magics(text: str) -> tuple[str, str]:
    """(Python, shell): IPython's ``%``/``!`` lines (and ``%%bash`` cells) set aside,
    blank in the Python so line numbers stay."""
    python: list[str] = []
    shell: list[str] = []
    in_shell_cell = False
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(("%%bash", "%%sh", "%%script", "%%system")):
            in_shell_cell = True
        if in_shell_cell or stripped.startswith(("%", "!")):
            shell.append(stripped.lstrip("%!"))
            python.append("")
        else:
            python.append(line)
    return "\n".join(python), "\n".join(shell)


def _python_uses(text: str) -> dict[str, str]:
    python, shell = _without_magics(text)
    found = _installs(shell)
    try:
        tree = ast.parse(python)
    except (SyntaxError, ValueError):
        _merge(found, dict.fromkeys(_import_lines(python), "imports"))
        return found
    imported: set[str] = set()
    bound: set[str] = set()
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported.add(_top(alias.name))
                bound.add(alias.asname or _top(alias.name))
        elif isinstance(node, ast.ImportFrom):
            if node.module and not node.level:
                imported.add(_top(node.module))
            bound.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loaded.add(node.id)
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    _merge(found, {name.lower(): "imports" for name in imported})
    _merge(found, _api_uses(tree))
    # `pd.read_csv(...)` with no `pd` bound anywhere in the code: a snippet's pandas.
    _merge(found, {ALIASES[n]: "uses" for n in loaded - bound if n in ALIASES})
    return found


# Modules whose functions share a name with a rival's method (`itertools.groupby`).
_NOT_A_FRAME = frozenset({"itertools", "np", "numpy", "math", "os", "re", "json"})


def _api_uses(tree: ast.AST) -> dict[str, str]:
    """Libraries whose own methods the code calls (:data:`API_SIGNS`), as "uses"."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in _NOT_A_FRAME:
            continue
        for library, methods in API_SIGNS.items():
            if node.attr in methods:
                found.setdefault(library, "uses")
    return found


def inline_uses(text: str) -> dict[str, str]:
    """What the inline code spans of ``text`` (its prose) use: imports and aliases
    (``import pandas``, ``pd.read_csv``) and rivals' own methods (``df.isna()``)."""
    found: dict[str, str] = {}
    for m in _INLINE_CODE.finditer(text):
        span = m.group(0).strip("`").strip()
        try:
            tree = ast.parse(span)
        except (SyntaxError, ValueError):
            continue
        _merge(found, _python_uses(span))
        _merge(found, _api_uses(tree))
    return found


def _import_lines(text: str) -> set[str]:
    """Imports of code that does not parse, line by line (comments are not lines that
    start with ``import``/``from``; a string's lines may be, rarely)."""
    found: set[str] = set()
    for line in text.split("\n"):
        m = _IMPORT_LINE.match(line)
        if m is None:
            continue
        if m["src"]:
            if not m["src"].startswith("."):
                found.add(_top(m["src"]))
            continue
        for part in m["names"].split(","):
            words = part.split()
            if words and re.fullmatch(r"[\w.]+", words[0]):
                found.add(_top(words[0]))
    return {name.lower() for name in found}


def _installs(text: str) -> dict[str, str]:
    """Packages a shell text installs (``pip install -U "pandas>=2" polars[excel]``)."""
    found: dict[str, str] = {}
    for line in text.split("\n"):
        line = re.sub(r"^\s*(?:[$>#]|PS>)\s+", " ", line)
        for m in _INSTALL.finditer(line):
            # The installer is used too ("install with uv, never conda").
            found.setdefault(m["tool"].split()[0].rstrip("3"), "runs")
            skip = False
            for word in m["args"].split():
                word = word.strip("'\"")
                if skip:
                    skip = False
                    continue
                if word.startswith("-"):
                    # Options that take a value: the value is not a package.
                    skip = word in ("-r", "-c", "-e", "-i", "-f", "-t", "--index-url", "-n")
                    continue
                name = _REQUIREMENT.match(word)
                if name is not None:
                    found[name.group(0).lower().rstrip(".")] = "installs"
    return found


def _r_uses(text: str) -> dict[str, str]:
    code = "\n".join(line.split("#", 1)[0] for line in text.split("\n"))
    found = {m["name"] for m in _R_LIBRARY.finditer(code)}
    found |= {m["name"] for m in _R_NAMESPACE.finditer(code)}
    return {name.lower(): "loads" for name in found}


# Parts of a library that are a library of their own (``unittest.mock`` is ``mock``).
_OWN_PARTS = {"unittest.mock": "mock"}


def _top(dotted: str) -> str:
    for part, name in _OWN_PARTS.items():
        if dotted == part or dotted.startswith(part + "."):
            return name
    return dotted.split(".", 1)[0]
