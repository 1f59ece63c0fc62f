"""The agent screen's lexicons: data (``lexicons.yaml`` beside this file) and matching.

The YAML file says, per concept and language, the words that name the concept (see its
header for how an entry matches), and the other word lists of the agent screen (words
for "dot", "version" and bytes, names code gives modules, units that are also
credentials, special-use host names, file extensions that are also top-level domains,
programs). :func:`lexicon` loads and compiles it once; :func:`fold` is the folding text
and entries share; :meth:`Lexicon.find` gives the matches of one concept in folded text;
:func:`word_pattern` makes a word list one expression.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from importlib import resources
from typing import Any

import yaml

__all__ = ["Lexicon", "fold", "lexicon", "word_pattern"]

_DATA = "lexicons.yaml"
_COMBINING = re.compile("[\u0300-\u036f\u064b-\u065f\u0670\u0640]")
_TURKISH_I = str.maketrans({"\u0131": "i", "\u0307": None})  # dotless i; combining dot
_EAST = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]")
_ARABIC = re.compile("[\u0600-\u06ff]")
_ARABIC_PROCLITICS = "(?:[وف]?[بلك]?(?:ال)?)"
_SEPARATOR = r"[\s_\-'\u2019]*"
# Format characters (Unicode Cf: zero-width, bidi marks, tags), dropped before matching
# (tests/test_screen_agent.py checks this holds every Cf character Python knows).
FORMAT_CHARACTERS = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f]"
)


def fold(text: str) -> str:
    """``text`` as the lexicons are matched against it: NFKC, format characters dropped,
    lower case, accents and Arabic vowel marks dropped (``é`` is ``e``, Cyrillic yo is ye),
    Turkish dotless i made i, every white-space run one space."""
    text = FORMAT_CHARACTERS.sub("", unicodedata.normalize("NFKC", text)).casefold()
    text = _COMBINING.sub("", unicodedata.normalize("NFKD", text)).translate(_TURKISH_I)
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text))


_LETTERS = r"[^\W\d_]*"


def _atoms(entry: str) -> tuple[bool, list[str]]:
    """(whether the entry matches anywhere -- an East Asian one --, its pattern as atoms:
    one escaped character each, and the letters a stem may go on with, the separator
    between words, the end of a whole word, Arabic proclitics)."""
    whole = entry.endswith("$")
    words = fold(entry.rstrip("$")).split()
    if not words:
        raise ValueError(f"{_DATA}: an empty entry")
    east = bool(_EAST.match(words[0]))
    atoms: list[str] = []
    if not east and _ARABIC.match(words[0]):
        atoms.append(_ARABIC_PROCLITICS)
    for i, word in enumerate(words):
        if i:
            atoms.append(_SEPARATOR)
        atoms.extend(re.escape(c) for c in word)
        last = i == len(words) - 1
        if not east and not (last and whole):
            atoms.append(_LETTERS)
    if whole and not east:
        atoms.append(r"(?![^\W\d_])")
    return east, atoms


@dataclass(frozen=True)
class _Entry:
    """One entry of one concept: its pattern, compiled on first use."""

    concept: str
    source: str

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.source)


#: An entry is looked up by the first characters of its first word.
_KEY = 3
# A word starts after anything but a letter or digit: "AWS_SECRET_ACCESS_KEY" holds "secret".
_WORD_START = re.compile(r"(?<![^\W_])[^\W_]|(?<![\w.])\.\w")


@dataclass(frozen=True, eq=False)  # (hashed by identity: one per process)
class Lexicon:
    """The lexicons, indexed (see the module docstring).

    Matching never builds one large expression: at each word start of the text, the
    entries whose first characters are the text's there are tried (their small patterns
    compiled on first use); East Asian entries at each East Asian character. So loading
    costs the YAML's parsing, and a text only what its own words call for."""

    languages: frozenset[str]
    spaced: dict[str, tuple[_Entry, ...]]  # first characters -> entries at a word start
    east: dict[str, tuple[_Entry, ...]]  # first character -> entries anywhere
    exceptions: frozenset[str]  # the concepts "except:<concept>"
    dot_words: tuple[str, ...]
    version_words: tuple[str, ...]
    byte_words: tuple[str, ...]
    code_names: frozenset[str]
    counted_words: frozenset[str]
    token_senses: tuple[str, ...]
    special_use_names: frozenset[str]
    file_extensions: frozenset[str]
    any_argument: frozenset[str]
    needs_argument: frozenset[str]
    subcommands: frozenset[str]

    def find(self, concept: str, folded: str) -> list[re.Match[str]]:
        """The matches of ``concept`` in ``folded`` text (:func:`fold`), less those
        inside one of its exceptions, in order."""
        found = _scan(self, folded)
        matches = found.get(concept, [])
        if not matches or f"except:{concept}" not in found:
            return matches
        spans = [m.span() for m in found[f"except:{concept}"]]
        return [m for m in matches if not any(a <= m.start() and m.end() <= b for a, b in spans)]


