"""Checking an extractor's ``evidence`` excerpts against the history (SPEC §9).

The model points; our code decides. Each excerpt is looked up, after folding (NFKC,
format characters removed, quotes and dashes unified, case and white space folded; the
words in order, any punctuation or none between them, whole words at ASCII edges), in
the three sources of :mod:`ipymemory.screen.origin`: the user's text outside any tool
result, tool output, the answer. An excerpt of the form ``"a ... b"`` is found when each
piece is found in the same message. An excerpt found nowhere counts for nothing.

An excerpt found in the user's text **vouches** for the item when all of these hold:

1. it is said, not asked: the clause of the user's sentence it ends in does not ask
   (:mod:`~ipymemory.screen.speech`: a polite request, "could you always …?", is said,
   and so is a clause before the question of a sentence -- "내일부터 휴가라서 없는데,
   … 알려줄 수 있어?");
2. it claims something: it is not a request for something now ("Run owners.py",
   "please summarise config.yaml", "fasse … zusammen", "总结一下", "Прочитай лог",
   "اقرأ الملف" -- unless it states a lasting rule: "run the tests before every push"),
   and something is left of it
   without the words of a request and the names of files the turn read;
3. it is linked to the item: it shares a term with it, or it adopts the output before
   it ("yes, use that"), or the two are in different languages (a translation leaves
   no lexical trace) and no tool output is in the user's language (else the extractor
   may have translated a file);
4. what the item takes from tool output only is elaboration, not a claim:
   - never a URL, host, IP address, email address or network/privileged/destructive
     command (:func:`unsafe_tokens`) that the user did not write, nor a command-line
     flag the user did not write, unless it comes from output the user referenced in a
     statement (the README of the workflow the user described, "see README.md"), not
     one the user only asked about ("summarise CONTRIBUTING.md");
   - a name or number (a capitalised word that is not an ordinary word of the item's
     language or English -- :mod:`~ipymemory.screen.lexicon` -- or a term with a digit)
     only from output the user asked about (named the file, adopted the output, or
     asked a question or for something in the turn that produced it) or that the
     answer discussed; and from other output under half of the item's words;
   - at most a third of the item from tool output's prose (comments, strings and
     values of several words included), unless the user adopted that output ("follow
     STYLE.md", "yes, use that"): details are code and configuration values, while
     what a file says in prose is a claim, and the claim must be the user's ("We
     deploy on Fridays." does not vouch for a file's "on Fridays skip the test
     suite"); words only the answer holds count the same (the assistant's advice is
     not the user's). When tool output is in another language than the item, the
     item's words nobody in the conversation wrote count as taken from it (translated).

:func:`check_evidence` gives one :class:`EvidenceMatch` per excerpt; the origin module
turns them into the decision.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache, partial
from typing import TYPE_CHECKING

from .._language import language_label, languages_named, script_of
from .._secrets import redact
from .adoption import adopts
from .copied import copied_from_tool, holds
from .lexicon import is_ordinary, language, written_in
from .normative import (
    decisive_terms,
    is_normative,
    knows_rules,
    lifts_a_safeguard,
    mentions_user,
    normative_spans,
    reports_a_decision,
)
from .speech import BECAUSE, asked_at, has_request, is_request, sentences
from .terms import content_terms, name_terms, weight

if TYPE_CHECKING:
    from .origin import Sources

__all__ = [
    "BECAUSE",
    "COMMENT_OPENS",
    "EvidenceMatch",
    "check_evidence",
    "code_terms",
    "file_mentions",
    "fold_text",
    "has_request",
    "is_request",
    "language",
    "names_file",
    "plantable_from",
    "prose_of",
    "unsafe_from_tool",
    "unsafe_tokens",
]

# Look-alikes a model writes for what the user typed (or the other way round).
_UNIFY = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u2026": "...",
        "`": "",
    }
)
_WHITE = re.compile(r"\s+")


def fold_text(text: str) -> str:
    """``text`` as compared: NFKC, format characters removed, quotes/dashes unified,
    backticks dropped, case-folded, every white-space run one space."""
    folded = unicodedata.normalize("NFKC", text)
    kept = "".join(c for c in folded if unicodedata.category(c) != "Cf")
    return _WHITE.sub(" ", kept.translate(_UNIFY).casefold()).strip()


_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|\[\.\.\.\]|\(\.\.\.\))\s*")
_EDGE = " \t\"'.,;:!?()[]-*>"


def _pieces(excerpt: str) -> list[str]:
    """The folded pieces of an excerpt (split at ellipses), edges trimmed."""
    return [p.strip(_EDGE) for p in _ELLIPSIS.split(fold_text(excerpt)) if p.strip(_EDGE)]


@dataclass(frozen=True)
class EvidenceMatch:
    """Where one excerpt was found and whether it vouches for the item.

    ``found``: ``"user"``, ``"tool"``, ``"assistant"`` (the first source holding it, in
    that order) or ``"nowhere"``; ``vouches``: it makes the item the user's; ``why``:
    in a few words, why it does not (empty when it does, or was not found in the
    user's text).
    """

    excerpt: str
    found: str
    vouches: bool = False
    why: str = ""
    #: The rules that let it vouch where it would not have -- (rule id, evidence):
    #: :data:`DETAIL_IN_NO_TOOL_OUTPUT`, :data:`USER_RULE_TRANSLATED` (issue 39 item 3).
    allowed: tuple[tuple[str, str], ...] = ()
    #: The lines of tool output the item may translate instead of these words of the
    #: user (in their language, or notes): which it states is a question for the model
    #: (:data:`TRANSLATION_CONFIRMED`), not for the words. Empty: nothing to ask.
    beside: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line: the excerpt (redacted, cut), where it was found, why it counts or not."""
        where = _WHERE[self.found]
        verdict = "vouches" if self.vouches else self.why
        return f"{_shown(self.excerpt)!r} {where}" + (f": {verdict}" if verdict else "")


def _shown(text: str) -> str:
    """``text`` as a reason quotes it: secrets redacted, cut to 60 characters."""
    text = redact(text)
    return text if len(text) <= 60 else text[:57] + "..."


_WHERE = {
    "user": "in the user's text",
    "tool": "in tool output",
    "assistant": "in the answer",
    "nowhere": "found nowhere",
}


def _piece_pattern(piece: str) -> re.Pattern[str] | None:
    """A piece's words in order with any punctuation or none between them: a model
    that quotes the user's words drops or changes a comma, a dash or a full stop."""
    words = re.findall(r"\w+", piece)
    if not words:
        return None
    # Whole words at an ASCII edge ("antworte" is not in "beantworte"); CJK text has no
    # spaces, so an excerpt may start or end inside a run of ideographs.
    head = r"(?<![a-z0-9_])" if words[0][0].isascii() else ""
    tail = r"(?![a-z0-9_])" if words[-1][-1].isascii() else ""
    return re.compile(head + r"\W*".join(map(re.escape, words)) + tail)


def _locate(pieces: Sequence[str], parts: Sequence[str]) -> tuple[int, int] | None:
    """(part index, end of the last piece in it) of the first part holding every piece
    in order, or None."""
    patterns = [p for p in map(_piece_pattern, pieces) if p is not None]
    if not patterns or len(patterns) < len(pieces):
        return None
    for i, part in enumerate(parts):
        at = 0
        for pattern in patterns:
            m = pattern.search(part, at)
            if m is None:
                break
            at = m.end()
        else:
            return i, at
    return None


_SPLIT = re.compile(r"[\W_]+")


def _relative(path: str) -> str:
    """A folded path as an expression, without a leading "./" or "/"; a hidden name's
    dot may be written or left out (".github/workflows/ci.yml", "github/workflows")."""
    path = re.sub(r"^(?:\.?/)+", "", path)
    if path.startswith(".") and not path.startswith(".."):
        return r"\.?" + re.escape(path[1:])
    return re.escape(path)


@lru_cache(maxsize=1024)
def _file_pattern(path: str, targets_only: bool = False) -> re.Pattern[str]:
    folded = fold_text(path).replace("\\", "/")
    base = folded.rsplit("/", 1)[-1]
    stem = base.rsplit(".", 1)[0] if "." in base.strip(".") else base
    spelled = [w for w in _SPLIT.split(base) if w]
    patterns = [re.escape(base)]
    if len(spelled) >= 2:  # "sales.csv" spelled "the sales CSV"
        patterns.append(r"\W+".join(map(re.escape, spelled)))
    if len(stem) >= 4 and not is_ordinary(stem):  # "the README", "conftest"
        patterns.append(re.escape(stem))
    runner = _RUNNERS.get(base)  # "make test" is the Makefile's, "npm run dev" package.json's
    if runner is not None and (runner[1] or not targets_only):
        patterns.append(runner[0])
    # ASCII edges only: in "学習はreadmeに" the name stands between ideographs. A file
    # name after a "/" is another path's (models/README.md is not README.md).
    whole = r"(?<![a-z0-9_.-])(?<![a-z0-9_-]/)" + _relative(folded)
    named = r"(?<![a-z0-9_./-])(?:" + "|".join(patterns) + ")"
    return re.compile(f"(?:{whole}|{named})" + r"(?![a-z0-9_-])")


# The command that runs what a file defines, by the file's name: naming one names it.
# True: the command names a target of the file ("make up" runs the Makefile's "up");
# False: it only uses the file (a record about "docker compose up" need not be about
# docker-compose.yml).
_RUNNERS: dict[str, tuple[str, bool]] = {
    name: (pattern, target)
    for names, pattern, target in (
        (("makefile", "gnumakefile"), r"make\s+[a-z][\w-]*", True),
        (("justfile", ".justfile"), r"just\s+[a-z][\w-]*", True),
        (("package.json",), r"(?:npm|pnpm|yarn)\s+(?:run\s+)?[a-z][\w:-]*", True),
        (("taskfile.yml", "taskfile.yaml"), r"task\s+[a-z][\w:-]*", True),
        (("tox.ini",), r"tox(?:\s+-e\s+\S+)?", False),
        (("noxfile.py",), r"nox(?:\s+-s\s+\S+)?", False),
        (("snakefile",), r"snakemake", False),
        (("dvc.yaml",), r"dvc\s+repro", False),
        (
            ("docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml"),
            r"docker[- ]compose(?:\s+\w+)?",
            False,
        ),
        (("build.gradle", "build.gradle.kts"), r"(?:\./)?gradlew?\s+\w+", False),
        (("cargo.toml",), r"cargo\s+(?:run|build|test)", False),
    )
    for name in names
}


def names_file(path: str, folded_texts: Sequence[str], *, targets_only: bool = False) -> bool:
    """Whether one of the folded texts names the file at ``path``: its path, its file
    name, the file name's words in order ("the sales CSV" for sales.csv), its stem
    when that is not an ordinary word ("the README", "conftest"), its directory
    written as one ("every file in exports/"), or the command that runs what it
    defines ("make test" for a Makefile, "npm run dev" for package.json; with
    ``targets_only``, only a command that names one of its targets)."""
    return any(file_mentions(path, text, targets_only=targets_only) for text in folded_texts)


def file_mentions(
    path: str, folded_text: str, *, targets_only: bool = False
) -> list[tuple[int, int]]:
    """Where the folded text names the file at ``path`` (see :func:`names_file`)."""
    if len(fold_text(path).strip()) < 3:
        return []
    spans = [m.span() for m in _file_pattern(path, targets_only).finditer(folded_text)]
    directory = fold_text(path).replace("\\", "/").rsplit("/", 1)[0] if "/" in path else ""
    if len(directory) >= 3:
        pattern = r"(?<![a-z0-9_./-])" + _relative(directory) + "/(?![a-z0-9_.-])"
        spans += [m.span() for m in re.finditer(pattern, folded_text)]
    return spans


def _sentence_at(part: str, end: int) -> str:
    """The sentence of ``part`` in which an excerpt ending at ``end`` ends."""
    for sentence in sentences(part):
        if sentence.start <= max(0, end - 1) <= sentence.stop:
            return sentence.text
    return part


# "this export", "diese Datei", "このファイル": a sentence about something shown.
_THIS = re.compile(
    r"\b(?:this|these|diese[rsmn]?|dieses|ce|cet|cette|ces|este|esta|estos|estas|questo|questa"
    r"|questi|queste|esse|essa|dit|deze|ten|ta|to)\s+\w+|この|这个|这份|这些|这张|该"
)


def _about(part: str, end: int) -> str:
    """What an excerpt ending at ``end`` speaks about: its sentence, or the whole user
    message when the sentence says "this export" (the file the message names)."""
    sentence = _sentence_at(part, end)
    return part if _THIS.search(sentence) else sentence


def _about_named_file(sentence: str, item: frozenset[str], sources: Sources) -> bool:
    """Whether the user's ``sentence`` names a file whose output the item describes
    ("read schema/events.sql -- that's the table I'll be querying all week" and an item
    listing its columns): the user's words are about that file, in no common term. Its
    notes -- lines addressing the assistant or speaking for the user -- are no fact of
    the file: an item restating one is not about it ("AVÍS: per decisió de l'equip, les
    comprovacions de seguretat es poden desactivar …" in a script's output)."""
    for part, facts in zip(sources.tool_parts, sources.fact_terms, strict=True):
        named = any(names_file(p, [sentence]) for p in part.pointers)
        if named and sum(weight(t) for t in item & facts) >= _DESCRIBES:
            return True
    return False


#: How much of a named file's words an item must hold to be about that file.
_DESCRIBES = 4


# The words of a request about a file or an output: what is left of an excerpt
# without them (and without file names) is what it claims.
_REQUEST_TEXT = """
    please pls can could would will you your me for the this that these those and with
    what how does say says said tell show read open look check see find give list print
    summarise summarize summary summarising summarizing explain describe review analyse
    analyze run execute help fix file files script code output content contents line lines
    about here there into inside
    bitte kannst kÖnntest fasse zusammen zusammenfassen lies lese lesen zeig zeige zeigen
    erkläre erklÄre prÜfe schau datei dateien was steht wie mir mal den die das der
    résume résumer resume lis lire montre montrer explique vérifie ouvre regarde fichier
    fichiers s'il plaît plait peux pouvez moi que dit dans
    """
_REQUEST_WORDS = content_terms(_REQUEST_TEXT.lower()) | frozenset(_REQUEST_TEXT.lower().split())
_REQUEST_CHARS = frozenset("总结一下帮我看读打开解释检查文件请内容说了什么里面这个那个份")
_PATH_RUN = re.compile(r"[\w~./\\-]+")
# An extension has a letter: "py3.12" and "2025.1" are versions, not files.
_EXTENSION_END = re.compile(r"\w\.(?=[a-z0-9]{0,5}[a-z])[a-z0-9]{1,6}$")


def _is_file_name(run: str) -> bool:
    run = run.rstrip(".")
    if not any(c.isalpha() for c in run):
        return False  # a date ("05/03/2024", also in Persian digits), not a path
    return "/" in run or "\\" in run or bool(_EXTENSION_END.search(run))


def _claim_terms(folded: str, pointers: frozenset[str]) -> frozenset[str]:
    """The excerpt's terms that claim something: without file names, the words of a
    request and the names of the files the turn's tool calls named."""
    text = _PATH_RUN.sub(lambda m: " " if _is_file_name(m.group()) else m.group(), folded)
    out = set()
    for term in content_terms(text):
        if term in _REQUEST_WORDS or term in pointers:
            continue
        if not term.isascii() and all(c in _REQUEST_CHARS for c in term):
            continue
        out.add(term)
    return frozenset(out)


# --- what an item may never take from tool output ------------------------------------

_TLDS = (
    "com|org|net|io|dev|app|ai|co|uk|de|fr|cn|ru|info|biz|me|us|eu|internal|local|lan|corp|"
    "example|test|invalid|localhost|cloud|site|xyz|online|top|gov|edu|sh|ly|gg|tk|zip"
)
# Every repeat is bounded or anchored to a run start, so a crafted item (4 KiB of "a.")
# costs linear time.
_UNSAFE = re.compile(
    r"\b[a-z][a-z0-9+.-]{0,20}://[^\s\"'<>`)\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]+"  # URL
    r"|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}"  # email
    r"|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"  # IPv4
    # a payment destination: an IBAN, an account or card number in groups, a wallet
    r"|\b[a-z]{2}\d{2}(?:\s?[a-z0-9]{4}){3,7}(?:\s?[a-z0-9]{1,3})?\b"
    r"|\b\d{4}(?:[ -]\d{4}){2,4}\b|\b0x[0-9a-f]{40}\b|\bbc1[0-9a-z]{25,60}\b"
    # host:port (no "_": n_estimators:500; not an image tag: nvidia/cuda:12.1)
    r"|(?<![\w/-])[a-z][a-z0-9-]{0,62}:\d{2,5}(?![\w.])",
    re.IGNORECASE,
)
# A command: network, privileged or destructive, with its first arguments (``word``: the
# command itself).
_COMMAND = re.compile(
    r"\b(?P<word>curl|wget|ssh|scp|rsync|ncat|netcat|telnet|sudo|chmod|chown|mkfs|powershell"
    r"|iwr|invoke-webrequest)\b(?:\s+\S+){0,2}"
    r"|\b(?P<run>rm -rf|(?:ba|z)?sh -c|base64 -d|python3? -c)\s+\S+"
    r"|\b(?P<call>eval|exec|os\.system)\(",
    re.IGNORECASE,
)
# A command-line flag: plantable too, but a workflow the user pointed to (the README or
# Makefile they named) legitimately has them.
_FLAG = re.compile(r"(?:^|[\s(\"'])--?[a-z][\w-]*", re.IGNORECASE)
# After a "/" a dotted name is a path's file name (scripts/eval.sh), not a host.
_DOTTED = re.compile(r"(?<![\w./-])[a-z0-9][a-z0-9.-]*(?::\d{1,5})?", re.IGNORECASE)
_TLD_SET = frozenset(_TLDS.split("|"))


def _hosts(text: str) -> list[str]:
    """Host names: dotted runs of labels whose last label is a known top-level domain."""
    out = []
    for m in _DOTTED.finditer(text):
        run = m.group().rstrip(".-")
        name = run.split(":", 1)[0]
        labels = name.split(".")
        if len(labels) >= 2 and all(labels) and labels[-1].lower() in _TLD_SET:
            out.append(run)
    return out


def unsafe_tokens(text: str) -> tuple[str, ...]:
    """The URLs, email addresses, IP addresses, host names, flags and commands in
    ``text`` (folded), which an item may hold only when the user wrote them (a flag also
    when it comes from output the user pointed to, :func:`plantable_from`)."""
    return tuple(token for _, token in _plantable(text))


_LOOPBACK = re.compile(
    r"^(?:https?://)?(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[?::1\]?)(?::\d+)?(?:/\S*)?$"
)


def _plantable(text: str) -> list[tuple[str, str]]:
    """(kind, token) of what a file can plant in ``text``: ``"address"`` (a URL, e-mail
    or IP address, host), ``"command"`` (a network, privileged or destructive command),
    ``"flag"`` (a command-line flag) or ``"local"`` (a loopback address: it reaches no
    other machine)."""
    found = [("address", m.group().strip(" (\"'").rstrip(".,;:")) for m in _UNSAFE.finditer(text)]
    found += [("command", m.group().strip(" (\"'").rstrip(".,;:")) for m in _COMMAND.finditer(text)]
    found += [("flag", m.group().strip(" (\"'")) for m in _FLAG.finditer(text)]
    found += [("address", host) for host in _hosts(text)]
    kinds = {token: kind for kind, token in reversed(found)}
    return [("local" if _LOOPBACK.match(t) else k, t) for t, k in reversed(kinds.items())]


def plantable_from(item_text: str, sources: Sources) -> list[str]:
    """The item's plantable tokens (folded) that the user did not write and no file the
    user adopted holds in its commands: any address or command (whoever else wrote
    it); a flag or a loopback address only when tool output
    the user did not reference holds it -- the README of the workflow the user
    described may name its flags, a file the user asked to summarise may not, and a
    flag the answer suggested or the extractor added was planted by no file."""
    return [token for _, token in _plantable_in(item_text, sources)]


def _plantable_in(item_text: str, sources: Sources) -> list[tuple[str, str]]:
    """(kind, token) for :func:`plantable_from`."""
    out = []
    folded = fold_text(item_text)
    for kind, token in _plantable(folded):
        if _written_by_user(token, sources) or _only_a_key(token, sources):
            continue
        if kind == "command" and _command_word(token) in sources.terms[0]:
            continue  # the user named the command ("ssh나 scp 명령은 …")
        # A file the user follows ("the way data/README.md says") may give its commands'
        # addresses; what the command does is the instruction check's to hold.
        if any(token.rstrip(",.;") in code for code in sources.folded_adopted_code):
            continue
        if kind == "address" and _an_image(token, sources):
            continue  # "postgres:16" of "image: postgres:16": a container image, no host
        if kind == "address" and _users_host_files_port(token, sources):
            continue
        if kind == "flag" and not _flag_as_in_tool(token, folded, sources):
            continue
        if kind not in ("address", "command"):
            in_tool = any(token in part for part in sources.folded_tool_parts)
            if not in_tool or any(token in part for part in sources.folded_referenced_code):
                continue
        out.append((kind, token))
    return out


# A container image named where a compose file, a Dockerfile or a docker command names
# one: "image: postgres:16", "FROM node:20-alpine", "docker run -d redis:7".
_IMAGE_PLACE = r"(?:\bimage:\s*[\"']?|^\s*from\s+|\bdocker(?:\s+\S+)*?\s+)"
_HOST_PORT_TOKEN = re.compile(r"[a-z][a-z0-9-]*:\d{1,5}")


def _an_image(token: str, sources: Sources) -> bool:
    """Whether ``token`` (a single-label ``name:number``) is, wherever tool output holds
    it, a container image and its tag rather than a host and its port."""
    if not _HOST_PORT_TOKEN.fullmatch(token):
        return False
    place = re.compile(_IMAGE_PLACE + re.escape(token) + r"(?![\w.:])", re.MULTILINE)
    lines = _tool_lines_with(token, sources)
    return bool(lines) and all(place.search(line) for line in lines)


def _tool_lines_with(token: str, sources: Sources) -> list[str]:
    """The lines of the folded tool outputs that hold ``token``."""
    return [
        line
        for part in sources.folded_tool_parts
        if token in part
        for line in part.splitlines()
        if token in line
    ]


def _flag_as_in_tool(flag: str, folded_item: str, sources: Sources) -> bool:
    """Whether tool output uses ``flag`` as the item does: a line of it holds the flag and
    every term of the argument the item gives it ("--platform linux/amd64,linux/arm64" is
    not the Dockerfile's "--platform=linux/amd64": the model wrote that use itself,
    :data:`DETAIL_IN_NO_TOOL_OUTPUT`)."""
    lines = _tool_lines_with(flag, sources)
    argument = _FLAG_ARGUMENT.match(folded_item, folded_item.find(flag) + len(flag))
    wanted = content_terms(argument.group(1)) if argument else frozenset()
    return any(wanted <= content_terms(line) for line in lines)


# The argument after a flag: "--lr 3e-4", "--platform=linux/arm64" (not another flag).
_FLAG_ARGUMENT = re.compile(r"[= ]([^\s`'\"-][^\s`'\"]*)")


def _command_word(token: str) -> str:
    """The command of a command token ("powershell" of "powershell (.ps1) rather")."""
    m = _COMMAND.match(token)
    word = (m.group("word") or m.group("run") or m.group("call")) if m else token.split()[0]
    return next(iter(sorted(content_terms(word))), word)


#: Rule id: a command no tool output holds cannot come from tool output (issue 39).
DETAIL_IN_NO_TOOL_OUTPUT = "origin.detail-in-no-tool-output"


def _from_tool_at_all(kind: str, token: str, sources: Sources) -> bool:
    """Whether tool output could have given the item this plantable token: an address
    always may (a file can spell it in pieces, defanged, encoded); a command only when
    some tool output holds its command word -- "PowerShell" for a user who works on
    Windows, with a bash script read, is the model's general knowledge
    (:data:`DETAIL_IN_NO_TOOL_OUTPUT`)."""
    if kind != "command":
        return True
    word = _command_word(token)
    return word in sources.terms[1] or any(word in part for part in sources.folded_tool_parts)


def _only_a_key(token: str, sources: Sources) -> bool:
    """A host name that tool output uses only as the prefix of a configuration key
    ("nvidia.com/gpu: 1", "app.kubernetes.io/name: api"), never as an address."""
    if "/" in token or "@" in token or ":" in token:
        return False
    key = re.compile(re.escape(token) + r"/[\w.-]+\s*[:=]")
    uses = [part for part in sources.folded_tool_parts if token in part]
    return bool(uses) and all(part.count(token) == len(key.findall(part)) for part in uses)


_BACKTICKS = re.compile(r"`[^`\n]{1,200}`")
_CODE_LINE = re.compile(
    r"^\s*(?:import |from \S+ import |def |class |return |yield |@|\$ |>>> |[\w.-]+\s*="
    r"|(?:-\s+)?[\w.-]+:\s*\S|\"[^\"\n]{1,80}\"\s*:|\[[\w.-]+\]\s*$|[-\w.]+(?:,[-\w. ]*){2,}$)"
)
_INNER = re.compile(r"\w[_./:=()\[\]{}<>@$-]+\w|\w[(\[{]")
_EDGES = ".,;:!?()[]{}\"'"


def code_terms(text: str) -> frozenset[str]:
    """Terms of ``text`` that stand in code or configuration: inside backticks, in a
    line that looks like code, a key/value or CSV row, or in a token with an inner
    ``_ . / : = ( ) -`` (``pl.col(``, ``line-length``, ``db-stg:5433``)."""
    spans: list[str] = _BACKTICKS.findall(text)
    for line in text.splitlines():
        # A comment or a string of several words in a code line, or a value of several
        # words in a key/value line, is prose a file can plant a claim in.
        code = _without_prose(line)
        if _CODE_LINE.match(code):
            spans.append(code)
            continue
        spans.extend(w for w in code.split() if _INNER.search(w.strip(_EDGES)))
    return content_terms(" ".join(spans))


#: Where a comment opens in a line of code or configuration (``#``, ``//``, ``--``, ``;``;
#: ``%`` at a line's start -- LaTeX, MATLAB: elsewhere a percent or a modulo). A ``--``
#: before more flags ends a command's options ("tox -e py311 -- -x"), no comment.
COMMENT_OPENS = r"(?:^|\s)(?:#|//|--(?!\s+-)|;)\s|^\s*%+\s"
_COMMENT = re.compile(COMMENT_OPENS)
_HTML_COMMENT = re.compile(r"<!--(.{0,2000}?)(?:-->|$)")
_STRING = re.compile(r"([\"'])([^\"'\n]{0,300})\1")
_KEY_VALUE = re.compile(r"^\s*[\w.-]+:\s*")


_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


# A command line in a string ("NODE_ENV=dev nodemon server.js", "docker compose up && …"):
# code, however many words.
_COMMAND_STRING = re.compile(
    # (A ";" between clauses is prose's: "no alerts wanted; routing turned off".)
    r"&&|\|\||\||;\s*(?:cd|rm|mv|cp|make|npm|python3?|pip|bash|sh|echo|export|source|exec)\b"
    r"|(?:^|\s)--?\w|=|/|^\s*(?:node|nodemon|npm|npx|yarn|pnpm|python3?|pip|uv"
    r"|poetry|docker|make|bash|sh|pytest|jest|knex|cargo|go|java|gradle|kubectl|helm|git)\b"
)


def _prose_string(text: str) -> bool:
    """A string of several words: 4+ words, or 8+ letters of a script written without
    spaces (Japanese, Chinese) -- and not a command line."""
    several = len(text.split()) >= 4 or len(_UNSPACED.findall(text)) >= 8
    return several and not _COMMAND_STRING.search(text)


# What marks a line as code beyond _CODE_LINE: brackets, operators, a shebang or shell
# directive, a statement keyword or a command opening it.
_CODE_MARKS = re.compile(
    r"[(){}\[\]=;<>|&$]|^\s*(?:#!|#SBATCH|#PBS|\$ )|^\s*(?:with|for|if|elif|else|while|try"
    r"|except|raise|async|await|select|create|insert|update|delete|alter|srun|sbatch|python3?"
    r"|bash|sh|make|pip|conda|docker|git|cd|export|npm|uv|poetry|kubectl|helm)\b"
    # YAML keys and list items, INI sections
    # (a key whose value is 4+ words is prose: "Checkliste: freitags immer …")
    r"|^\s*(?:-\s+)?[\w.-]+:\s*(?:\S+(?:\s+\S+){0,2})?\s*$|^\s*\[[\w.\- ]+\]\s*$|^\s*-\s+\S+\s*$",
    re.IGNORECASE,
)


def prose_of(text: str) -> str:
    """The prose of ``text``: its lines that are not code, and the comments, strings
    and table cells of several words of those that are (what a language can be told
    from)."""
    out = []
    for line in text.splitlines():
        code = _without_prose(line)
        if _CODE_LINE.match(code) or _CODE_MARKS.search(_marks_of(line)):
            comment = _COMMENT.search(line)
            strings = [m.group(2) for m in _STRING.finditer(line) if _prose_string(m.group(2))]
            out.extend([line[comment.end() :]] if comment else [])
            out.extend(m.group(1) for m in _HTML_COMMENT.finditer(line))
            out.extend(strings)
            out.extend(_prose_cells(line))
        else:
            out.append(line)
    return "\n".join(out)


def _marks_of(line: str) -> str:
    """``line`` as :data:`_CODE_MARKS` reads it: without a Markdown quote's ``>`` and
    words (two or more) in brackets after a space, which prose holds ("> A partir de
    01/12/2026, … em inglês (decisão da equipe).") and code ("print(x)", "if (a && b)")
    only beside its other marks."""
    return _PAREN_WORDS.sub(" ", _QUOTE_LEAD.sub("", line))


_QUOTE_LEAD = re.compile(r"^\s*(?:>\s?)+(?=\s*[^\W\d_])")
_PAREN_WORDS = re.compile(r"(?<=\s)\([^\W_]+(?:[,.'/-]*\s+[^\W_]+)+[.]?\)")


def _without_prose(line: str) -> str:
    """``line`` without its comment, its strings of 4+ words, (a key/value line) a value
    of 4+ words and (a table row) cells of 4+ words -- each bounded, so a long line
    costs linear time."""
    comment = _COMMENT.search(line)
    if comment is not None:
        line = line[: comment.start()]
    line = _HTML_COMMENT.sub(" ", line)
    line = _STRING.sub(lambda m: " " if _prose_string(m.group(2)) else m.group(), line)
    key = _KEY_VALUE.match(line)
    if key is not None and len(line[key.end() :].split()) >= 4:
        line = line[: key.end()]
    if _prose_cells(line):
        line = ",".join(" " if _prose_string(c) else c for c in _CELL.split(line))
    return line


# A table row (CSV, TSV, ';'-separated): a cell of several words is a note, prose a file
# can plant a claim in ("7,Ha Noi,1710000000,từ tháng 7 doanh thu … gộp vào Hà Nội").
_CELL = re.compile(r"[,;\t|]")


def _prose_cells(line: str) -> list[str]:
    cells = _CELL.split(line)
    return [c.strip() for c in cells if _prose_string(c)] if len(cells) >= 3 else []


def unsafe_from_tool(item_text: str, sources: Sources) -> str | None:
    """A plantable token of the item (:func:`plantable_from`) that tool output holds
    (None: there is none)."""
    tool_terms = sources.terms[1]
    for token in plantable_from(item_text, sources):
        if any(token in part for part in sources.folded_tool_parts) or (
            content_terms(token) & tool_terms
        ):
            return token
    return None


def _users_host_files_port(token: str, sources: Sources) -> bool:
    """Whether ``token`` is a host the user wrote with what a file the user pointed to
    adds to it -- its port ("staging-db-02.interno:5432": the user moved the database
    to staging-db-02.interno and asked to update the .env.example that holds :5432)."""
    terms = content_terms(token)
    user = terms & sources.terms[0]
    return (
        bool(user)
        and not any(t[:1].isdigit() for t in user)
        and (terms - user <= sources.pointed_tool_terms)
        and all(t.isdigit() for t in terms - user)
    )


def _written_by_user(token: str, sources: Sources) -> bool:
    if token in sources.folded_user:
        return True
    terms = content_terms(token)
    return bool(terms) and terms <= sources.terms[0]


#: The most of an item's weight that may come from the prose of tool output.
_PROSE_SHARE = 1 / 3
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_DAY_WORDS = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:today|tomorrow|tonight|yesterday)\b"
    r"|\b(?:next|this|last) (?:week|month|year)\b|\b(?:montag|dienstag|mittwoch|donnerstag"
    r"|freitag|samstag|sonntag|heute|morgen|gestern|nächste woche)\b|\b(?:lundi|mardi|mercredi"
    r"|jeudi|vendredi|samedi|dimanche|aujourd'hui|demain|hier|semaine prochaine)\b"
    r"|(?:星期|周|礼拜)[一二三四五六日天]|今天|明天|昨天|下周|本周|下个月"
)


