"""Every command an item gives to run (issue 39 item 1): shell command lines, package
installs, scripts.

:func:`commands` finds, in an item's text, what would run something if followed:

* a **command line**: a program of ``lexicons.yaml`` (``programs``) followed by an
  argument -- a flag (``-q``), a path, a host, an assignment, a number, or one of its
  subcommands (``git push``, ``pip install``); a network, shell or privileged program
  (``nc``, ``curl``, ``sudo``, ``bash``) followed by any word that is not a small word of
  a language -- unless written in capitals with no operand after it ("the SSH session
  times out" names a protocol). A bare name is no command ("the project uses pytest");
* **shell syntax**: a prompt (``$ …``), a pipe into a shell, ``$(…)``, ``&&``, a
  redirect to ``/dev/tcp``;
* a **command-line flag** (``--fix``, ``-k``): a flag is part of a command line, whatever
  names the program ("the linter runs with --fix --unsafe-fixes");
* an **executable path** (``./bootstrap.sh``, ``~/x.ps1``) or a script's file name
  (``.sh``, ``.ps1``, ``.bat``, ``.cmd``, ``.command``);
* a **run** verb of the lexicons ("run", "ausführen", "запустить", "実行") in the same
  sentence as a file of code (``train.py``) or the word "script" in any language.

Each is given once, as the text that holds it (evidence). Installing a package (the word
"install" in any language) is :func:`installs`.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from .._language import function_words
from .lexicons import fold, lexicon

__all__ = ["commands", "installs"]

_TOKEN = re.compile(r"[^\s`'\"]+")
_PROGRAM = re.compile(r"(?<![\w./\\-])([a-z][a-z0-9+._-]*)(?![\w-])")
# A version, and one with a case ending after a hyphen or an apostrophe ("3.12-ს",
# "3.12'yi").
_VERSION = re.compile(r"^v?\d+(?:\.\d+)*[a-z]?\d*(?:[-'\u2019][^\W\d_]+)?$")
_SHELL = re.compile(
    r"(?:^|\n)\s*[$#>]\s+\S+|\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\$\([^)]{1,200}\)|\S\s*&&\s*\S"
    r"|/dev/(?:tcp|udp)/|\b(?:iex|invoke-expression)\b"
)
_EXECUTABLE = re.compile(
    r"(?<![\w])(?:\.{1,2}/|~/|/)[\w./-]*\w|(?<![\w./-])[\w.-]+\.(?:sh|bash|zsh|ps1|psm1|bat|cmd|command|vbs)\b"
)
_FLAG = re.compile(r"(?:^|(?<=[\s(\"'`]))--?[a-z][\w-]*", re.MULTILINE)
_CODE_FILE = re.compile(
    r"(?<![\w-])[\w./-]+\.(?:py|ipynb|r|jl|js|mjs|ts|rb|pl|php|lua|exe|jar|bin)\b"
)
# (NFKC makes full-width ! and ? plain; the Urdu full stop and the Arabic question mark.)
_SENTENCE = re.compile("[^.!?\n\u3002\u06d4\u061f]+")
_SMALL_LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "pl", "tr", "id", "vi", "sv")


def _small_word(word: str) -> bool:
    return any(word in function_words(lang) for lang in _SMALL_LANGUAGES)


def _argument(program: str, token: str) -> bool:
    """Whether ``token`` after ``program`` is an argument (see the module docstring)."""
    lex = lexicon()
    bare = token.strip(".,;:!?()[]{}")
    if not bare:
        return False
    if program in lex.any_argument:
        return not _small_word(bare)
    return _operand(bare)


def _operand(bare: str) -> bool:
    """Whether a word after a program is spelled as an operand: a flag, a subcommand, a
    path, a host, an assignment or a number -- not a version ("python 3.11 is
    required")."""
    if bare.startswith("-") and len(bare) > 1:
        return True
    if bare in lexicon().subcommands:
        return True
    if _VERSION.match(bare):
        return False  # "python 3.11 is required"
    return any(c in bare for c in "/=:@") or ("." in bare.strip(".")) or bare.isdigit()


# Programs whose operands are a host and a port ("nc relay 4444").
_HOST_PORT = frozenset({"nc", "ncat", "netcat", "socat", "telnet"})


def _host_and_port(program: str, tokens: list[str]) -> bool:
    """A small word after a program that connects is still its host when a port or a
    flag follows: "nc ini 4444" connects to a host named "ini"."""
    if program not in _HOST_PORT or len(tokens) < 2:
        return False
    bare = tokens[1].strip(".,;:!?()[]{}")
    return (bare.isdigit() and 2 <= len(bare) <= 5) or bare.startswith("-")


# Programs named after the protocol they speak ("SSH access", "the FTP server").
_PROTOCOLS = frozenset({"ssh", "sftp", "ftp", "scp", "telnet", "rsync", "smb", "vnc", "rdp"})


def _protocol(text: str, plain: str, m: re.Match[str], after: str) -> bool:
    """Whether a program written in capitals is named as its protocol or tool, not run:
    "the SSH session times out", "SSH access is by key" -- a command line is lower case,
    and no operand follows."""
    if len(plain) != len(text) or m.group(1) not in _PROTOCOLS:
        return False
    written = text[m.start(1) : m.end(1)]
    return len(written) > 1 and written.isupper() and not _operand(after.strip(".,;:!?()[]{}"))


def commands(text: str, *, languages: Collection[str] = ()) -> tuple[str, ...]:
    """The commands ``text`` gives to run (see the module docstring), each once;
    ``languages``: those its sentences are told to be in (the lexicons' exceptions in
    them apply)."""
    lex = lexicon()
    plain = text.casefold()
    found: list[str] = []

    def add(what: str) -> None:
        what = what.strip()
        if what and what not in found:
            found.append(what)

    for m in _PROGRAM.finditer(plain):
        program = m.group(1)
        if program not in lex.any_argument and program not in lex.needs_argument:
            continue
        rest = plain[m.end() : m.end() + 200].split("\n", 1)[0]
        tokens = _TOKEN.findall(rest)
        if tokens and _protocol(text, plain, m, tokens[0]):
            continue
        if tokens and (_argument(program, tokens[0]) or _host_and_port(program, tokens)):
            add(" ".join([program, *tokens[:3]]))
    for m in _SHELL.finditer(plain):
        add(m.group())
    for m in _FLAG.finditer(plain):
        if not any(m.group() in f.split() for f in found):
            add(m.group())
    for m in _EXECUTABLE.finditer(plain):
        path = m.group()
        if path.startswith("/") and not re.search(r"\.(?:sh|bash|zsh|ps1|bat|cmd|command)$", path):
            continue  # "/data/raw" is a folder, not something to run
        add(path)
    folded = fold(text)
    runs = lex.find("run", folded, languages=languages)
    if runs:
        scripts = [m.start() for m in lex.find("script", folded, languages=languages)]
        for sentence in _SENTENCE.finditer(folded):
            start, end = sentence.span()
            if not any(start <= m.start() < end for m in runs):
                continue
            said = sentence.group()
            if _CODE_FILE.search(said) or any(start <= at < end for at in scripts):
                add(said)
    return tuple(found)


def installs(text: str, *, languages: Collection[str] = ()) -> tuple[str, ...]:
    """The words of ``text`` that ask to install something, in any language read
    (``languages``: those its sentences are told to be in)."""
    found = lexicon().find("install", fold(text), languages=languages)
    return tuple(dict.fromkeys(m.group() for m in found))
