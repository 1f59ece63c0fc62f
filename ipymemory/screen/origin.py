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
   holds (at least one; stated = the user's sentences that are not questions): the
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .. import _constants as C
from .._enum import StrEnum
from .._tokens import tokenize

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


# Function words and the stock words of an extractor's phrasing, which say nothing
# about where the fact came from ("The user prefers …" for "I like …").
_STOP_TEXT = """
    about above after again all also and any are because been before being both but
    can could did does doing down each for from had has have having her here him his how
    into its itself just more most not now off once only other our out over own same she
    should some such than that the their them then there these they this those through
    too under until very was were what when where which while who why will with would
    you your yours
    user user's users assistant prefer prefers preferred preference want wants wanted
    like likes liked remember note notes memory memories record always never should
    said says told tell mention mentioned asked ask please thanks okay
    """
_STOP = frozenset(_STOP_TEXT.split())


def _fold(word: str) -> str:
    """Plural and -ing/-ed endings off: "tabs"/"tab", "indenting"/"indent"."""
    if not word.isalpha() or len(word) < 4:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if word.endswith("ed") and len(word) > 4:
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _terms(text: str) -> frozenset[str]:
    return frozenset(_fold(t) for t in tokenize(text) if t not in _STOP)


_WORD = re.compile(r"\w+")
_SENTENCE_END = frozenset(".!?:;\n")


def _names(text: str) -> frozenset[str]:
    """The item's names and numbers as terms: capitalised words that do not open a
    sentence or a line, and words with a digit."""
    out: set[str] = set()
    for m in _WORD.finditer(text):
        word = m.group()
        before = text[: m.start()].rstrip(" \t\"'(\u201c\u2018")
        opens = not before or before[-1] in _SENTENCE_END
        if any(c.isdigit() for c in word) or (word[:1].isupper() and not opens):
            out.update(_fold(t) for t in tokenize(word) if t not in _STOP)
    return frozenset(out)


def _other_script(text: str) -> bool:
    """Whether most letters of ``text`` are not ASCII (a file in Chinese, Russian, …)."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(not c.isascii() for c in letters) * 2 > len(letters)


_SENTENCE = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|\n")


def _asks(sentence: str) -> bool:
    return sentence.rstrip().endswith(("?", "\uff1f"))


def _weight(term: str) -> int:
    return 2 if len(term) >= 9 or any(c.isdigit() for c in term) else 1


@dataclass(frozen=True)
class Sources:
    """The three sources' texts of a history (see the module docstring)."""

    user: str
    tool: str
    assistant: str

    @cached_property
    def terms(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """(user, tool, assistant) terms, computed once per history."""
        return _terms(self.user), _terms(self.tool), _terms(self.assistant)

    @cached_property
    def stated(self) -> frozenset[str]:
        """Terms of what the user stated: their sentences that are not questions (what
        the user asks about is not what the user says is so)."""
        return _terms(" ".join(s for s in _SENTENCE.split(self.user) if not _asks(s)))


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


def history_sources(history: Sequence[dict[str, Any]]) -> Sources:
    """Split a canonical history (Messages-API messages) into the three sources."""
    user: list[str] = []
    tool: list[str] = []
    assistant: list[str] = []
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
                tool.extend(_content_text(block.get("content")))
            elif kind == "text" and isinstance(block.get("text"), str):
                (user if role == "user" else assistant if role == "assistant" else tool).append(
                    block["text"]
                )
            elif kind == "tool_use" and role == "assistant":
                assistant.append(_input_text(block.get("input")))
    return Sources("\n".join(user), "\n".join(tool), "\n".join(assistant))


def support(item_terms: frozenset[str], source_terms: frozenset[str]) -> float:
    """Weighted share of the item's terms found in a source (0 for an item without terms)."""
    total = sum(_weight(t) for t in item_terms)
    if not total:
        return 0.0
    return sum(_weight(t) for t in item_terms & source_terms) / total


@dataclass(frozen=True)
class OriginDecision:
    """The origin of one item and the support scores it was decided on."""

    origin: Origin
    user: float
    tool: float
    assistant: float


_WS = re.compile(r"\s+")


def decide_origin(
    text: str,
    sources: Sources,
    *,
    threshold: float = ORIGIN_SUPPORT_THRESHOLD,
    margin: float = ORIGIN_TIE_MARGIN,
    tool_only: float = ORIGIN_TOOL_ONLY_SHARE,
    stated_share: float = ORIGIN_STATED_SHARE,
) -> OriginDecision:
    """The origin of an item whose text (description + body) is ``text``."""
    user_terms, tool_terms, assistant_terms = sources.terms
    item = _terms(text)
    u, t, a = support(item, user_terms), support(item, tool_terms), support(item, assistant_terms)
    tool_only_terms = tool_terms - user_terms - assistant_terms
    only_tool = support(item, tool_only_terms)
    has_tool = bool(_WS.sub("", sources.tool))
    names = _names(text) & item
    unvouched = names - user_terms - assistant_terms
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
        origin = Origin.ASSISTANT
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
