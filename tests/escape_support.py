"""Reading the escaped forms back, and the text an attacker would try (SPEC §7)."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import strategies as st

_ENTITY = re.compile(r"&(?:#x([0-9A-F]+)|#35|lt|gt|amp);")
_NAMED = {"&#35;": "#", "&lt;": "<", "&gt;": ">", "&amp;": "&"}


def decode_request(text: str) -> str:
    """The inverse of the request form (entities back to characters)."""
    return _ENTITY.sub(lambda m: chr(int(m[1], 16)) if m[1] else _NAMED[m[0]], text)


def hidden(text: str) -> list[str]:
    """Control and format characters other than newline and tab."""
    return [c for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf")]


# Text an attacker would try: tags, headers, look-alikes, every kind of space and
# line break, invisible characters, escape sequences, plus arbitrary Unicode.
_PIECES = [
    "<",
    ">",
    "#",
    "##",
    "&",
    "/",
    ";",
    "relevant_memories",
    "tool_output",
    " ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x85",
    "\u2028",
    "\u2029",
    "\x00",
    "\x1b",
    "\x1b]52;c;aGk=\x07",
    "\x1b[2K",
    "\x9b",
    "\u202e",
    "\u200b",
    "\ufeff",
    "\u00a0",
    "\u3000",
    "\u3164",
    "\u2800",
    "\ufe0f",
    "\U000e0041",
    "\uff1c",
    "\uff1e",
    "\ufe64",
    "\ufe65",
    "\uff03",
    "\ufe5f",
    "\u2039",
    "\u203a",
    "\u2329",
    "\u232a",
    "\u3008",
    "\u3009",
    "\u27e8",
    "\u27e9",
    "\u226e",
    "\U000e003c",
    "&#35;",
    "&lt;",
    "\ud800",
]
adversarial_text = st.lists(
    st.one_of(st.sampled_from(_PIECES), st.text(max_size=3)), max_size=40
).map("".join)


# Angle brackets and quotation marks a reader may take for '<' or '>' (not NFKC-related).
LOOKALIKE_BRACKETS = (
    "\u00ab\u00bb\u2039\u203a\u2329\u232a\u3008\u3009\u300a\u300b\u27e8\u27e9\u276e\u276f"
    "\u1438\u1433"
)


def folded(text: str) -> str:
    """What a lenient reader sees: NFKC folding, invisible characters dropped."""
    return "".join(
        c
        for c in unicodedata.normalize("NFKC", text)
        if unicodedata.category(c) not in ("Cc", "Cf", "Mn") or c in "\n\t"
    )


_BLANKS = "\u115f\u1160\u3164\uffa0\u2800"


def header_lines(text: str) -> list[str]:
    """Lines a lenient reader could take for a Markdown header (after folding)."""
    return [
        line
        for line in folded(text).splitlines()
        if line.lstrip().lstrip(_BLANKS).lstrip().startswith("#")
    ]