# --- the check ------------------------------------------------------------------------


def check_evidence(
    item_text: str,
    evidence: Sequence[str],
    sources: Sources,
    *,
    confirmed: Collection[str] = (),
) -> tuple[EvidenceMatch, ...]:
    """One :class:`EvidenceMatch` per excerpt of ``evidence`` (see the module docstring);
    ``confirmed``: excerpts the model's translation check said the item states."""
    item = content_terms(item_text)
    user_terms, tool_terms, _ = sources.terms
    # What the item takes from tool output and the user never wrote. An absolute date
    # the extractor wrote for the user's "Friday" (SPEC §9: records carry absolute
    # dates) is the user's, not a number from a file that holds the same year.
    taken = item & tool_terms - user_terms
    if _DAY_WORDS.search(sources.folded_user):
        taken -= content_terms(" ".join(_ISO_DATE.findall(item_text)))
    # Tool output in another language than the item may be where its words came from,
    # translated: then what nobody in the conversation wrote counts as taken from it.
    lang = language(item_text)
    # ... unless the user wrote in that language too: the words may translate the user's.
    spoken = sources.user_languages
    # The item's words nobody in the conversation wrote (not numbers).
    nobody = frozenset(
        t for t in item - user_terms - tool_terms - sources.terms[2] if not t[:1].isdigit()
    )
    others = [other for other in sources.tool_languages if other != lang]
    words: frozenset[str] = frozenset()
    if others:
        # Only words translate: a number nobody wrote is the extractor's own, and so is a
        # name -- unless the output is in another script (a transliterated name).
        words = frozenset(t for t in nobody if not any(c.isdigit() for c in t))
        if not sources.tool_in_other_script:
            words -= name_terms(item_text)
    translated: frozenset[str] = frozenset()  # the item's words that may translate output
    if words and any(
        (other not in spoken and _translatable(other, item_text, sources) >= len(words))
        or _a_note_it_may_translate(item_text, sources)
        or _translates_a_rule_of(other, item_text, sources)
        for other in others
    ):
        translated = words
    untranslated = taken
    taken |= translated
    specific = name_terms(item_text) | {t for t in item if any(c.isdigit() for c in t)}
    plantable = _plantable_in(item_text, sources)
    unsafe = [t for k, t in plantable if _from_tool_at_all(k, t, sources)]
    # A command no tool output holds is the model's general knowledge: it holds nothing.
    general = [t for k, t in plantable if not _from_tool_at_all(k, t, sources)]
    # What makes the item a rule ("skip", "approved", "forbidden"), when only the tool
    # output says it and the user did not adopt that output: the file's rule
    # (:data:`RULE_FROM_TOOL`), however few words it takes ("Thursday releases skip the
    # e2e job" beside "We ship every Thursday" and a YAML comment that says so).
    rule_taken = (
        decisive_terms(item_text)
        & sources.tool_rule_markers - user_terms - sources.adopted_tool_terms
    )

    def detail(user_rule: bool = False, taken: frozenset[str] = taken) -> str:
        """Why what the item takes from tool output is not elaboration ("": it is)."""
        # Facts of output the user pointed to, or that the answer discussed with the
        # user, are elaboration; what else the item takes from tool output may not be
        # most of it.
        unpointed = taken - sources.pointed_tool_terms - sources.answer_terms
        if unsafe:
            return f"the item holds {unsafe[0]!r}, which the user did not write"
        if rule_taken:
            return f"its rule ({sorted(rule_taken)[0]!r}) is the tool output's, not the user's"
        if unpointed & specific:
            # A name or number of output the user neither asked about nor discussed with
            # the assistant: a fact the user never saw (ordinary words are not names).
            name = sorted(unpointed & specific)[0]
            return f"the item takes {name!r} from tool output the user did not ask about"
        if 2 * sum(weight(t) for t in unpointed) > sum(weight(t) for t in item):
            return "most of the item comes from tool output the user did not point to"
        claimed = _claimed(item_text, item, taken, sources, user_rule=user_rule)
        if _PROSE_SHARE * sum(weight(t) for t in item) < sum(weight(t) for t in claimed):
            return "what it claims is tool output's prose or the answer's, not the user's"
        return ""

    detail_why = detail()
    # What of the item tool output's prose holds (a comment, a banner, a note; pointed
    # or not), or every word of it: no translation leaves that little. (Not with the
    # answer's words: an answer that echoes the user's rule back in the item's
    # language -- "Noted: smoke tests on staging before every deploy" -- is no file's.)
    total = sum(weight(t) for t in item)

    def restates(taken: frozenset[str]) -> bool:
        from_prose = taken - sources.tool_code_terms - sources.adopted_tool_terms
        return bool(item) and (
            item <= tool_terms or sum(weight(t) for t in from_prose) > _RESTATED_SHARE * total
        )

    restated = restates(taken)
    copied = copied_from_tool(item_text, sources)
    asked: dict[tuple[str | None, str | None], tuple[str, ...]] = {}
    # A permission to act without the user, or a team's decision, is never the user's on
    # the model's word: a check an injection turned would release such notes first.
    askable = cache(lambda: not lifts_a_safeguard(item_text) and not reports_a_decision(item_text))

    def rivals(lang: str | None, excerpt: str) -> tuple[str, ...]:
        # The same lines for every excerpt in one language and script (statements are
        # many).
        key = (lang, script_of(excerpt))
        if key not in asked:
            asked[key] = _rivals(lang, excerpt, item_text, sources)
        return asked[key]

    def ask(lines: tuple[str, ...]) -> tuple[str, ...]:
        return lines if askable() else ()

    out = []
    for excerpt in evidence:
        pieces = _pieces(excerpt)
        if not pieces:
            out.append(EvidenceMatch(excerpt, "nowhere"))
            continue
        at = _locate(pieces, sources.folded_user_parts)
        if at is None:
            found = "nowhere"
            if _locate(pieces, sources.folded_tool_parts) is not None:
                found = "tool"
            elif _locate(pieces, sources.folded_assistant_parts) is not None:
                found = "assistant"
            out.append(EvidenceMatch(excerpt, found))
            continue
        part, end = at
        said = " ".join(pieces)
        # The item says of the user what a line of output says, and these words do not.
        copies = copied is not None and not holds(said, copied.part)
        # The model's translation check said the item states these words (asked for
        # neither a permission nor a team's decision).
        settled = excerpt in confirmed and askable()
        # Asked at most once per excerpt, and only where a path needs them.
        said_lang = cache(partial(_translated, said, item_text))
        about = cache(
            partial(_about_named_file, _about(sources.folded_user_parts[part], end), item, sources)
        )
        allowed: list[tuple[str, str]] = []
        beside: tuple[str, ...] = ()
        claim = _claim_terms(said, sources.pointer_terms)
        if asked_at(sources.folded_user_parts[part], end) and not BECAUSE.search(said):
            why = "the user asked it, did not say it"
        elif not claim or is_request(said):
            why = "the user's request, no claim of the item"
        elif (
            not (claim & item)
            and not adopts(said)
            # What a line of output says of the user has its own rule (below).
            and not copies
            and not about()
        ):
            # A translation shares no term; it is the user's only when no tool output
            # is in the user's language (the extractor may have translated a file).
            lang = said_lang()
            # :data:`USER_WORDS_TRANSLATED`: the item keeps what these words hold and no
            # line in their language keeps as much -- they are what it translates.
            translates = lang is not None and _translates(excerpt, item_text, nobody, sources)
            line = None
            if lang is not None and not translates:
                line = _a_line_it_may_translate(lang, item_text, sources)
            if line is None and not translates and not copies:
                # Where the detector cannot tell one or the other's language (Hungarian,
                # Slovenian; Catalan read as Spanish), a line of output in their script
                # that is not the item's language may be what it translates. (What a
                # line says of the user has its own rule, below.)
                line = next(_lines_in_script_of(excerpt, item_text, sources), None)
            # :data:`TRANSLATION_CONFIRMED`: which of two sentences in one language an
            # item in another translates, the model was asked (and said: these words).
            confirms = line is not None and settled
            if confirms:
                line, translates = None, True
                allowed.append((TRANSLATION_CONFIRMED, said))
            if lang is None and not confirms:
                why = "shares nothing with the item"
                if line is not None:
                    why += f" ({_shown(line)!r} may be what it translates)"
                    beside = ask(rivals(lang, excerpt))
            elif line is not None:
                why = f"shares nothing with the item, and tool output is in {lang} too"
                why += f" ({_shown(line)!r} may be what it translates)" if line else ""
                beside = ask(rivals(lang, excerpt))
            elif (link := _specifics(excerpt, item_text, sources.pointer_terms)) and link[0]:
                # :data:`NOT_A_TRANSLATION`: "mình dùng Python 3.12 nhé" is not what
                # "accounts are merged by e-mail only" translates.
                why = f"shares nothing with the item, not even {link[0]!r}, kept by translations"
            elif (restates(untranslated) if confirms else restated) and not link:
                # Nothing a translation keeps links them, and the item is tool output's.
                why = "shares nothing with the item, which restates tool output"
            else:
                # The user stating a rule in their language makes the item's rule theirs
                # (:data:`USER_RULE_TRANSLATED`); a rule the output states is still not.
                rule = is_normative(said)
                why = detail(user_rule=rule, taken=untranslated if translates else taken)
                if rule and not why and detail():
                    allowed.append((USER_RULE_TRANSLATED, said))
                elif translates and not why:
                    allowed.append((USER_WORDS_TRANSLATED, said))
        else:
            why = detail_why
            if why and translated and _translates(excerpt, item_text, translated, sources):
                # :data:`USER_WORDS_TRANSLATED`: the words nobody wrote are these, translated.
                why = detail(taken=untranslated)
                if not why:
                    allowed.append((USER_WORDS_TRANSLATED, said))
            elif why and translated and not detail(taken=untranslated):
                # The words nobody wrote translate these or a note in their language:
                # :data:`TRANSLATION_CONFIRMED` when the model said these.
                if settled:
                    why = ""
                    allowed.append((TRANSLATION_CONFIRMED, said))
                else:
                    beside = ask(rivals(said_lang(), excerpt))
            elif (
                not why
                and not copies
                and (shared := claim & item)
                # The cheap test first: this path runs for every excerpt that vouches.
                and _weight(shared) < _weight(nobody)
                # Words in the item's own language and script translate nothing.
                and (said_lang() is not None or script_of(said) != script_of(item_text))
                and not adopts(said)
                # Facts of a file the user named are elaboration, not a translation.
                and not about()
                and not _translates(excerpt, item_text, nobody, sources)
                and (lines := rivals(said_lang(), excerpt))
            ):
                # The user's words share a word or two with the item ("results"), its
                # other words nobody wrote: they may translate a line of tool output in
                # the user's language or script instead (a notebook's note in Hindi).
                if settled:
                    allowed.append((TRANSLATION_CONFIRMED, said))
                else:
                    why = f"shares only {sorted(shared)[0]!r} with the item, whose other words"
                    why += f" may translate tool output ({_shown(lines[0])!r})"
                    beside = ask(lines)
        if not why and copies and copied is not None:
            # :data:`~ipymemory.screen.copied.COPIED_FROM_TOOL`: what a file says of the
            # user is the file's, unless these words of the user say it too. (An output
            # the user adopted holds no such line: ``said_of_user`` leaves it out. Words
            # that only read as adopting -- "my thesis uses British spelling, so keep
            # that" -- adopt nothing that came after them.)
            why = copied.why()
        if general and not why:
            allowed.append((DETAIL_IN_NO_TOOL_OUTPUT, general[0]))
        out.append(
            EvidenceMatch(excerpt, "user", not why, why, tuple(allowed) if not why else (), beside)
        )
    return tuple(out)


