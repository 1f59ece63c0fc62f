"""Credentials in memory text: find them, and redact them (SPEC §7, issue 12).

A memory is stored on disk, shown in the lab panel and sent back to the model on later
turns, so a credential pasted into a chat must never reach a record. This module finds
credentials in free text (memory descriptions and bodies: prose, code, config snippets)
by explicit rules, one per known credential shape, plus context rules for secrets that
have no shape of their own (``password = …``, ``user:pw@`` in URLs, ``Bearer …``).

Why rules of our own and not a detector library: detect-secrets (the best-known Python
one) was measured on the same corpus (``benchmarks/secrets_corpus.py``): it misses the
current Anthropic, GCP, HuggingFace, OpenAI project-key and other shapes and, with its
entropy plugins, flags hashes and base64 in ordinary text; these rules alone beat
library + rules on both counts, so it is not a dependency. See benchmarks/README.md.

Precision rules (what is NOT a credential here):

* values that are placeholders: ``sk-ant-...``, ``<your key>``, ``****``, ``xxxxx``,
  ``YOUR_API_KEY``, anything containing ``example``/``redacted``/``placeholder``, and
  runs with too few distinct characters (``aaaaaaaa…``);
* hashes, UUIDs, our own record ids and base64 data: bare hex or base64 is never a hit;
  it is one only in a credential context (``api_key = 3f9a…``, ``auth token 3f9a…``);
* code that *refers* to a secret: ``password = os.environ["DB_PASSWORD"]``,
  ``api_key: str``, ``token=get_token()``, ``password=password``;
* public material: ``pk_live_`` publishable keys, certificates, public keys.

All character classes are ASCII on purpose (``re.ASCII``): a key glued to Chinese text
(``密钥sk-ant-…``) still has a word boundary before it.

**As a reader sees it** (issue 19 #4): the rules run on the text with the characters a
reader does not see removed (Unicode format characters — zero-width space, soft hyphen,
word joiner, BOM … — and the other default-ignorable fillers) and each character folded
by NFKC (fullwidth letters are ASCII letters), and every hit is mapped back to the original
text: its span covers the whole key, the invisible characters inside it included, so
redaction leaves no piece of it.

**Configuration syntaxes** beyond ``key = value``: netrc (``machine h login u password
p``), command-line flags (``--password p``, ``--token p``; ``-pVALUE`` only after a
``mysql``-family command, where it is the password — elsewhere ``-p`` is a port, a
plugin, a parent directory; ``sshpass -p p``; ``curl -u user:p``), XML elements
(``<password>p</password>``), beside the INI/TOML/YAML/``.env``/JSON assignments,
connection strings (``Password=p;``) and URLs (``postgres://u:p@h``) handled before.
A value there must look like one: not a placeholder, a variable, a path or a word.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

__all__ = ["SECRET_KINDS", "SecretHit", "find_secrets", "redact", "redact_data"]


@dataclass(frozen=True)
class SecretHit:
    """One credential in a text: ``text[start:end]`` is the secret value itself (the
    key, the password), never the words around it."""

    kind: str
    start: int
    end: int

    @property
    def redaction(self) -> str:
        """What replaces the secret in redacted text."""
        return f"[REDACTED: {self.kind}]"


Check = Callable[[str], bool]

_FLAGS = re.ASCII
# Not preceded / followed by a token character: keeps a key from matching inside a
# longer identifier, while punctuation, spaces and CJK text are boundaries.
_L = r"(?<![A-Za-z0-9_\-])"
_R = r"(?![A-Za-z0-9_\-])"

_PLACEHOLDER_RE = re.compile(
    r"example|placeholder|redacted|dummy|sample|changeme|not[-_]?real|fake[-_]?(?:key|token)"
    r"|xxxxx|XXXXX|\*\*\*|\.\.\.|\u2026"
    r"|(?:^|[^a-z0-9])your(?:[^a-z0-9]|$)|your[-_]?(?:key|token|secret|pass|api)",
    re.ASCII | re.IGNORECASE,
)
# Template slots: ${VAR}, $VAR, {{var}}, {var}, %s, %(var)s, <var>.
_SLOT_RE = re.compile(
    r"\$\{[^}]*\}?|\$[A-Z_][A-Z0-9_]+|\{\{[^}]*\}?\}?|\{[A-Za-z_]+\}|%\([A-Za-z_]+\)s|%s"
    r"|<[^<>]*>|^<|>$",
    re.ASCII,
)


def _is_placeholder(value: str) -> bool:
    if _PLACEHOLDER_RE.search(value):
        return True
    # A template is a placeholder; a secret is one whatever characters it holds -- what
    # is left without its slots ("P%O776c!pw%s" is "P%O776c!pw") decides.
    if _SLOT_RE.search(value):
        rest = _SLOT_RE.sub("", value)
        return not (len(rest) >= 6 and _classes(rest) >= 3 and len(set(rest)) >= 5)
    # Real keys are random: a long run made of very few characters is a filler
    # (``sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaa``).
    runs = re.findall(r"[A-Za-z0-9]{12,}", value)
    return any(len(set(run)) < 4 for run in runs)


def _classes(value: str) -> int:
    return sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))


def _random_looking(value: str) -> bool:
    """A value that reads as generated: long enough, mixed classes, varied."""
    if len(value) < 12 or _is_placeholder(value):
        return False
    has_digit = bool(re.search(r"[0-9]", value))
    return (_classes(value) >= 3 or (has_digit and _classes(value) >= 2)) and len(
        set(value)
    ) >= min(10, len(value) // 2)


def _mixed_case(value: str) -> bool:
    return bool(re.search(r"[a-z]", value) and re.search(r"[A-Z]", value))


def _upper_lower_digit(value: str) -> bool:
    return _mixed_case(value) and bool(re.search(r"[0-9]", value))


def _jwt_header_ok(value: str) -> bool:
    head = value.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        parsed = json.loads(decoded)
    except (binascii.Error, ValueError, RecursionError):  # RecursionError: deep nesting
        return False
    return isinstance(parsed, dict)


def _basic_auth_ok(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        text = decoded.decode("ascii")
    except (binascii.Error, ValueError):
        return False
    user, sep, password = text.partition(":")
    return bool(sep and user and password) and text.isprintable()


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    group: str | int = 0  # which group is the secret value
    check: Check | None = None  # extra condition on the value (besides placeholders)


def _rule(kind: str, pattern: str, check: Check | None = None, group: str | int = 0) -> _Rule:
    return _Rule(kind, re.compile(pattern, _FLAGS), group, check)


# Keys with a shape of their own. Lengths follow the providers' documented/observed
# formats, with slack where providers have changed lengths before.
_SHAPED: tuple[_Rule, ...] = (
    _rule("anthropic-api-key", _L + r"sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_\-]{20,}"),
    _rule("anthropic-api-key", _L + r"sk-ant-[A-Za-z0-9_\-]{32,}", _random_looking),
    _rule("openai-api-key", _L + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}"),
    _rule("openai-api-key", _L + r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}" + _R),
    # Other "sk-" keys (DeepSeek, older OpenAI, many proxies): one random run.
    _rule("sk-api-key", _L + r"sk-[A-Za-z0-9]{32,}" + _R, _random_looking),
    _rule("github-token", _L + r"gh[pousr]_[A-Za-z0-9]{36,251}" + _R),
    _rule("github-token", _L + r"github_pat_[A-Za-z0-9_]{50,}" + _R),
    _rule("gitlab-token", _L + r"gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt)-[A-Za-z0-9_\-]{20,}" + _R),
    _rule(
        "aws-access-key-id",
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    _rule("gcp-api-key", _L + r"AIza[A-Za-z0-9_\-]{35}" + _R),
    _rule("google-oauth-secret", _L + r"GOCSPX-[A-Za-z0-9_\-]{28}" + _R),
    _rule("google-oauth-token", _L + r"ya29\.[A-Za-z0-9_\-]{30,}" + _R),
    _rule("slack-token", _L + r"xox[abposre]-[A-Za-z0-9\-]{10,}" + _R, _random_looking),
    _rule("slack-token", _L + r"xapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]{16,}" + _R),
    _rule(
        "slack-webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}",
    ),
    _rule("stripe-key", _L + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}" + _R),
    _rule("stripe-webhook-secret", _L + r"whsec_[A-Za-z0-9+/=]{24,}" + _R),
    _rule("huggingface-token", _L + r"hf_[A-Za-z0-9]{30,}" + _R, _mixed_case),
    _rule("npm-token", _L + r"npm_[A-Za-z0-9]{36}" + _R),
    _rule("pypi-token", _L + r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
    _rule("sendgrid-key", _L + r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}" + _R),
    _rule("twilio-api-key", r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])"),
    _rule("mailchimp-key", r"(?<![A-Za-z0-9])[0-9a-f]{32}-us\d{1,2}(?![A-Za-z0-9])"),
    _rule(
        "discord-bot-token",
        _L + r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}" + _R,
        _upper_lower_digit,
    ),
    _rule("telegram-bot-token", r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_\-]{33}" + _R),
    _rule("databricks-token", _L + r"dapi[a-f0-9]{32}(?:-\d)?" + _R),
    _rule("digitalocean-token", _L + r"do[opr]_v1_[a-f0-9]{64}" + _R),
    _rule("shopify-token", _L + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _R),
    _rule("linear-api-key", _L + r"lin_api_[A-Za-z0-9]{40}" + _R),
    _rule(
        "notion-token", _L + r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})" + _R, _mixed_case
    ),
    _rule("groq-api-key", _L + r"gsk_[A-Za-z0-9]{48,}" + _R),
    _rule("replicate-token", _L + r"r8_[A-Za-z0-9]{37,}" + _R, _mixed_case),
    _rule("xai-api-key", _L + r"xai-[A-Za-z0-9]{60,}" + _R),
    _rule("perplexity-api-key", _L + r"pplx-[A-Za-z0-9]{40,}" + _R),
    _rule("atlassian-token", _L + r"ATATT3[A-Za-z0-9_=\-]{60,}"),
    _rule("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    _rule(
        "square-token", _L + r"(?:EAAA[A-Za-z0-9_\-]{60}|sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,43})" + _R
    ),
    _rule("sentry-token", _L + r"sntr[yu]s_[A-Za-z0-9_=+/\-]{40,}"),
    _rule("grafana-token", _L + r"(?:glsa_[A-Za-z0-9]{32}_[a-fA-F0-9]{8}|glc_[A-Za-z0-9+/=]{32,})"),
    _rule("supabase-token", _L + r"sbp_[a-f0-9]{40}" + _R),
    _rule("heroku-api-key", _L + r"HRKU-[A-Za-z0-9_\-]{60}" + _R),
    _rule("1password-token", _L + r"ops_eyJ[A-Za-z0-9+/]{100,}={0,3}"),
    _rule("alibaba-access-key-id", r"(?<![A-Za-z0-9])LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])"),
    _rule("artifactory-token", r"(?<![A-Za-z0-9])AKCp[A-Za-z0-9]{60,80}(?![A-Za-z0-9])"),
    _rule("doppler-token", _L + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}" + _R),
    _rule("dynatrace-token", _L + r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}" + _R),
    _rule("flyio-token", _L + r"(?:fo1_[A-Za-z0-9_\-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})"),
    _rule("facebook-token", r"(?<![A-Za-z0-9])EAA[MC][A-Za-z0-9]{100,}(?![A-Za-z0-9])"),
    _rule("hashicorp-vault-token", _L + r"hv[sb]\.[A-Za-z0-9_\-]{24,}" + _R, _mixed_case),
    _rule("terraform-cloud-token", _L + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70}" + _R),
    _rule("postman-api-key", _L + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _R),
    _rule("pulumi-token", _L + r"pul-[a-f0-9]{40}" + _R),
    _rule("planetscale-token", _L + r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-=.]{32,64}" + _R),
    _rule("rubygems-token", _L + r"rubygems_[a-f0-9]{48}" + _R),
    _rule("sendinblue-key", _L + r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}" + _R),
    _rule("newrelic-key", _L + r"NR(?:AK|II|JS)-[A-Za-z0-9]{19,32}" + _R),
    _rule("sourcegraph-token", _L + r"sgp_(?:[a-f0-9]{16}_)?[a-f0-9]{40}" + _R),
    _rule("langsmith-key", _L + r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}" + _R),
    _rule(
        "langfuse-secret-key",
        _L + r"sk-lf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}" + _R,
    ),
    _rule("pinecone-key", _L + r"pcsk_[A-Za-z0-9_]{50,}" + _R),
    _rule("tavily-key", _L + r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}" + _R, _mixed_case),
    _rule("elevenlabs-key", _L + r"sk_[a-f0-9]{48}" + _R),
    _rule("huggingface-org-token", _L + r"api_org_[A-Za-z]{34}" + _R, _mixed_case),
    _rule(
        "azure-ad-client-secret",
        r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
        _mixed_case,
    ),
    _rule(
        "jwt",
        _L + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*" + _R,
        _jwt_header_ok,
    ),
)

_SECRET_VALUE = r"(?P<q>[\"'`])?(?P<v>(?(q)[^\"'`\n]{1,200}|[^\s\"'`,;&)\]}]{1,200}))"

# Secrets recognised by what surrounds them; the named group ``v`` is the value.
_CONTEXT: tuple[_Rule, ...] = (
    # scheme://user:password@host -- the password only.
    _rule(
        "url-password",
        r"[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@\"'<>]{0,200}:(?P<v>[^\s@/\"'<>]{1,200})@[A-Za-z0-9\[]",
        lambda v: _url_password_ok(v),
        group="v",
    ),
    # Azure connection strings and SAS URLs.
    _rule(
        "azure-storage-key",
        r"(?i:AccountKey|SharedAccessKey|SharedSecretValue)=(?P<v>[A-Za-z0-9+/=]{20,})",
        group="v",
    ),
    _rule("azure-sas-signature", r"[?&]sig=(?P<v>[A-Za-z0-9%+/=]{20,})", group="v"),
    # AWS secret keys have no prefix: a 40-character run after an access key id or
    # after words naming it.
    _rule(
        "aws-secret-access-key",
        r"(?:(?:AKIA|ASIA)[A-Z0-9]{16}|(?i:secret[ _\-]?(?:access[ _\-]?)?key))"
        r"[^\n]{0,80}?(?<![A-Za-z0-9/+])(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        _upper_lower_digit,
        group="v",
    ),
    _rule(
        "gcp-private-key-id",
        r"[\"']?private_key_id[\"']?\s*:\s*[\"'](?P<v>[a-f0-9]{40})[\"']",
        group="v",
    ),
    _rule("bearer-token", r"\b(?i:bearer)\s+(?P<v>[A-Za-z0-9._~+/=\-]{20,})", _random_looking, "v"),
    _rule("basic-auth", r"\b(?i:basic)\s+(?P<v>[A-Za-z0-9+/]{12,}={0,2})", _basic_auth_ok, "v"),
    _rule(
        "auth-token",
        r"(?i:auth[ _\-]?token|api[ _\-]?secret|account[ _\-]?key)\W{1,5}(?:is\s+)?"
        r"(?P<v>[A-Fa-f0-9]{32,64})(?![A-Za-z0-9])",
        group="v",
    ),
)

# key = value assignments: the key names a secret, the value is taken from after it.
_PASSWORD_KEYS = r"pass(?:word|wd|phrase)|pwd|db[_\-]?pass"
_TOKEN_KEYS = (
    r"secret|client[_\-]?secret|secret[_\-]?key|api[_\-]?key|apikey|access[_\-]?key"
    r"|access[_\-]?token|auth[_\-]?token|refresh[_\-]?token|bearer[_\-]?token|token"
    r"|private[_\-]?key|signing[_\-]?key|encryption[_\-]?key|master[_\-]?key|license[_\-]?key"
    r"|webhook[_\-]?secret|credentials?"
    # any other compound *_key / *Key (admin_key, ALGOLIA_WRITE_KEY, storageKey); names
    # of keys that are not secrets are turned away in _assignment_value_ok
    r"|(?<=[A-Za-z0-9][_\-])key|(?<=[a-z])(?-i:Key)"
)
# Compound key/token names that are not credentials (database keys, cache keys,
# pagination tokens, public halves).
_NOT_SECRET_NAME_TEXT = """
primary foreign public pub partition sort cache idempotency dedup dedupe routing object
lookup hash row sequence schema bucket natural composite unique surrogate index idx hot
websocket socket
dict map group join lock shard cursor message translation i18n config setting registry
csrf xsrf page next continuation pagination cancellation cancel sync resume max min num
total count
"""
_NOT_SECRET_NAMES = frozenset(_NOT_SECRET_NAME_TEXT.split())
_NAME_PART_RE = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _names_a_non_secret(key: str) -> bool:
    """``cache_key``, ``nextPageToken``, ``PRIMARY_KEY``: keys and tokens that are not
    credentials (the word before ``key``/``token`` says so)."""
    parts = [p.lower() for p in _NAME_PART_RE.findall(key)]
    return (
        len(parts) >= 2
        and parts[-1] in ("key", "keys", "token", "tokens")
        and parts[-2] in _NOT_SECRET_NAMES
    )


_ASSIGN_RE = re.compile(
    r"(?<![A-Za-z0-9])(?P<k>[A-Za-z0-9_\-]{0,40}?(?i:(?P<pw>"
    + _PASSWORD_KEYS
    + r")|"
    + _TOKEN_KEYS
    + r"))"
    # key, operator and value on one line: "if password:\n return" is code, not a value
    r"(?![A-Za-z0-9])[\"'`]?[ \t]*(?P<op>:=|=>|=|:|[ \t](?i:is|was)\b)[ \t]*" + _SECRET_VALUE,
    _FLAGS,
)

# Values in an assignment that name or type a secret instead of holding it.
_NOT_A_VALUE_TEXT = """
str string bytes int bool none null nil true false undefined optional secretstr
password pass passwd pwd secret token key required empty unset tbd todo
n/a na unknown env environ getenv changeme default set missing invalid expired
revoked stored hidden masked rotated same different correct wrong below above here there
return if else not and or in is lambda await yield self cls args kwargs auth
foo bar baz qux test xxx value val text data input result response raw new old
"""
_NOT_A_VALUE = frozenset(_NOT_A_VALUE_TEXT.split())
_CODE_REF_RE = re.compile(
    r"^[A-Za-z_][A-Za-z0-9_.]*\s*[(\[]|^[${<(\[]|^%\("
    r"|^(?:os|env|self|cls|args|settings|config|cfg|conf|process|request|ctx)\."
    r"|^[A-Z][A-Z0-9_]{2,}$|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$"
    # snake_case names and CamelCase type names: variables and annotations
    r"|^_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+$|^[A-Z][a-z]+(?:[A-Z][a-z]+)+$",
    _FLAGS,
)


def _url_password_ok(value: str) -> bool:
    # A short all-digit "password" is a port in a malformed URL.
    return value.lower() not in _NOT_A_VALUE and not (value.isdigit() and len(value) <= 5)


def _assignment_value_ok(key: str, value: str, is_password: bool, prose: bool) -> bool:
    if value[:1].isspace():
        return False  # '"Password:" prompt and then …': a quoted key, then prose
    bare = value.strip().rstrip(".?,:")
    low = bare.lower()
    if not bare or low in _NOT_A_VALUE or low == key.lower() or _is_placeholder(bare):
        return False
    if _CODE_REF_RE.search(bare) or bare.startswith(("/", "~/", "./", "../")):
        return False  # a reference to the secret in code, or a path
    if _names_a_non_secret(key):
        return False
    if is_password and not prose:
        return len(bare) >= 4 and not bare.isdigit()
    # "the password is stored in the vault", "token: see below": prose, not a secret.
    if _random_looking(bare) or (is_password and len(bare) >= 6 and _classes(bare) >= 2):
        return True
    # "token: zVIH75xe1S1": short, but upper, lower and digits mixed as no word is.
    return not prose and len(bare) >= 8 and _upper_lower_digit(bare)


_DOC_FIELD_RE = re.compile(r"(?:[:@]param|:type|:ivar|:arg)[ \t]+$")


def _assignments(text: str) -> Iterator[SecretHit]:
    for m in _ASSIGN_RE.finditer(text):
        if _DOC_FIELD_RE.search(text, max(0, m.start() - 12), m.start()):
            continue  # ":param password: the user's password" documents, not assigns
        value = m.group("v")
        prose = m.group("op").strip().lower() in ("is", "was")
        if _assignment_value_ok(m.group("k"), value, m.group("pw") is not None, prose):
            kind = "password" if m.group("pw") is not None else "secret-assignment"
            start = m.start("v")
            yield SecretHit(kind, start, start + len(value.rstrip().rstrip(".")))


# PEM private-key blocks, whole; a block cut short runs over the base64 lines after it.
_PEM_BEGIN_RE = re.compile(r"-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----", _FLAGS)
_PEM_END_RE = re.compile(r"-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----", _FLAGS)
_PEM_CHUNK_RE = re.compile(r"(?:\s|\\n|\\r)+|[^\s\\]+|\\", _FLAGS)
_PEM_SEP_RE = re.compile(r"(?:\s|\\n|\\r)+", _FLAGS)
_PEM_BODY_RE = re.compile(r"[A-Za-z0-9+/=]+", _FLAGS)
_PEM_HEADER_RE = re.compile(
    r"(?:Proc-Type:|DEK-Info:|Comment:|\d,ENCRYPTED|[A-Z0-9\-]+,[0-9A-F]+)$"
)


def _pem_blocks(text: str) -> Iterator[SecretHit]:
    pos = 0
    while True:
        begin = _PEM_BEGIN_RE.search(text, pos)
        if begin is None:
            return
        end = _PEM_END_RE.search(text, begin.end())
        nxt = _PEM_BEGIN_RE.search(text, begin.end())
        if end is not None and (nxt is None or end.start() < nxt.start()):
            stop = end.end()
        else:
            stop = _pem_tail(text, begin.end())
        yield SecretHit("private-key", begin.start(), stop)
        pos = max(stop, begin.end())


def _pem_body_line(chunk: str, *, at_end: bool) -> bool:
    if _PEM_HEADER_RE.match(chunk):
        return True  # Proc-Type / DEK-Info lines of an encrypted key
    if not _PEM_BODY_RE.fullmatch(chunk):
        return False
    # Short base64-looking words are prose, unless padded or the text's last chunk.
    return len(chunk) >= 16 or chunk.endswith("=") or at_end


def _pem_tail(text: str, pos: int) -> int:
    """End of a cut-short block's body: base64 lines (short ones only at the very end)."""
    stop = pos
    for m in _PEM_CHUNK_RE.finditer(text, pos):
        chunk = m.group()
        if _PEM_SEP_RE.fullmatch(chunk):
            continue
        chunk = chunk.rstrip(".,;:)\u2026")  # a line cut with "..." is still key material
        if _pem_body_line(chunk, at_end=m.end() == len(text)):
            stop = m.end()
        else:
            break
    return stop


