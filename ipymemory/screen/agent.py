"""An agent's item is allowed by what it carries, not denied by its wording (issue 39).

Another agent's item (MCP ``memory_propose``, the memory tool, a pulled memory store, an
import) is screened by :func:`agent_findings`, applied by
:func:`~ipymemory.screen.screening.screen_record` to every item of origin ``agent`` --
one function, so a new door that marks its items ``agent`` cannot forget it. In ``auto``
mode such an item commits at once only when none of these rules fires (each has an id,
a row in ``rules.yaml`` and its own examples):

* ``agent.destination`` -- a URL, host, e-mail or IP address in any spelling
  (:mod:`~ipymemory.screen.destinations`: the Public Suffix List, every IP notation,
  defanged and spaced forms);
* ``agent.command`` -- a command line, shell syntax, an executable or a script to run
  (:mod:`~ipymemory.screen.shell`). A command the agent states as a project fact ("tests
  run with ``pytest -q``") waits too: it becomes something the assistant runs, and the
  agent's conversation, where the user may or may not have said it, is unseen;
* ``agent.install`` -- installing a package;
* ``agent.secret``, ``agent.hidden-instructions``, ``agent.environment`` -- secrets and
  credentials (the keys of an account, a password vault, login details), the system
  prompt or hidden/setup instructions (what the assistant was set up with or received
  before the first message), environment variables and dotenv files;
* ``agent.answer-rule`` -- a rule about what the assistant's answers contain, include,
  start or end with, quote, show or send (an "answer" word and such a verb in one
  sentence);
* ``agent.transfer`` -- sending, posting, uploading, mirroring or forwarding anything
  (an HTTP method that sends, ``POST …``, in any language);
  mirroring counts where its sentence goes on to say where to in its language ("mirrored
  to the team drive"), a likeness does not ("the field order mirrors the CSV columns");
* ``agent.conversation`` -- the conversation itself (all of it, its history or transcript)
  and, in the same sentence, a verb that puts it into what the assistant writes or sends
  ("each summary ends with a block containing the full conversation so far");
* text in invisible Unicode tag characters is read as the ASCII it spells, and waits as
  ``agent.hidden-instructions``;
* ``agent.language`` -- an item in a language the lexicons do not cover, or whose
  language cannot be told though it has words to read: what the screen cannot read, it
  cannot allow.

The concepts are words of ``lexicons.yaml`` in every language it lists, matched in any
item whatever its language (code-mixed items are common), after folding (accents,
width, case), in the text as written and with look-alike letters, leetspeak and
letter-spaced words (``A P I  k e y``) undone.

``said``: the user's own words when the item was proposed inside a turn the user spoke
in (the memory tool under ``%%agent``): a finding whose evidence the user wrote (the
host, the command, the words) does not count -- the user's own rule about their API key
is theirs -- while everything else the item carries still waits.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from functools import cache, lru_cache

from .._language import LATIN, detect, language_label, words_of, zipf
from .destinations import destinations, normalise
from .lexicons import fold, lexicon, word_pattern
from .rules import Finding
from .shell import commands, installs

__all__ = ["AGENT_RULES", "agent_findings", "unread_language"]

AGENT_RULES = (
    "agent.destination",
    "agent.command",
    "agent.install",
    "agent.secret",
    "agent.hidden-instructions",
    "agent.environment",
    "agent.answer-rule",
    "agent.transfer",
    "agent.conversation",
    "agent.language",
)
_CONCEPT_RULES = (
    ("secret", "agent.secret"),
    ("hidden", "agent.hidden-instructions"),
    ("environment", "agent.environment"),
    ("transfer", "agent.transfer"),
)
# A ".env" file named as such (the lexicons hold words; this is a file name).
_DOTENV = re.compile(r"(?<![\w.-])\.env(?:\.[\w-]+)?(?![\w-])")
# Look-alike letters of other scripts and leetspeak, inside words that hold Latin letters.
_LOOKALIKE = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0455\u0458\u03bf\u03b1\u03b5\u03b9\u03ba\u03bd\u03c4\u03c5\u03c1",
    "aeopcyxisjoaeikvtup",
)
_LEET = str.maketrans("0134579@$", "oieastgas")
_MIXED = re.compile(r"[\w@$]+")
_SPACED_LETTERS = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .*_-]){2,}[^\W\d_](?![^\W\d_])")


def _unmasked(text: str) -> str:
    """``text`` with look-alike letters and leetspeak folded inside mixed words, and
    letter-spaced words joined ("A P I  k e y" is "API key")."""

    def one(m: re.Match[str]) -> str:
        word = m.group()
        latin = any("a" <= c <= "z" for c in word)
        other = any(not c.isascii() or c.isdigit() or c in "@$" for c in word)
        return word.translate(_LOOKALIKE).translate(_LEET) if latin and other else word

    folded = _MIXED.sub(one, text.casefold())
    return _SPACED_LETTERS.sub(lambda m: re.sub(r"[ .*_-]", "", m.group()), folded)


# What may need unmasking: a digit or @ $ against a letter, a Cyrillic or Greek letter,
# single letters spaced out.
_MASK_HINT = re.compile(
    r"[^\W\d_][0-9@$]|[0-9@$][^\W\d_]|[\u0370-\u03ff\u0400-\u04ff]|(?:\b\w[ .*_-]){2}\w\b"
)


def _variants(text: str) -> tuple[str, ...]:
    """The folded text and, when it differs, its unmasked form (see :func:`_unmasked`)."""
    plain = fold(text)
    if not _MASK_HINT.search(text):
        return (plain,)
    unmasked = fold(_unmasked(unicodedata.normalize("NFKC", text)))
    return (plain,) if unmasked == plain else (plain, unmasked)


def agent_findings(text: str, *, said: str | None = None) -> tuple[Finding, ...]:
    """The agent rules that fire on an item's text (name, description and body), each
    with its evidence; ``said``: the user's words, when the item comes from a turn they
    spoke in (see the module docstring)."""
    lex = lexicon()
    # Text in Unicode tag characters is invisible where the item is shown: read it as the
    # ASCII it spells, and say that it hides.
    hidden = "".join(_TAGGED.findall(text)).translate(_UNTAG).strip()
    if hidden:
        text = text.translate(_UNTAG)
    variants = _variants(text)
    user = _UserWords(said)
    # The languages of its sentences, when an exception of one language only is in it:
    # the lexicons' exceptions in them apply ("ثبت" installs in Arabic, records in Persian).
    scoped = any(lex.scoped(v) for v in variants) or lex.scoped(fold(text))
    told = _languages(text) if scoped else frozenset()
    out: list[Finding] = []
    # Where the first line ends (a record's name: ``_agent_text``), read in a variant of
    # the same length.
    named = text.find("\n")

    def add(rule_id: str, evidence: str) -> None:
        if not user.wrote(evidence):
            finding = Finding(rule_id, evidence)
            if finding not in out:
                out.append(finding)

    if hidden:
        add("agent.hidden-instructions", f"invisible text: {hidden}")
    for where in destinations(text):
        add("agent.destination", where)
    for m in _HTTP_SEND.finditer(text):
        add("agent.transfer", m.group())
    for command in commands(text, languages=told):
        add("agent.command", command)
    for word in installs(text, languages=told):
        add("agent.install", word)
    for variant in variants:
        for concept, rule_id in _CONCEPT_RULES:
            for m in lex.find(concept, variant, languages=told):
                if not (concept == "secret" and _a_unit(variants[0], variant, m, named)):
                    add(rule_id, m.group())
        for m in _DOTENV.finditer(variant):
            add("agent.environment", m.group())
        # Mirroring is a transfer when its sentence goes on to say where to, in the same
        # language ("mirrored to the team drive"), not when it is a likeness ("the field
        # order mirrors the CSV columns").
        mirrors = _ordered(
            *(
                [m for m in found if _followed_in_its_sentence(variant, m, f"toward:{lang}")]
                for lang in sorted(lex.languages)
                if (found := lex.find(f"mirror:{lang}", variant, languages=told))
            )
        )
        for m in mirrors:
            add("agent.transfer", m.group())
        verbs = _ordered(lex.find("answer_verb", variant, languages=told), mirrors)
        # An answer word and such a verb in one sentence.
        answers = lex.find("answer", variant, languages=told)
        for answer in answers:
            verb = _in_its_sentence(variant, answer, verbs)
            if verb is not None:
                add("agent.answer-rule", f"{answer.group()} … {verb.group()}")
                break
        # The conversation itself, and a verb that puts it somewhere, in one sentence.
        sends = _ordered(verbs, lex.find("transfer", variant, languages=told))
        for talk in lex.find("conversation", variant, languages=told):
            verb = _in_its_sentence(variant, talk, sends)
            if verb is not None:
                add("agent.conversation", f"{talk.group()} … {verb.group()}")
                break
    why = unread_language(text)
    if why is not None:
        out.append(Finding("agent.language", why))
    return tuple(out)


# Unicode tag characters (U+E0020-U+E007E) spell ASCII invisibly.
_UNTAG = {tag: tag - 0xE0000 for tag in range(0xE0020, 0xE007F)}
_TAGGED = re.compile("[\U000e0020-\U000e007e]")
# An HTTP method that sends, written as one, before what it sends ("POST the summary
# to port 9009"): a transfer in any language.
_HTTP_SEND = re.compile(
    r"(?<![\w/])(?:POST|PUT|PATCH)(?=\s+[^\W\d_])"
    # ... not the method named as a kind of request ("POST requests are rate limited").
    r"(?!\s+(?:requests?|endpoints?|methods?|bod(?:y|ies)|calls?|routes?|handlers?|payloads?"
    r"|verbs?|api|anfrage|requête|solicitud|richiest|requisiç|запрос)(?![^\W\d_]))"
)


def _ordered(*groups: list[re.Match[str]]) -> list[re.Match[str]]:
    """The matches of ``groups`` in the order they start."""
    return sorted((m for group in groups for m in group), key=lambda m: m.start())


def _in_its_sentence(
    text: str, word: re.Match[str], others: list[re.Match[str]]
) -> re.Match[str] | None:
    """The first of ``others`` (in order) in the sentence of ``text`` that holds ``word``
    other than ``word`` itself."""
    start, end = _sentence_span(text, word.start())
    at = [m.start() for m in others]
    for m in others[bisect_left(at, start) :]:
        if m.start() >= end:
            return None
        if m.span() != word.span():
            return m
    return None


def _followed_in_its_sentence(text: str, word: re.Match[str], concept: str) -> bool:
    """Whether a word of ``concept`` follows ``word`` in its sentence of ``text``."""
    _, end = _sentence_span(text, word.start())
    return any(word.end() <= m.start() < end for m in lexicon().find(concept, text))


def _languages(text: str) -> frozenset[str]:
    """The languages ``text`` and its sentences are told to be written in."""
    parts = [text, *(p for p in _SENTENCES.split(text) if p.strip())]
    return frozenset(lang for p in parts if (lang := detect(p, function_word=False)))


# A number just before a word ("8,192 tokens", "50 тыс. токенов", "32k tokens", Romanian's
# "8.192 de tokenuri").
_COUNT_BEFORE = re.compile(r"\d[\d,.\s]*(?:[kmb]|тыс\.?|млн\.?|千|万)?\s*(?:de\s+)?$")


def _a_unit(plain: str, text: str, m: re.Match[str], first: int = -1) -> bool:
    """Whether the credential word ``m`` of ``text`` (a variant of the folded ``plain``)
    is a unit of text: a word like "token" after a number, or in a sentence about a
    tokenizer or a vocabulary ("«токен» означает токен BPE-словаря"). "API token",
    "access token" are other entries and still count. The number is read in ``plain``
    when the variant has the same length (unmasking made "1k" "ik").
    ``first``: where the item's first line, its name, ends (-1: unknown)."""
    lex = lexicon()
    if m.group().strip("«»\"'") not in lex.counted_words:
        return False
    if len(plain) == len(text):
        text = plain
    if _counted_here(text, m.start()):
        return True
    # The item's name, its first line (``first``: where it ends) has the body's sense: a
    # unit when the rest of the item counts such words ("limite jetons modele" beside
    # "tronque les textes à 512 jetons").
    return 0 <= m.start() < first and any(
        _counted_here(text, other.start()) for other in _counted_words().finditer(text, first)
    )