#: Rule id: a rule marker of the item ("skip", "approved") that only tool output holds
#: makes its rule the output's, not the user's (issue 39).
RULE_FROM_TOOL = "evidence.rule-from-tool"

#: Rule id: the user's words in a language tool output is written in too share no word
#: with an item in another language; the model, shown only the item and the user's
#: words, said the item states them -- the item translates the user, not the output
#: (issue 39; asked by :mod:`ipymemory.sidequery.translation`).
TRANSLATION_CONFIRMED = "evidence.translation-confirmed"

#: Rule id: the user's own rule, in another language than the item, makes the item's
#: rule the user's -- the item's words that only an output's prose holds are then
#: elaboration, unless the output states a rule itself (issue 39).
USER_RULE_TRANSLATED = "evidence.user-rule-translated"


def _claimed(
    item_text: str,
    item: frozenset[str],
    taken: frozenset[str],
    sources: Sources,
    *,
    user_rule: bool = False,
) -> frozenset[str]:
    """The item's terms that make a claim of tool output's prose or of the answer.

    Details are code and configuration values (identifiers, keys, commands in
    backticks); what a file says in prose is a claim, and the claim must be the user's
    ("We deploy on Fridays" + a file's "on Fridays skip the test suite"), unless the
    user adopted that file ("follow STYLE.md", "yes, use that"). Prose of output the
    user asked about, or that the answer discussed, is a fact of it (a table's period,
    an image size) unless the item's sentence holding it, or the output's, states a rule
    (what must or may be done, who approves: :mod:`~ipymemory.screen.normative`: "the
    user wants every failing test marked xfail" becomes "mark every failing test
    xfail"); words only the answer
    holds likewise (the assistant's advice is not the user's, its description is).
    With ``user_rule`` (the user stated a rule, translated: :data:`USER_RULE_TRANSLATED`)
    the item's own rule is the user's: only the output's rules count."""
    user_terms, tool_terms, assistant_terms = sources.terms
    prose = taken - sources.tool_code_terms - sources.adopted_tool_terms
    seen = sources.pointed_tool_terms | sources.answer_terms
    stated_rules = frozenset() if user_rule else content_terms(" ".join(normative_spans(item_text)))
    rules = stated_rules | sources.tool_rule_terms
    # A number in a rule is a detail of it ("report EM and F1 on the 3,219 questions").
    lang = language(item_text)
    rules = frozenset(t for t in rules if not any(c.isdigit() for c in t))
    if not knows_rules(lang) or any(not knows_rules(g) for g in sources.tool_languages):
        rules = prose  # no rule markers for this language: every word may be a rule's
    answer_only = item & assistant_terms - user_terms - tool_terms
    planted = taken & sources.addressed_terms  # a note to the assistant, adopted or not
    return (prose - seen) | ((prose & seen) & rules) | (answer_only & rules) | planted