def _rule_hits(text: str) -> Iterator[SecretHit]:
    for rule in (*_SHAPED, *_CONTEXT):
        for m in rule.pattern.finditer(text):
            value = m.group(rule.group)
            if not value or _is_placeholder(value):
                continue
            if rule.check is not None and not rule.check(value):
                continue
            yield SecretHit(rule.kind, m.start(rule.group), m.end(rule.group))


def _merged(hits: list[SecretHit]) -> tuple[SecretHit, ...]:
    """Non-overlapping hits in text order; overlapping ones become one span (the kind
    of the longest, e.g. a JWT inside ``Bearer …`` stays a ``jwt``)."""
    out: list[SecretHit] = []
    for hit in sorted(hits, key=lambda h: (h.start, -(h.end - h.start))):
        if out and hit.start < out[-1].end:
            last = out[-1]
            if hit.end > last.end:
                longer = hit if hit.end - hit.start > last.end - last.start else last
                out[-1] = SecretHit(longer.kind, last.start, hit.end)
            continue
        out.append(hit)
    return tuple(out)


# --- configuration syntaxes (issue 19 #4) ------------------------------------------

_FLAG_KEYS = (
    r"password|passwd|pass|pwd|passphrase|token|secret|api-?key|access-token|auth-token"
    r"|client-secret|secret-key"
)
# (kind, pattern, glued): a glued or quoted value (-pVALUE, user:VALUE, '-x…') may start
# with "-"; a bare one after a space may not ("--password --verbose" has no value). A
# command and its flag are at most 300 characters apart: the bounded gap keeps a line
# repeating "mysql " linear to scan.
_CONFIG: tuple[tuple[str, re.Pattern[str], bool], ...] = (
    # netrc: "machine HOST login USER password VALUE" (one line or several), "default …".
    (
        "netrc-password",
        re.compile(
            r"(?<![A-Za-z0-9_\-])(?:machine\s+\S+|default)(?:\s+(?:login|account)\s+\S+)*"
            r"\s+password\s+(?P<v>[^\s\"'`]{1,200})",
            _FLAGS,
        ),
        True,  # a netrc password may start with "-": netrc has no flags
    ),
    # --password VALUE, --db-password "VALUE", --token VALUE (the flag ends at the space).
    (
        "command-line-secret",
        re.compile(
            r"(?<![A-Za-z0-9_\-])--(?:[a-z0-9]+-)*(?:" + _FLAG_KEYS + r")[ \t]+"
            r"(?P<q>[\"'])?(?P<v>(?(q)[^\"'\n]{1,200}|[^\s\"'`]{1,200}))",
            _FLAGS | re.IGNORECASE,
        ),
        False,
    ),
    # mysql's -pVALUE (glued: "-p VALUE" makes it prompt), on a mysql-family command line.
    (
        "command-line-secret",
        re.compile(
            r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb(?:-dump)?)\b"
            r"[^\n]{0,300}?(?<=\s)-p(?P<q>[\"'])?(?P<v>(?(q)[^\"'\n]{1,200}|[^\s\"'`]{1,200}))",
            _FLAGS,
        ),
        True,
    ),
    (
        "command-line-secret",
        re.compile(r"\bsshpass\b[^\n]{0,300}?\s-p[ \t]*(?P<v>[^\s\"'`]{1,200})", _FLAGS),
        False,
    ),
    # curl -u user:password (the password only).
    (
        "command-line-secret",
        re.compile(
            r"\bcurl\b[^\n]{0,300}?\s(?:-u|--user)[ \t]*[\"']?[^\s:\"']{1,100}:"
            r"(?P<v>[^\s\"'@]{1,200})",
            _FLAGS,
        ),
        True,
    ),
    # <password>VALUE</password>, <api_key>…</api_key>, <ns:secret>…
    (
        "xml-secret",
        re.compile(
            r"<(?P<k>(?:[A-Za-z0-9_.\-]+:)?[A-Za-z0-9_.\-]{0,30}?(?i:password|passwd|secret"
            r"|token|api[_\-]?key|apikey)[A-Za-z0-9_.\-]{0,30})>(?P<v>[^<\s]{1,200})</",
            _FLAGS,
        ),
        False,
    ),
)


