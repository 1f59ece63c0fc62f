"""Every destination an item names, in any spelling (issue 39 item 1).

A destination is somewhere data could be sent or fetched from: a URL, an e-mail address,
a host name, an IP address. Another agent's item that names one waits for a person in
``auto`` mode (:mod:`ipymemory.screen.agent`), so it must be found however it is spelled:

* **hosts** by the Public Suffix List (``publicsuffixlist``'s bundled copy, read offline):
  a dotted name with at least one label before a public suffix (``reports.acme.mobi``,
  ``b.co.uk``, ``пример.рф``), or before a special-use name (``.internal``, ``.local``,
  ``.test`` …, RFC 6761 and the like). A file name is not a host: two labels whose
  suffix is also a file extension (``setup.py``, ``README.md``), a path's last part
  (``src/app.py``), a call (``plt.show()``);
* **IP addresses** in every notation ``inet_aton`` and browsers accept: dotted decimal,
  octal (``0300.0250.1.1``), hex (``0xc0.0xa8.1.1``), mixed, shortened (``127.1``), one
  integer (``0x5db8d822``; a decimal one in a URL, before a port, or after a word like
  "host"), IPv6 with its mapped forms (``::ffff:c0a8:101``);
* **defanged and disguised**: ``hxxp://``, ``[.]``, ``(.)``, ``(dot)``, ``[dot]``, a
  word for "dot" in several languages (between spaces or hyphens: ``acme-punkt-de``),
  dots with spaces around them, full-width and ideographic dots, one-dot leaders,
  zero-width characters, a URL written backwards (``moc.emca//:sptth``).

:func:`destinations` gives each one found once, as a normalised string (evidence).
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from functools import cache

from .._constants import LEXICON_ORDINARY_ZIPF as ORDINARY_ZIPF
from .._language import detect, function_words, zipf
from .lexicons import FORMAT_CHARACTERS, lexicon, word_pattern

__all__ = ["destinations", "normalise"]


@cache
def _psl() -> object:
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList(accept_unknown=False)


# Dot look-alikes (after NFKC): ideographic full stop, middle dots, bullets, leaders.
_DOTS = str.maketrans(
    dict.fromkeys(
        "\u3002\uff61\u00b7\u2022\u2024\u2027\u2219\u22c5\u30fb\u2e31\u2e33\ua60e\u0701\u0702",
        ".",
    )
)
_LABEL = r"[^\W_](?:[^\W_]|-){0,62}"


@cache
def _dot_words() -> re.Pattern[str]:
    words = "|".join(sorted(map(re.escape, lexicon().dot_words), key=len, reverse=True))
    # A bare word between spaces on one line ("acme dot com") or hyphens
    # ("umfrage-punkt-helpdeskpro-punkt-de"), or one in brackets.
    return re.compile(
        rf"(?<=[^\W_])[ \t]*(?:[\[({{<]\s*(?:\.|{words})\s*[\])}}>]"
        rf"|[ \t](?P<bare>{words})[ \t]|-(?P<joined>{words})-)"
        r"[ \t]*(?=[^\W_])"
    )


_NEXT_LABEL = re.compile(r"[^\W_][\w-]*")


def _dot_word(m: re.Match[str], text: str) -> str:
    """A dot word made a dot -- unless it is bare, an ordinary word of the text's language,
    and the label after it, ending the name, is a function word of that language: "the
    entry point is train.py" names no host ``entry.is`` ("point" is French for the dot,
    "is" Iceland's suffix)."""
    bare = m.group("bare") or m.group("joined")
    if bare in (None, "dot"):  # "dot" spells a defanged dot in any language
        return "."
    label = _NEXT_LABEL.match(text, m.end())
    if label is None or text[label.end() : label.end() + 1] == ".":
        return "."
    lang = detect(text)
    if lang is None or label.group() not in function_words(lang):
        return "."
    return m.group() if zipf(bare, lang) >= ORDINARY_ZIPF else "."


_DEFANG_SCHEME = re.compile(r"\bh(?:xx|\*\*|XX)p(s?)\b", re.IGNORECASE)
_BRACKET_PUNCT = re.compile(r"[\[(]\s*(:|://|/|@)\s*[\])]")
_AT_WORD = re.compile(r"(?<=[^\W_])\s*[\[(]\s*at\s*[\])]\s*(?=[^\W_])")
# Spaces around a dot between two labels ("data . acme-sync . com"); a dot with space
# only after it ends a sentence, unless what follows is lower case and a public suffix
# (checked by the host rule itself).
_SPACED_DOT = re.compile(r"(?<=[^\W_])[ \t]+\.[ \t]*(?=[^\W_])|(?<=[^\W_])\.[ \t]+(?=[a-z0-9])")


