"""The agent screen's lexicons: data (``lexicons.yaml`` beside this file) and matching.

The YAML file says, per concept and language, the words that name the concept (see its
header for how an entry matches; the ``adopt_*`` concepts are :mod:`.adoption`'s), and
the other word lists of the agent screen (words
for "dot", "version" and bytes, names code gives modules, units that are also
credentials, special-use host names, file extensions that are also top-level domains,
programs). :func:`lexicon` loads and compiles it once; :func:`fold` is the folding text
and entries share; :meth:`Lexicon.find` gives the matches of one concept in folded text;
:func:`word_pattern` makes a word list one expression.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from importlib import resources
from typing import Any

import yaml

__all__ = ["PER_LANGUAGE", "Lexicon", "fold", "lexicon", "word_pattern"]

_DATA = "lexicons.yaml"
# Accents, Arabic vowel marks and tatweel, Hebrew points and cantillation marks.
_COMBINING = re.compile(
    "[\u0300-\u036f\u064b-\u065f\u0670\u0640\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]"
)
_LETTER_VARIANTS = str.maketrans(
    {
        "\u0131": "i",  # Turkish dotless i
        "\u0307": None,  # combining dot above (Turkish capital I with dot)
        # Persian and Urdu yeh, keheh and heh, and alef maksura, as the Arabic letters:
        # one word typed on an Arabic or a Persian keyboard ("کلید", "كليد").
        "\u06cc": "\u064a",
        "\u0649": "\u064a",
        "\u06a9": "\u0643",
        "\u06c1": "\u0647",
        "\u06d5": "\u0647",
        # Hebrew final letters as the others: a stem goes on past them ("הוסיף", "הוסיפו").
        "\u05da": "\u05db",
        "\u05dd": "\u05de",
        "\u05df": "\u05e0",
        "\u05e3": "\u05e4",
        "\u05e5": "\u05e6",
    }
)
# Scripts whose entries match anywhere (no spaces between words): Thai, kana, Han, Hangul.
_EAST = re.compile(
    "[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]"
)
_ARABIC = re.compile("[\u0600-\u06ff]")
_HEBREW = re.compile("[\u0590-\u05ff]")
# What a word may carry in front, by the language of its entry: Arabic proclitics (wa-,
# fa-, bi-, li-, ka-, al-); Persian verb prefixes (be-, na-, mi-, nemi-); Hebrew ones (ve-,
# she-, kshe-, mi-, be-, le-, ke-, ha-), on every word of a Hebrew entry ("משתני הסביבה",
# "מפתח ה-API"). An entry of no language (an exception) takes its script's.
_PREFIXES = {
    "ar": "(?:[وف]?[بلك]?(?:ال)?)",
    "fa": "(?:ن?مي|[بن])?",
    "he": "(?:ו?(?:כש|ש|מ)?[בלכ]?ה?[-\u05be]?)",  # noqa: RUF001 (Hebrew letters)
}
_SEPARATOR = r"[\s_\-'\u2019\u05be]*"
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
    lower case, accents, Arabic vowel marks and Hebrew points dropped (``é`` is ``e``,
    Cyrillic yo is ye), Turkish dotless i made i, Persian and Urdu letters made their
    Arabic counterparts (``ی`` is ``ي``, ``ک`` is ``ك``), Hebrew final letters made the
    others, every white-space run one space."""
    text = FORMAT_CHARACTERS.sub("", unicodedata.normalize("NFKC", text)).casefold()
    text = _COMBINING.sub("", unicodedata.normalize("NFKD", text)).translate(_LETTER_VARIANTS)
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text))


_LETTERS = r"[^\W\d_]*"
# "*" in an entry: at most one word between its neighbours ("keys of * cloud" is "keys of
# their cloud", "keys of the cloud" and "keys of cloud").
_ANY_WORD = "*"
_ONE_WORD = r"(?:[^\W_]+(?:['\u2019\-][^\W_]+)*\s+)?"


def _atoms(entry: str, lang: str | None = None) -> tuple[bool, list[str]]:
    """(whether the entry matches anywhere -- one in Thai, Japanese, Chinese or Korean --,
    its pattern as atoms: one escaped character each, and the letters a stem may go on
    with, the separator between words, the end of a whole word, the prefixes a word of
    ``lang`` may carry)."""
    whole = entry.endswith("$")
    words = fold(entry.rstrip("$")).split()
    if not words:
        raise ValueError(f"{_DATA}: an empty entry")
    east = bool(_EAST.match(words[0]))
    lang = lang or _script_language(words[0])
    prefix = None if east else _PREFIXES.get(lang)
    if words[0] == _ANY_WORD or words[-1] == _ANY_WORD:
        raise ValueError(f"{_DATA}: {entry!r} starts or ends with {_ANY_WORD!r}")
    atoms: list[str] = []
    for i, word in enumerate(words):
        if word == _ANY_WORD:  # at most one word of any letters, and its space
            if words[i - 1] != _ANY_WORD:
                atoms.append(r"\s+")
            atoms.append(_ONE_WORD)
            continue
        if i and words[i - 1] != _ANY_WORD:
            atoms.append(_SEPARATOR)
        if prefix is not None and (i == 0 or lang == "he"):  # Hebrew: on every word
            atoms.append(prefix)
        atoms.extend(re.escape(c) for c in word)
        last = i == len(words) - 1
        if not east and not (last and whole):
            atoms.append(_LETTERS)
    if whole and not east:
        atoms.append(r"(?![^\W\d_])")
    return east, atoms


