"""The one escaping of untrusted text (SPEC §7): for a model request and for a terminal.

Untrusted text -- record descriptions and bodies, tool output quoted to the extractor,
anything the CLI prints -- goes through :func:`escape` before it leaves the package.

``"terminal"``: every control or format character (Unicode categories Cc and Cf, plus
lone surrogates and the line/paragraph separators U+2028/U+2029) except ``\\n`` and
``\\t`` becomes a visible ``\\uXXXX`` (astral ones as a surrogate pair, ``\\udb40\\udc41``),
so no escape sequence reaches the terminal: no OSC-52 clipboard write, no line erase,
no bidi reordering, no invisible tag characters. The form is JSON's own escape, so a
JSON document passed through it still parses to the same data (the CLI escapes its
whole output in one place, ``--json`` included).

``"request"``: the same characters become ``&#xHHHH;`` and, so that no text can close
or forge a tag or a ``## `` header of ours (the ``<relevant_memories>`` block, the
extractor's ``<tool_output>`` quotes):

* ``&``, ``<``, ``>`` become ``&amp;``, ``&lt;``, ``&gt;``;
* every look-alike of ``<``, ``>`` or ``#`` becomes ``&#xHHHH;``: a character whose
  compatibility decomposition (NFKD, which is what NFKC folding starts from) holds one
  of them (fullwidth, small and tag forms, ``≮``) and the angle brackets and quotation
  marks that look like them (:data:`_LOOKALIKES`, e.g. U+2039/203A, U+2329/232A,
  U+3008/3009, U+27E8/27E9, guillemets, Canadian syllabics PA/PO);
* an ASCII ``#`` in the run that opens a line (after ``\\n`` or after any other line
  break, escaped) -- white space of any kind, escaped characters, blank-looking fillers
  and other ``#`` -- becomes ``&#35;``, so no line of the text reads as a header.

Both forms write a CRLF pair as ``\\n``; after escaping, the only line break is
``\\n``. Otherwise decoding the escapes gives the original text back; a model reads the
entities as the characters they stand for.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal, Protocol, TextIO

__all__ = ["EscapeTarget", "TerminalWriter", "TextSink", "counted", "escape"]

EscapeTarget = Literal["request", "terminal"]

# Categories never shown raw: control, format, surrogate, line and paragraph separator.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_KEPT = frozenset({"\n", "\t"})

# Look-alikes of '<' and '>' that no Unicode decomposition relates to them (from the
# Unicode confusables data and the angle-bracket/quotation-mark blocks), and of '#'.
_LOOKALIKES = frozenset(
    "\u00ab\u00bb"  # double angle quotation marks (guillemets)
    "\u02c2\u02c3\u02f1\u02f2"  # modifier letter left/right arrowheads
    "\u1433\u1438"  # Canadian syllabics po, pa
    "\u16b2"  # runic kauna
    "\u2039\u203a"  # single angle quotation marks
    "\u2329\u232a"  # left/right-pointing angle brackets
    "\u226a\u226b\u22d6\u22d7\u22d8\u22d9"  # much / with dot / very much less/greater
    "\u276c\u276d\u276e\u276f\u2770\u2771"  # angle bracket and quotation ornaments
    "\u27e8\u27e9\u27ea\u27eb"  # mathematical (double) angle brackets
    "\u2991\u2992\u2993\u2994\u2995\u2996\u29fc\u29fd"  # dotted, arc, curved angle brackets
    "\u2aa1\u2aa2\u2af7\u2af8\u2e16"  # nested less/greater-than, dotted right angle
    "\u3008\u3009\u300a\u300b"  # CJK (double) angle brackets
    "\ufe3d\ufe3e\ufe3f\ufe40"  # their vertical presentation forms
    "\U0001d236\U0001d237\U00016f3f"  # Greek vocal notation, Miao look-alikes
    "\u266f\u2317\u22d5"  # music sharp, viewdata square, equal and parallel: look like '#'
)

# Blank-looking characters that are letters or symbols, not spaces (Hangul fillers,
# the braille blank, combining grapheme joiner, variation selectors): a line opening
# with them still opens with whatever follows.
_BLANKS = "\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5\ufe00-\ufe0f\U000e0100-\U000e01ef"
# Where a line opens after the per-character escaping: at a "\n", or after the entity
# of any other character str.splitlines() breaks at (a reader may still break there).
_LINE_START = "|".join(
    ["^"] + [f"(?<=&#x{ord(c):X};)" for c in "\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"]
)
# The opening run of a line: any white space but the line break, blanks, entities
# (escaped hidden characters and look-alikes) and '#'.
_LINE_OPENING = re.compile(
    rf"(?:{_LINE_START})(?:[^\S\n]|[{_BLANKS}]|&#x[0-9A-F]+;|&#35;|#)+", re.MULTILINE
)


def _is_hidden(char: str) -> bool:
    return char not in _KEPT and unicodedata.category(char) in _HIDDEN_CATEGORIES


def _is_lookalike(char: str) -> bool:
    if char in _LOOKALIKES:
        return True
    folded = unicodedata.normalize("NFKD", char)
    return folded != char and any(c in folded for c in "<>#")


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a surrogate pair, as JSON writes astral characters
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class _Table(dict[int, "int | str"]):
    """A ``str.translate`` table computing each character's escape on first sight."""

    def __init__(self, target: EscapeTarget) -> None:
        super().__init__()
        self.target = target
        if target == "request":
            self.update({ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;"})

    def __missing__(self, code: int) -> int | str:
        char = chr(code)
        value: int | str = code
        if self.target == "terminal":
            if _is_hidden(char):
                value = _json_escape(char)
        elif _is_hidden(char) or _is_lookalike(char):
            value = f"&#x{code:X};"
        self[code] = value
        return value


_TABLES: dict[str, _Table] = {"request": _Table("request"), "terminal": _Table("terminal")}


_BARE_HASH = re.compile(r"(?<!&)#")  # entities are the only '&#' left after escaping


def _escape_opening_hashes(match: re.Match[str]) -> str:
    return _BARE_HASH.sub("&#35;", match.group(0))


def escape(text: str, target: EscapeTarget) -> str:
    """``text`` made safe for ``target`` (see the module docstring for both forms)."""
    # A CRLF pair is one line break: written as "\n", never as a visible "\r".
    escaped = text.replace("\r\n", "\n").translate(_TABLES[target])
    if target == "request" and "#" in escaped:
        escaped = _LINE_OPENING.sub(_escape_opening_hashes, escaped)
    return escaped


class TextSink(Protocol):
    """Anything text is written to (a stream, a :class:`TerminalWriter`)."""

    def write(self, text: str, /) -> int: ...


class TerminalWriter:
    """A text stream whose every write is escaped for a terminal: the one point where
    a program's text output (the CLI's, ``--json`` included) is made safe to print."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str, /) -> int:
        return self.stream.write(escape(text, "terminal"))

    def flush(self) -> None:
        self.stream.flush()


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``n word`` in the number it needs: ``1 record``, ``2 records`` (``plural`` when
    the word does not just take an ``s``)."""
    return f"{n} {word if n == 1 else plural or word + 's'}"