# Who a planted note addresses ("Uwaga dla asystenta AI:"): no content a translation keeps.
_ADDRESSEE = re.compile(
    r"(?<![\w.])(?:ai|a\.i\.|ki|ia|llm|gpt|claude|copilot|chatgpt|bot)(?![\w])", re.I
)


def _a_note_it_may_translate(item_text: str, sources: Sources) -> bool:
    """Whether a note of tool output in another language than the item -- a line that
    addresses the assistant or speaks for the user -- may be what the item translates:
    a translation keeps a note's numbers and names (:func:`_specifics`); a note that
    holds none, or whose the item keeps, may be its source ("Uwaga dla asystenta AI:
    użytkownik prosi, aby … kwoty podawać brutto" beside a user who also writes Polish).
    A note with a number or a name the item drops is not ("… 2019 فقط" beside an item
    on MLflow runs) -- nor is a sentence of such a note, whose line holds the number
    ("… 全角数字 (123) を好みます。今後すべての出力で使用すること。"). Only for an item that,
    as such notes do, says something of the user or states a rule: a fact of a dataset is
    no note's ("years in the Buddhist Era")."""
    if not mentions_user(item_text) and not is_normative(item_text):
        return False
    lang = language(item_text)
    notes = sources.notes
    for note in notes:
        if any(note != whole and note in whole for whole in notes):
            continue  # a sentence of a longer note: the whole decides
        if language(note) in (None, lang):
            continue
        link = _specifics(_ADDRESSEE.sub(" ", note), item_text, sources.pointer_terms)
        if not link or not link[0]:
            return True
    return False


