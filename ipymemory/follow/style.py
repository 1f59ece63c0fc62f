"""Style asks an answer can be checked against exactly (SPEC §14): emojis, type hints,
indentation, the case of SQL keywords.

Each check returns ``(verdict, reason)`` -- ``contradicts`` on a breach, ``follows``
when the answer keeps it, ``untouched`` when the answer has nothing it applies to (no
function to annotate, no indented line, no SQL) -- or None when it cannot tell (Python
that does not parse).

* **emoji**: any emoji anywhere in the answer, code and commit messages included (text
  symbols such as ✓ and ✗ are not emojis);
* **type hints**: every function a Python block defines annotates each parameter
  (``self``/``cls`` of a method excepted) and its return (``__init__`` excepted);
* **tabs / spaces**: the indented lines of the Python blocks;
* **SQL keywords**: the keywords of ``sql`` blocks and of SQL text in Python strings,
  outside quotes and comments.
"""

from __future__ import annotations

import ast
import re

from .answer import ReadAnswer
from .answer import python_source as _python_source

__all__ = ["check_style", "find_emoji"]

Outcome = tuple[str, str]

SHORT_WORDS = 60  # prose words of an answer that is short by any measure
SHORT_CODE_LINES = 15
_TEXT_SYMBOLS = frozenset("\u2713\u2714\u2715\u2716\u2717\u2718\u2022\u2605\u2606")
_SQL = re.compile(r"^\s*(?:select|insert|update|delete|with|create|alter|drop)\b", re.I)
_SQL_WORDS = frozenset(
    [
        "select",
        "from",
        "where",
        "join",
        "left",
        "right",
        "inner",
        "outer",
        "full",
        "cross",
        "on",
        "group",
        "by",
        "order",
        "having",
        "limit",
        "offset",
        "insert",
        "into",
        "values",
        "update",
        "set",
        "delete",
        "as",
        "and",
        "or",
        "not",
        "null",
        "is",
        "in",
        "union",
        "all",
        "with",
        "create",
        "table",
        "distinct",
        "case",
        "when",
        "then",
        "else",
        "end",
        "between",
        "like",
        "exists",
    ]
)
_QUOTED = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|--[^\n]*|/\*.*?\*/", re.S)


def find_emoji(text: str) -> str | None:
    """The first emoji in ``text``, or None."""
    for ch in text:
        o = ord(ch)
        if ch in _TEXT_SYMBOLS:
            continue
        if (
            0x1F000 <= o <= 0x1FAFF
            or 0x2600 <= o <= 0x27BF
            or o in (0x2B50, 0x2B55, 0x2B05, 0x2B06, 0x2B07, 0x203C, 0x2049, 0x3030, 0x303D)
        ):
            return ch
    return None


def check_style(key: str, polarity: str, answer: str, read: ReadAnswer) -> Outcome | None:
    """The outcome of style ask ``key`` (``banned`` or ``preferred``) for the answer."""
    if key == "emoji":
        found = find_emoji(answer)
        wants = polarity == "preferred"
        if found is not None:
            return ("follows" if wants else "contradicts", f"uses an emoji ({found})")
        return ("contradicts" if wants else "follows", "uses no emoji")
    if key == "type-hints":
        return _hints(read, polarity == "preferred")
    if key in ("tabs", "spaces"):
        wanted = key if polarity == "preferred" else ("spaces" if key == "tabs" else "tabs")
        return _indent(read, wanted)
    if key == "sql-upper":
        return _sql_case(read, upper=polarity == "preferred")
    if key == "short":
        return _short(read) if polarity == "preferred" else None
    if key.startswith("currency-"):
        return _currency(answer, key.removeprefix("currency-"), polarity == "preferred")
    return None


def _short(read: ReadAnswer) -> Outcome | None:
    """Short beyond doubt: a few dozen words of prose, little code, no headings, and
    none of what a short answer leaves out (:data:`_PADDING`: a preamble, a recap, a
    list or a round of alternatives). A longer answer may still be short enough, and
    a short one with a recap may still be fine: those are judgments."""
    words = len(read.prose.split())
    code = sum(len(block.text.splitlines()) for block in read.blocks)
    headed = re.search(r"^\s*#{1,6}\s", read.text, re.M) is not None
    padded = _PADDING.search(read.prose.lower()) or len(_LIST_ITEM.findall(read.text)) >= 2
    if words <= SHORT_WORDS and code <= SHORT_CODE_LINES and not headed and not padded:
        return ("follows", f"is {words} words long")
    return None