def _script_language(word: str) -> str:
    """The language whose prefixes an entry of no language takes: its script's."""
    if _ARABIC.match(word):
        return "ar"
    return "he" if _HEBREW.match(word) else ""


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
    compiled on first use); Thai and East Asian entries at each character of their
    scripts. So loading costs the YAML's parsing, and a text only what its own words
    call for."""

    languages: frozenset[str]
    spaced: dict[str, tuple[_Entry, ...]]  # first characters -> entries at a word start
    east: dict[str, tuple[_Entry, ...]]  # first character -> entries anywhere
    exceptions: frozenset[str]  # the concepts "except:<concept>", "except:<concept>@<lang>"
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

    def find(
        self, concept: str, folded: str, *, languages: Collection[str] = ()
    ) -> list[re.Match[str]]:
        """The matches of ``concept`` in ``folded`` text (:func:`fold`), less those
        inside one of its exceptions -- and of its exceptions in ``languages``, those
        the text is told to be written in --, in order."""
        found = _scan(self, folded)
        matches = found.get(concept, [])
        kinds = [f"except:{concept}", *(f"except:{concept}@{lang}" for lang in languages)]
        spans = [m.span() for kind in kinds for m in found.get(kind, ())]
        if not matches or not spans:
            return matches
        return [m for m in matches if not any(a <= m.start() and m.end() <= b for a, b in spans)]

    def scoped(self, folded: str) -> bool:
        """Whether an exception of one language only matches in ``folded``: only then
        does the text's language matter to :meth:`find`."""
        return any("@" in kind for kind in _scan(self, folded))


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
        if _PREFIXED.match(ahead):  # "والمفتاح", "הסיסמה": the entry's word after prefixes
            for skip in range(1, _PROCLITIC_LETTERS + 1):
                for n in range(1, _KEY + 1):
                    attempt(lex.spaced.get(ahead[skip : skip + n], ()), at)
    if lex.east:
        for m in _EAST.finditer(folded):
            attempt(lex.east.get(m.group(), ()), m.start())
    for matches in out.values():
        matches.sort(key=lambda m: m.start())
    return out


#: The most letters prefixes take before a word (wa- + bi- + al-; ve- + kshe- + ha-).
_PROCLITIC_LETTERS = 4
_PREFIXED = re.compile("[\u0590-\u05ff\u0600-\u06ff]")


def _index(
    concepts: dict[str, list[tuple[str | None, str]]],
) -> tuple[dict[str, tuple[_Entry, ...]], dict[str, tuple[_Entry, ...]]]:
    """The entries of each concept ((language or None, entry) pairs), indexed."""
    spaced: dict[str, list[_Entry]] = {}
    east: dict[str, list[_Entry]] = {}
    for concept, entries in concepts.items():
        for lang, entry in dict.fromkeys((lang, str(e)) for lang, e in entries):
            anywhere, atoms = _atoms(entry, lang)
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
    concepts: dict[str, list[tuple[str | None, str]]] = {}
    for name, by_language in raw["concepts"].items():
        missing = languages - set(by_language)
        if missing:
            raise ValueError(f"{_DATA}: concept {name!r} lacks {', '.join(sorted(missing))}")
        if name in PER_LANGUAGE:  # "<concept>:<lang>": its entries of one language
            for lang, entries in by_language.items():
                concepts[f"{name}:{lang}"] = [(lang, e) for e in entries]
            continue
        concepts[name] = [(lang, e) for lang, entries in by_language.items() for e in entries]
    exceptions: dict[str, list[tuple[str | None, str]]] = {
        f"except:{k}": [(None, e) for e in v] for k, v in raw.get("exceptions", {}).items()
    }
    # Exceptions in one language only: "except:<concept>@<lang>" (Lexicon.find).
    for lang, by_concept in raw.get("exceptions_in", {}).items():
        for k, v in by_concept.items():
            exceptions[f"except:{k}@{lang}"] = [(None, e) for e in v]
    spaced, east = _index({**concepts, **exceptions})
    programs = raw["programs"]
    return Lexicon(
        languages=languages,
        spaced=spaced,
        east=east,
        exceptions=frozenset(exceptions),
        # As written (destinations.normalise keeps accents: "chấm", "tečka") and folded.
        dot_words=tuple(dict.fromkeys(v for w in raw["dot_words"] for v in (_cased(w), fold(w)))),
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


#: Concepts whose entries are also found language by language (``"mirror:de"``): a word
#: for mirroring counts with a word for "to" of its own language ("an", "auf" in German;
#: "a", "do" are other words in Portuguese).
PER_LANGUAGE = frozenset({"mirror", "toward"})


def _cased(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold()


def word_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """``words`` as one expression: a word of a script written with spaces matches at a
    word's start, one of Thai, Japanese, Chinese or Korean anywhere ("モデルのバージョン")."""
    east = [re.escape(w) for w in words if _EAST.match(w)]
    spaced = [re.escape(w) for w in words if not _EAST.match(w)]
    parts = [rf"(?<![^\W\d_])(?:{'|'.join(spaced)})"] if spaced else []
    if east:
        parts.append("|".join(east))
    return re.compile("|".join(parts))
