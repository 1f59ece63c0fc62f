"""Secret detection on a labelled corpus: recall per credential format and false positives.

    python benchmarks/secrets_corpus.py            # full corpus (seed 12)
    python benchmarks/secrets_corpus.py --json     # machine-readable
    python benchmarks/secrets_corpus.py --library  # also detect-secrets alone and + rules

The corpus is generated deterministically (``random.Random(seed)``): credentials are
random strings of each format's shape (never real keys), embedded in memory-like
sentences. The shapes are data, in draw order: the ``shape`` lines of the corpus file
below, each a template drawn part by part (``{mixed:93:urlsafe}``, ``{choice:AKIA|ASIA}``,
…; ``_PART`` lists them) or, where more than one part must vanish or a document is
built, a generator of this module (``{code:NAME}``); benign texts are the memories of
``../shared/bench/*.jsonl`` plus generated code-like text (hashes, UUIDs, record ids,
base64, long identifiers, paths, placeholder keys, code that names a secret without
holding it, public keys) and configuration that names a secret without holding one. The
written texts -- the sentences, the password forms of the configuration formats, the
code-like phrases and the benign configuration -- are ``benchmarks/corpora/secrets.jsonl``
(JSON Lines, schema in ``benchmarks/labelled_texts.py``): a new one is a line.

A credential counts as found when ``redact`` removes every part of it that must not
survive (the key, the password, each base64 line of a private key). A benign text is a
false positive when ``find_secrets`` reports anything in it.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import string
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from labelled_texts import Text, load_texts, of_use  # noqa: E402
from scenes import CORPORA  # noqa: E402

from ipymemory.screen import find_secrets, redact  # noqa: E402

# The bench data beside the repository (``../shared/bench``); a worktree elsewhere names it.
BENCH_DIR = Path(os.environ.get("IPYMEMORY_BENCH_DIR", ROOT.parent / "shared" / "bench"))
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
CORPUS = CORPORA / "secrets.jsonl"
TEXTS: list[Text] = load_texts(CORPUS, ("shape", "context", "form", "phrase", "sentence", "benign"))


@dataclass(frozen=True)
class Credential:
    """One labelled credential: the text, and the parts of it that must not survive."""

    fmt: str
    text: str
    vanish: tuple[str, ...]
    span: tuple[int, int]  # where the credential sits in ``text`` (for the library check)


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    """Random, with a lower, an upper and (if the alphabet has them) a digit, as real keys
    nearly always have."""
    need_digit = any(c.isdigit() for c in alphabet)
    while True:
        s = _r(rng, alphabet, n)
        if (
            any(c.islower() for c in s)
            and any(c.isupper() for c in s)
            and (any(c.isdigit() for c in s) or not need_digit)
        ):
            return s


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    head = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    body = {"sub": str(rng.randrange(10**6)), "iat": 1_700_000_000 + rng.randrange(10**7)}
    sig = _b64url(bytes(rng.randrange(256) for _ in range(32)))
    return f"{_b64url(json.dumps(head).encode())}.{_b64url(json.dumps(body).encode())}.{sig}"


def _pem_lines(rng: random.Random, n: int) -> list[str]:
    lines = [_r(rng, B64, 64) for _ in range(n)]
    lines.append(_r(rng, B64, rng.randrange(8, 40)) + "==")
    return lines


# Each generator returns (snippet placed in the sentence, parts that must vanish).
Gen = Callable[[random.Random], tuple[str, tuple[str, ...]]]


def _one(value: str) -> tuple[str, tuple[str, ...]]:
    return value, (value,)


def _aws_pair(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    key_id = rng.choice(["AKIA", "ASIA"]) + _r(rng, string.ascii_uppercase + "234567", 16)
    secret = _mixed(rng, 40, B64)
    form = rng.choice(
        [
            f"aws_access_key_id = {key_id}\naws_secret_access_key = {secret}",
            f"AWS_ACCESS_KEY_ID={key_id} AWS_SECRET_ACCESS_KEY={secret}",
            f"access key {key_id} and secret key {secret}",
            f'{{"AccessKeyId": "{key_id}", "SecretAccessKey": "{secret}"}}',
        ]
    )
    return form, (key_id, secret)


def _gcp_service_account(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    lines = _pem_lines(rng, rng.randrange(6, 12))
    key_id = _r(rng, HEX, 40)
    pem = "-----BEGIN PRIVATE KEY-----\\n" + "\\n".join(lines) + "\\n-----END PRIVATE KEY-----\\n"
    doc = (
        '{"type": "service_account", "project_id": "ml-eval-' + str(rng.randrange(999)) + '", '
        f'"private_key_id": "{key_id}", "private_key": "{pem}", '
        '"client_email": "runner@ml-eval.iam.gserviceaccount.com"}'
    )
    return doc, (key_id, *lines)


def _slack_webhook(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    team = "T" + _r(rng, string.ascii_uppercase + string.digits, 10)
    chan = "B" + _r(rng, string.ascii_uppercase + string.digits, 10)
    secret = _mixed(rng, 24)
    return f"https://hooks.slack.com/services/{team}/{chan}/{secret}", (secret,)


def _pem(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    label = rng.choice(["RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED ", "DSA "])
    lines = _pem_lines(rng, rng.randrange(4, 14))
    block = (
        f"-----BEGIN {label}PRIVATE KEY-----\n"
        + "\n".join(lines)
        + f"\n-----END {label}PRIVATE KEY-----"
    )
    return block, tuple(lines)


def _pem_cut(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    label = rng.choice(["RSA ", "OPENSSH ", ""])
    lines = [_r(rng, B64, 64) for _ in range(rng.randrange(2, 6))]
    cut = rng.choice(["", "…", "...", "\n(truncated)"])
    return f"-----BEGIN {label}PRIVATE KEY-----\n" + "\n".join(lines) + cut, tuple(lines)


def _jwt_gen(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    return _one(_jwt(rng))


def _url_password(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    scheme = rng.choice(
        ["postgres", "postgresql", "mysql", "redis", "amqp", "mongodb+srv", "https"]
    )
    user = rng.choice(["app", "admin", "etl_user", "svc-reporting", "root", ""])
    pw = _mixed(rng, rng.randrange(10, 24), ALNUM + "!*_-")
    host = rng.choice(["db", "db.internal", "10.0.3.12", "cache.prod.example.net", "mq"])
    return f"{scheme}://{user}:{pw}@{host}:{rng.randrange(1000, 9999)}/main", (pw,)


def _password_assignment(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    pw = _mixed(rng, rng.randrange(8, 20), ALNUM + "!#%^*_-")
    key = rng.choice(["password", "DB_PASSWORD", "db_password", "PGPASSWORD", "passwd", "Password"])
    form = rng.choice(
        [
            f"{key} = {pw}",
            f"{key}={pw}",
            f"{key}: {pw}",
            f'"{key}": "{pw}"',
            f"{key} = '{pw}'",
            f"the {key.lower()} is {pw}",
        ]
    )
    return form, (pw,)


def _api_key_assignment(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    value = rng.choice([_r(rng, HEX, 32), _mixed(rng, 40), _r(rng, HEX, 64), _mixed(rng, 28)])
    key = rng.choice(
        [
            "API_KEY",
            "api_key",
            "apiKey",
            "WEATHER_API_KEY",
            "client_secret",
            "SECRET_KEY",
            "access_token",
        ]
    )
    form = rng.choice(
        [f"{key}={value}", f"{key}: {value}", f'"{key}": "{value}"', f"{key} = '{value}'"]
    )
    return form, (value,)


def _twilio(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    sid = "SK" + _r(rng, HEX, 32)
    token = _r(rng, HEX, 32)
    form = rng.choice([f"Twilio API key {sid}", f"twilio key {sid}, auth token {token}"])
    return form, ((sid,) if token not in form else (sid, token))


def _azure_conn(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    key = _mixed(rng, 86, B64) + "=="
    account = "store" + _r(rng, string.ascii_lowercase, 6)
    return (
        f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};"
        "EndpointSuffix=core.windows.net",
        (key,),
    )


def _azure_sas(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    sig = _mixed(rng, 43, B64).replace("+", "%2B").replace("/", "%2F") + "%3D"
    return f"https://acct.blob.core.windows.net/data?sv=2022-11-02&ss=b&sp=r&sig={sig}", (sig,)


def _bearer(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    token = _mixed(rng, rng.randrange(32, 60), URLSAFE + ".")
    return f"Authorization: Bearer {token}", (token,)


def _compound_key(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    value = rng.choice([_r(rng, HEX, 32), _mixed(rng, 40), _mixed(rng, 24)])
    key = rng.choice(
        ["ALGOLIA_WRITE_KEY", "admin_key", "storageKey", "MEILI_MASTER_KEY", "app-key"]
    )
    form = rng.choice([f"{key}={value}", f"{key}: {value}", f'"{key}": "{value}"'])
    return form, (value,)


# --- issue 19 #4: invisible characters inside keys, credentials in configuration syntax --

# What a reader does not see: zero-width space, soft hyphen, word joiner, BOM, ZWNJ.
INVISIBLE = ("\u200b", "\u00ad", "\u2060", "\ufeff", "\u200c")


def _invisible_in_key(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    key = rng.choice([SHAPES["anthropic-api03"], SHAPES["aws-key-id"], SHAPES["github-token"]])(
        rng
    )[0]
    at = rng.randrange(6, len(key) - 6)
    # Both halves must vanish: redaction takes the whole key, the invisible char too.
    return key[:at] + rng.choice(INVISIBLE) + key[at:], (key[:at], key[at:])


def _pw(rng: random.Random) -> str:
    return _mixed(rng, rng.randrange(10, 20), ALNUM + "!%^*_-")


def _netrc(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    pw = _pw(rng)
    host = rng.choice(["api.heroku.com", "github.com", "pypi.org", "ftp.internal"])
    user = rng.choice(["dana", "ci-bot", "__token__", "deploy@acme.io"])
    form = rng.choice(
        [
            f"machine {host} login {user} password {pw}",
            f"machine {host}\n  login {user}\n  password {pw}",
            f"~/.netrc: machine {host} login {user} password {pw}",
        ]
    )
    return form, (pw,)


def _password_in(fmt: str) -> Gen:
    """A generator: a random password placed at ``{pw}`` in one of the corpus's forms of
    ``fmt``."""
    forms = [t.text for t in of_use(TEXTS, "form") if t.kind == fmt]

    def gen(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        pw = _pw(rng)
        return rng.choice(forms).replace("{pw}", pw), (pw,)

    return gen


# --- drawing a text: one reader of the corpus's templates (shapes and phrases) ------------

ALPHABETS = {
    "alnum": ALNUM,
    "hex": HEX,
    "b64": B64,
    "urlsafe": URLSAFE,
    "letters": string.ascii_letters,
    "base32": string.ascii_uppercase + "234567",
    "upperdigits": string.ascii_uppercase + string.digits,
}
# {hex:N} {alnum:N} {b64:N}: N random characters; {mixed:N[:ALPHABET]} N with a lower, an
# upper and (if it has them) a digit; {r:N:ALPHABET}; N may be a choice "48|120"; {choice:
# a|b} one of the words; {int:LO:HI} a number in [LO, HI); {uuid4}; {code:NAME} a
# generator below (its snippet, and the parts that must vanish); {form:KIND} a password
# in one of the corpus's forms of KIND.
_PART = re.compile(r"\{(hex|alnum|b64|mixed|r|choice|int|uuid4|code|form)(?::([^{}]*))?\}")


def _size(rng: random.Random, spec: str) -> int:
    return int(rng.choice(spec.split("|"))) if "|" in spec else int(spec)


def _part(rng: random.Random, kind: str, args: str) -> str:
    """One drawn part of a template (see ``_PART``), drawn from ``rng``."""
    if kind == "choice":
        return rng.choice(args.split("|"))
    if kind == "int":
        low, high = args.split(":")
        return str(rng.randrange(int(low), int(high)))
    if kind == "uuid4":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    size, _, alphabet = args.partition(":")
    n = _size(rng, size)
    if kind == "mixed":
        return _mixed(rng, n, ALPHABETS[alphabet or "alnum"])
    return _r(rng, ALPHABETS[alphabet if kind == "r" else kind], n)


def _drawn(rng: random.Random, template: str) -> str:
    """``template`` with its random parts drawn, left to right."""
    return _PART.sub(lambda m: _part(rng, m.group(1), m.group(2) or ""), template)


def _shape(template: str) -> Gen:
    """The generator of a credential format's shape (the corpus's ``shape`` texts): a
    whole drawn value that must vanish, or a generator of code."""
    whole = _PART.fullmatch(template)
    if whole is not None and whole.group(1) == "code":
        return CODE[whole.group(2)]
    if whole is not None and whole.group(1) == "form":
        return _password_in(whole.group(2))
    return lambda rng: _one(_drawn(rng, template))


#: The shapes drawn by code: more than one part must vanish, or a document is built.
CODE: dict[str, Gen] = {
    "aws_pair": _aws_pair,
    "gcp_service_account": _gcp_service_account,
    "slack_webhook": _slack_webhook,
    "pem": _pem,
    "pem_cut": _pem_cut,
    "jwt_gen": _jwt_gen,
    "url_password": _url_password,
    "password_assignment": _password_assignment,
    "api_key_assignment": _api_key_assignment,
    "twilio": _twilio,
    "azure_conn": _azure_conn,
    "azure_sas": _azure_sas,
    "bearer": _bearer,
    "compound_key": _compound_key,
    "invisible_in_key": _invisible_in_key,
    "netrc": _netrc,
}

#: Every credential format, in draw order (the corpus's ``shape`` texts).
FORMATS: dict[str, Gen] = {t.kind or "": _shape(t.text) for t in of_use(TEXTS, "shape")}
SHAPES = FORMATS

CONTEXTS = tuple(t.text for t in of_use(TEXTS, "context"))
SENTENCES = [t.text for t in of_use(TEXTS, "sentence")]


def credentials(seed: int, per_format: int) -> list[Credential]:
    rng = random.Random(seed)
    out: list[Credential] = []
    for fmt, gen in FORMATS.items():
        for _ in range(per_format):
            snippet, vanish = gen(rng)
            context = rng.choice(CONTEXTS)
            start = context.index("{s}")
            text = context.replace("{s}", snippet)
            out.append(Credential(fmt, text, vanish, (start, start + len(snippet))))
    return out


def _sentence(rng: random.Random) -> str:
    """A plain memory sentence (the corpus's ``sentence`` texts) beside a code-like part."""
    return rng.choice(SENTENCES)


def _benign_generated(seed: int, n: int) -> list[str]:
    """Code-like memory texts that hold no credential (each kind in turn)."""
    rng = random.Random(seed + 1)
    makers: list[Callable[[], str]] = [
        lambda: f"Fixed in commit {_r(rng, HEX, 40)} (short {_r(rng, HEX, 7)}).",
        lambda: f"Dataset checksum sha256:{_r(rng, HEX, 64)} verified after download.",
        lambda: f"Run id {uuid.UUID(int=rng.getrandbits(128), version=4)} produced the best F1.",
        lambda: f"See record prefers-tabs-{_r(rng, HEX, 32)}.md for the editor settings.",
        lambda: f"The image digest is sha256:{_r(rng, HEX, 64)}; pin it in the Dockerfile.",
        lambda: (
            "Small PNG thumbnail stored inline as base64: "
            + base64.b64encode(bytes(rng.randrange(256) for _ in range(90))).decode()
        ),
        lambda: f"npm lockfile integrity sha512-{base64.b64encode(rng.randbytes(64)).decode()}",
        lambda: (
            "Helper lives in "
            + rng.choice(["src", "lib", "pkg"])
            + "/"
            + "_".join(
                rng.choice(["load", "parse", "tokenize", "batch", "cache", "remote", "config"])
                for _ in range(4)
            )
            + ".py as "
            + "".join(
                w.capitalize()
                for w in rng.sample(
                    [
                        "Abstract",
                        "Token",
                        "Factory",
                        "Batch",
                        "Loader",
                        "Remote",
                        "Config",
                        "Provider",
                        "Manager",
                    ],
                    5,
                )
            )
        ),
        lambda: rng.choice([_drawn(rng, t.text) for t in of_use(TEXTS, "phrase")]),
        lambda: (
            f"Checkpoint at s3://ml-artifacts/{_r(rng, HEX, 12)}/epoch-{rng.randrange(50)}.pt; "
            + _sentence(rng)
        ),
        lambda: (
            f"Cache key {_r(rng, ALNUM, 40)} maps to the tokenizer output."
        ),  # a random id in prose
        lambda: f"Trace {_r(rng, HEX, 32)} shows the timeout in span {_r(rng, HEX, 16)}.",
    ]
    return [makers[i % len(makers)]() for i in range(n)]


# Configuration and command lines that name a password, token or secret without holding
# one (issue 19 #4: the widened rules must leave these alone).
BENIGN_CONFIG = tuple(t.text for t in of_use(TEXTS, "benign"))


def benign_bench(limit: int | None = None) -> list[str]:
    texts: list[str] = []
    for path in sorted(BENCH_DIR.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for memory in json.loads(line)["memories"]:
                texts.append(f"{memory['description']}\n\n{memory['body']}")
    return texts[:limit] if limit is not None else texts


def found_by_rules(cred: Credential) -> bool:
    redacted = redact(cred.text)
    return not any(part in redacted for part in cred.vanish)


# --- detect-secrets, only with --library (not a dependency) --------------------------

LibraryScan = Callable[[str], list[tuple[int, int]]]


def detect_secrets_scanner(entropy: bool) -> LibraryScan:
    """Spans detect-secrets reports in a text, line by line (its ad-hoc API)."""
    # Not a dependency (see benchmarks/README.md): untyped, imported only here.
    from detect_secrets.core.plugins.util import (  # type: ignore[import-not-found]
        get_mapping_from_secret_type_to_class,
    )
    from detect_secrets.core.scan import scan_line  # type: ignore[import-not-found]
    from detect_secrets.settings import transient_settings  # type: ignore[import-not-found]

    names = [
        cls.__name__
        for cls in get_mapping_from_secret_type_to_class().values()
        if entropy or "HighEntropy" not in cls.__name__
    ]

    def scan(text: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        offset = 0
        with transient_settings({"plugins_used": [{"name": n} for n in names]}):
            for line in text.split("\n"):
                for secret in scan_line(line):
                    value = secret.secret_value or ""
                    at = line.find(value) if value else -1
                    if at >= 0:
                        spans.append((offset + at, offset + at + len(value)))
                offset += len(line) + 1
        return spans

    return scan


def found_by_library(scan: LibraryScan, cred: Credential) -> bool:
    """Lenient: any reported span inside the credential's place counts as found."""
    lo, hi = cred.span
    return any(s < hi and e > lo for s, e in scan(cred.text))


def library_scores(
    label: str, scan: LibraryScan, creds: Sequence[Credential], benign: Sequence[str]
) -> dict[str, Scores]:
    """The library alone, and the library with our rules (found by either)."""

    def alone(cred: Credential) -> bool:
        return found_by_library(scan, cred)

    def both(cred: Credential) -> bool:
        return found_by_rules(cred) or found_by_library(scan, cred)

    def flags(text: str) -> bool:
        return bool(scan(text))

    def flags_both(text: str) -> bool:
        return bool(find_secrets(text)) or bool(scan(text))

    return {
        label: score(creds, benign, alone, flags),
        label + " + rules": score(creds, benign, both, flags_both),
    }


# --- report ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Scores:
    recall: dict[str, float]
    overall_recall: float
    false_positives: int
    benign: int
    fp_examples: tuple[str, ...]
    missed_examples: tuple[str, ...]

    @property
    def fp_rate(self) -> float:
        return self.false_positives / self.benign if self.benign else 0.0


def score(
    creds: Sequence[Credential],
    benign: Sequence[str],
    found: Callable[[Credential], bool],
    flags: Callable[[str], bool],
) -> Scores:
    per: dict[str, list[bool]] = {}
    missed: list[str] = []
    for cred in creds:
        ok = found(cred)
        per.setdefault(cred.fmt, []).append(ok)
        if not ok:
            missed.append(f"{cred.fmt}: {cred.text[:120]!r}")
    fps = [t for t in benign if flags(t)]
    hits = [ok for oks in per.values() for ok in oks]
    return Scores(
        {fmt: sum(oks) / len(oks) for fmt, oks in per.items()},
        sum(hits) / len(hits),
        len(fps),
        len(benign),
        tuple(t[:120] for t in fps[:5]),
        tuple(missed[:5]),
    )


def corpus(
    seed: int, per_format: int, generated_benign: int, bench_limit: int | None
) -> tuple[list[Credential], list[str]]:
    benign = (
        (benign_bench(bench_limit) if bench_limit != 0 else [])
        + _benign_generated(seed, generated_benign)
        + list(BENIGN_CONFIG)
    )
    return credentials(seed, per_format), benign


def code_chunks(root: Path, max_files: int, seed: int) -> list[tuple[str, str]]:
    """Memory-sized (4,000-character) pieces of real source and docs under ``root``
    (test directories left out: their fixtures hold deliberate fake credentials)."""
    files = sorted(
        f
        for pattern in ("**/*.py", "**/*.md")
        for f in root.glob(pattern)
        if "test" not in f.as_posix().lower() and "detect_secrets" not in f.as_posix()
    )
    random.Random(seed).shuffle(files)
    out: list[tuple[str, str]] = []
    for f in files[:max_files]:
        try:
            text = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.extend(
            (str(f.relative_to(root)), text[i : i + 4000])
            for i in range(0, min(len(text), 40_000), 4000)
        )
    return out


def _row(label: str, n: int, cells: Sequence[str]) -> str:
    return f"| {label} | {n} | " + " | ".join(cells) + " |"


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--per-format", type=int, default=12)
    parser.add_argument("--generated-benign", type=int, default=800)
    parser.add_argument("--bench-limit", type=int, default=None, help="0: no bench data")
    parser.add_argument("--library", action="store_true", help="also measure detect-secrets")
    parser.add_argument(
        "--code-dir",
        type=Path,
        help="also report how many 4,000-character pieces of real code/docs under this "
        "directory (e.g. a site-packages) get a hit: an outside check on false positives",
    )
    parser.add_argument("--code-files", type=int, default=3000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(list(argv) if argv is not None else None)

    creds, benign = corpus(args.seed, args.per_format, args.generated_benign, args.bench_limit)
    t0 = time.perf_counter()
    results: dict[str, Scores] = {
        "rules": score(creds, benign, found_by_rules, lambda t: bool(find_secrets(t)))
    }
    per_text_ms = (time.perf_counter() - t0) * 1000 / (len(creds) + len(benign))
    if args.library:
        for label, entropy in (("detect-secrets", False), ("detect-secrets+entropy", True)):
            results.update(library_scores(label, detect_secrets_scanner(entropy), creds, benign))

    if args.json:
        print(
            json.dumps(
                {
                    "credentials": len(creds),
                    "formats": len(FORMATS),
                    "benign": len(benign),
                    "ms_per_text": round(per_text_ms, 3),
                    "detectors": {
                        k: {
                            "recall": v.recall,
                            "overall_recall": v.overall_recall,
                            "false_positives": v.false_positives,
                            "fp_rate": v.fp_rate,
                        }
                        for k, v in results.items()
                    },
                },
                indent=1,
                sort_keys=True,
            )
        )
        return 0
    print(
        f"corpus: {len(creds)} credentials in {len(FORMATS)} formats, {len(benign)} benign texts "
        f"(seed {args.seed}); rules: {per_text_ms:.3f} ms/text"
    )
    names = list(results)
    print("\n| format | n | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    counts: dict[str, int] = {}
    for cred in creds:
        counts[cred.fmt] = counts.get(cred.fmt, 0) + 1
    for fmt in FORMATS:
        print(_row(fmt, counts[fmt], [f"{results[n].recall[fmt]:.3f}" for n in names]))
    print(
        _row(
            "**overall recall**",
            len(creds),
            [f"**{r.overall_recall:.3f}**" for r in results.values()],
        )
    )
    print(
        _row(
            "**false positives**",
            len(benign),
            [f"{r.false_positives} ({r.fp_rate:.2%})" for r in results.values()],
        )
    )
    if args.code_dir is not None:
        chunks = code_chunks(args.code_dir, args.code_files, args.seed)
        flagged = [(name, text) for name, text in chunks if find_secrets(text)]
        print(
            f"\nreal code/docs under {args.code_dir}: {len(flagged)} of {len(chunks)} pieces "
            f"with a hit ({len(flagged) / max(len(chunks), 1):.2%})"
        )
        for name, text in flagged:
            for hit in find_secrets(text):
                around = text[max(0, hit.start - 40) : hit.end + 10].replace("\n", "|")
                print(f"  {hit.kind}: {name}: {around!r}")
    rules = results["rules"]
    for text in rules.missed_examples:
        print("missed:", text)
    for text in rules.fp_examples:
        print("false positive:", repr(text))
    ok = rules.overall_recall >= 0.98 and rules.fp_rate <= 0.005
    print(f"\ntargets (recall >= 0.98, FP <= 0.5%): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