def _flag_value_ok(value: str, glued: bool = False) -> bool:
    """A value after a credential flag or keyword that holds a secret, not a word, a
    variable, a path or a placeholder."""
    bare = value.strip().rstrip(".,;:)")
    if len(bare) < 6 or bare.lower() in _NOT_A_VALUE or _is_placeholder(bare):
        return False
    if bare.startswith(("/", "~/", "./", "../", "$")) or _CODE_REF_RE.search(bare):
        return False
    if (
        bare.startswith("-")
        and not glued
        and (bare.startswith("--") or not _random_looking(bare[1:]))
    ):
        return False  # "--password --verbose" has no value; "--token -KpH5bfNTUHFim0o" has
    if re.fullmatch(r"%[A-Za-z_][A-Za-z0-9_]*%", bare):
        return False  # a Windows environment variable
    has_letter = bool(re.search(r"[A-Za-z]", bare))
    return _random_looking(bare) or (has_letter and bool(re.search(r"[0-9]", bare)))


def _config_hits(text: str) -> Iterator[SecretHit]:
    for kind, pattern, glued in _CONFIG:
        for m in pattern.finditer(text):
            value = m.group("v")
            if kind == "xml-secret":
                key = m.group("k").rsplit(":", 1)[-1]
                is_pw = bool(re.search(r"(?i)pass", key))
                if _names_a_non_secret(key) or not _assignment_value_ok(key, value, is_pw, False):
                    continue
            elif not _flag_value_ok(value, glued or bool(m.groupdict().get("q"))):
                continue
            yield SecretHit(kind, m.start("v"), m.start("v") + len(value.rstrip(".,;:)")))