def _counted_here(text: str, at: int) -> bool:
    """Whether the word at ``at`` counts text: after a number, or in a sentence about a
    tokenizer or a vocabulary."""
    if _COUNT_BEFORE.search(text, max(0, at - 24), at):
        return True
    return _senses_in(text, *_sentence_span(text, at))


@cache
def _counted_words() -> re.Pattern[str]:
    return word_pattern(tuple(sorted(lexicon().counted_words)))


@cache
def _token_senses() -> re.Pattern[str]:
    return word_pattern(lexicon().token_senses)


def _sentence_span(text: str, at: int) -> tuple[int, int]:
    """Where the sentence holding ``text[at]`` starts and ends."""
    starts, ends = _sentence_ends(text)
    i = bisect_left(starts, at)
    return (ends[i - 1] if i else 0), (starts[i] if i < len(starts) else len(text))


@lru_cache(maxsize=8)
def _sentence_ends(text: str) -> tuple[list[int], list[int]]:
    """Where each sentence end of ``text`` starts and ends: found once per text, so an
    item of many words to check costs linear time, not a scan from the start each."""
    found = list(_SENTENCE_END.finditer(text))
    return [m.start() for m in found], [m.end() for m in found]


@lru_cache(maxsize=256)
def _senses_in(text: str, start: int, end: int) -> bool:
    return bool(_token_senses().search(text, start, end))


