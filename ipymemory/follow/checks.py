"""The exact checks of an answer against one memory (SPEC §14).

For each injected ``feedback`` or ``user`` memory, :func:`check_memory` either decides
-- ``follows``, ``contradicts`` or ``untouched``, with a short reason -- or leaves the
memory undecided (None) for the side model. It decides only what it can decide
exactly:

* **contradicts** when the answer's code uses a library the memory rules out ("it
  imports pandas"), or its prose is in a language other than the one the memory asks
  answers in ("it is written in English, not German"). One breach is enough, whatever
  else the memory asks. Not when the code also uses the library asked for instead (a
  before/after, a conversion: a judgment), nor when the user's query names the library
  or a language (the user may have asked for the exception);
* **follows** when a *pure* memory (it asks nothing the checks cannot see) is kept by
  every part: the code uses the library asked for and none ruled out or unclear, the
  prose is in the language asked for;
* **untouched** when a pure memory that rules a library out meets an answer without
  any code, not even inline, whose prose names none of the memory's libraries (code
  can call a library without naming it: ``df.isna()`` is pandas).

Everything else -- style, length, labels in a chart, a memory about people -- is left
to the side model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from .. import _constants as C
from .._constants import FollowVerdict
from ..store.record import MemoryRecord, MemoryType
from .answer import ReadAnswer, read_answer
from .language import identify, language_label
from .libraries import canonical
from .rules import (
    MemoryRules,
    mentioned_languages,
    mentioned_libraries,
    mentioned_styles,
    rules_of,
)
from .style import check_style

__all__ = ["CHECKED_TYPES", "Verdict", "as_verdict", "check_answer", "check_memory", "checked"]

#: The memory types whose following is checked: how to work, and who the user is.
CHECKED_TYPES = frozenset({MemoryType.FEEDBACK, MemoryType.USER})


@dataclass(frozen=True)
class Verdict:
    """Whether an answer follows one memory: the memory's name, the verdict, why (a
    clause that reads after "it", e.g. "imports pandas"), and which check said so
    (``code``, ``language`` or ``model``)."""

    name: str
    verdict: FollowVerdict
    reason: str
    by: str

    def __post_init__(self) -> None:
        if self.verdict not in C.FOLLOW_VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {C.FOLLOW_VERDICTS}")
        if self.by not in C.FOLLOW_DECIDERS:
            raise ValueError(f"decider {self.by!r} is not one of {C.FOLLOW_DECIDERS}")

    @property
    def missed(self) -> bool:
        return self.verdict == "contradicts"

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "verdict": self.verdict, "reason": self.reason, "by": self.by}


def checked(records: Sequence[MemoryRecord]) -> tuple[MemoryRecord, ...]:
    """The records whose following is checked (``feedback`` and ``user``), in order."""
    return tuple(record for record in records if record.type in CHECKED_TYPES)


def check_answer(
    records: Sequence[MemoryRecord], answer: str, query: str = ""
) -> tuple[dict[str, Verdict], tuple[MemoryRecord, ...]]:
    """The verdicts the exact checks reach for ``records`` (the checked types only),
    and the records they leave undecided, in order."""
    read = read_answer(answer)
    decided: dict[str, Verdict] = {}
    undecided: list[MemoryRecord] = []
    for record in checked(records):
        verdict = check_memory(record, read, query)
        if verdict is None:
            undecided.append(record)
        else:
            decided[record.name] = verdict
    return decided, tuple(undecided)


def check_memory(record: MemoryRecord, answer: ReadAnswer | str, query: str = "") -> Verdict | None:
    """The exact verdict on ``record`` for ``answer`` (text, or as read), or None."""
    if isinstance(answer, str):
        text, read = answer, read_answer(answer)
    else:
        text, read = answer.text, answer
    uses = {canonical(name): how for name, how in read.uses.items()}
    rules = rules_of(f"{record.description}\n{record.body}", uses, code=read.code_words)
    asked_libraries = mentioned_libraries(query, rules.libraries) if query else frozenset()
    asked_language = bool(query) and bool(mentioned_languages(query))
    language = identify(read.prose) if rules.about_language and not asked_language else None

    breach = _library_breach(record.name, rules, uses, asked_libraries)
    if breach is not None:
        return breach
    if rules.about_language and not asked_language and language is not None:
        wrong = (rules.languages and language not in rules.languages) or (
            language in rules.not_languages
        )
        if wrong:
            wanted = sorted(rules.languages)
            said = f"is written in {language_label(language)}"
            if wanted:
                said += ", not " + " or ".join(language_label(code) for code in wanted)
            return Verdict(record.name, "contradicts", said, "language")
    # A style the query itself talks about ("convert the totals to euros") is the
    # user's exception, or a judgment: left to the model.
    asked_styles = mentioned_styles(query) if query else frozenset()
    styles = {
        key: check_style(key, p, text, read)
        for key, p in rules.styles.items()
        if not _asked(key, asked_styles)
    }
    for outcome in styles.values():
        if outcome is not None and outcome[0] == "contradicts":
            return Verdict(record.name, "contradicts", outcome[1], "style")
    if not rules.pure or asked_libraries or asked_language or len(styles) < len(rules.styles):
        return None
    parts: list[Verdict | None] = [
        None
        if outcome is None
        else Verdict(record.name, as_verdict(outcome[0]), outcome[1], "style")
        for outcome in styles.values()
    ]
    if rules.libraries:
        parts.append(_library_part(record.name, rules, uses, read))
    if rules.about_language:
        parts.append(_language_part(record.name, rules, language))
    if not parts or any(part is None for part in parts):
        return None
    kept = [part for part in parts if part is not None]
    follows = [part for part in kept if part.verdict == "follows"]
    return follows[0] if follows else kept[0]


def _library_breach(
    name: str, rules: MemoryRules, uses: dict[str, str], asked: frozenset[str]
) -> Verdict | None:
    used = sorted(set(uses) & rules.banned)
    if not used or asked & rules.banned:
        return None
    if set(uses) & rules.preferred:
        return None  # old and new side by side (a conversion, a comparison): a judgment
    return Verdict(name, "contradicts", f"{uses[used[0]]} {used[0]}", "code")


def _library_part(
    name: str, rules: MemoryRules, uses: dict[str, str], read: ReadAnswer
) -> Verdict | None:
    # Inline code and the prose count here, never for a breach: "if you had `import
    # pandas` before, drop it" quotes pandas, it does not use it.
    inline = {canonical(n): how for n, how in read.inline_uses.items()}
    named = mentioned_libraries(read.prose, rules.libraries)
    used = set(uses) | set(inline)
    if (used | named) & (rules.banned | rules.unclear):
        return None
    kept = sorted(used & rules.preferred)
    if kept and rules.banned:
        how = uses.get(kept[0]) or inline[kept[0]]
        return Verdict(name, "follows", f"{how} {kept[0]}", "code")
    if kept or not rules.banned:
        return None
    if not read.has_code and named & rules.preferred:
        return Verdict(name, "follows", f"names {sorted(named)[0]} and no other", "code")
    # Code, even inline, may call a library without naming it; untouched is exact only
    # for an answer with no code that names none of the memory's libraries.
    if read.has_code or read.inline_code or named:
        return None
    return Verdict(name, "untouched", f"has no code and names none of {_listed(rules)}", "code")


def _language_part(name: str, rules: MemoryRules, language: str | None) -> Verdict | None:
    if language is None or not rules.languages or language not in rules.languages:
        return None
    return Verdict(name, "follows", f"is written in {language_label(language)}", "language")


def as_verdict(text: str) -> FollowVerdict:
    """``text`` as a verdict (the style checks return only the three words)."""
    if text not in C.FOLLOW_VERDICTS:
        raise ValueError(f"verdict {text!r} is not one of {C.FOLLOW_VERDICTS}")
    return cast(FollowVerdict, text)


def _asked(key: str, asked: frozenset[str]) -> bool:
    if key.startswith("currency-"):
        return any(k.startswith("currency-") for k in asked)
    return key in asked


def _listed(rules: MemoryRules) -> str:
    names = sorted(rules.libraries)
    return ", ".join(names[:3]) + (" …" if len(names) > 3 else "")
