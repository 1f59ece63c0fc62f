"""Which files a proposed memory depends on (SPEC §11 staleness, issues 26 and 44).

A record is stale when a file it depends on changed since it was saved -- not when any
file its turn happened to read changed ("keep answers short" does not depend on the
sales CSV read in the same turn), and not when a file it only mentions changed. A record
depends on a file when its claim would change if the file changed:

* the extractor's evidence for it **quotes the file's output**; or
* its **description names the file** (the catalog line is the record's gist: the record
  is about that file); or
* its text **names the file as what a claim is about** -- the file opens a sentence or
  labels it ("data/sales.csv has …", "docs/units.md: …"), a claim cites it ("… net of
  refunds (docs/units.md)"), or the claim is of or in it ("the TOTALE zone of
  dati/consumi.csv", "as in conf/train.yaml", "según docs/politica.md", "sql/样本.sql
  中的", "model.yaml の"), or a command runs one of its targets (``make up``) -- and that
  sentence shares content with the file beyond its name (a claim about the file says
  something the file holds); or
* it **carries the file's words**: terms of the item outside parentheses that the
  output of a tool call on that file holds and the user did not write (so they came
  from the file, not from the user) nor another file the item names, weighing at least
  :data:`CARRIED_WEIGHT` (an identifier or key of the file, a number or a long term
  weighs 2, another word 1) and at least what the user's own words give the item --
  or with one of the file's identifiers in the description ("Sales amounts are kEUR"
  for ``amount_keur``): then the file supplies the claim, not an elaboration of the
  user's.

A file named as context is not a source: the input of something else ("the Q4 report,
built from data/sales.csv, is due Friday"), an aside in parentheses inside a sentence
("the customer list (daten/kunden.csv) goes out every Monday"), a command's argument
("--config conf/train.yaml", a name in backticks: what the command reads). Nor are a
few words the extractor added from a file while elaborating on what the user said
("Maria takes over the northern accounts (region NORTH, rep T. Brandt)"), nor a date the
extractor wrote that the file does not hold whole.

Paths are compared in their workspace-relative, forward-slash form. Nothing here opens
a file: the caller gives the paths it knows (what the session read) and hashes them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from .. import _constants as C
from .evidence import code_terms, file_mentions, fold_text
from .lexicon import is_ordinary, language
from .origin import Sources, history_sources
from .terms import content_terms, weight

__all__ = ["CARRIED_WEIGHT", "file_outputs", "item_sources", "normal_path"]

CARRIED_WEIGHT = C.SOURCE_CARRIED_WEIGHT


def normal_path(path: str) -> str:
    """``path`` as compared: forward slashes, no ``./`` segments, no leading ``./``."""
    text = path.strip().replace("\\", "/")
    normal = posixpath.normpath(text) if text else text
    return "" if normal == "." else normal


def file_outputs(history: Sources | Sequence[dict[str, Any]]) -> dict[str, str]:
    """Per file a tool call named (normal path), the text of its tool outputs."""
    sources = history if isinstance(history, Sources) else history_sources(history)
    out: dict[str, list[str]] = {}
    for part in sources.tool_parts:
        for path in dict.fromkeys(normal_path(p) for p in part.pointers):
            if path:
                out.setdefault(path, []).append(part.text)
    return {path: "\n".join(texts) for path, texts in out.items()}


def item_sources(
    item_text: str,
    evidence: Sequence[str],
    outputs: Mapping[str, str],
    user_terms: frozenset[str],
    files: Collection[str],
) -> tuple[str, ...]:
    """The paths of ``files`` the item (description + body) depends on, in the order
    of ``files`` (see the module docstring); ``outputs`` holds what tool calls on each
    file returned (:func:`file_outputs` of the session's history), ``user_terms`` the
    terms of what the user wrote."""
    description, _, body = item_text.partition("\n")
    subject_text = fold_text(item_text)
    parts = [fold_text(_ARGUMENTS.sub(" ", part)) for part in (description, body)]
    excerpts = [p for e in evidence if (p := fold_text(e).strip(" .\"'")) and len(p) >= 8]
    item = _terms(item_text)
    # What the item says outside parentheses: an aside in them elaborates.
    stated = _terms(_ASIDE.sub(" ", item_text))
    known = {normal_path(path): outputs.get(normal_path(path), "") for path in files}
    names = frozenset().union(*(content_terms(p) for p in known))
    lang = (language(item_text),)
    mentioned = {
        p: [(part, span) for part in parts for span in _mentions(p, part, lang)] for p in known if p
    }
    named = {p for p, spans in mentioned.items() if spans}
    said = sum(weight(t) for t in item & user_terms - names)
    out = []
    for path in files:
        wanted = normal_path(path)
        text = known.get(wanted, "")
        if text and any(e in fold_text(text) for e in excerpts):
            out.append(path)
            continue
        if wanted in named and any(
            _about(part, span, text, names, user_terms) for part, span in mentioned[wanted]
        ):
            out.append(path)
            continue
        # Words an item shares with another file it names are that file's.
        others = [content_terms(f"{p}\n{known[p]}") for p in named if p != wanted]
        carried = stated & _held(text, subject_text) - user_terms - names
        carried -= frozenset().union(*others)
        code = code_terms(text)
        held = sum(2 if t in code else weight(t) for t in carried)
        gist = bool(carried & code & _terms(description))  # "Sales amounts are kEUR"
        if held >= CARRIED_WEIGHT and (held >= said or gist):
            out.append(path)
    return tuple(out)


def _held(output: str, item: str) -> frozenset[str]:
    """The terms of a file's ``output`` an item can carry: a part of a compound name
    ("fraude" of ``is_fraude``) only when the (folded) ``item`` writes the whole name."""
    compounds = _COMPOUND.findall(output)
    whole = content_terms(_COMPOUND.sub(" ", output))
    written = [c for c in compounds if fold_text(c) in item]
    return whole | frozenset().union(*(content_terms(c) for c in written))


def _terms(text: str) -> frozenset[str]:
    """The item's terms, a date it writes (2026-12-11) counting only whole: its parts
    are the extractor's calendar, not a file's numbers."""
    return content_terms(_ISO_DATE.sub(" ", text)) | frozenset(_ISO_DATE.findall(text))


def _mentions(path: str, folded: str, lang: tuple[str | None, ...]) -> list[tuple[int, int]]:
    """Where ``folded`` names the file, less its stem where the stem is an ordinary word
    of the item's language ("las cuentas del norte" does not name cuentas.csv)."""
    return [
        (start, end)
        for start, end in file_mentions(path, folded, targets_only=True)
        if "." in (word := folded[start:end]) or "/" in word or " " in word
        or not is_ordinary(word, lang)
    ]  # fmt: skip


def _about(
    subject: str,
    span: tuple[int, int],
    output: str,
    names: frozenset[str],
    user_terms: frozenset[str],
) -> bool:
    """Whether the file named at ``span`` of the folded item text is what its sentence
    makes a claim about (see the module docstring): named as the sentence's subject,
    label, citation or the place of its claim, the sentence shares content with the
    file's ``output`` beyond the files' names; only pointed to ("as in …", "según …"),
    the sentence says what the file holds in words the user did not write."""
    start, end = span
    opens = max((m.end() for m in _SENTENCE_END.finditer(subject, 0, start)), default=0)
    close = _SENTENCE_END.search(subject, end)
    stop = close.start() if close else len(subject)
    before, after = subject[opens:start], subject[end:stop]
    if _RUNNER.match(subject, start):
        return True  # "make up": the command is what the file defines
    frame = None if _depth(subject[:opens]) > 0 else _frame(before, after)
    if frame is None:
        return False
    held = content_terms(output) | frozenset(_ISO_DATE.findall(output))
    shared = _terms(subject[opens:stop]) & held - names
    if frame == "pointer":
        return sum(weight(t) for t in shared - user_terms) >= CARRIED_WEIGHT
    return bool(shared)


def _frame(before: str, after: str) -> str | None:
    """How a sentence names a file: ``about`` (its subject, label, citation, or the
    place of its claim), ``pointer`` ("as in …"), or None (context)."""
    if _ARTICLES.sub("", before).strip() == "" or _LABEL.match(after):
        return "about"  # "data/sales.csv has …", "the sales CSV holds …", "docs/units.md: …"
    if _OPEN.search(before) and _CITED.match(after):
        return "about"  # "… net of refunds (docs/units.md)." -- not "(…, mit …)" mid-sentence
    if _depth(before) > 0:
        return None  # an aside inside a sentence: "the customer list (kunden.csv) goes …"
    if _POINTER_BEFORE.search(before) or _POINTER_AFTER.match(after):
        return "pointer"
    if _OF_BEFORE.search(before) or _OF_AFTER.match(after):
        return "about"
    return None


def _depth(before: str) -> int:
    """How many parentheses are open at the end of ``before``."""
    return sum(1 for c in before if c in "(\uff08[") - sum(1 for c in before if c in ")\uff09]")


# A file named as a command's argument ("--config conf/train.yaml") is what the command
# reads, not what the item is about.
_ARGUMENTS = re.compile(r"(?<!\S)--?[A-Za-z][\w-]*(?:[= ]\S+)?")
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_COMPOUND = re.compile(r"\b[^\W\d_]\w*(?:_\w+)+\b")  # is_fraude, amount_keur, order_id
_ASIDE = re.compile(r"\([^()\n]*\)|\uff08[^\uff08\uff09\n]*\uff09")
# Folded text: a sentence ends at . ! ? before white space (not an initial's: "P. Vidal"),
# at ; or a line break.
_SENTENCE_END = re.compile(r"(?<=\w\w)[.!?](?=\s|$)|[;\n\u3002\uff01\uff1f\uff1b]")
_RUNNER = re.compile(r"(?:make|just|task|npm|pnpm|yarn)\s")
_ARTICLES = re.compile(
    r"\b(?:the|a|an|der|die|das|le|la|les|l'|el|los|las|il|lo|i|gli|o|os|as|de|het)\b|\W"
)
_LABEL = re.compile(r"\W{0,2}[:\uff1a]|\s+(?:has|have|holds|lists|says|is|are|contains|defines|"
                    r"describes|sets|hat|ist|enthält|listet|a|est|contient|liste|tiene|es|"
                    r"contiene|lista|ha|è|tem|é|contém)\b|\s*(?:は|には|で|に)")  # fmt: skip
_OPEN = re.compile(r"[(\uff08\[]\s*$")
_CITED = re.compile(r"\s*[)\uff09\]]\s*(?:[.,;:!?\uff0c\u3002\uff1b\uff1a]|$)")
# The claim is of or in the file: "the TOTALE zone of …", "listed in …", "の", "中的".
_OF_BEFORE = re.compile(
    r"(?:\b(?:in|of|im|von|der|des|de|del|du|di|della|do|da|dos|das|dans|en|nel|nella|no|na)"
    r")\s*$"
)
_OF_AFTER = re.compile(r"\s*(?:の|中的|中|里的|里)")
# Only pointed to: "as in …", "según …", "のとおり".
_POINTER_BEFORE = re.compile(
    r"(?:\b(?:as in|like in|wie in|come in|como en|como no|comme dans|per|según|segun|selon|"
    r"laut|gemäß|gemass|following|follow|see|siehe|voir|ver|vedi|d'après|according to)|"
    r"按照|按|根据|依据|参见|见)\s*$"
)
_POINTER_AFTER = re.compile(r"\s*(?:のとおり|の通り|に従|によると|によれば)")