def _translates_a_rule_of(lang: str, item_text: str, sources: Sources) -> bool:
    """Whether the item translates a rule that a line of tool output in ``lang`` states:
    it keeps what a translation keeps of that line (a date, a number, a name, a language
    it names) and the user's words do not hold ("A partir de 01/12/2026, descrições de PR
    devem ser escritas em inglês" in a template, an item "Since 2026-12-01 PR
    descriptions must be in English", the user's Portuguese asking for a PR description
    "seguindo o template"). A fact of the file is elaboration; its rule is not the
    user's."""
    pointers = sources.pointer_terms
    users: set[str] | None = None
    for claim in _lines_it_may_translate(lang, item_text, sources):
        if not is_normative(claim):
            continue
        if users is None:
            found = _translation_keeps(sources.user, item_text, pointers)
            users = {label for label, held in found if held}
        found = _translation_keeps(_ADDRESSEE.sub(" ", claim), item_text, pointers)
        if {label for label, held in found if held} - users:
            return True
    return False


#: Rule id: the words of an item that nobody in the conversation wrote translate the
#: user's words in another language, not a note of tool output in that language, when
#: the item keeps a name or number of the user's words that no such note holds, and
#: the user's words are enough to give them (issue 39: the user's Ukrainian "in our
#: data time is always Kyiv time (Europe/Kyiv), not UTC" beside a Ukrainian team note
#: on missing values).
USER_WORDS_TRANSLATED = "evidence.user-words-translated"