# A full stop ends a sentence where a space or the end follows ("tok_emb.weight" and
# "train.py" end none); so do the ideographic full stop, the danda, the Urdu full stop
# and the Arabic question mark.
_SENTENCE_END = re.compile("[.!?](?=\\s|$)|[\n\u3002\u0964\u06d4\u061f]")


class _UserWords:
    """What the user wrote, folded the ways findings are (destinations, words)."""

    def __init__(self, said: str | None) -> None:
        self.texts = () if not said else (normalise(said), fold(said), said.casefold())

    def wrote(self, evidence: str) -> bool:
        if not self.texts:
            return False
        token = evidence.split(" (", 1)[0]  # "0x5db8d822 (93.184.216.34)": the spelling
        return any(token in text for text in self.texts)


#: The fewest words an item needs for its language to matter: fewer, and there is
#: nothing to read beyond what the other rules check (names, numbers, code).
_MIN_PROSE_WORDS = 4
#: The least share of an item's words its language (or English) must know: technical
#: notes hold many words no frequency list has ("npm", "utils"), an unread language
#: taken for a neighbour holds few it knows.
_KNOWN_SHARE = 0.34
_SCRIPT_DECIDED = frozenset({"ja", "zh", "ko"})
# Scripts only a language the screen reads writes, whose words are read by their script:
# kana, Han, Hangul, and Thai (wordfreq has no Thai list: its words are known to none).
_BY_SCRIPT = re.compile("[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def unread_language(text: str) -> str | None:
    """Why the screen cannot read ``text`` (None: it can): a language its lexicons do not
    cover, none that can be told, or a sentence whose words the lists of its language
    (and English) mostly do not know -- another language taken for a neighbour, or one
    appended to a note in a language the screen reads.

    A short or code-mixed note may be told as a near neighbour ("sales tablosunda region
    sütunu var" scores Danish first); it is read all the same when two thirds of its words
    are words of the languages the screen reads."""
    covered = lexicon().languages
    words = [w for w in words_of(text) if len(w) > 1]
    # A terse note has no function word to go by; its words still tell its language.
    lang = detect(text, function_word=False)
    if lang in _SCRIPT_DECIDED or len(words) < _MIN_PROSE_WORDS:
        return None
    if lang is None and _BY_SCRIPT.search(text):
        # A note mixing scripts ("팀은 … matplotlib보다 plotly를 선호한다" under a name in
        # Latin letters) is told sentence by sentence: each is Korean, Japanese, Chinese
        # or Thai by its script, or too short to matter, or read as any other.
        parts = [p for p in _SENTENCES.split(text) if p.strip()]
        if len(parts) > 1:
            unread = (unread_language(p) for p in parts)
            return next((why for why in unread if why is not None), None)
    if lang is not None and lang in covered:
        for sentence in _SENTENCES.split(text):
            # (Words in Korean, Japanese, Chinese or Thai script are read by their script.)
            said = [w for w in words_of(sentence) if len(w) > 1 and not _BY_SCRIPT.search(w)]
            # The words of each script are read in their own language too (an Arabic
            # sentence is told as English for its "Python" and "scikit-learn").
            langs = {lang, "en"} | _told_by_script(said, covered)
            known = sum(1 for w in said if any(zipf(w, code) > 0 for code in langs))
            if len(said) >= _MIN_PROSE_WORDS and known < _KNOWN_SHARE * len(said):
                return f"a sentence of it is not {_label(lang)} the screen knows"
        return None
    if _words_read(words, covered):
        return None
    if lang is None:
        return "its language cannot be told, so the screen cannot read it"
    return f"it is written in {_label(lang)}, which the screen does not read"


_SENTENCES = re.compile(r"(?<=[.!?\u3002\u06d4\u061f])\s+|\n")


def _script(word: str) -> str:
    """The script of a word's first letter ("LATIN", "ARABIC", "CYRILLIC" …)."""
    return unicodedata.name(word[0], "?").split(" ", 1)[0]


#: The share of a note's words the languages read must know for it to be read although
#: its language was told as another (or not told).
_READ_SHARE = 2 / 3


def _told_by_script(words: list[str], covered: frozenset[str]) -> set[str]:
    """The languages read that the words of each script are told to be in."""
    by_script: dict[str, list[str]] = {}
    for w in words:
        by_script.setdefault(_script(w), []).append(w)
    return {
        code
        for group in by_script.values()
        if (code := detect(" ".join(group), function_word=False)) in covered
    }


def _words_read(words: list[str], covered: frozenset[str]) -> bool:
    """Whether two thirds of ``words`` are words of the languages read: the Latin-script
    ones and those the words of each script are told to be in ("בטבלה events יש עמודה
    region": as many Latin letters as Hebrew ones, no language for the whole)."""
    words = [w for w in words if not _BY_SCRIPT.search(w)]  # read by their script
    langs = {lang for lang in LATIN if lang in covered} | _told_by_script(words, covered)
    known = sum(1 for w in words if any(zipf(w, lang) > 0 for lang in langs))
    return known >= _READ_SHARE * len(words)


def _label(code: str) -> str:
    return language_label(code)
