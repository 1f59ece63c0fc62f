# Words of many languages are the point of this module.
# ruff: noqa: RUF003
"""Whether the user's words adopt what came before them: "yes, use that".

A user who answers an output with "yes, use that", "Great, use that quick command
whenever you run the tests", "segnatela", "Det är den regeln vi ska följa", "এই শৈলী মেনে
চলবে" makes it theirs; one who names a file beside words that tell to follow it ("follow
STYLE.md", "wie in notes.md", "config.yaml'a göre") adopts that file. The words are data:
the ``adopt_*`` concepts of ``lexicons.yaml`` (every language the screen reads and those of
heldout8: Bengali, Malay, Tagalog, Finnish, Hungarian), matched as :mod:`.lexicons`
matches (folded, whole words or stems, Thai and East Asian words anywhere).

:func:`adopts` -- a user message adopts what came before it when

1. it opens with an assent (``adopt_assent``: "yes", "да", "evet", "はい") and says
   nothing else but assent or approval ("Yes, exactly!"), or, within its next six
   words, a verb that adopts (``adopt_use``: use, keep, follow, apply; ``adopt_note``:
   remember, note down, save; or ``adopt_carried``, one that holds its object:
   "úsalo", "segnatela", "utilise-le", "запомни это"): "yes, use it everywhere"; or it
   opens with an approval (``adopt_approval``: "great", "perfect", "thanks", "sounds
   good", "danke") and such a verb points at what came before ("Great, use that quick
   command", "Thanks, remember it") -- an approval is no answer to "shall I …?", and
   "Thanks, now use polars" adopts nothing;
2. or a clause of it that states (it does not ask, :func:`.speech.question_flags`) and
   is no request for something now (:func:`.speech.is_request`: "summarise this and keep
   it short") points the verb at what came before: the verb holds its object; or what it
   points at (``adopt_pointer``: "that", "это", "quello") follows it, at most one word
   between ("use that quick command" -- not "remember this: …", which points at what
   follows, nor "remember that we deploy on Fridays", which says a clause of its own);
   or, in a language that puts the object first (``adopt_object``: "bunu
   kullan", "इसे याद रखो", "এই শৈলী মেনে চলবে", "これを使って"), it comes at most two words
   before; or the clause opens with a demonstrative (``adopt_demonstrative``, within its
   first three words) and the user or their team follows (``adopt_we``): "that's the one
   we use", "Det är den regeln vi ska följa", "这就是我们要遵守的规则" -- across a comma
   when the verb's clause opens with a relative word (``adopt_which``: "Das ist die
   Regel, die wir befolgen", "Это то, что мы используем").

Code the user pasted is not what they say: fenced or inline code is left out (a comment
"keep it that way please" in their SQL adopts nothing). :func:`adopts_answer` -- a message
adopts the answer to its own question when a sentence after the question adopts ("Qual
è la scadenza per la domanda? Segnatela", "Vad säger policyn …? Det är den regeln vi
ska följa"): the outputs read to answer it are then adopted.

A contrast or a negation (``adopt_but``: "but", "don't", "no", "не", "jangan") before the
verb in its sentence, or right after it ("মেনে চলবে না"), adopts nothing: "yes, but don't
use that". A bare "use pandas" points at nothing and adopts nothing; so does "yes, and
also summarise b.md" (no verb that adopts).

:func:`adopts_mention` -- a file named in a sentence is adopted when a verb that adopts or
a word that takes it as the authority (``adopt_per``: "according to", "laut", "selon")
comes within the 40 characters before the name, or one (``adopt_per_after``: "says",
"göre", "대로", "অনুযায়ী", "szerint") within the word after it -- with no contrast or
negation between.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .lexicons import fold, lexicon
from .speech import Sentence, clauses, is_request, question_flags, sentences

__all__ = ["adopts", "adopts_answer", "adopts_mention"]

# Scripts written without spaces between words: distances there are counted in letters.
_EAST = re.compile(
    "[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]"
)
_LETTER = re.compile(r"[^\W\d_]")
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.DOTALL)  # fenced or inline code
_FOLLOWS = re.compile(r"\s*[:\uff1a]")  # "remember this: …" points at what follows
_BREAK = re.compile(r"[^\w\s'\u2019-]")  # "记住：这个项目…": a colon between, no object

#: Words between an opening assent and the verb that adopts ("yes, from now on use …").
_AFTER_ASSENT = 6
#: Words between the opening demonstrative and the verb ("that is the rule we follow").
_AFTER_DEMONSTRATIVE = 7
#: Words after "remember that" that are still its object ("remember that one for later").
_AFTER_NOTED = 2
#: Words a verb's object may stand before it in a language that puts it first.
_OBJECT_BEFORE = 2
#: Characters before and after a file's name where the words that adopt it stand.
_AROUND_MENTION = 40

Span = tuple[int, int]


def _find(concept: str, folded: str) -> list[Span]:
    return [m.span() for m in lexicon().find(concept, folded)]


def _words(between: str) -> int:
    """How many words ``between`` holds; two letters of a script without spaces count
    one ("このスタイルに従って": the object is two words before the verb)."""
    east = len(_EAST.findall(between))
    return len(_EAST.sub(" ", between).split()) + (east + 1) // 2


def _whole(folded: str, span: Span) -> bool:
    """Whether a match ends where a word does (an entry of Korean or Japanese matches
    anywhere: "네" is no assent in "네트워크")."""
    return not _LETTER.match(folded[span[1] : span[1] + 1]) or bool(
        _EAST.match(folded[span[1] - 1 : span[1]]) and not _EAST.match(folded[span[1]])
    )


def _verbs(folded: str) -> list[Span]:
    return sorted(_find("adopt_use", folded) + _find("adopt_note", folded))


def _negated(folded: str, verb: Span, buts: Sequence[Span], since: int = 0) -> bool:
    """Whether a contrast or negation stands before the verb (since ``since``) or is the
    word right after it ("মেনে চলবে না")."""
    if any(since <= b[0] and b[1] <= verb[0] for b in buts):
        return True
    after = [b for b in buts if b[0] >= verb[1]]
    return any(_words(folded[verb[1] : b[0]]) == 0 for b in after)


def _assent_adopts(folded: str) -> bool:
    """Rule 1 of the module docstring, on the folded message."""
    start = len(folded) - len(folded.lstrip(" \t\"'()[]*>-.,!¡¿…"))
    assent = [s for s in _find("adopt_assent", folded) if s[0] == start]
    approval = [s for s in _find("adopt_approval", folded) if s[0] == start]
    opening = [s for s in assent + approval if _whole(folded, s)]
    if not opening:
        return False
    end = max(s[1] for s in opening)
    assented = any(s[1] == end for s in assent if _whole(folded, s))
    if assented:
        rest = list(folded[end:])
        for a, b in _find("adopt_assent", folded) + _find("adopt_approval", folded):
            if a >= end:
                rest[a - end : b - end] = " " * (b - a)
        if not _LETTER.search("".join(rest)):
            return True  # "yes", "Yes, exactly!", "да, спасибо"
    buts = _find("adopt_but", folded)
    carried = _find("adopt_carried", folded)
    for verb in sorted(_verbs(folded) + carried):
        if verb[0] < end:
            continue
        if _words(folded[end : verb[0]]) > _AFTER_ASSENT or _negated(folded, verb, buts, end):
            return False
        # An approval is no answer to "shall I …?": its verb must point at what came
        # before ("Great, use that …", "Thanks, remember it") or hold its object.
        return assented or verb in carried or _points(folded, verb)
    return False


def _points(folded: str, verb: Span) -> bool:
    """Whether the verb is followed by what it points at, or by nothing ("… keep it",
    "… remember.")."""
    rest = folded[verb[1] :]
    clause = re.split(r"[,;:.!?\n\uff0c\u3001\u3002]", rest, maxsplit=1)[0]
    if not _LETTER.search(clause):
        return True
    return any(
        _words(clause[: p[0]]) <= 1 and not _BREAK.search(clause[: p[0]])
        for p in _find("adopt_pointer", clause)
    )


def _clause_adopts(
    folded: str, clause: Span, buts: Sequence[Span], before: Span | None = None
) -> bool:
    """Rule 2 of the module docstring, on one clause (``clause``) of a folded sentence;
    ``before``, the clause before it, may hold the opening demonstrative when this one
    opens with a relative word ("Das ist die Regel, die wir befolgen")."""
    a, b = clause
    text = folded[a:b]

    def inside(concept: str) -> list[Span]:
        return [(x + a, y + a) for x, y in _find(concept, text)]

    for carried in inside("adopt_carried"):
        if not _negated(folded, carried, buts):
            return True
    pointers = inside("adopt_pointer")
    objects = inside("adopt_object")
    openers = [d for d in inside("adopt_demonstrative") if _words(folded[a : d[0]]) <= 2]
    if before is not None:
        start = before[0]
        openers += [
            (x + start, y + start)
            for x, y in _find("adopt_demonstrative", folded[start : before[1]])
            if _words(folded[start : x + start]) <= 2
        ]
    we = inside("adopt_we")
    notes = set(inside("adopt_note"))
    for verb in [(x + a, y + a) for x, y in _verbs(text)]:
        if _negated(folded, verb, buts):
            continue
        for p in pointers:
            after = folded[verb[1] : p[0]]
            if (
                p[0] >= verb[1]
                and _words(after) <= 1
                and not _BREAK.search(after)
                and not _FOLLOWS.match(folded[p[1] :])
                # "remember that we deploy on Fridays": a clause of its own follows
                and (verb not in notes or _words(folded[p[1] : b]) <= _AFTER_NOTED)
            ):
                return True
        if any(
            o[1] <= verb[0] and _words(folded[o[1] : verb[0]]) <= _OBJECT_BEFORE for o in objects
        ):
            return True
        # (the one who follows before the verb, in it or right after it: "vi ska följa",
        # "nous suivons", "sinusunod natin")
        if any(
            d[1] <= verb[0]
            and _words(folded[d[1] : verb[0]]) <= _AFTER_DEMONSTRATIVE
            and any(d[1] <= w[0] and _words(folded[verb[1] : w[0]]) <= 1 for w in we)
            for d in openers
        ):
            return True
    return False


def _relative(clause: str) -> bool:
    """Whether a folded clause opens with a relative word ("die wir befolgen")."""
    return any(x == 0 for x, _ in _find("adopt_which", clause))


def _spans(folded: str, pieces: Sequence[str]) -> list[Span]:
    """Where each of ``pieces`` (folded, in order) stands in ``folded``."""
    out = []
    at = 0
    for piece in pieces:
        start = folded.find(piece, at)
        if start < 0:
            continue
        out.append((start, start + len(piece)))
        at = start + len(piece)
    return out


def adopts(text: str) -> bool:
    """Whether a user's message (or an excerpt of one) adopts what came before it (see
    the module docstring). Code the user pasted is not what they say: a comment in
    their SQL ("keep it that way please") adopts nothing."""
    text = _CODE.sub(" ", text)
    return _assent_adopts(fold(text)) or any(_sentence_adopts(s) for s in sentences(text))


def adopts_answer(text: str) -> bool:
    """Whether a user's message adopts the answer to its own question: a sentence after
    a question adopts ("Qual è la scadenza per la domanda? Segnatela", "Vad säger
    policyn …? Det är den regeln vi ska följa i alla analyser")."""
    asked = False
    for sentence in sentences(_CODE.sub(" ", text)):
        if asked and _sentence_adopts(sentence):
            return True
        asked = asked or sentence.question
    return False


def _sentence_adopts(sentence: Sentence) -> bool:
    """Rule 2 of the module docstring, on each clause of a sentence that is no question."""
    if sentence.question:
        return False
    pieces = clauses(sentence.text)
    flags = question_flags(sentence)
    folded = fold(sentence.text)
    spans = _spans(folded, [fold(p) for p in pieces])
    if len(spans) != len(pieces):
        return False  # folding moved a clause: judge it by its words alone
    buts = _find("adopt_but", folded)
    for i, (piece, asks, span) in enumerate(zip(pieces, flags, spans, strict=True)):
        before = spans[i - 1] if i else None
        # ("Это то, что мы используем": a relative "что" asks nothing)
        relative = before is not None and _relative(folded[span[0] : span[1]])
        if (
            (not asks or relative)
            and not is_request(piece)
            and _clause_adopts(folded, span, buts, before if relative else None)
        ):
            return True
    return False


def adopts_mention(sentence: str, start: int, end: int) -> bool:
    """Whether the words around a file's name (at ``start:end`` of ``sentence``) adopt it
    (see the module docstring)."""
    before = fold(sentence[max(0, start - _AROUND_MENTION) : start])
    buts = _find("adopt_but", before)
    for verb in _find("adopt_use", before) + _find("adopt_per", before):
        # "don't follow STYLE.md", "follow STYLE.md, not README.md"
        if not any(b[0] >= verb[1] or _words(before[b[1] : verb[0]]) == 0 for b in buts):
            return True
    after = fold(sentence[end : end + _AROUND_MENTION])
    buts = _find("adopt_but", after)
    return any(
        _words(after[: s[0]]) <= 1 and not _negated(after, s, buts)
        for s in _find("adopt_per_after", after)
    )
