"""The agent screen's lexicons: data (``lexicons.yaml`` beside this file) and matching.

The YAML file says, per concept and language, the words that name the concept (see its
header for how an entry matches), and the other word lists of the agent screen (words
for "dot", special-use host names, file extensions that are also top-level domains,
programs). :func:`lexicon` loads and compiles it once; :func:`fold` is the folding text
and entries share; :meth:`Lexicon.find` gives the matches of one concept in folded text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

__all__ = ["Lexicon", "fold", "lexicon"]

_DATA = "lexicons.yaml"
_COMBINING = re.compile("[\u0300-\u036f\u064b-\u065f\u0670\u0640]")
_TURKISH_I = str.maketrans({"\u0131": "i", "\u0307": None})  # dotless i; combining dot
_EAST = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]")
_ARABIC = re.compile("[\u0600-\u06ff]")
_ARABIC_PROCLITICS = "(?:[وف]?[بلك]?(?:ال)?)"
_SEPARATOR = r"[\s_\-'\u2019]*"


def fold(text: str) -> str:
    """``text`` as the lexicons are matched against it: NFKC, format characters dropped,
    lower case, accents and Arabic vowel marks dropped (``é`` is ``e``, Cyrillic yo is ye),
    Turkish dotless i made i, every white-space run one space."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf").casefold()
    text = _COMBINING.sub("", unicodedata.normalize("NFKD", text)).translate(_TURKISH_I)
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text))


def _entry_pattern(entry: str) -> str:
    whole = entry.endswith("$")
    words = fold(entry.rstrip("$")).split()
    if not words:
        raise ValueError(f"{_DATA}: an empty entry")
    east = bool(_EAST.search(words[0]))
    parts = [re.escape(w) for w in words]
    body = _SEPARATOR.join(f"{p}" if east else rf"{p}[^\W\d_]*" for p in parts[:-1])
    last = parts[-1] if east or whole else rf"{parts[-1]}[^\W\d_]*"
    body = f"{body}{_SEPARATOR}{last}" if body else last
    if whole and not east:
        body += r"(?![^\W\d_])"
    if east:
        return body
    lead = _ARABIC_PROCLITICS if _ARABIC.match(words[0]) else ""
    # At a word start: nothing of a word (letter, digit, _) just before.
    return rf"(?<![\w]){lead}{body}"


@dataclass(frozen=True)
class Lexicon:
    """The compiled lexicons (see the module docstring)."""

    languages: frozenset[str]
    concepts: dict[str, re.Pattern[str]]
    exceptions: dict[str, re.Pattern[str]]
    dot_words: tuple[str, ...]
    special_use_names: frozenset[str]
    file_extensions: frozenset[str]
    any_argument: frozenset[str]
    needs_argument: frozenset[str]
    subcommands: frozenset[str]

    def find(self, concept: str, folded: str) -> list[re.Match[str]]:
        """The matches of ``concept`` in ``folded`` text (:func:`fold`), less those
        inside one of its exceptions."""
        matches = list(self.concepts[concept].finditer(folded))
        exception = self.exceptions.get(concept)
        if exception is None or not matches:
            return matches
        spans = [m.span() for m in exception.finditer(folded)]
        return [m for m in matches if not any(a <= m.start() and m.end() <= b for a, b in spans)]


def _alternation(entries: list[str]) -> re.Pattern[str]:
    patterns = sorted({_entry_pattern(str(e)) for e in entries}, key=len, reverse=True)
    return re.compile("|".join(patterns))


@cache
def lexicon() -> Lexicon:
    """The lexicons of ``lexicons.yaml``, loaded and compiled once."""
    text = resources.files(__package__).joinpath(_DATA).read_text("utf-8")
    # libyaml's loader when built with it: a twentieth of the pure-Python parser's time.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    raw: dict[str, Any] = yaml.load(text, Loader=loader)
    languages = frozenset(raw["languages"])
    concepts = {}
    for name, by_language in raw["concepts"].items():
        missing = languages - set(by_language)
        if missing:
            raise ValueError(f"{_DATA}: concept {name!r} lacks {', '.join(sorted(missing))}")
        concepts[name] = _alternation([e for entries in by_language.values() for e in entries])
    programs = raw["programs"]
    return Lexicon(
        languages=languages,
        concepts=concepts,
        exceptions={k: _alternation(v) for k, v in raw.get("exceptions", {}).items()},
        dot_words=tuple(fold(w) for w in raw["dot_words"]),
        special_use_names=frozenset(raw["special_use_names"]),
        file_extensions=frozenset(raw["file_extensions"]),
        any_argument=frozenset(programs["any"]),
        needs_argument=frozenset(programs["needs_argument"]),
        subcommands=frozenset(programs["subcommands"]),
    )
