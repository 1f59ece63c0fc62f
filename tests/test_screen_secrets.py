"""Secret detection (issue 12): the corpus targets on a reduced corpus, named cases of
what must and must not be found, and properties of ``find_secrets`` / ``redact``."""

from __future__ import annotations

import base64
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from screen_support import load_benchmark

from ipymemory.screen import SECRET_KINDS, SecretHit, find_secrets, redact


def test_reduced_corpus_meets_the_targets() -> None:
    sc = load_benchmark("secrets_corpus")
    # Generated data only (no ../shared/bench): 4 credentials per format, 600 benign.
    creds, benign = sc.corpus(seed=5, per_format=4, generated_benign=600, bench_limit=0)
    assert len({c.fmt for c in creds}) >= 20
    scores = sc.score(creds, benign, sc.found_by_rules, lambda t: bool(find_secrets(t)))
    assert scores.overall_recall >= 0.98, scores.missed_examples
    assert scores.fp_rate <= 0.005, scores.fp_examples
    assert all(r >= 0.75 for r in scores.recall.values()), scores.recall


FOUND = [
    ("anthropic-api-key", "use sk-ant-api03-" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6k" + "AA now"),
    ("anthropic-api-key", "admin: sk-ant-admin01-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA-_x"),
    ("github-token", "密钥ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
    ("aws-access-key-id", "key AKIA2E0A8F3B244C9986 in ~/.aws"),
    ("url-password", "The staging DB is postgres://app:Tr0ub4dor3@db:5432/app"),
    ("url-password", "redis://:s3cretPw@cache:6379"),
    ("password", "DB_PASSWORD=hunter22"),
    ("password", "the wifi password is Sunsh1ne!"),
    ("secret-assignment", 'WEATHER_API_KEY: "3f9a0c1e2b4d5f6a7b8c9d0e1f2a3b4c"'),
    (
        "slack-webhook",
        "https://hooks.slack.com/services/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",
    ),
    ("private-key", "-----BEGIN RSA PRIVATE KEY-----\n" + "QUJD" * 16 + "\n"),
    ("secret-assignment", "admin_key: b05588c8641b3b36510dbb9bd3b569ec"),
    ("hashicorp-vault-token", "VAULT_TOKEN is hvs.CAESIJ8f3a9c0d1e4b5a6978c0d1e2f3a4b5c6"),
]


@pytest.mark.parametrize(("kind", "text"), FOUND)
def test_credentials_are_found_and_redacted(kind: str, text: str) -> None:
    hits = find_secrets(text)
    assert [h.kind for h in hits] == [kind]
    out = redact(text)
    assert f"[REDACTED: {kind}]" in out
    assert text[hits[0].start : hits[0].end] not in out
    assert kind in SECRET_KINDS


def test_only_the_secret_is_redacted_not_its_surroundings() -> None:
    text = "The staging DB is postgres://app:Tr0ub4dor3@db:5432/app, ask Dana."
    assert redact(text) == (
        "The staging DB is postgres://app:[REDACTED: url-password]@db:5432/app, ask Dana."
    )


def test_a_private_key_cut_short_is_redacted_up_to_the_prose_after_it() -> None:
    lines = ["MIIEowIBAAKCAQEA1234567890abcdefghijABCDEFGHIJ", "abcdEFGH12345678abcdEFGH"]
    text = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\nThe rest of the note"
    out = redact(text)
    assert out == "[REDACTED: private-key]\nThe rest of the note"


NOT_FOUND = [
    "sk-ant-...",
    "export ANTHROPIC_API_KEY=sk-ant-api03-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "token: <your key>",
    "The password field shows **** in the UI.",
    "AKIAIOSFODNN7EXAMPLE",
    "password = os.environ['DB_PASSWORD']",
    "api_key: str",
    "password=password, user=user",
    "max_tokens = 4096",
    "pwd: /home/user/project",
    "the password is stored in the vault",
    "postgres://user:password@localhost/db",
    "postgres://app@db:5432/main",
    "git sha 3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6d7e8f901",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "record prefers-tabs-0123456789abcdef0123456789abcdef.md",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "hf_hub_download(repo_id='org/model')",
    "Bearer tokens expire after one hour.",
    # Code seen in real packages (site-packages scan): names, types and prompts, no values.
    "if username or password:\n    return BasicAuth(username, password)",
    "username, password = url_user_password",
    "password: FilterOrBool = False,",
    ":param password: When True, display asterisks.",
    'expect the "Password:" prompt and then send the line',
    '"password": "string?",',
    "if token is Name.Variable:",
    "token = (String.Double if quoted else String.Single)",
    '"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="',
    "cache_key = '3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6'",
    "nextPageToken: CgsI8f3a9c0d1e4b5a6978c0",
]


@pytest.mark.parametrize("text", NOT_FOUND)
def test_placeholders_hashes_and_code_references_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == ()
    assert redact(text) == text


def test_hits_are_ordered_non_overlapping_spans() -> None:
    text = (
        "a: ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 b: AKIA2E0A8F3B244C9986 "
        "c: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    )
    hits = find_secrets(text)
    assert [h.kind for h in hits] == ["github-token", "aws-access-key-id", "jwt"]
    assert all(a.end <= b.start for a, b in itertools.pairwise(hits))
    assert hits[0] == SecretHit("github-token", 3, 43)


# Text built from fragments that look like credentials, their contexts and noise.
_FRAGMENTS = st.sampled_from(
    [
        "sk-ant-api03-",
        "ghp_",
        "AKIA",
        "password = ",
        "postgres://u:",
        "@h",
        "-----BEGIN PRIVATE KEY-----\n",
        "-----END PRIVATE KEY-----",
        "eyJhbGciOiJIUzI1NiJ9.",
        "eyJzdWIiOiIx.",
        "Bearer ",
        "[REDACTED: jwt]",
        "\\n",
        " is ",
        "Basic dXNlcjpwYXNz",
    ]
)
_NOISE = st.text(alphabet=st.sampled_from("aZ09+/=_-.:@ \n\"'密"), min_size=0, max_size=60)
_TEXTS = st.lists(st.one_of(_FRAGMENTS, _NOISE, st.text(max_size=20)), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_redact_leaves_no_hit_and_find_never_crashes(text: str) -> None:
    hits = find_secrets(text)
    assert all(0 <= h.start < h.end <= len(text) for h in hits)
    assert all(a.end <= b.start for a, b in itertools.pairwise(hits))
    out = redact(text)
    assert find_secrets(out) == ()
    assert redact(out) == out


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=400))
def test_any_text_is_screened_without_error(text: str) -> None:
    for hit in find_secrets(text):
        assert hit.kind in SECRET_KINDS
    assert find_secrets(redact(text)) == ()


def test_a_jwt_whose_header_nests_deeply_is_not_a_crash() -> None:
    # base64url of '{"a":' + '[' * 100000: json.loads would recurse past the limit.
    head = base64.urlsafe_b64encode(b'{"a":' + b"[" * 100_000).decode().rstrip("=")
    text = f"{head}.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    assert find_secrets(text) == ()


_LONG_FRAGMENTS = [
    "sk-ant-",
    "password = ",
    "-----BEGIN PRIVATE KEY-----",
    "postgres://u:",
    "a-",
    "_-",
    "secret key ",
    "xoxb-",
    "Bearer ",
    "1234567890:AA",
    # issue 19 #4's command-line rules: a command word, then its flag further on
    *("mysql ", "curl ", "sshpass ", "curl -u a:", "machine a login b ", "<password>"),
    "x\u200b",
]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("fragment", _LONG_FRAGMENTS)
def test_long_repetitive_text_is_scanned_in_linear_time(fragment: str) -> None:
    # 50k characters take well under a second each; a quadratic rule (an unbounded
    # lazy prefix restarted at every hyphen once took ~40 s here) hits the timeout.
    text = fragment * (50_000 // len(fragment))
    assert find_secrets(redact(text)) == ()


# --- issue 19 #4: what a reader sees; configuration syntaxes ------------------------

_KEYS = [
    "sk-ant-api03-" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6k" + "AA",
    "AKIA2E0A8F3B244C9986",
    "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
]
_INVISIBLE = {"zero-width space": "\u200b", "soft hyphen": "\u00ad", "word joiner": "\u2060"}
_INVISIBLE |= {"BOM": "\ufeff", "ZWNJ": "\u200c", "variation selector": "\ufe0f"}


@pytest.mark.parametrize("key", _KEYS)
@pytest.mark.parametrize("invisible", list(_INVISIBLE.values()), ids=list(_INVISIBLE))
def test_an_invisible_character_inside_a_key_hides_nothing(key: str, invisible: str) -> None:
    for at in (5, len(key) // 2, len(key) - 3):
        hidden = key[:at] + invisible + key[at:]
        text = f"The deploy key is {hidden} (rotate monthly)."
        [hit] = find_secrets(text)
        # The span is the whole key in the original text, the invisible character inside.
        assert text[hit.start : hit.end] == hidden
        cleaned = redact(text)
        assert cleaned == f"The deploy key is [REDACTED: {hit.kind}] (rotate monthly)."


def test_fullwidth_and_repeated_invisibles_read_as_the_key() -> None:
    key = _KEYS[2]
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in key[:6]) + key[6:]
    assert find_secrets(f"token {fullwidth}")
    sprinkled = "\u200b".join(key)
    assert redact(f"x {sprinkled} y") == "x [REDACTED: github-token] y"


CONFIG_FOUND = [
    ("netrc-password", "machine api.heroku.com login dana password Xk9mQ2rT7v"),
    ("netrc-password", "machine pypi.org\n  login __token__\n  password s3cr3tPw99"),
    ("command-line-secret", "mysql -h db -u root -pTr0ub4dor3 analytics"),
    ("command-line-secret", "./deploy.sh --db-password 'Tr0ub4dor3' --env prod"),
    ("command-line-secret", "cli login --token ghjk1234ABCDmnop5678"),
    ("command-line-secret", "sshpass -p Tr0ub4dor3 ssh admin@10.0.0.5"),
    ("command-line-secret", "curl -u admin:Tr0ub4dor3 https://jenkins.internal/api/json"),
    ("xml-secret", "<server><id>nexus</id><password>Tr0ub4dor3</password></server>"),
    ("password", '[database]\nhost = "db"\npassword = "Tr0ub4dor3"'),
    ("password", "db:\n  user: app\n  password: Tr0ub4dor3"),
    ("password", "SMTP_PASSWORD=Tr0ub4dor3"),
    ("secret-assignment", "auth:\n  token: zVIH75xe1S1"),
    ("password", "Server=sql;Database=shop;User ID=sa;Password=Tr0ub4dor3;"),
    ("url-password", "postgresql://etl:Tr0ub4dor3@warehouse.internal:5432/dw"),
]


@pytest.mark.parametrize(("kind", "text"), CONFIG_FOUND)
def test_credentials_in_configuration_syntax_are_found(kind: str, text: str) -> None:
    hits = find_secrets(text)
    assert [h.kind for h in hits] == [kind], text
    assert "Tr0ub4dor3" not in redact(text) and "Xk9mQ2rT7v" not in redact(text)


def test_configuration_that_names_a_secret_without_holding_one_is_left_alone() -> None:
    sc = load_benchmark("secrets_corpus")
    flagged = [t for t in sc.BENIGN_CONFIG if find_secrets(t)]
    assert flagged == []
    assert "the password policy requires 12 characters" in sc.BENIGN_CONFIG
    assert "token budget = 4000" in sc.BENIGN_CONFIG


@pytest.mark.parametrize(
    "text",
    [
        # A template slot inside a random value does not make it a template (issue 28).
        "Data Source=db;User Id=app;Pwd=P%O776c!pw%s;Encrypt=True",
        "DB_PASSWORD=D%sC7^1YfqKO5EE",
        "hub-cli login --token %Sp5QbCM0ryJ*fuNho",
        "SMTP_PASSWORD=ECfb!m*6eE%S7 SMTP_HOST=mail",
        # A netrc password and a flag's value may start with "-".
        "machine pypi.org login __token__ password -0*W21LCaRup42q",
        "the deploy job reads hub-cli login --token -KpH5bfNTUHFim0o",
    ],
)
def test_a_credential_is_one_whatever_characters_it_holds(text: str) -> None:
    assert find_secrets(text), text


@pytest.mark.parametrize(
    "text",
    ["DB_PASSWORD=%s", "password: ${DB_PASSWORD}", "Pwd={password};", "--password --verbose"],
)
def test_a_template_is_no_credential(text: str) -> None:
    assert find_secrets(text) == (), text


def test_every_drawn_credential_of_the_corpus_is_found_in_a_record() -> None:
    """The draw the property test through real turns makes, swept deterministically:
    every format, 150 seeds, in a description and in a body, redacted entirely."""
    sc = load_benchmark("secrets_corpus")
    missed = []
    for seed in range(150):
        for cred in sc.credentials(seed, 1):
            for text in (cred.text.replace("\n", " ")[:900], cred.text):
                shown = redact(text)
                missed.extend((cred.fmt, seed, p) for p in cred.vanish if p in shown)
    assert missed == []