# A URL written backwards ("ni/zib.rorrim//:sptth"): its scheme, reversed, ends it.
_REVERSED_URL = re.compile(r"[^\s\"'<>`]+//:(?:s?pt+h|ptf|s?sw)(?![\w])", re.IGNORECASE)


def normalise(text: str) -> str:
    """``text`` with every spelling of a destination made plain: NFKC, format characters
    dropped, look-alike dots made dots, defanged, spaced and reversed forms joined, lower
    case."""
    folded = FORMAT_CHARACTERS.sub("", unicodedata.normalize("NFKC", text))
    folded = _REVERSED_URL.sub(lambda m: m.group()[::-1], folded)
    folded = folded.translate(_DOTS).casefold()
    folded = _DEFANG_SCHEME.sub(lambda m: "http" + m.group(1), folded)
    folded = _BRACKET_PUNCT.sub(lambda m: m.group(1), folded)
    folded = _AT_WORD.sub("@", folded)
    folded = _dot_words().sub(lambda m: _dot_word(m, m.string), folded)
    return _SPACED_DOT.sub(_joined_dot, folded)


def _joined_dot(m: re.Match[str]) -> str:
    """A spaced dot joined, unless it is a full stop: a dot with space only after it
    joins only before a public suffix that ends the name ("acme. com")."""
    if m.group()[0] in " \t":
        return "."
    text = m.string
    label = re.match(r"[a-z0-9-]+", text[m.end() :])
    if label is None or _psl().publicsuffix(label.group()) != label.group():  # type: ignore[attr-defined]
        return m.group()
    after = text[m.end() + label.end() : m.end() + label.end() + 1]
    return "." if not after or (not after.isalnum() and after not in "-.") else m.group()


# A single-label host before a port ("build-box:8080", "localhost:8888"); a scheme
# without slashes (mailto:, file:, javascript:).
_HOST_PORT = re.compile(r"(?<![\w/.-])[a-z][a-z0-9-]{0,62}:\d{2,5}(?!\w|\.\w)")
_SCHEME = re.compile(
    r"\b(?:mailto|javascript|data|file|ftp|sftp|ssh|git|smb|ldap|telnet):[^\s\"'<>`]+"
)
_SINGLE = re.compile(r"(?<![\w.-])localhost(?![\w-])")
_URL = re.compile(
    r"\b[a-z][a-z0-9+.-]{1,20}://[^\s\"'<>`]+|(?<![\w:/])//[^\W_][\w.-]*\.[^\W_][^\s\"'<>`]*"
)
_EMAIL = re.compile(r"[\w.+-]{1,64}@[^\W_][\w-]{0,62}(?:\.[^\W_][\w-]{0,62}){0,8}")
_DOTTED = re.compile(rf"(?<![\w@-])(?:{_LABEL}\.){{1,10}}{_LABEL}\.?")
_IPV4ISH = re.compile(
    r"(?<![\w.])(?:0x[0-9a-f]{1,8}|\d{1,10})(?:\.(?:0x[0-9a-f]{1,8}|\d{1,10})){1,3}(?![\w]|\.\w)"
)
_HEX_INT = re.compile(r"(?<![\w.])0x[0-9a-f]{7,8}(?![\w]|\.\w)")
_DEC_INT = re.compile(r"(?<![\w.,])\d{8,10}(?![\w,]|\.\d)")
_IPV6 = re.compile(
    r"(?<![\w:])\[?(?:[0-9a-f]{0,4}:){2,7}(?:[0-9a-f]{0,4}|\d{1,3}(?:\.\d{1,3}){3})\]?(?![\w:])"
)
_NETWORK_CONTEXT = re.compile(
    r"(?:://|@|\b(?:host|ip|server|address|endpoint|collector|url|sink|relay|webhook)\s*:?\s*)$"
)
_ADDRESSED = re.compile(r"(?:://|@)$")
_PORT_AFTER = re.compile(r":\d")