# --- the text as a reader sees it -------------------------------------------------------

# Default-ignorable characters outside category Cf (fillers, the grapheme joiner,
# variation selectors): as invisible to a reader as a zero-width space.
_IGNORABLE = (
    frozenset(
        (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164, 0xFFA0)
    )
    | frozenset(range(0xFE00, 0xFE10))
    | frozenset(range(0xE0100, 0xE01F0))
)


def _reader_view(text: str) -> tuple[str, list[int]] | None:
    """``text`` as a reader sees it (invisible characters removed, NFKC per character)
    and, for each of its characters, the index of the original character it came from;
    None when that is ``text`` itself (always for ASCII)."""
    if text.isascii():
        return None
    out: list[str] = []
    origin: list[int] = []
    changed = False
    for i, char in enumerate(text):
        code = ord(char)
        if code < 0x80:
            out.append(char)
            origin.append(i)
            continue
        if unicodedata.category(char) == "Cf" or code in _IGNORABLE:
            changed = True
            continue
        folded = unicodedata.normalize("NFKC", char)
        if folded != char:
            changed = True
        for piece in folded:
            out.append(piece)
            origin.append(i)
    return ("".join(out), origin) if changed else None


def _find(text: str) -> tuple[SecretHit, ...]:
    hits = [*_rule_hits(text), *_assignments(text), *_pem_blocks(text), *_config_hits(text)]
    return _merged(hits)