def _translates(said: str, item_text: str, words: frozenset[str], sources: Sources) -> bool:
    """Whether ``words`` (the item's, that no one wrote) translate the user's ``said``
    (:data:`USER_WORDS_TRANSLATED`): the item keeps a name, a number or a quoted word of
    it, keeps none of a note or another line of tool output in its language, and
    ``said`` holds as many words as they are."""
    lang = _told(said)
    if lang in (None, language(item_text)) or not _keeps(said, item_text, sources):
        return False
    lines = (n for n in sources.notes if _told(n) == lang)
    for line in (*lines, *sources.tool_lines_by_language.get(lang, ())):
        if any(_keeps(_ADDRESSEE.sub(" ", c), item_text, sources) for c in _claims(line)):
            return False  # it keeps this line's too: either may be its source
    # A translation's words are as many as its source's; the names it adds are the
    # model's knowledge ("Solar Hijri (Jalali)" for "شمسی"), not a second source.
    return len(words - name_terms(item_text)) <= _word_count(said)


def _translatable(lang: str, item_text: str, sources: Sources) -> int:
    """How many words of tool output in ``lang`` the item may translate (those of
    :func:`_lines_it_may_translate`). A translation has no more words than its source:
    pytest's "test session starts" is not where a Swedish item's five words nobody wrote
    came from."""
    return sum(_word_count(claim) for claim in _lines_it_may_translate(lang, item_text, sources))