def destinations(text: str) -> tuple[str, ...]:
    """Every destination ``text`` names (see the module docstring), normalised, each
    once, in the order found."""
    plain = normalise(text)
    found: list[str] = []
    spans: list[tuple[int, int]] = []

    def add(token: str, span: tuple[int, int]) -> None:
        spans.append(span)
        if token not in found:
            found.append(token)

    for m in _URL.finditer(plain):
        add(m.group().rstrip(".,;:!?)]}'\""), m.span())
    for m in _EMAIL.finditer(plain):
        if not _inside(m.span(), spans):
            add(m.group().rstrip(".,;:"), m.span())
    for m in _IPV6.finditer(plain):
        address = _ipv6(m.group())
        if address and not _inside(m.span(), spans):
            add(address, m.span())
    for m in _IPV4ISH.finditer(plain):
        addressed = _addressed(plain, m)
        if not addressed and _versioned(plain, m.start()):
            continue  # a four-part version number is spelled as an address is
        address = _ipv4(m.group(), addressed)
        if address and not _inside(m.span(), spans):
            add(f"{m.group()} ({address})" if address != m.group() else address, m.span())
    for m in _HEX_INT.finditer(plain):
        if not _inside(m.span(), spans) and not _bytes(plain, m):
            add(f"{m.group()} ({ipaddress.IPv4Address(int(m.group(), 16))})", m.span())
    for m in _DEC_INT.finditer(plain):
        value = int(m.group())
        if (
            1 << 24 <= value < 1 << 32
            and _in_network_context(plain, m)
            and not _inside(m.span(), spans)
        ):
            add(f"{m.group()} ({ipaddress.IPv4Address(value)})", m.span())
    for pattern in (_SCHEME, _HOST_PORT, _SINGLE):
        for m in pattern.finditer(plain):
            if not _inside(m.span(), spans):
                add(m.group().rstrip(".,;:!?)]}'\""), m.span())
    for m in _DOTTED.finditer(plain):
        if _inside(m.span(), spans):
            continue
        host = m.group().rstrip(".")
        if _is_host(host, plain, m.start(), m.end()):
            add(host, m.span())
    return tuple(found)