def find_secrets(text: str) -> tuple[SecretHit, ...]:
    """Every credential in ``text``, in order, non-overlapping; read as a reader sees
    it (see the module docstring), spans in ``text`` itself."""
    view = _reader_view(text)
    if view is None:
        return _find(text)
    seen, origin = view
    return _merged(
        [
            SecretHit(hit.kind, origin[hit.start], origin[hit.end - 1] + 1)
            for hit in _find(seen)
            if hit.end > hit.start
        ]
    )


SECRET_KINDS = frozenset(
    {r.kind for r in (*_SHAPED, *_CONTEXT)}
    | {"password", "secret-assignment", "private-key"}
    | {kind for kind, _, _ in _CONFIG}
)

_MAX_PASSES = 8


def redact(text: str) -> str:
    """``text`` with each credential replaced by ``[REDACTED: <kind>]``.

    Repeated until nothing is found (a replacement can join what was around it into a
    new match); the marker itself is a placeholder to every rule, so this ends fast.
    """
    for _ in range(_MAX_PASSES):
        hits = find_secrets(text)
        if not hits:
            return text
        parts: list[str] = []
        pos = 0
        for hit in hits:
            parts.append(text[pos : hit.start])
            parts.append(hit.redaction)
            pos = hit.end
        parts.append(text[pos:])
        text = "".join(parts)
    # Unreachable in practice; never hand back text that still holds a hit.
    return "[REDACTED: text]" if find_secrets(text) else text


def redact_data(value: object) -> object:
    """``value`` (JSON-like: strings, mappings, lists) with every string redacted --
    for what goes on disk or on screen beside records (provenance, errors)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value
