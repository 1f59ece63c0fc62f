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
5. exfiltration: printing/sending/showing keys, tokens, passwords, credentials, the
   system prompt, the conversation or memories; sending anything to a URL or an email
   address; piping a download into a shell -- unless negated just before ("do not
   print the API key" is feedback against leaking);
6. role change and forged turns: "you are now", "act as", "pretend to be",
   "new instructions", a line opening with ``system:``/``assistant:``/``human:``, tags
   such as ``</system>`` or ``<instructions>``;
7. text aimed at the memory machinery: the consolidator/extractor, "replace/delete all
   memories", "merge every record into".

Before matching, the text is NFKC-folded (fullwidth and other look-alikes become ASCII),
format characters (zero-width spaces, bidi marks, tag characters) are removed and
white space is collapsed, so a fullwidth ``ignore`` or one with a zero-width space
inside reads as ``ignore``.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["instruction_reasons", "instructs_assistant"]


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
    r"|passwords?|passphrases?|secrets?|credentials?|private[ _-]?keys?|ssh[ _-]?keys?"
    r"|system prompt|your (?:instructions|prompt|rules)|environment variables|env vars?|\.env"
    r"|cookies|密钥|密码|令牌|凭证|系统提示)"
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
            r"\bignor(?:a|e|ez|iere)\b[^.!?\n]{0,40}\b(?:instrucciones|instructions|anweisungen)\b",
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
            r"\b(?:reply|respond|answer) (?:only )?with (?:only )?[\"'\u201c\u2018]|"
            r"\b(?:do not|don't|never) (?:tell|inform|mention (?:this )?to) the user\b",
        ),
        (
            "exfiltration",
            r"\b(?:print|output|reveal|show|display|echo|repeat|leak|send|post|upload|email|"
            r"exfiltrate|forward|transmit|share|dump)\b"
            r"[^.!?\n]{0,60}?\b" + _SECRETS + r"(?![a-z])",
        ),
        ("exfiltration", r"(?:输出|打印|显示|透露|发送|告诉)[^。!?\n]{0,20}" + _SECRETS),
        (
            "exfiltration",
            r"\b(?:send|post|upload|forward|transmit|exfiltrate|leak|email)\b[^\n]{0,80}?"
            r"(?:https?://|\b[\w.+-]+@[\w-]+\.[a-z]{2,})",
        ),
        ("exfiltration", r"\b(?:curl|wget)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b"),
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
    """The kinds of instruction (rule names above) found in ``text``, without repeats."""
    normal = _normal(text)
    found: list[str] = []
    for name, pattern in _RULES:
        if name not in found and any(_asserted(normal, m, name) for m in pattern.finditer(normal)):
            found.append(name)
    return tuple(found)


# "Never print the API key", "do not send tokens anywhere": a rule against leaking is
# feedback, not an exfiltration order (a sentence-initial "never" is still flagged).
_NEGATION_RE = re.compile(r"(?:\bnot|\bnever|n't|\bno|不要|别|禁止|切勿)\s*(?:\w+\s*)?$")


def _asserted(normal: str, match: re.Match[str], name: str) -> bool:
    if name != "exfiltration":
        return True
    return not _NEGATION_RE.search(normal, max(0, match.start() - 24), match.start())


def instructs_assistant(text: str) -> bool:
    """True when ``text`` tells the assistant what to do (see the module docstring)."""
    return bool(instruction_reasons(text))