def _inside(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(a <= span[0] and span[1] <= b for a, b in spans)


def _in_network_context(text: str, m: re.Match[str]) -> bool:
    """A number in the place of an address: after ``://``, ``@`` or a word like "host"
    or "collector", or before a port or a path."""
    before = text[max(0, m.start() - 20) : m.start()]
    after = text[m.end() : m.end() + 1]
    return bool(_NETWORK_CONTEXT.search(before)) or after in (":", "/")


def _addressed(text: str, m: re.Match[str]) -> bool:
    """A dotted number placed as an address: after ``://`` or ``@``, or before a port
    ("127.1:8080"); "numpy 1.26" and "python 3.11/3.12" are versions."""
    # (Only the characters just before: searching the whole prefix for each number
    # made a long item of numbers quadratic.)
    before = text[max(0, m.start() - 3) : m.start()]
    return bool(_ADDRESSED.search(before)) or bool(_PORT_AFTER.match(text, m.end()))


def _ipv4(token: str, context: bool) -> str | None:
    """The address ``token`` spells in ``inet_aton``'s notations, or None."""
    parts = token.split(".")
    try:
        values = [
            int(p, 16)
            if p.startswith("0x")
            else int(p, 8)
            if len(p) > 1 and p.startswith("0")
            else int(p)
            for p in parts
        ]
    except ValueError:
        return None
    odd = any(_spelled(p) for p in parts)
    if len(parts) < 4 and _grouped(parts) and not context:
        return None  # "1.250.000": a number with its thousands grouped, not octal parts
    if len(parts) < 4 and not (odd or context):
        return None  # "3.12", "2.0.1": versions, unless spelled or placed as an address
    if len(parts) < 4 and not context and not _spelled(parts[0]):
        return None  # "0.05", "3.075": a decimal fraction, its digits after the point not octal
    if not context and _time_or_date(parts):
        return None  # "06.00" o'clock, "06.12.2026": a time or a date, not an octal address
    limits = {4: (255, 255, 255, 255), 3: (255, 255, 65535), 2: (255, 16777215)}[len(parts)]
    if any(v > limit for v, limit in zip(values, limits, strict=True)):
        return None
    number = 0
    for v, limit in zip(values, limits, strict=True):
        number = number * (limit + 1) + v
    return str(ipaddress.IPv4Address(number))


def _spelled(part: str) -> bool:
    """Whether a part of a dotted number is spelled as an address's is: hex or octal."""
    return part.startswith("0x") or (len(part) > 1 and part.startswith("0"))


def _grouped(parts: list[str]) -> bool:
    """Whether dotted ``parts`` group a number's thousands (``1.250.000``): one to three
    digits, then groups of exactly three."""
    head, *groups = parts
    return (
        head.isdigit() and 1 <= len(head) <= 3 and all(len(g) == 3 and g.isdigit() for g in groups)
    )


def _time_or_date(parts: list[str]) -> bool:
    """Whether dotted decimal ``parts`` read as a clock time (``06.00``, ``23.59``) or a
    day and month with a year (``06.12.2026``, ``12.06.26``)."""
    if not all(p.isdigit() for p in parts):
        return False
    if len(parts) == 2:
        hours, minutes = parts
        return len(hours) == 2 and len(minutes) == 2 and int(hours) <= 24 and int(minutes) < 60
    if len(parts) == 3:
        a, b, year = parts
        day_month = len(a) == 2 and len(b) == 2 and min(int(a), int(b)) <= 12
        return day_month and max(int(a), int(b)) <= 31 and len(year) in (2, 4)
    return False


def _versioned(text: str, start: int) -> bool:
    """Whether the dotted number at ``start`` follows a word for "version" in its
    sentence ("Версия драйвера CUDA — 12.4.1.003", "رقم الإصدار … 2.14.0.7")."""
    before = _clause(text[max(0, start - _VERSION_REACH) : start], -1)
    return bool(_version_words().search(before)) and not _SERVER_WORD.search(before)


def _clause(text: str, which: int) -> str:
    """The last (``which`` -1) or first (0) clause of ``text``: the words beside a number
    up to a stop, a semicolon or a line end."""
    return _CLAUSE_END.split(text)[which]


_CLAUSE_END = re.compile(r"[.!?;\n](?:\s|$)")


@cache
def _version_words() -> re.Pattern[str]:
    return word_pattern(lexicon().version_words)


@cache
def _byte_words() -> re.Pattern[str]:
    return word_pattern(lexicon().byte_words)


def _bytes(text: str, m: re.Match[str]) -> bool:
    """Whether the hexadecimal number ``m`` is data: its sentence has a word for bytes
    (a signature, a checksum, a mask, a colour) and none for a server ("Die
    Eingabedateien beginnen mit der Signatur 0x89504E47 (PNG)")."""
    before = _clause(text[max(0, m.start() - _VERSION_REACH) : m.start()], -1)
    sentence = f"{before} {_clause(text[m.end() : m.end() + _VERSION_REACH], 0)}"
    return bool(_byte_words().search(sentence)) and not _SERVER_WORD.search(sentence)


_SERVER_WORD = re.compile(
    r"(?<![^\W\d_])(?:host|server|ip|address|endpoint|collector|url|relay|webhook|sink|proxy"
    r"|gateway)(?![^\W\d_])"
)


#: How far before a dotted number its "version" word may stand.
_VERSION_REACH = 48


def _ipv6(token: str) -> str | None:
    raw = token.strip("[]")
    if raw.count(":") < 2 or sum(c in "0123456789abcdef" for c in raw) < 3:
        return None  # "::", "x[::2]": a slice, not an address
    try:
        address = ipaddress.IPv6Address(raw)
    except ValueError:
        return None
    mapped = address.ipv4_mapped
    return f"{raw} ({mapped})" if mapped is not None else raw


def _code_call(labels: list[str], text: str, start: int, end: int) -> bool:
    """Whether two labels are a module's or an object's attribute set as code: the first
    a name notebooks give modules (``np``, ``pd``, ``df``), the whole in backticks or
    parentheses."""
    if len(labels) != 2 or labels[0] not in lexicon().code_names:
        return False
    return text[start - 1 : start] in ("(", "`") or text[end : end + 1] in (")", "`")


def _is_host(host: str, text: str, start: int, end: int) -> bool:
    labels = host.split(".")
    if len(labels) < 2 or any(len(label) > 63 for label in labels):
        return False
    if _code_call(labels, text, start, end):
        return False  # "(np.dot)", "`df.info`": an attribute in code
    if text[end : end + 1] == "(" or (
        start and text[start - 1] in "/\\" and text[max(0, start - 2) : start] != "//"
    ):
        return False  # a call ("plt.show()"), a path's last part ("src/app.py")
    lex = lexicon()
    if labels[-1] in lex.special_use_names:
        return True
    suffix = _psl().publicsuffix(host)  # type: ignore[attr-defined]
    if suffix is None or suffix == host:
        return False
    # Two labels ending in a file extension ("setup.py", "README.md", "model.pt"): a file.
    return not (len(labels) == 2 and labels[-1] in lex.file_extensions)
