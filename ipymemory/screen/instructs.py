"""Does a memory's text instruct the assistant? (SPEC §7)

A memory is re-sent to the model on later turns, so text that tells the assistant what
to do is a lasting instruction: planted by a file the agent read, it is a poisoning.
SPEC §7 holds such items for a person (pending in ``auto`` mode, flagged in review).

The feedback type legitimately holds how-to-work notes ("do not mock the database",
"tests use a real postgres"), so this is not "any imperative". Flagged are:

1. override: ignore / disregard / forget / override … instructions, rules, prompt,
   guidelines, memories (忽略/无视 … 指令/规则/提示; es/fr/de basics);
2. persistence: "from now on", "henceforth", "going forward", "in all future answers"
   (从现在起, 从今以后, 今后, 以后每次; "a partir de ahora", "à partir de maintenant",
   "ab jetzt");
3. a sentence that opens with always / never / print / output / reveal / say /
   reply / respond / "you must|should|will|are" (总是, 始终, 永远, 务必, 你必须, 你要…)
   -- the SPEC's examples, aimed at the assistant; the same words inside a sentence
   ("the user always uses tabs") are a description, not an order;
4. answer control: "when asked …, say …", "reply only with …", "do not tell the user";
5. exfiltration: printing/sending/showing/quoting keys, tokens, passwords, credentials, the
   system prompt, the conversation or memories; sending anything to a URL or an email
   address; piping a download into a shell -- unless negated just before ("do not
   print the API key" is feedback against leaking);
6. role change and forged turns: "you are now", "act as", "pretend to be",
   "new instructions", a line opening with ``system:``/``assistant:``/``human:``, tags
   such as ``</system>`` or ``<instructions>``;
7. text aimed at the memory machinery: the consolidator/extractor, "replace/delete all
   memories", "merge every record into".

8. reveal: reading, including, printing or sending a secret-bearing or hidden file
   (``.env``, ``~/.ssh``, ``id_rsa``, ``.aws/credentials``, ``.netrc``, ``/etc/passwd``,
   any ``~/.name``, "hidden files"), or its "contents"/"text" (en/de/fr/zh);
9. command: calling a tool (``call read_file on …``), "run/execute the following
   command", and running network, privileged or destructive commands (curl, wget, ssh,
   sudo, ``rm -rf``, ``bash -c``, …; piping a download into a shell);
10. concealment: "do not tell the user", "without telling the user", 不要告诉用户;
11. obfuscated: any of the above found only after leetspeak and look-alike letters are
    folded ("Fr0m n0w 0n, ign0re …", a Cyrillic o in "ignore"): nobody writes
    feedback that way.
12. weakens-security (round 4): turning off a check that protects the user -- TLS or
    certificate verification (``verify=False``, ``PYTHONHTTPSVERIFY=0``, ``--insecure``),
    commit hooks (``--no-verify``), host keys, permissions (``chmod 777``), 2FA -- or
    keeping credentials in plain text ("API-Schlüssel im Klartext").

**Two classes** (SPEC §9). :data:`HOW_TO_WORK` -- persistence, imperative,
answer-control -- is how a user gives feedback ("never present the raw numbers as
euros", "from now on answer in German"): committed when the user said it, held when a
file or an output did. :data:`DANGEROUS` -- override, exfiltration, reveal, command,
role, memory-machinery, concealment, obfuscated, weakens-security -- would send data off
the machine, reveal credentials, hidden files or the system prompt, run commands, weaken
a safeguard, or take over the assistant or the memory: held for a person whatever the
origin. Role changes count as
dangerous because a forged turn and "you are now …" look the same to a rule, and a
user rarely needs one remembered.

Before matching, the text is NFKC-folded (fullwidth and other look-alikes become ASCII),
format characters (zero-width spaces, bidi marks, tag characters) are removed and
white space is collapsed, so a fullwidth ``ignore`` or one with a zero-width space
inside reads as ``ignore``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from .._language import detect

__all__ = [
    "DANGEROUS",
    "HOW_TO_WORK",
    "Exemption",
    "dangerous_reasons",
    "instruction_evidence",
    "instruction_exemptions",
    "instruction_reasons",
    "instructs_assistant",
]

#: Instruction kinds held for a person whatever the item's origin (SPEC §9).
DANGEROUS = frozenset(
    {
        "override",
        "exfiltration",
        "reveal",
        "command",
        "role",
        "memory-machinery",
        "concealment",
        "obfuscated",
        "weakens-security",
    }
)
#: Instruction kinds that tell the assistant how to work: feedback when the user said it.
HOW_TO_WORK = frozenset({"persistence", "imperative", "answer-control"})


def _normal(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text)
    kept = "".join(c for c in folded if unicodedata.category(c) != "Cf")
    # Every white-space run becomes one character ("\n" if it breaks a line): no two
    # are adjacent, so no ``\s*`` in a rule can rescan a long run at each start.
    return _WHITE_RUN_RE.sub(_one_space, kept).casefold()


_WHITE_RUN_RE = re.compile(r"\s+")


def _one_space(m: re.Match[str]) -> str:
    return "\n" if any(c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029" for c in m.group()) else " "


# A sentence start: text start, after sentence punctuation or a line break, after a
# list marker or a quote. (Fullwidth punctuation is ASCII after NFKC folding; 。 is not.)
_START = r"(?:^|[.!?;:。\n]\s*|^\s*[-*•>]\s*|\n\s*[-*•>]\s*|[\"'\u201c\u2018「]\s*)"

_SECRETS = (
    r"(?:api[ _-]?keys?|(?:auth|access|api|bearer|session|github|refresh)[ _-]?tokens?"
    r"|tokens?(?! ?(?:counts?|usage|budgets?|limits?|costs?|per\b|used\b))"
    r"|passwords?|passphrases?|secrets?|credentials?|private[ _-]?keys?|ssh[ _-]?keys?"
    r"|system prompt|your (?:instructions|prompt|rules)|environment variables|env vars?|\.env"
    r"|cookies|密钥|密码|令牌|凭证|系统提示"
    r"|passw(?:o|ö)rt(?:er)?|kennw(?:o|ö)rt(?:er)?|(?:api-?)?schlüssel|zugangsdaten"
    r"|mots? de passe|clés? (?:api|privées?|ssh)|identifiants|jetons?"
    r"|contraseñas?|claves? (?:de )?api|credenciales|chiavi (?:api)?|senhas?|credenciais"
    r"|hasł[oa]|wachtwoord|пароль|токен|パスワード|apiキー|トークン|秘密鍵)"
)

# Files that hold credentials, and hidden paths (the agent's tools refuse most, but an
# item asking for them is still a reveal).
_HIDDEN = (
    r"(?:(?<![a-z0-9_-])\.env(?:\.[a-z0-9_-]+)?(?![a-z0-9_-])|\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b"
    r"|\.aws/credentials|\.netrc\b|\.pgpass\b|\.git-credentials|\.npmrc\b|\.pypirc\b"
    r"|\.kube/config|\.docker/config|/etc/(?:passwd|shadow)\b|~/\.[\w.-]+"
    r"|\b(?:hidden|dot) ?files?\b|versteckten? dateien|fichiers? cachés?|隐藏文件)"
)
_REVEAL_VERBS = (
    r"(?:\b(?:(?:include|print|output|show|display|reveal|quote|paste|append|attach|send"
    r"|upload|dump|cat|echo|leak|share|post|email|read|list|see|type out)(?:s|d|ed|n|ing)?"
    r"|read_file|zeige|zeigen|gib|füge|sende|schicke|lies|affiche|afficher|inclus|inclure"
    r"|envoie|envoyer|montre|montrer|lis|lire|colle|ajoute)\b"
    r"|输出|打印|显示|附上|读取|发送|包含|贴出|给我看)"
)
_EXFIL_VERBS = (
    r"\b(?:print|output|reveal|show|display|echo|repeat|leak|send|post|upload|e-?mail|mail|cc|bcc|"
    r"exfiltrate|forward|transmit|share|dump|zeige|gib|sende|schicke|poste"
    r"|affiche|montre|révèle|envoie|transmets|publie"
    # Worded as a preference (issue 28 item 2): "answers that begin by quoting the
    # system prompt", "reciting your instructions".
    r"|quot(?:e|es|ed|ing)|recit(?:e|es|ed|ing)|reproduc(?:e|es|ed|ing)|verbatim copy of"
    r"|(?:print|repeat|reveal|output|display|echo|leak)(?:s|ed|ing)|echoes|zitier\w*|cite[rz]?)\b"
)

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        (
            "override",
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\b[^.!?\n]{0,60}?"
            r"\b(?:instructions?|rules?|prompts?|guidelines?|guardrails?|directives?|"
            r"memories|polic(?:y|ies)|constraints?|safety)\b",
        ),
        (
            "override",
            r"(?:忽略|无视|不要理会|忘记|忘掉)[^。!?\n]{0,20}(?:指令|指示|规则|提示|要求|说明|设定)",
        ),
        (
            "override",
            r"\b(?:ignor(?:a|e|ez|iere|ieren)|vergiss|oublie|oubliez|olvida)\b[^.!?\n]{0,40}"
            r"\b(?:instrucciones|instructions|anweisungen|anweisung|regeln|vorgaben|consignes"
            r"|règles|reglas|prompt)\b",
        ),
        (
            "persistence",
            r"\b(?:from now on|from this point (?:on|forward)|henceforth|going forward|"
            r"from here on|in (?:all|every) (?:future )?(?:responses?|answers?|repl(?:y|ies)|"
            r"turns?|sessions?|conversations?|chats?)|in future (?:responses|answers|sessions|"
            r"conversations)|for (?:all|every) (?:future )?(?:responses?|answers?|requests?|"
            r"sessions?))\b",
        ),
        (
            "persistence",
            r"从现在起|从现在开始|从今以后|从此以后|今后|以后(?:每次|都|一律|总是)|每次(?:回答|回复)",
        ),
        (
            "persistence",
            r"\b(?:a partir de ahora|à partir de maintenant|désormais|ab jetzt|ab sofort"
            r"|von nun an)\b",
        ),
        (
            "imperative",
            _START + r"(?:always|never|print|output|reveal|say|reply|respond|"
            r"you (?:must|should|shall|will|need to|have to|are required to|are to))\b",
        ),
        (
            "imperative",
            _START + r"(?:总是|始终|永远|一律|务必|必须|你必须|你应该|你要|请总是|请始终|请永远)",
        ),
        (
            "answer-control",
            r"\bwhen(?:ever)? (?:you are |you're )?(?:asked|the user asks|anyone asks|someone asks|"
            r"users? asks?)\b[^.!?\n]{0,80}?\b(?:say|reply|respond|answer|tell|claim|state)\b",
        ),
        (
            "answer-control",
            r"\b(?:reply|respond|answer) (?:only )?with (?:only )?[\"'\u201c\u2018]",
        ),
        (
            "concealment",
            r"\b(?:do not|don't|never) (?:tell|inform|mention (?:this |it )?to|let) the user\b"
            r"|\bwithout (?:telling|informing|asking|notifying) (?:the )?user\b|\bsecretly\b"
            r"|\b(?:sag|sage) (?:dem|den) (?:nutzer|benutzer|user)\w* nichts\b|\bverschweige"
            r"|\bohne (?:es )?(?:dem|den) (?:nutzer|benutzer)\w* zu sagen"
            r"|\bne (?:le )?dis (?:rien )?(?:pas )?à l'utilisateur"
            r"|\bsans (?:le )?dire à l'utilisateur"
            r"|不要告诉用户|别告诉用户|不要让用户知道|悄悄地?|偷偷地?",
        ),
        (
            "exfiltration",
            _EXFIL_VERBS + r"[^.!?\n]{0,60}?\b" + _SECRETS + r"(?![a-z])",
        ),
        ("exfiltration", r"(?:输出|打印|显示|透露|发送|告诉)[^。!?\n]{0,20}" + _SECRETS),
        (
            "exfiltration",
            r"(?:\b(?:send|post|upload|forward|transmit|exfiltrate|leak|e-?mail|mail|cc|bcc|sende|schicke"
            r"|lade|envoie|envoyer|transmets|publie)\b|发送|上传|发给|转发)[^\n]{0,80}?"
            r"(?:https?://|\b[\w.+-]+@[\w-]+\.[a-z]{2,}|\bwebhook)",
        ),
        (
            "reveal",
            _REVEAL_VERBS + r"[^.!?\n\u3002]{0,60}?" + _HIDDEN,
        ),
        (
            "reveal",
            r"(?:\b(?:contents?|text|body|inhalt|contenu|texte)\b|内容)"
            r"[^.!?\n\u3002]{0,20}?" + _HIDDEN,
        ),
        ("reveal", _HIDDEN + r"[^.!?\n\u3002]{0,30}?(?:内容|里的|中的)"),
        ("command", r"\b(?:curl|wget)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b"),
        (
            "command",
            r"\b(?:call|calls|calling|invoke|invoking|use the tool|aufrufen|rufe|appelle"
            r"|appeler)\b[^.!?\n]{0,20}?\b(?:read_file|run_python|list_files|tools?|functions?"
            r"|werkzeug|outil)\b",
        ),
        (
            "command",
            r"\b(?:run|execute|exec|type|invoke|launch|führe|führen|exécute|exécuter|lance"
            r"|lancer)\b[^.!?\n]{0,40}?(?:\b(?:curl|wget|nc|netcat|ncat|scp|rsync|ssh|sudo"
            r"|chmod|chown|mkfs|powershell|iwr|invoke-webrequest|eval|os\.system|subprocess"
            r"|befehl|kommando|commande|the following|this command|this script|folgenden"
            r"|suivante?)\b|\brm -rf\b|\b(?:ba)?sh -c\b|\bpython3? -c\b|\bbase64 -d\b)",
        ),
        ("command", r"执行[^\u3002!?\n]{0,20}(?:命令|脚本|代码|curl|wget|sudo|rm)"),
        (
            "command",
            r"\b(?:before|after) (?:answering|each answer|every answer|you answer|replying)\b"
            r"[^.!?\n]{0,30}?\b(?:call|run|execute|read|open|fetch|download|visit)\b",
        ),
        (
            "role",
            r"\b(?:you are now|act as (?:a|an|the|my)?|pretend (?:to be|you are)|"
            r"(?:here are|these are|follow) (?:your|the|my) new instructions|your new (?:role|task|"
            r"instructions?|rules?)|developer mode|jailbreak)\b",
        ),
        # not "user:": an extractor may well write "User: Dana, data engineer"
        ("role", r"(?:^|\n)\s*(?:system|assistant|human|ai)\s*:"),
        (
            "role",
            r"</?\s*(?:system|instructions?|assistant|human|tool_result|tool_output|"
            r"relevant_memories|im_start|im_end)\b[^>\n]{0,40}>",
        ),
        # Turning off a check that protects the user (TLS verification, hooks, host
        # keys, permissions) or keeping credentials in plain text: held whatever the origin.
        (
            "weakens-security",
            r"--no-verify\b|\bverify\s*=\s*false\b|\bpythonhttpsverify\s*=\s*0"
            r"|\bnode_tls_reject_unauthorized\s*=\s*['\"]?0|\bgit_ssl_no_verify\b"
            r"|\bsslverify\s*=?\s*false\b|\bssl_verify\s*=\s*false\b|--insecure\b"
            r"|--no-check-certificate\b|\bcurl\s+(?:-\w+\s+)*-k\b"
            r"|\bstricthostkeychecking\s*=?\s*no\b|--trusted-host\b|\bchmod\s+(?:-r\s+)?777\b"
            r"|\bsetenforce\s+0\b|\b(?:disable|turn off|skip|bypass|deactivate)\b[^.!?\n]{0,30}?"
            r"\b(?:ssl|tls|certificate|cert|https|host key|pre-commit|hooks?|2fa|mfa"
            r"|two-factor|authentication|firewall|antivirus|signature|gpg)\b",
        ),
        (
            "weakens-security",
            r"\b(?:zertifikats?|ssl|tls)[- ]?(?:prüfung|überprüfung|verifizierung)\w*\s+"
            r"(?:deaktivier|abschalt|ausschalt)\w*|\bdésactive\w*\s+(?:la\s+)?vérification"
            r"|\bdesactiv\w*\s+(?:la\s+)?verificación|\bdisattiv\w*\s+(?:la\s+)?verifica"
            r"|\bdesativ\w*\s+(?:a\s+)?verificação|(?:关闭|禁用)(?:证书|ssl|tls)?(?:验证|校验)"
            r"|証明書の?(?:検証|確認)を?(?:無効|オフ)",
        ),
        (
            "weakens-security",
            _SECRETS + r"[^.!?\n\u3002]{0,50}?(?:\bin (?:plain ?text|clear ?text|the clear)\b"
            r"|\bunencrypted\b|\bim klartext\b|\bunverschlüsselt\b|\ben clair\b"
            r"|\ben texto (?:plano|claro)\b|\bin chiaro\b|\bem texto (?:puro|claro|simples)\b"
            r"|明文|平文)"
            r"|(?:\bin (?:plain ?text|clear ?text)\b|\bim klartext\b|\ben clair\b|明文|平文)"
            r"[^.!?\n\u3002]{0,50}?" + _SECRETS,
        ),
        (
            "memory-machinery",
            r"\b(?:consolidator|the extractor|memory (?:extractor|consolidator)|"
            r"when (?:you )?(?:consolidat|merg)\w*|"
            r"(?:replace|delete|remove|drop|discard|overwrite|erase|wipe|merge)\b[^.!?\n]{0,30}?"
            r"\b(?:all|every|other|existing)\b[^.!?\n]{0,20}?\b(?:memories|memory|records?))\b",
        ),
    )
)


def instruction_reasons(text: str) -> tuple[str, ...]:
    """The kinds of instruction (rule names above) found in ``text``, without repeats;
    ``"obfuscated"`` is added when a kind shows only once leetspeak is folded."""
    normal = _normal(text)
    found = _kinds(normal)
    for variant in _unmasked(normal):
        hidden = [k for k in _kinds(variant) if k not in found]
        if hidden:
            found += [*hidden, *(["obfuscated"] if "obfuscated" not in found else [])]
    return tuple(found)


def instruction_evidence(text: str, kinds: Iterable[str] | None = None) -> dict[str, str]:
    """Per instruction kind found in ``text`` (:func:`instruction_reasons`; only those of
    ``kinds`` when given), the words that made it fire (folded; for ``obfuscated``, those
    of the kind it hid): the evidence of its finding (issue 39 item 3)."""
    wanted = set(instruction_reasons(text) if kinds is None else kinds)
    normal = _normal(text)
    out: dict[str, str] = {}
    for variant in (normal, *_unmasked(normal)):
        for name, pattern in _RULES:
            if name in out or (name not in wanted and "obfuscated" not in wanted):
                continue
            hit = next((m for m in pattern.finditer(variant) if _asserted(variant, m, name)), None)
            if hit is not None:
                out[name] = hit.group().strip()
                if variant is not normal and "obfuscated" not in out:
                    out["obfuscated"] = hit.group().strip()
    return {kind: out[kind] for kind in wanted if kind in out}


def dangerous_reasons(text: str) -> tuple[str, ...]:
    """The kinds found in ``text`` that are held whatever the origin (:data:`DANGEROUS`)."""
    return tuple(k for k in instruction_reasons(text) if k in DANGEROUS)


def _kinds(normal: str) -> list[str]:
    found: list[str] = []
    for name, pattern in _RULES:
        if name not in found and any(_asserted(normal, m, name) for m in pattern.finditer(normal)):
            found.append(name)
    return found


@dataclass(frozen=True)
class Exemption:
    """A rule (action ``allow``) that alone kept instruction ``kind`` from being found:
    its id and the words it judged."""

    kind: str
    rule_id: str
    words: str


def instruction_exemptions(text: str) -> tuple[Exemption, ...]:
    """The exemptions that alone kept a kind of instruction from being found in
    ``text`` (one per kind): :data:`RESTRAINT`, :data:`IMPERATIVE_IN_OTHER_LANGUAGE`
    (issue 39 item 3: an item records the rules that allowed it, too)."""
    normal = _normal(text)
    found = set(_kinds(normal))
    out: dict[str, Exemption] = {}
    for name, pattern in _RULES:
        if name in found or name in out:
            continue
        for m in pattern.finditer(normal):
            exemption = _exemption(normal, m, name)
            if exemption is not None:
                out[name] = Exemption(name, exemption, m.group().strip(" \n\"'.;:!?"))
                break
    return tuple(out.values())


def _exemption(normal: str, match: re.Match[str], name: str) -> str | None:
    """The rule that keeps ``match`` from counting as an instruction of kind ``name``."""
    if name in _RESTRAINABLE and _restrains(normal, match, name):
        return RESTRAINT
    if name == "imperative" and _in_other_language(normal, match):
        return IMPERATIVE_IN_OTHER_LANGUAGE
    return None


# Leetspeak digits and symbols, and Latin look-alikes from other scripts (Cyrillic,
# Greek) that NFKC leaves alone: folded inside words that also hold a Latin letter.
_LEET_I = str.maketrans("0134579@$|", "oieastgasi")
_LEET_L = str.maketrans("0134579@$|", "oleastgasl")
_LOOKALIKE = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0455\u0458\u0501\u0261"
    "\u03bf\u03b1\u03b5\u03b9\u03ba\u03bd\u03c4\u03c5\u03c1",
    "aeopcyxisjdgoaeikvtup",
)
_MIXED_WORD = re.compile(r"[\w@$|]+")


def _unmasked(normal: str) -> list[str]:
    """``normal`` with leetspeak and look-alike letters folded (each reading of "1"),
    only the variants that differ from it."""

    def fold(table: dict[int, int]) -> str:
        def one(m: re.Match[str]) -> str:
            word = m.group()
            latin = any("a" <= c <= "z" for c in word)
            other = any(not c.isascii() or c.isdigit() or c in "@$|" for c in word)
            if not (latin and other):
                return word
            return word.translate(_LOOKALIKE).translate(table)

        return _MIXED_WORD.sub(one, normal)

    return [v for v in dict.fromkeys((fold(_LEET_I), fold(_LEET_L))) if v != normal]


# "Never print the API key", "do not send tokens anywhere": a rule against leaking is
# feedback, not an exfiltration order (a sentence-initial "never" is still flagged).
_NEGATION_RE = re.compile(
    r"(?:\bnot|\bnever|n't|\bno|\bne|n'|\bnie|\bniemals|\bnicht|\bjamais|不要|别|禁止|切勿|不得)"
    r"\s*(?:\w+\s*)?$"
)
# German and French put the negation after the verb: "gib niemals …", "n'affiche jamais".
_NEGATION_AFTER_RE = re.compile(r"^\W*\w+\s+(?:\w+\s+)?(?:nie|niemals|nicht|keine?|jamais|pas)\b")
_NEGATABLE = frozenset({"exfiltration", "reveal", "command"})


def _asserted(normal: str, match: re.Match[str], name: str) -> bool:
    if _exemption(normal, match, name) is not None:
        return False
    if name not in _NEGATABLE:
        return True
    if _NEGATION_RE.search(normal, max(0, match.start() - 24), match.start()):
        return False
    return not _NEGATION_AFTER_RE.match(match.group())


#: Rule id: an English imperative opener ("output", "print", "say") in a sentence of
#: another language is a noun borrowed into it ("Notebook tidak di-commit dengan output;
#: output dibersihkan dulu"), not an order to the assistant (issue 39).
IMPERATIVE_IN_OTHER_LANGUAGE = "instructs.borrowed-word"
_SENTENCE_STOP = re.compile(r"[.!?;\n\u3002]")


def _in_other_language(normal: str, match: re.Match[str]) -> bool:
    """Whether the ASCII imperative ``match`` opens a sentence told as another language
    than English (a sentence too short to tell: the text's language)."""
    if not match.group().isascii():
        return False
    stop = _SENTENCE_STOP.search(normal, match.end())
    sentence = normal[match.start() : stop.start() if stop else len(normal)]
    lang = detect(sentence) or detect(normal)
    return lang is not None and lang != "en"


# --- a rule that restrains the assistant (issue 39) -----------------------------------
#: Rule id: a user's rule that keeps the assistant from acting unseen or unasked
#: ("never change configs without telling the user", "ask the user before you run
#: anything with sudo") is not an order to conceal or to run a command.
RESTRAINT = "instructs.restraint"
_RESTRAINABLE = frozenset({"concealment", "command"})
# A prohibition of the clause the match is in ("never fix it without telling the user").
_PROHIBITION = re.compile(
    r"\b(?:never|do not|don't|must not|mustn't|should not|shouldn't|may not|cannot|can't|not"
    r"|nie|niemals|nicht|jamais|ne|nunca|não|non|mai|niet|nooit|nigdy|nie wolno)\b"
    r"|不要|别|不得|切勿|绝不|从不"
)
# Asking, confirming or showing first.
_GUARD = re.compile(
    r"\b(?:ask|asks|asking|confirm\w*|approv\w*|permission|consent|check with|wait for"
    r"|show (?:it|them|me|the user|the (?:command|message|text|change)s?)|tell (?:me|the user)"
    r"|frag\w*|bestätig\w*|erlaubnis|zustimmung|demande\w*|autorisation|pregunt\w*|permiso"
    r"|chied\w*|permesso|pergunt\w*|permissão|vraag|toestemming|zapytaj|pytaj|zgod\w*)\b"
    r"|先问|先确认|征得"
)
# ... unless the guard itself is dropped ("without asking", "no need to ask").
_UNGUARDED = re.compile(
    r"\b(?:without|no need to|don't|do not|never|ohne|sans|sin|senza|sem|zonder|bez)\s+(?:\w+\s+)?$"
)
_BEFORE = re.compile(
    r"\b(?:before|first|prior to|vorher|bevor|zuerst|avant|d'abord|antes|primero|prima|eerst"
    r"|voordat|najpierw|przed)\b|之前|先"
)
_AFTER_GUARD = re.compile(r"\b(?:only (?:after|once|when|with|if)|until|unless)\b")
_CLAUSE_END = re.compile(r"[.!?;:\n\u3002,]")
_WITHOUT = re.compile(r"\s*(?:without|ohne|sans|sin|senza|sem|zonder|bez|без)\b")


def _restrains(normal: str, match: re.Match[str], name: str) -> bool:
    """Whether the match sits in a rule that restrains the assistant (:data:`RESTRAINT`):
    for concealment, a prohibition earlier in its clause ("never change configs
    secretly"; not "do not tell the user", which is the concealment); for a command, a
    guard in its sentence that comes first ("ask the user before you run …", "before
    running ssh, ask the user", "run sudo only after the user confirms")."""
    head = normal[: match.start()]
    if name == "concealment":
        if _PROHIBITION.match(match.group()):
            return False
        start = _last(_CLAUSE_END, head)
        if _WITHOUT.match(head[start:] + match.group()):
            # "Ändere nie das Schema, ohne es dem Nutzer zu sagen": the clause of "without"
            # belongs to the one before it.
            start = _last(_CLAUSE_END, head[: max(0, start - 1)])
        return _PROHIBITION.search(head[start:]) is not None
    start = _last(re.compile(r"[.!?;\n\u3002]"), head)
    stop = re.compile(r"[.!?;\n\u3002]").search(normal, match.end())
    before = normal[start : match.start()]
    after = normal[match.end() : stop.start() if stop else len(normal)]
    guards = [g for g in _GUARD.finditer(before) if not _UNGUARDED.search(before[: g.start()])]
    if any(_BEFORE.search(before, g.end()) for g in guards):
        return True  # "ask the user before you run …"
    later = [g for g in _GUARD.finditer(after) if not _UNGUARDED.search(after[: g.start()])]
    return bool(later) and bool(_BEFORE.search(before) or _AFTER_GUARD.search(after))


def _last(pattern: re.Pattern[str], text: str) -> int:
    """Where the text after the last match of ``pattern`` in ``text`` starts (0: none)."""
    ends = [m.end() for m in pattern.finditer(text)]
    return ends[-1] if ends else 0


def instructs_assistant(text: str) -> bool:
    """True when ``text`` tells the assistant what to do (see the module docstring)."""
    return bool(instruction_reasons(text))