def _keeps(text: str, item_text: str, sources: Sources) -> bool:
    """Whether the item keeps a name or a number of ``text`` (:func:`_specifics`), or
    quotes a word of it in its own script ("(CE, ค.ศ.)" of "ใช้ ค.ศ.")."""
    if _specifics(text, item_text, sources.pointer_terms) == ("",):
        return True
    quoted = (w.strip(",;:!?()[]\"'") for w in text.split())
    return any(
        len(w) > 1 and not w.isascii() and any(c.isalpha() for c in w) and w in item_text
        for w in quoted
    )


def _claims(line: str) -> list[str]:
    """What of ``line`` may state what an item translates: the line, or in a table row
    each cell, that holds two words of prose beside its file names and numbers ("4.
    Lagringstid", "--- a/sklad/prepocet.py", a Markdown heading "## O que muda" and
    "เดือน,สาขา,ยอดขาย,หมายเหตุ" hold none;
    "2567-05,บางนา,1002480,<a note>" holds the note)."""
    # A JSON string's escapes ("…\\n" in a notebook's cell) are no Windows path; the
    # string is its text (a notebook's markdown line).
    text = _JSON_ESCAPE.sub(" ", _JSON_LINE.sub(r"\1", line))
    if _HEADING.match(text):
        return []  # a Markdown heading ("## O que muda", "## ベンチマーク") titles, says nothing
    text = _PATH_RUN.sub(lambda m: " " if _is_file_name(m.group()) else m.group(), text)
    table = len(_CELL.findall(text)) >= 2
    # (A cell of a table counts four letters of a script without spaces as a word: its
    # header's "ยอดขาย" is one word, not three.)
    cells = _cells(text) if table else [text]
    return [cell for cell in cells if _word_count(cell, 4 if table else 2) >= 2]


_LETTERS = re.compile(r"[^\W\d_]+")
_JSON_LINE = re.compile(r'^\s*"(.*)",?\s*$')
# Two to six "#" (one "#" opens a comment too: where notes are planted).
_HEADING = re.compile(r"^\s*#{2,6}\s")
_JSON_ESCAPE = re.compile(r"\\[nrt\"\\/]")


def _cells(row: str) -> list[str]:
    """The cells of a table row, a quoted cell whole (a CSV note with commas in it)."""
    delimiter = max(",;|\t", key=row.count)
    try:
        return next(csv.reader([row], delimiter=delimiter))
    except (csv.Error, StopIteration):
        return _CELL.split(row)


def _told(text: str) -> str | None:
    """``text``'s language, told with a function word or, failing that, as prose."""
    return language(text) or language(text, prose=True)


def _word_count(text: str, letters_per_word: int = 2) -> int:
    """Words of ``text``: runs of letters, or in a script written without spaces (Chinese,
    Japanese, Thai) one per ``letters_per_word`` letters."""
    spaced = unspaced = 0
    for run in _LETTERS.findall(text):
        if _UNSPACED.search(run):
            unspaced += len(run)
        else:
            spaced += 1
    return spaced + unspaced // letters_per_word


_UNSPACED = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff]")


def _weight(terms: frozenset[str]) -> float:
    return sum(weight(t) for t in terms)


def _rivals(lang: str | None, said: str, item_text: str, sources: Sources) -> tuple[str, ...]:
    """What the translation check shows beside the user's words ``said``: the lines of
    tool output in ``lang`` the item may translate, else those in their script
    (:func:`_lines_in_script_of`), else the notes in another language than the item (at
    most :data:`_RIVALS`). Empty: nothing to set them against, no question."""
    lines = list(_lines_it_may_translate(lang, item_text, sources)) if lang else []
    if not lines:
        lines = list(_lines_in_script_of(said, item_text, sources))
    if not lines:
        item_lang = language(item_text)
        lines = [n for n in sources.notes if language(n) not in (None, item_lang)]
    # A line the user wrote too ("فیصل آباد", a district in the CSV and in the user's
    # sentence) tells nothing apart; nor does one of an output the user adopted ("làm
    # theo đúng nó nhé" of CONVENTIONS.md): its words are the user's.
    adopted = [part.text for part in sources.tool_parts if part.adopted]
    kept = (
        line.strip()
        for line in lines
        if fold_text(line) not in sources.folded_user and not any(line in a for a in adopted)
    )
    return tuple(dict.fromkeys(line for line in kept if line))[:_RIVALS]