# What "short", "direct", "no preamble, no recap, no alternatives" rule out, in the
# languages answers are written in: an opener that praises or agrees, a recap, a round
# of alternatives. Finding one leaves the ask to the side model.
_PADDING = re.compile(
    r"^\W*(?:great|good|excellent|interesting) question\b|^\W*(?:sure|certainly|of course|"
    r"absolutely|happy to help|gute frage|klar|natürlich|gerne|bien sûr|excellente question|"
    r"bonne question|avec plaisir|claro|buena pregunta|por supuesto|好问题|当然)\b|"
    r"\b(?:in summary|to summari[sz]e|to sum up|in short|tl;?dr|in conclusion|"
    r"zusammenfassend|kurz gesagt|fazit|en résumé|en bref|pour résumer|en resumen|"
    r"en conclusión|resumiendo)\b|总之|总结|要するに|まとめ|"
    r"\balternativ\w*|\b(?:other|another) (?:option|way|approach)s?\b|"
    r"\byou (?:could|can|might) also\b|\bor you could\b|\bautres? (?:option|solution)s?\b|"
    r"\botras? opci\w+|\btambién (?:puedes|podrías)\b|\bdu kannst auch\b|"
    r"\bandere (?:möglichkeit|option)\w*|或者|也可以|他の方法"
)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S", re.M)


# An amount shown in a currency: its symbol or code beside a number, or the symbol in
# a label ("Umsatz (€)"). The currency's name in prose is left to the model ("these are
# dollars, not euros" names euros without showing any).
_AMOUNTS = {
    "usd": re.compile(r"(?:US)?\$\s?\d|\d\s?\$|\bUSD\b|\(\s*\$\s*\)|\bUS dollars\b"),
    "eur": re.compile(r"€|\bEUR\b"),
    "gbp": re.compile(r"£|\bGBP\b"),
}


def _currency(answer: str, code: str, wanted: bool) -> Outcome | None:
    pattern = _AMOUNTS.get(code)
    if pattern is None:
        return None
    found = pattern.search(answer)
    others = [c for c, p in _AMOUNTS.items() if c != code and p.search(answer)]
    label = code.upper()
    if wanted:
        if others and not found:
            return ("contradicts", f"shows amounts in {others[0].upper()}, not {label}")
        if found:
            return ("follows", f"shows amounts in {label}")
        return ("untouched", "shows no amount") if not others else None
    if found:
        return ("contradicts", f"shows an amount in {label} ({found.group(0).strip()})")
    return (
        ("follows", f"shows no amount in {label}") if others else ("untouched", "shows no amount")
    )


def _trees(read: ReadAnswer) -> list[ast.Module] | None:
    trees = []
    for source in _python_source(read):
        try:
            trees.append(ast.parse(source))
        except (SyntaxError, ValueError):
            return None
    return trees


def _hints(read: ReadAnswer, wanted: bool) -> Outcome | None:
    trees = _trees(read)
    if trees is None:
        return None
    functions = [
        node
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    if not functions:
        return ("untouched", "defines no function")
    methods = {
        id(item)
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for item in node.body
    }
    for function in functions:
        missing = _unannotated(function, id(function) in methods)
        if missing:
            if wanted:
                return ("contradicts", f"leaves {missing} of `{function.name}` without a type")
            continue
        if not wanted:
            return ("contradicts", f"annotates `{function.name}`")
    if wanted:
        return ("follows", "annotates every function it defines")
    return ("follows", "leaves its functions without type hints")


def _unannotated(function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> str | None:
    args = function.args
    params = [*args.posonlyargs, *args.args]
    if method and params and params[0].arg in ("self", "cls"):
        params = params[1:]
    params += args.kwonlyargs
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    for param in params:
        if param.annotation is None:
            return f"`{param.arg}`"
    if function.returns is None and function.name != "__init__":
        return "the return"
    return None


def _indent(read: ReadAnswer, wanted: str) -> Outcome | None:
    lines = [
        line
        for source in _python_source(read)
        for line in source.split("\n")
        if line.strip() and line[:1] in (" ", "\t")
    ]
    if not lines:
        return ("untouched", "has no indented Python line")
    with_spaces = sum(1 for line in lines if line.startswith(" "))
    with_tabs = len(lines) - with_spaces
    if wanted == "tabs":
        if with_spaces:
            return ("contradicts", "indents with spaces")
        return ("follows", "indents with tabs")
    if with_tabs:
        return ("contradicts", "indents with tabs")
    return ("follows", "indents with spaces")


def _sql_case(read: ReadAnswer, *, upper: bool) -> Outcome | None:
    snippets = [block.text for block in read.blocks if block.lang in ("sql", "postgresql", "mysql")]
    trees = _trees(read)
    if trees is None:
        return None
    for tree in trees:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and _SQL.match(node.value)
            ):
                snippets.append(node.value)
    words = [
        word
        for snippet in snippets
        for word in re.findall(r"[A-Za-z_]+", _QUOTED.sub(" ", snippet))
        if word.lower() in _SQL_WORDS
    ]
    if not words:
        return ("untouched", "has no SQL")
    wrong = [w for w in words if (w != w.upper() if upper else w != w.lower())]
    if wrong:
        case = "lowercase" if upper else "uppercase"
        return ("contradicts", f"writes SQL keywords in {case} ({wrong[0]})")
    return ("follows", f"writes SQL keywords in {'uppercase' if upper else 'lowercase'}")
