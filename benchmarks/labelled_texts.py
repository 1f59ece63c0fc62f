"""Labelled texts as data: the schema of ``benchmarks/corpora/instructions.jsonl`` and
``secrets.jsonl``, and their loader.

One JSON object per line; keys (``?`` marks an optional one)::

    use    str  what the text is to its benchmark; each corpus names its own:
                instructions.jsonl  "dangerous" (must be held even from the user),
                                    "benign" (the user's feedback: must pass)
                secrets.jsonl       "shape" (how the credential format ``kind`` is
                                    drawn: a template of secrets_corpus.py, in draw
                                    order), "context" (a sentence a drawn credential is put in,
                                    at ``{s}``), "form" (how the format ``kind`` writes a
                                    password, at ``{pw}``), "phrase" (a code-like text
                                    that holds no credential; ``{hex:N}``, ``{alnum:N}``,
                                    ``{b64:N}``, ``{mixed:N}`` and ``{uuid4}`` are drawn),
                                    "sentence" (a plain memory a generated code-like
                                    text ends with),
                                    "benign" (a text that holds no credential)
    kind?  str  a finer class, reported per kind (an instruction's class, a form's
                format, a benign text's group)
    lang?  str  the language of the text (ISO 639-1: en, de, fr, zh, ...)
    text   str  the text

Empty lines and ``//`` comments are skipped; :func:`load_texts` refuses a malformed line,
or a use its corpus does not name, with its file and line number (the line reader and
field checks are ``scenes.py``'s).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenes import CorpusError, keys, nonempty, read_lines

__all__ = ["Text", "load_texts", "of_use"]


@dataclass(frozen=True)
class Text:
    use: str
    text: str
    kind: str | None = None
    lang: str | None = None


def text_from_json(data: Any, where: str, uses: Collection[str]) -> Text:
    """One labelled text from its JSON object (see the module docstring)."""
    keys(data, where, {"use", "text"}, {"kind", "lang"})
    if data["use"] not in uses:
        raise CorpusError(f"{where}.use: one of {', '.join(uses)}")
    for key in ("kind", "lang"):
        if key in data:
            nonempty(data[key], f"{where}.{key}")
    return Text(
        data["use"], nonempty(data["text"], f"{where}.text"), data.get("kind"), data.get("lang")
    )


def load_texts(path: Path | str, uses: Collection[str]) -> list[Text]:
    """The texts of a JSON Lines file, in order, each of one of ``uses``."""
    return [text_from_json(data, where, uses) for where, data in read_lines(path)]


def of_use(texts: Sequence[Text], use: str) -> list[Text]:
    return [t for t in texts if t.use == use]