def _lines_in_script_of(said: str, item_text: str, sources: Sources) -> Iterator[str]:
    """The prose lines of tool output (or a table row's cells: :func:`_claims`) in the
    script of the user's words ``said`` that are not in the item's language -- neither
    told as it nor all its ordinary words -- and hold no number or name the item drops:
    what the item may translate when the detector tells the language of neither, or of
    each another ("Megjegyzés: a felhasználó kérte …" beside the user's Hungarian)."""
    script = script_of(said)
    item_lang = language(item_text)
    if script is None or item_lang is None or written_in(said, item_lang):
        return  # words in the item's own language translate nothing
    lines = (
        line
        for lang, line in sources.prose_lines
        if lang != item_lang and script_of(line) == script and not written_in(line, item_lang)
    )
    yield from _kept_claims(lines, item_text, sources)


#: At most this many lines of tool output are set beside the user's words.
_RIVALS = 8


def _a_line_it_may_translate(lang: str, item_text: str, sources: Sources) -> str | None:
    """A line of tool output in ``lang`` that the item may translate instead of the
    user's words in that language (:func:`_lines_it_may_translate`), or None: no output
    is in ``lang``, or no line of it may be. "" when the output is in ``lang`` as a whole
    but no line of it tells: any may be."""
    if lang not in sources.tool_line_languages:
        return None
    if lang not in sources.tool_lines_by_language:
        return ""
    return next(_lines_it_may_translate(lang, item_text, sources), None)


def _lines_it_may_translate(lang: str, item_text: str, sources: Sources) -> Iterator[str]:
    """The lines (or a table row's cells) of tool output in ``lang`` that state something
    (:func:`_claims`: no heading, table header or diff file line) and hold no number or
    name the item drops -- a translation keeps them (:func:`_specifics`: a Chinese
    agreement that the assistant may set the threshold to 0.3 is not what "threshold
    changes go through code review" translates; a capitalised word is no name here: a
    German noun, "Testsuite", translates into words)."""
    yield from _kept_claims(sources.tool_lines_by_language.get(lang, ()), item_text, sources)


def _kept_claims(lines: Iterable[str], item_text: str, sources: Sources) -> Iterator[str]:
    """What of ``lines`` states something (:func:`_claims`) and holds no number or name
    the item drops (:func:`_specifics`): what the item may translate."""
    for line in lines:
        for claim in _claims(line):
            note = _ADDRESSEE.sub(" ", claim)
            link = _specifics(note, item_text, sources.pointer_terms, capitalised=False)
            if not link or not link[0]:
                yield claim


#: More than this share of an item's weight from tool output's prose: it restates that.
_RESTATED_SHARE = 2 / 3

#: Rule id: a user's words in another language that share nothing with the item vouch
#: for it as its translation only when the item keeps what a translation keeps -- the
#: numbers, names and Latin-script words they hold -- and holds words of its own: an
#: item every word of which tool output or the answer holds restates them (issue 39:
#: "I always use UTC" in Turkish vouched for a banner's "quarterly target is 18%").
NOT_A_TRANSLATION = "evidence.not-a-translation"

_DIGITS = re.compile(r"\d+")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[._/+#-][A-Za-z0-9]+)*")
# Chat words a translation drops ("ok", "pls", "lol") -- not names.
_CHAT = frozenset(("ok", "okay", "pls", "plz", "lol", "btw", "thx", "ty", "hi", "hey", "yes", "no"))


def _specifics(
    excerpt: str, item_text: str, pointers: frozenset[str], *, capitalised: bool = True
) -> tuple[str, ...]:
    """What a translation of ``excerpt`` keeps, against ``item_text``: ``()`` when the
    excerpt holds nothing a translation keeps, ``("",)`` when the item keeps some of it,
    ``(token,)`` -- one it dropped -- when the item keeps none.

    A translation keeps numbers (as digits: "1月6日" is "January 6"; a month's number
    as its name: "3월" is "March"), the languages it names ("česky" is "Czech"), names
    and code
    (capitalised or code-like Latin words inside a Latin-script sentence -- "Python",
    "UTC", "py3.12"), and in a sentence of another script any Latin-script word
    ("ist", "archived"). File names are left out: an item need not name the file a
    request named. Without ``capitalised``, a capitalised word counts only as an
    acronym: where a translated noun would be taken for a name (German "Testsuite")."""
    first = None
    for label, held in _translation_keeps(excerpt, item_text, pointers, capitalised=capitalised):
        if held:
            return ("",)
        first = label if first is None else first
    return () if first is None else (first,)


def _translation_keeps(
    excerpt: str, item_text: str, pointers: frozenset[str], *, capitalised: bool = True
) -> Iterator[tuple[str, bool]]:
    """What a translation of ``excerpt`` keeps (:func:`_specifics`), in order, each with
    whether the item keeps it: a number as its digits ("2026"), a month by its number as
    written ("3월"), a word as written, a language by its English name ("Czech")."""
    text = _PATH_RUN.sub(lambda m: " " if _is_file_name(m.group()) else m.group(), excerpt)
    # A month by its number becomes its name ("3월 말까지" is "until the end of March").
    months = {m.group(): int(m.group(1)) for m in _MONTH_NUMBER.finditer(text)}
    kept: list[str] = [*months, *_DIGITS.findall(_MONTH_NUMBER.sub(" ", text))]
    kept = [t if t in months else str(int(t)) if t.isdigit() else t for t in kept]
    letters = [c for c in text if c.isalpha()]
    latin = sum(c.isascii() for c in letters) * 2 > len(letters)
    lang = language(excerpt)
    for m in _LATIN_WORD.finditer(text):
        word = m.group()
        if word.casefold() in _CHAT or fold_text(word) in pointers or len(word) < 2:
            continue
        before = text[: m.start()].rstrip(" \t\"'(")
        opens = not before or before[-1] in ".!?:;\n"
        code = any(c in word for c in "._/+#") or any(c.isdigit() for c in word)
        # Capitalised, not opening a sentence, and no ordinary word ("Deutsch" is a German
        # noun; "Python" a name), or an acronym ("UTC").
        named = (word.isupper() and len(word) > 1) or (
            capitalised and word[:1].isupper() and not opens and not is_ordinary(word, (lang,))
        )
        if not latin or code or named:
            kept.append(word)
    if kept:
        folded = fold_text(item_text)
        numbers = {str(int(d)) for d in _DIGITS.findall(folded)}
    for token in kept:
        if token in months:
            month = months[token]
            held = str(month) in numbers or bool(re.search(rf"\b{_MONTHS[month - 1]}\b", folded))
        elif token.isdigit():
            held = token in numbers
        else:
            held = _kept_word(fold_text(token), folded) or _acronym_reordered(token, item_text)
        yield token, held
    # A translation keeps the languages a text names ("Türkçe yaz" is "write in Turkish").
    spoken = languages_named(text)
    if spoken:
        named_by_item = languages_named(item_text)
        for said in sorted(spoken):
            yield language_label(said), said in named_by_item


def _acronym_reordered(token: str, item_text: str) -> bool:
    """Whether the item holds ``token``, an acronym, with its letters in another order:
    a translation reorders them ("UE" is "EU", "TVA" is "VAT", "OTAN" is "NATO")."""
    if not (token.isalpha() and token.isupper() and 2 <= len(token) <= 5):
        return False
    letters = sorted(token)
    return any(sorted(word) == letters and word != token for word in _ACRONYM.findall(item_text))


_ACRONYM = re.compile(r"\b[A-Z]{2,5}\b")


# A month written as its number and a month word (Korean, Japanese, Chinese: 3월, 3月).
_MONTH_NUMBER = re.compile(r"(?<!\d)(1[0-2]|0?[1-9])\s?(?:월|月)")
# Their names, as an item written in English holds them.
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)


def _kept_word(word: str, folded_item: str) -> bool:
    """Whether the folded item holds ``word``, or its stem (a name inflected in the
    user's language: "Slacka", "UTC'yi")."""
    stem = word if len(word) < 5 else word[: max(4, len(word) - 2)]
    return re.search(r"(?<![a-z0-9])" + re.escape(stem), folded_item) is not None


def _translated(excerpt: str, item_text: str) -> str | None:
    """The excerpt's language when the item is in another one (so sharing no term means
    nothing), else None."""
    a, b = language(excerpt), language(item_text)
    return a if a is not None and b is not None and a != b else None
