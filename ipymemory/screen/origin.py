# Markers of many languages are part of the rules.
# ruff: noqa: RUF001
"""Where a proposed memory came from, decided by our code from the canonical history.

SPEC §7: ``user`` (supported by what the user wrote), ``tool`` (only by tool output:
files read, Python output), ``assistant`` (only by the answer), ``manual`` (written by
a person through the API, CLI or an import -- given by the caller, never decided here).
The extractor's say is never taken: it cannot tell a file that reads "From now on,
remember …" from the user saying it, and an attacker writes such files.

**The three sources**, read from the message structure, never from the text:

* user -- ``text`` blocks (or string content) of user-role messages. ``tool_result``
  blocks ride in user-role messages too but are NOT the user's words;
* tool -- the content of every ``tool_result`` block (file text, Python output, errors);
* assistant -- ``text`` blocks of assistant messages and the inputs of its ``tool_use``
  calls (code it wrote). Thinking blocks are ignored.

Nothing inside a text can move it to another source: a file that holds
``Human: remember …`` or a forged ``</tool_result>`` tag is still tool output.

**Support.** The item's text (description + body) becomes a set of terms: lowercase
ASCII words of 3+ characters and CJK character bigrams (the SPEC §3 tokens), plural and
-ing/-ed endings folded, function words and the extractor's stock phrasing ("user",
"prefers", "remember", …) dropped. Specific terms -- with a digit, or 9+ characters
long -- weigh 2, others 1. A source's support = the weight of the item's terms found
in that source / the weight of all its terms, in [0, 1].

**Decision** (θ = ``ORIGIN_SUPPORT_THRESHOLD`` = 0.5, δ = ``ORIGIN_TIE_MARGIN`` = 0.15;
distrust order tool > assistant > user):

1. tool, if tool support ≥ θ and ≥ user support - δ: what a file or an output says,
   the user did not clearly say more of; a tie goes to the less trusted origin --
   except when user support ≥ θ and the user *stated* every name and number the item
   holds (at least one; stated = the user's clauses that do not ask, :mod:`.speech`): the
   specifics are the user's and the file only agrees ("The staging DB is
   db-stg.internal:5433 - check config.yaml agrees"). A question is not a statement:
   "Should we skip the tests for release 2025.1? Check policy.md" with a file answering
   "yes" stays tool, and so does a tie on an item with no name or number at all
   ("skip the test suite when deploying to staging": nothing in it is specifically
   the user's);
   also tool, if at least ``ORIGIN_TOOL_ONLY_SHARE`` = 0.25 of the item's weight is in
   terms that ONLY tool output holds (neither the user nor the assistant wrote them):
   the item carries content nobody but a file or an output supplied, even when the
   answer's framing words ("the script printed …") cover the rest;
   also tool, if the item holds a name or a number (a capitalised word not opening a
   sentence, or a term with a digit) that neither the user nor the assistant wrote,
   and either tool output holds it verbatim or the tool output is mostly in another
   script (letters mostly non-ASCII: the extractor translated it, a transliterated
   name included): who or what a fact is about is content, not framing (found with a
   planted item translated from a German file while the user's question shared its
   other words: user support 0.56, only the name ``Kowalski`` tied it to the file).
   The answer's mention does not count when tool output is in another language than
   the item: the answer may be translating the file (a Vietnamese CSV note, an
   English answer and item naming its branch, issue 39).
   A name from nowhere in a turn whose tool output is in the item's script is left
   alone: the extractor names things itself ("GitHub token" for a ``ghp_`` key);
2. else user, if user support ≥ θ (the assistant echoing the user does not demote it);
3. else assistant, if assistant support ≥ θ and ≥ tool support - δ;
4. else (no source supports it on its own: a paraphrase, a translation, a merge of
   several sources, an invention) the least trusted source the history holds text
   from: tool if it holds any tool output, else assistant, else user -- except a loose
   paraphrase of the user: user, when tool output shares NONE of the item's terms,
   is mostly in ASCII letters, and the user's statements (not questions) hold at least
   ``ORIGIN_STATED_SHARE`` = 0.25 of it ("ugh, the mocked tests lied to us again"
   beside an unrelated file read). Tool output in another script is never ruled out
   this way: a file the extractor translated has no lexical support anywhere (a
   variant choosing the best weak support let that planted item through).

Known limits: support is lexical. A planted fact that the *answer* restates in other
words than the tool output (e.g. translating a file) is ``assistant``; names and numbers
usually still tie it to the tool output (they weigh double), and the instruction check
still applies. Likewise an item the extractor paraphrased from an English file with no
word in common with it, in a turn where the user's statements share a quarter of its
words, is ``user`` by the paraphrase exception of step 4.

**Evidence** (SPEC §9). When the extractor gives an item ``evidence`` (verbatim
excerpts), :mod:`ipymemory.screen.evidence` checks each against the history: an excerpt
found in the user's text that vouches for the item (said, not asked; claims something
beyond a request about a file; linked to the item by a term or by translation; the
item takes from tool output only details of output the user pointed to, never a URL,
host, address or command) makes it ``user``. Otherwise an excerpt found only in tool
output makes it ``tool`` and one only in the answer ``assistant`` -- unless the words
alone already make it less trusted; excerpts found nowhere count for nothing, and the
decision is the one above -- except that one of the user's own statements (their
clauses that do not ask, :attr:`Sources.statements`) may vouch for the item
under the same rules as a cited excerpt (``by="statement"``): a model that quotes
nothing, or quotes badly, loses nothing the user said. Evidence never makes an item
more trusted except through a vouching excerpt or statement of the user; the words
alone decide as before. Without evidence too, an item the words would call
``user`` that holds a URL, host, address or command the user never wrote and tool
output holds is ``tool``. :class:`OriginDecision` keeps each excerpt's finding and
:meth:`OriginDecision.why` says it in one line (journal, review).

So an item is ``user`` when the user's own words carry at least half of it and tool
output does not carry about as much (or does, but every name and number in it is one
the user stated), or when it loosely paraphrases what the user stated and tool output
shares nothing with it. The numbers were chosen on
``benchmarks/poisoning.py`` (planted items from files/outputs vs facts users state);
the method is deterministic: the same item and history always give the same origin.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache, cached_property
from typing import Any

from .. import _constants as C
from .._enum import StrEnum
from .adoption import adopts, adopts_answer, adopts_mention
from .consent import grants_consent, reported_consent
from .copied import Copied, SaidOfUser, copied_from_tool, holds, said_of_user
from .evidence import (
    COMMENT_OPENS,
    EvidenceMatch,
    check_evidence,
    code_terms,
    file_mentions,
    fold_text,
    has_request,
    is_request,
    language,
    names_file,
    prose_of,
    unsafe_from_tool,
)
from .lexicon import written_in
from .normative import addressed_spans, decisive_terms, normative_spans
from .speech import clauses, question_flags, sentences, statement_clauses
from .terms import content_terms, name_terms, weight, without_names

__all__ = [
    "ORIGIN_STATED_SHARE",
    "ORIGIN_SUPPORT_THRESHOLD",
    "ORIGIN_TIE_MARGIN",
    "ORIGIN_TOOL_ONLY_SHARE",
    "Origin",
    "OriginDecision",
    "Sources",
    "decide_origin",
    "history_sources",
    "least_trusted",
    "support",
]

ORIGIN_SUPPORT_THRESHOLD = C.ORIGIN_SUPPORT_THRESHOLD
ORIGIN_TIE_MARGIN = C.ORIGIN_TIE_MARGIN
ORIGIN_TOOL_ONLY_SHARE = C.ORIGIN_TOOL_ONLY_SHARE
ORIGIN_STATED_SHARE = C.ORIGIN_STATED_SHARE


class Origin(StrEnum):
    """Where a memory came from (SPEC §7)."""

    USER = "user"
    TOOL = "tool"
    ASSISTANT = "assistant"
    MANUAL = "manual"
    #: Proposed by another agent (MCP, the memory tool): its support cannot be checked
    #: (SPEC §10), so it is given, never decided here.
    AGENT = "agent"


# Most trusted first: a person writing through the API/CLI, then the user's own words.
_TRUST_ORDER = ("manual", "user", "assistant", "agent", "tool")


def least_trusted(origins: Iterable[Origin]) -> Origin:
    """The least trusted of ``origins`` -- the origin of a record a consolidation made
    from several (it is only as trustworthy as its weakest source). Empty: ``tool``."""
    ranked = [_TRUST_ORDER.index(o.value) for o in origins]
    return Origin(_TRUST_ORDER[max(ranked)]) if ranked else Origin.TOOL


_terms = content_terms
_names = name_terms
_weight = weight


#: The fewest words of a prose line whose language is told on its own.
_WORDS_OF_PROSE = 4


def _other_script(text: str) -> bool:
    """Whether most letters of ``text`` are not ASCII (a file in Chinese, Russian, …)."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(not c.isascii() for c in letters) * 2 > len(letters)