@lru_cache(maxsize=64)
def _scan(lex: Lexicon, folded: str) -> dict[str, list[re.Match[str]]]:
    """Every concept's matches in ``folded`` (one pass; the same text is scanned once)."""
    out: dict[str, list[re.Match[str]]] = {}
    seen: set[tuple[str, int]] = set()

    def attempt(entries: tuple[_Entry, ...], at: int) -> None:
        for entry in entries:
            if (entry.concept, at) in seen:
                continue
            m = entry.pattern.match(folded, at)
            if m is not None:
                seen.add((entry.concept, at))
                out.setdefault(entry.concept, []).append(m)

    for start in _WORD_START.finditer(folded):
        at = start.start()
        ahead = folded[at : at + _KEY + _PROCLITIC_LETTERS]
        for n in range(1, _KEY + 1):
            attempt(lex.spaced.get(ahead[:n], ()), at)
        if _ARABIC.match(ahead):  # "والمفتاح": the entry's word after its proclitics
            for skip in range(1, _PROCLITIC_LETTERS + 1):
                for n in range(1, _KEY + 1):
                    attempt(lex.spaced.get(ahead[skip : skip + n], ()), at)
    if lex.east:
        for m in _EAST.finditer(folded):
            attempt(lex.east.get(m.group(), ()), m.start())
    for matches in out.values():
        matches.sort(key=lambda m: m.start())
    return out


#: The most letters Arabic proclitics take before a word (wa- + bi- + al-).
_PROCLITIC_LETTERS = 4


def _index(
    concepts: dict[str, list[str]],
) -> tuple[dict[str, tuple[_Entry, ...]], dict[str, tuple[_Entry, ...]]]:
    spaced: dict[str, list[_Entry]] = {}
    east: dict[str, list[_Entry]] = {}
    for concept, entries in concepts.items():
        for entry in dict.fromkeys(str(e) for e in entries):
            anywhere, atoms = _atoms(entry)
            first = fold(entry.rstrip("$")).split()[0]
            item = _Entry(concept, "".join(atoms))
            if anywhere:
                east.setdefault(first[0], []).append(item)
            else:
                spaced.setdefault(first[:_KEY], []).append(item)
    return (
        {k: tuple(v) for k, v in spaced.items()},
        {k: tuple(v) for k, v in east.items()},
    )


@cache
def lexicon() -> Lexicon:
    """The lexicons of ``lexicons.yaml``, loaded and compiled once."""
    text = resources.files(__package__).joinpath(_DATA).read_text("utf-8")
    # libyaml's loader when built with it: a twentieth of the pure-Python parser's time.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    raw: dict[str, Any] = yaml.load(text, Loader=loader)
    languages = frozenset(raw["languages"])
    concepts: dict[str, list[str]] = {}
    for name, by_language in raw["concepts"].items():
        missing = languages - set(by_language)
        if missing:
            raise ValueError(f"{_DATA}: concept {name!r} lacks {', '.join(sorted(missing))}")
        concepts[name] = [e for entries in by_language.values() for e in entries]
    exceptions = {f"except:{k}": v for k, v in raw.get("exceptions", {}).items()}
    spaced, east = _index({**concepts, **exceptions})
    programs = raw["programs"]
    return Lexicon(
        languages=languages,
        spaced=spaced,
        east=east,
        exceptions=frozenset(exceptions),
        dot_words=tuple(fold(w) for w in raw["dot_words"]),
        version_words=tuple(w.casefold() for w in raw["version_words"]),
        byte_words=tuple(w.casefold() for w in raw["byte_words"]),
        code_names=frozenset(raw["code_names"]),
        counted_words=frozenset(fold(w) for w in raw["counted_words"]),
        token_senses=tuple(fold(w) for w in raw["token_senses"]),
        special_use_names=frozenset(raw["special_use_names"]),
        file_extensions=frozenset(raw["file_extensions"]),
        any_argument=frozenset(programs["any"]),
        needs_argument=frozenset(programs["needs_argument"]),
        subcommands=frozenset(programs["subcommands"]),
    )


def word_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """``words`` as one expression: a word of a script written with spaces matches at a
    word's start, one of Japanese, Chinese or Korean anywhere ("モデルのバージョン")."""
    east = [re.escape(w) for w in words if _EAST.match(w)]
    spaced = [re.escape(w) for w in words if not _EAST.match(w)]
    parts = [rf"(?<![^\W\d_])(?:{'|'.join(spaced)})"] if spaced else []
    if east:
        parts.append("|".join(east))
    return re.compile("|".join(parts))