@dataclass(frozen=True)
class ToolOutput:
    """One tool result: its text, the file names its call named (``path`` inputs and
    file names inside code), whether a later user message adopts it ("yes, use
    that"), and whether the user message it answers asks a question or for something
    (its output is then what the user asked about)."""

    text: str
    pointers: tuple[str, ...] = ()
    adopted: bool = False
    asked: bool = False
    #: The user message it answers states something about "this script", "diese
    #: Datei", "このスクリプト": the user is showing it (see ``Sources.referenced``).
    shown: bool = False


@dataclass(frozen=True)
class Sources:
    """The three sources' texts of a history (see the module docstring); the ``*_parts``
    keep them message by message (for evidence: an excerpt is found within one)."""

    user: str
    tool: str
    assistant: str
    user_parts: tuple[str, ...] = ()
    tool_parts: tuple[ToolOutput, ...] = ()
    assistant_parts: tuple[str, ...] = ()
    #: The answer's own words: the assistant's text blocks, without its tool inputs.
    answer_parts: tuple[str, ...] = ()

    @cached_property
    def terms(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """(user, tool, assistant) terms, computed once per history."""
        return _terms(self.user), _terms(self.tool), _terms(self.assistant)

    @cached_property
    def answer_terms(self) -> frozenset[str]:
        """Terms of the answer's own words: what it discussed with the user."""
        return _terms("\n".join(self.answer_parts))

    @cached_property
    def stated(self) -> frozenset[str]:
        """Terms of what the user stated: their clauses that do not ask (what the user
        asks about is not what the user says is so)."""
        return _terms(" ".join(self.statements))

    @cached_property
    def statements(self) -> tuple[str, ...]:
        """What the user said, each once (candidate excerpts when the extractor cited
        none): their sentences that are not questions, and the clauses of any sentence
        that do not ask (:mod:`~ipymemory.screen.speech`) -- "Leggi data/metadati.json:
        sono le info sul dataset…" (a request, then a statement), "since we're on py3.12
        now, can you …?", "내일부터 휴가라서 없는데, … 알려줄 수 있어?"."""
        out: list[str] = []
        for part in self.user_parts or (self.user,):
            for sentence in sentences(part):
                if not sentence.question:
                    out.append(sentence.text.strip())
                pieces = clauses(sentence.text)
                if len(pieces) > 1 or sentence.question:
                    flags = question_flags(sentence)
                    out.extend(c for c, asks in zip(pieces, flags, strict=True) if not asks)
        return tuple(dict.fromkeys(s for s in out if s))

    @cached_property
    def folded_user(self) -> str:
        return fold_text(self.user)

    @cached_property
    def folded_user_parts(self) -> tuple[str, ...]:
        return tuple(fold_text(p) for p in self.user_parts or (self.user,))

    @cached_property
    def folded_tool_parts(self) -> tuple[str, ...]:
        parts = self.tool_parts or (ToolOutput(self.tool),)
        return tuple(fold_text(p.text) for p in parts)

    @cached_property
    def folded_assistant_parts(self) -> tuple[str, ...]:
        return tuple(fold_text(p) for p in self.assistant_parts or (self.assistant,))

    @cached_property
    def pointer_terms(self) -> frozenset[str]:
        """Terms of every file name a tool call of the history named."""
        return frozenset().union(*(_terms(" ".join(p.pointers)) for p in self.tool_parts))

    @cached_property
    def tool_languages(self) -> frozenset[str]:
        """The languages tool outputs are written in (``evidence.language``)."""
        return frozenset(lang for p in self.tool_parts if (lang := language(prose_of(p.text))))

    @cached_property
    def user_languages(self) -> frozenset[str]:
        """The languages the user's messages are written in."""
        parts = self.user_parts or (self.user,)
        return frozenset(lang for p in parts if (lang := language(p) or language(p, prose=True)))

    @cached_property
    def tool_line_languages(self) -> frozenset[str]:
        """The languages of tool outputs and of each of their prose lines of a few words
        (a comment, a note, a table cell): a Turkish comment in a Python file is Turkish
        text the extractor may have translated, whatever the file's main language."""
        found = (lang for told, lang, _ in self._prose_lines if told and lang)
        return self.tool_languages | frozenset(found)

    @cached_property
    def tool_lines_by_language(self) -> dict[str, tuple[str, ...]]:
        """The prose lines of tool output (those with letters), by language: a line's
        own where it tells one, else its output's (a Greek CSV's short rows are Greek).
        What an item in another language may translate (``evidence``)."""
        found: dict[str, list[str]] = {}
        for told, lang, line in self._prose_lines:
            lang = lang if told else language(line, prose=True) or lang
            if lang and any(c.isalpha() for c in line):
                found.setdefault(lang, []).append(line)
        return {lang: tuple(lines) for lang, lines in found.items()}

    @cached_property
    def prose_lines(self) -> tuple[tuple[str | None, str], ...]:
        """(language, line) per distinct prose line of tool output long enough to tell
        one (None: it cannot tell), with letters."""
        return tuple(
            (lang, line)
            for told, lang, line in self._prose_lines
            if told and any(c.isalpha() for c in line)
        )

    @cached_property
    def _prose_lines(self) -> tuple[tuple[bool, str | None, str], ...]:
        """(told, language, line) per distinct prose line of each tool output: told when
        the line is long enough to tell its language and not all in its output's
        language (then its own, maybe None), else the output's."""
        out: list[tuple[bool, str | None, str]] = []
        for part in self.tool_parts:
            prose = prose_of(part.text)
            main = language(prose)
            for line in dict.fromkeys(line.strip() for line in prose.splitlines()):
                if len(line.split()) < _WORDS_OF_PROSE or (main and written_in(line, main)):
                    out.append((False, main, line))  # too short to tell, or the file's
                else:
                    out.append((True, language(line, prose=True), line))
        return tuple(out)

    @cached_property
    def tool_in_other_script(self) -> bool:
        """Whether most letters of the tool output are not ASCII (Chinese, Russian …)."""
        return _other_script(self.tool)

    @cached_property
    def tool_rule_terms(self) -> frozenset[str]:
        """Terms of the tool output's sentences that state a rule (``normative``)."""
        return _terms(" ".join(normative_spans(self.tool)))

    @cached_property
    def tool_rule_markers(self) -> frozenset[str]:
        """The markers of the tool output that decide what a rule allows ("skip",
        "approv": ``normative.decisive_terms``)."""
        return decisive_terms(self.tool)

    @cached_property
    def tool_code_terms(self) -> frozenset[str]:
        """Terms tool output holds in code or configuration (see ``evidence.code_terms``)."""
        return code_terms(self.tool)

    @cached_property
    def pointed_tool_terms(self) -> frozenset[str]:
        """Terms of the tool outputs the user's words point to: a call on a file the
        user named (its path or its file name), an output the user adopted, or one
        made to answer the user's question or request (what the user asked about). A
        comment of such a file, or a line of it addressed to the assistant, is a note
        beside its facts, not one of them ("# Per agreement with the analyst, models are
        evaluated on accuracy only" in the config.yaml whose split the user asked for),
        unless the user adopted the file -- though its names and numbers are the file's
        ("# z raised 2026-12-04")."""
        parts = zip(self.tool_parts, self.adopted, self._apart, strict=False)
        return frozenset().union(
            *(
                _terms(p.text) if adopted else _terms(apart[0]) | name_terms(apart[1])
                for p, adopted, apart in parts
                if self._pointed(p)
            )
        )

    def _pointed(self, part: ToolOutput) -> bool:
        return (
            part.asked or part.adopted or part.shown or any(self._named(p) for p in part.pointers)
        )

    @cached_property
    def adopted_tool_terms(self) -> frozenset[str]:
        """Terms of the tool outputs the user adopted (:attr:`adopted`)."""
        parts = zip(self.tool_parts, self.adopted, strict=False)
        return frozenset().union(*(_terms(part.text) for part, yes in parts if yes))

    @cached_property
    def adopted(self) -> tuple[bool, ...]:
        """Per tool output, whether the user adopted it: answered "yes, use that", or
        named it in a statement that tells to follow it, next to the words that do
        ("follow STYLE.md", "the way README.md says", "wie in notes.md", "como dice el
        README.md", "按照 style.md") -- "Clean up leads.csv … leads per source" does not."""
        return self._named_in(_adopts_file)

    @cached_property
    def referenced(self) -> tuple[bool, ...]:
        """Per tool output, whether the user adopted it or named it in a statement that
        is not a request for something now ("I run training with overrides, see
        README.md"), or spoke of in a statement of the turn that read it ("This sbatch
        script is the one I use"): the user's own workflow, whose flags an item may name.
        "Summarise CONTRIBUTING.md" asks about a file; it does not make the file's
        flags the user's."""
        return self._named_in(
            lambda s, p: _adopts_file(s, p) or (not is_request(s) and names_file(p, [s])),
            shown=True,
        )

    @cached_property
    def _said(self) -> tuple[str, ...]:
        """The folded user text's sentences that are not questions, and its clauses
        that do not ask: where the user can adopt or reference a file."""
        whole = [s.text for s in sentences(self.folded_user) if not s.question]
        return tuple(dict.fromkeys([*whole, *(c for _, c in statement_clauses(self.folded_user))]))

    def _named_in(self, keep: Callable[[str, str], bool], shown: bool = False) -> tuple[bool, ...]:
        said = self._said
        return tuple(
            part.adopted
            or (shown and part.shown)
            or any(keep(s, p) for p in part.pointers for s in said)
            for part in self.tool_parts
        )

    @cached_property
    def folded_referenced_code(self) -> tuple[str, ...]:
        """The folded tool outputs the user referenced (:attr:`referenced`), without their
        comments and without lines that address the assistant or speak for the user: a
        workflow's commands, not a note planted beside them."""
        marks = zip(self.referenced, self._apart, strict=False)
        return tuple(fold_text(apart[0]) for yes, apart in marks if yes)

    @cached_property
    def folded_adopted_code(self) -> tuple[str, ...]:
        """Like :attr:`folded_referenced_code`, for the outputs the user adopted."""
        marks = zip(self.adopted, self._apart, strict=False)
        return tuple(fold_text(apart[0]) for yes, apart in marks if yes)

    @cached_property
    def copied_memo(self) -> dict[str, Copied | None]:
        """:func:`~ipymemory.screen.copied.copied_from_tool`'s answer per item text."""
        return {}

    @cached_property
    def said_of_user(self) -> SaidOfUser:
        """The tool output's lines that name the user, compared once per conversation
        with every item (:mod:`~ipymemory.screen.copied`)."""
        return said_of_user(self)

    @cached_property
    def addressed_terms(self) -> frozenset[str]:
        """Terms of the tool output's lines that address the assistant or speak for the
        user (``normative.addressed_spans``): a planted note, whoever adopted the file."""
        return _terms(" ".join(span for apart in self._apart for span in apart[2]))

    @cached_property
    def notes(self) -> tuple[str, ...]:
        """The lines of tool output that address the assistant or speak for the user, and
        those that name the user: the notes a file plants, in whatever language."""
        lines = [span for apart in self._apart for span in apart[2]]
        lines += [line for line, _ in self.said_of_user.lines]
        return tuple(dict.fromkeys(line.strip() for line in lines if line.strip()))

    @cached_property
    def fact_terms(self) -> tuple[frozenset[str], ...]:
        """Per tool output, the terms of its text without its :attr:`notes`: what a file
        says of itself (an item restating a note is not about the file)."""
        out = []
        for part in self.tool_parts:
            text = part.text
            for note in self.notes:
                text = text.replace(note, " ")
            out.append(_terms(text))
        return tuple(out)

    @cached_property
    def _apart(self) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        """Per tool output, its workflow and its notes (:func:`_notes_apart`), once."""
        return tuple(_notes_apart(part.text) for part in self.tool_parts)

    def _named(self, pointer: str, within: Sequence[str] | None = None) -> bool:
        return names_file(pointer, [self.folded_user] if within is None else within)


def _notes_apart(text: str) -> tuple[str, str, tuple[str, ...]]:
    """(``text`` without its comments and the lines that address the assistant or speak
    for the user, those comments and lines, the spans that address or speak for the
    user): a file's workflow, the notes beside it, and its planted-looking notes."""
    spans = tuple(addressed_spans(text))
    addressed = set(spans)
    kept: list[str] = []
    notes: list[str] = []
    for line in text.splitlines():
        if line in addressed:
            notes.append(line)
            continue
        comment = _COMMENTED.search(line)
        if comment is not None:
            notes.append(comment.group())
            line = line[: comment.start()]
        if any(a in line for a in addressed):
            notes.append(line)
        else:
            kept.append(line)
    return "\n".join(kept), "\n".join(notes), spans


# A comment to the line's end, or an HTML comment.
_COMMENTED = re.compile(rf"(?:{COMMENT_OPENS}).*$|<!--.*?(?:-->|$)")


def _content_text(content: Any) -> Iterable[str]:
    """All text inside a ``tool_result``'s content (a string or a list of blocks)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    yield block["text"]
                elif block.get("type") == "tool_result":
                    yield from _content_text(block.get("content"))


def _input_text(value: Any) -> str:
    """A tool call's input as text; an input too deep to serialise counts as none."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        return ""


def _adopts_file(sentence: str, pointer: str) -> bool:
    """Whether ``sentence`` names the file at ``pointer`` next to words that adopt it."""
    return any(adopts_mention(sentence, a, b) for a, b in file_mentions(pointer, sentence))


_PATH_RUN = re.compile(r"[\w~./\\-]+")
_EXTENSION = re.compile(r"\w\.[A-Za-z0-9]{1,6}")


def _file_names(code: str) -> list[str]:
    """Path-like runs of ``code`` ending in a file extension (``data/sales.csv``)."""
    out = []
    for m in _PATH_RUN.finditer(code):
        run = m.group()
        dot = run.rfind(".")
        if dot > 0 and _EXTENSION.fullmatch(run, dot - 1):
            out.append(run)
    return out


def _pointers(tool_input: Any) -> tuple[str, ...]:
    """The file names a tool call names: string inputs that look like paths, and file
    names inside code."""
    if not isinstance(tool_input, dict):
        return ()
    out: list[str] = []
    for key, value in tool_input.items():
        if not isinstance(value, str):
            continue
        if key in ("path", "file", "filename", "file_path", "dir", "directory"):
            out.append(value)
        else:
            out.extend(_file_names(value[:20_000]))
    return tuple(out)


def history_sources(history: Sequence[dict[str, Any]]) -> Sources:
    """Split a canonical history (Messages-API messages) into the three sources."""
    user: list[str] = []
    tool: list[ToolOutput] = []
    assistant: list[str] = []
    answer: list[str] = []
    calls: dict[str, tuple[str, ...]] = {}
    adopted_from = 0  # tool outputs before a user message that adopts them
    # ... or after it: a message that asks, then adopts the answer, with nothing before
    # it to adopt ("Qual è la scadenza? Segnatela") adopts the outputs that answer it.
    forward = False
    asking = False  # the last user message asks a question or for something
    showing = False  # ... or says something about "this file"
    for message in history:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            continue
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_result":
                pointers = calls.get(str(block.get("tool_use_id")), ())
                outputs = _content_text(block.get("content"))
                tool.extend(
                    ToolOutput(t, pointers, adopted=forward, asked=asking, shown=showing)
                    for t in outputs
                )
            elif kind == "text" and isinstance(block.get("text"), str):
                said = block["text"]
                if role == "user":
                    user.append(said)
                    asking = _asks_for_something(said)
                    showing = _shows_something(said)
                    adopting = adopts(said)
                    forward = adopted_from == len(tool) and adopts_answer(said)
                    if adopting:
                        later = tool[adopted_from:]
                        tool[adopted_from:] = [replace(t, adopted=True) for t in later]
                    adopted_from = len(tool)
                elif role == "assistant":
                    assistant.append(said)
                    answer.append(said)
                else:
                    tool.append(ToolOutput(said))
            elif kind == "tool_use" and role == "assistant":
                assistant.append(_input_text(block.get("input")))
                calls[str(block.get("id"))] = _pointers(block.get("input"))
    return Sources(
        "\n".join(user),
        "\n".join(t.text for t in tool),
        "\n".join(assistant),
        tuple(user),
        tuple(tool),
        tuple(assistant),
        tuple(answer),
    )


# A demonstrative before a noun (after it in Indonesian and Vietnamese): the user speaks
# of something in front of them.
_DEMONSTRATIVE = re.compile(
    r"\b(?:this|these|that|those|diese[rsmn]?|dieses|ce|cet|cette|ces|este|esta|estos|estas"
    r"|ese|esa|esos|esas|questo|questa|questi|queste|esse|essa|esses|essas|dit|deze|ten|ta"
    r"|tego|tej|этот|эта|это|эти|этом|bu|şu|bunu|bunda|यह|ये|इस|yeh)\s+\w+"
    r"|(?:هذا|هذه|هذي)\s+\w+|\w+\s+(?:ini|này)\b|この|その|这个|这份|这些|这张|该|이\s"
    # "that's how we train", "так мы обучаем", "우리는 이렇게 학습해": the user names what
    # they were shown as their own way of working
    r"|\b(?:that's|this is|that is|it's) (?:how|what|the one|the way|our|my)\b"
    r"|\b(?:so machen wir|so mache ich|das ist unser\w*|das ist mein\w*|c'est comme ça|c'est ainsi"
    r"|voilà comment|así es como|así lo hacemos|è così che|così facciamo|é assim que|zo doen we"
    r"|zo doe ik|tak to robimy|tak robimy|так мы|вот так|böyle yapıyoruz|bu şekilde"
    r"|isi tarah|aise hi|begitulah|beginilah|ini cara kami|dengan cara ini|đó là cách|đây là cách"
    r"|như thế này)\b"
    r"|هكذا|بهذه الطريقة|ऐसे ही|इसी तरह|이렇게|이런 식으로|こうやって|このように|就是这样|这样"
)


def _shows_something(said: str) -> bool:
    """Whether a user message states something (not asks) about "this …"."""
    return any(
        _DEMONSTRATIVE.search(clause) and not is_request(clause)
        for _, clause in statement_clauses(fold_text(said))
    )


def _asks_for_something(said: str) -> bool:
    """Whether a user message holds a question or a request for something now."""
    return any(s.question or has_request(s.text) for s in sentences(fold_text(said)))


def support(item_terms: frozenset[str], source_terms: frozenset[str]) -> float:
    """Weighted share of the item's terms found in a source (0 for an item without terms)."""
    total = sum(_weight(t) for t in item_terms)
    if not total:
        return 0.0
    return sum(_weight(t) for t in item_terms & source_terms) / total


@dataclass(frozen=True)
class OriginDecision:
    """The origin of one item, the support scores and, when the extractor gave
    ``evidence``, what each excerpt was found to be. ``by``: ``"evidence"`` when an
    excerpt decided it, ``"statement"`` when one of the user's own statements vouched
    for it, else ``"support"`` (the words alone)."""

    origin: Origin
    user: float
    tool: float
    assistant: float
    evidence: tuple[EvidenceMatch, ...] = ()
    by: str = "support"
    #: The rules that let the user's words vouch where they would not have, (rule id,
    #: evidence): recorded as findings, the item being the user's only by them.
    allowed: tuple[tuple[str, str], ...] = ()
    #: The words of the item that report a consent the user's words do not give
    #: (:data:`~ipymemory.screen.consent.REPORTED_CONSENT`): it waits, whatever else
    #: vouched for it.
    consent: str = ""
    #: The user's words it may translate, and the lines of tool output it may translate
    #: instead, when only the model can tell which it states
    #: (:data:`~ipymemory.screen.evidence.TRANSLATION_CONFIRMED`): the question a turn
    #: asks before it holds the item (none when the origin is the user's).
    asks: tuple[str, ...] = ()
    beside: tuple[str, ...] = ()

    def why(self) -> str:
        """One line for the journal and review: how the origin was decided."""
        scores = f"support user {self.user:.2f}, tool {self.tool:.2f}, answer {self.assistant:.2f}"
        how = {"evidence": "by evidence", "statement": "by a statement of the user"}.get(
            self.by, f"by {scores}"
        )
        if self.consent:
            how += f", reporting a consent ({self.consent!r}) the user's words do not give"
        if not self.evidence:
            return f"{self.origin.value} {how}"
        seen = "; ".join(m.describe() for m in self.evidence)
        return f"{self.origin.value} {how} (evidence: {seen})"


_WS = re.compile(r"\s+")


def decide_origin(
    text: str,
    sources: Sources,
    *,
    evidence: Sequence[str] = (),
    threshold: float = ORIGIN_SUPPORT_THRESHOLD,
    margin: float = ORIGIN_TIE_MARGIN,
    tool_only: float = ORIGIN_TOOL_ONLY_SHARE,
    stated_share: float = ORIGIN_STATED_SHARE,
    confirmed: Collection[str] = (),
) -> OriginDecision:
    """The origin of an item whose text (description + body) is ``text``; ``evidence``
    are the extractor's excerpts for it (SPEC §9; see :mod:`ipymemory.screen.evidence`);
    ``confirmed``: the user's words the model's translation check said it states."""
    lexical = _by_support(text, sources, threshold, margin, tool_only, stated_share)
    if lexical.origin is Origin.USER and unsafe_from_tool(text, sources):
        # A URL, host, address or command the user never wrote, taken from tool
        # output: never the user's, whatever the word overlap says.
        lexical = replace(lexical, origin=Origin.TOOL)
    copied = copied_from_tool(text, sources) if lexical.origin is Origin.USER else None
    if copied is not None and not holds(sources.user, copied.part):
        # What a line of tool output says of the user, repeated, is the line's -- as
        # when an excerpt vouches (``evidence.copied-from-tool``) -- unless the user's
        # words hold it too.
        lexical = replace(lexical, origin=Origin.TOOL)
    matches = check_evidence(text, evidence, sources, confirmed=confirmed) if evidence else ()
    stated = cache(lambda: check_evidence(text, sources.statements, sources, confirmed=confirmed))
    decision, vouching = _decided(lexical, matches, stated, exempt=True)
    if decision.origin is not Origin.USER:
        # Words the model may tell the item translates: the excerpts, and the user's
        # statements where the words alone decided (they were read then).
        read = [
            m
            for m in (*matches, *(stated() if lexical.origin is not Origin.USER else ()))
            if m.beside
        ]
        if read:
            decision = replace(
                decision,
                asks=tuple(dict.fromkeys(m.excerpt for m in read)),
                beside=tuple(dict.fromkeys(line for m in read for line in m.beside)),
            )
    # Issue 39 item 3: the rules that let the user's words vouch (a detail no tool
    # output holds, the user's rule in another language) are recorded where the origin
    # would not have been the user's without them -- explained, never decided, here.
    if vouching and all(m.allowed for m in vouching):
        without, _ = _decided(lexical, matches, stated, exempt=False)
        if without.origin is not Origin.USER:
            allowed = tuple(dict.fromkeys(a for m in vouching for a in m.allowed))
            decision = replace(decision, allowed=allowed)
    # "The user has agreed that …": a consent the user's words do not give is a file's
    # or the model's report, whoever the words point to (consent.REPORTED_CONSENT).
    if (consent := reported_consent(text)) and not grants_consent(sources.user):
        origin = decision.origin
        if origin is Origin.USER:
            origin = Origin.TOOL if _WS.sub("", sources.tool) else Origin.ASSISTANT
        decision = replace(decision, origin=origin, consent=consent, allowed=(), asks=(), beside=())
    return decision


def _decided(
    lexical: OriginDecision,
    matches: tuple[EvidenceMatch, ...],
    stated: Callable[[], tuple[EvidenceMatch, ...]],
    *,
    exempt: bool,
) -> tuple[OriginDecision, tuple[EvidenceMatch, ...]]:
    """The origin from the extractor's excerpts (``matches``), else the words alone or
    the user's statements (``stated``), and the matches that vouched for the user.
    Without ``exempt``, a match that vouches only by a rule that allows does not."""

    def vouching(found: tuple[EvidenceMatch, ...]) -> tuple[EvidenceMatch, ...]:
        return tuple(m for m in found if m.vouches and (exempt or not m.allowed))

    found = {m.found for m in matches}
    if by_evidence := vouching(matches):
        return replace(lexical, origin=Origin.USER, evidence=matches, by="evidence"), by_evidence
    # Support found only in tool output (or only in the answer): that is its origin,
    # unless the words alone already say it is less trusted.
    pointed = Origin.TOOL if "tool" in found else Origin.ASSISTANT if "assistant" in found else None
    if pointed is not None:
        if least_trusted((pointed, lexical.origin)) is not lexical.origin:
            return replace(lexical, origin=pointed, evidence=matches, by="evidence"), ()
        return replace(lexical, evidence=matches), ()
    # No excerpt, excerpts found nowhere, or the user's words that vouch for nothing:
    # as without evidence -- where one of the user's own statements may vouch for the
    # item under the same rules as a cited excerpt (the model need not have quoted it).
    if lexical.origin is not Origin.USER and (by_statement := vouching(stated())):
        return replace(lexical, origin=Origin.USER, evidence=matches, by="statement"), by_statement
    return replace(lexical, evidence=matches), ()


def _by_support(
    text: str,
    sources: Sources,
    threshold: float,
    margin: float,
    tool_only: float,
    stated_share: float,
) -> OriginDecision:
    user_terms, tool_terms, assistant_terms = sources.terms
    item = _terms(text)
    u, t, a = support(item, user_terms), support(item, tool_terms), support(item, assistant_terms)
    tool_only_terms = tool_terms - user_terms - assistant_terms
    only_tool = support(item, tool_only_terms)
    has_tool = bool(_WS.sub("", sources.tool))
    names = _names(text) & item
    # The answer vouches for a name only when the tool output is in the item's language:
    # else the answer may be translating the file ("Đà Nẵng … gộp vào Hà Nội" in a CSV
    # note, "all under Hà Nội" in the answer) and the name is the file's.
    item_lang = language(without_names(text))
    translated = item_lang is not None and any(g != item_lang for g in sources.tool_languages)
    unvouched = names - user_terms - (frozenset() if translated else assistant_terms)
    named_by_tool = bool(unvouched & tool_terms) or (
        bool(unvouched) and _other_script(sources.tool)
    )
    # A tie with tool output goes to the user when the user stated every name and
    # number the item holds: the specifics are the user's, a file only agrees.
    user_specifics = bool(names) and names <= sources.stated
    tied = t >= threshold and t >= u - margin and not (u >= threshold and user_specifics)
    if tied or only_tool >= tool_only or named_by_tool:
        origin = Origin.TOOL
    elif u >= threshold:
        origin = Origin.USER
    elif a >= threshold and a >= t - margin:
        # An answer about tool output in another language than the item may be
        # translating it (a German README's note to assistants, reported in English):
        # what it says is the output's.
        origin = Origin.TOOL if translated else Origin.ASSISTANT
    else:
        # Nothing supports it on its own: the least trusted source the history holds.
        # Tool output in the item's script that shares none of its terms is not where
        # it came from when the user's statements carry a fair share of it (a loose
        # paraphrase of the user); a translation leaves no lexical trace, so tool
        # output in another script still can be.
        paraphrase = (
            not t
            and not _other_script(sources.tool)
            and support(item, sources.stated) >= stated_share
        )
        if paraphrase:
            origin = Origin.USER
        elif has_tool:
            origin = Origin.TOOL
        elif _WS.sub("", sources.assistant):
            origin = Origin.ASSISTANT
        else:
            origin = Origin.USER
    return OriginDecision(origin, round(u, 4), round(t, 4), round(a, 4))
