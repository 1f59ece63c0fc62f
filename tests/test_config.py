"""One settings path: argument → %config → IPYMEMORY_* → default, for every setting."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

import ipymemory
import ipymemory._constants as C
from ipymemory import AgentSession, AnthropicModel, MemoryConfigError, NoModel, SessionConfig
from ipymemory.config import (
    SETTINGS as TABLE,
)
from ipymemory.config import (
    IPyMemory,
    ModelSettings,
    Settings,
    env_var,
    make_model,
    model_key,
    resolve,
    without_settings,
)

SETTINGS = [f.name for f in dataclasses.fields(Settings) if f.name != "origin"]

# For every setting: (text in the environment, the value it means, a %config value, an
# argument) -- three different values, so each layer's win is visible.
SAMPLES: dict[str, tuple[str, object, object, object]] = {
    "directory": ("envdir", "envdir", "confdir", "argdir"),
    "user_dir": ("envuser", "envuser", "confuser", "arguser"),
    "model": ("env-model", "env-model", "conf-model", "arg-model"),
    "side_model": ("env-side", "env-side", "conf-side", "arg-side"),
    "commit_mode": ("off", "off", "auto", "review"),
    "consolidate_threshold": ("7", 7, 8, 9),
    "consolidate_every": ("4", 4, 5, 6),
    "max_selected": ("0", 0, 2, 3),
    "memory_budget": ("0", 0, 1500, 4000),
    "selector": ("keyword", "keyword", "model", "keyword"),
    "select_candidates": ("10", 10, 20, 40),
    "max_tool_steps": ("3", 3, 4, 5),
    "history_token_budget": ("1000", 1000, 2000, 3000),
    "max_tokens": ("100", 100, 200, 300),
    "lock_timeout": ("0", 0.0, 1.5, 2.5),
    "base_url": ("http://env", "http://env", "http://conf", "http://arg"),
    "memory_store": ("memstore_env", "memstore_env", "memstore_conf", "memstore_arg"),
    "memory_store_prefix": ("/env/", "/env/", "/conf/", "/arg/"),
    "timeout": ("7.5", 7.5, 8.0, 9.0),
    "max_retries": ("0", 0, 1, 3),
    "python_timeout": ("2", 2.0, 3.0, 4.0),
    "allow_hidden": ("yes", True, False, True),
    "history_retention_days": ("0", 0, 10, 20),
    "history_retention_bytes": ("1024", 1024, 2048, 4096),
    "pending_expiry_days": ("1", 1, 2, 3),
    "background_memory": ("off", False, True, False),
    "follow_check": ("no", False, True, False),
    "mark_missed": ("0", False, True, False),
    "jupyter_mcp_tools": ("off", False, True, False),
}


def _value(settings: Settings | SessionConfig, name: str) -> object:
    value = getattr(settings, name)
    return value.name if name in ("directory", "user_dir") else value


def test_every_setting_has_one_parser_one_trait_and_a_sample() -> None:
    traits = set(IPyMemory.class_traits(config=True))
    assert set(TABLE) == set(SETTINGS) == traits == set(SAMPLES)


def test_the_table_says_who_reads_each_setting() -> None:
    # The session and the model client get exactly the settings their rows name...
    session = {f.name for f in dataclasses.fields(SessionConfig)} & set(TABLE)
    assert {name for name, s in TABLE.items() if "session" in s.readers} == session
    model = {f.name for f in dataclasses.fields(ModelSettings)}
    assert {name for name, s in TABLE.items() if "model" in s.readers} == model
    # ...and a session made without settings has their defaults, but for the models
    # (None: the configured ones).
    defaults = {f.name: f.default for f in dataclasses.fields(Settings)}
    differ = {
        f.name
        for f in dataclasses.fields(SessionConfig)
        if f.name in TABLE and f.default != defaults[f.name]
    }
    assert differ == {"model", "side_model"}


def test_the_readme_lists_every_setting_with_its_variable() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| `(IPYMEMORY_\w+)` \|", readme, flags=re.MULTILINE)
    assert sorted(rows) == sorted((name, env_var(name)) for name in TABLE)


@pytest.mark.parametrize("name", SETTINGS)
def test_each_layer_wins_over_the_next_and_is_recorded(name: str, tmp_path: Path) -> None:
    env_text, env_value, configured, argument = SAMPLES[name]
    assert resolve(env={}, cwd=tmp_path).origin[name] == "default"
    env = {env_var(name): env_text}
    got = resolve(env=env, cwd=tmp_path)
    assert (_value(got, name), got.origin[name]) == (env_value, f"env {env_var(name)}")
    config = IPyMemory()
    setattr(config, name, configured)
    got = resolve(config, env=env, cwd=tmp_path)
    assert (_value(got, name), got.origin[name]) == (configured, "%config")
    got = resolve(config, {name: argument}, env=env, cwd=tmp_path)
    assert (_value(got, name), got.origin[name]) == (argument, "argument")
    # None means "not given" in every layer.
    got = resolve(config, {name: None}, env=env, cwd=tmp_path)
    assert got.origin[name] == "%config"


def test_defaults_are_the_constants(tmp_path: Path) -> None:
    got = resolve(env={}, cwd=tmp_path)
    assert got.directory == tmp_path
    expected = {
        "model": C.DEFAULT_MODEL,
        "side_model": C.DEFAULT_SIDE_MODEL,
        "commit_mode": C.DEFAULT_COMMIT_MODE,
        "consolidate_threshold": C.DEFAULT_CONSOLIDATE_THRESHOLD,
        "consolidate_every": C.DEFAULT_CONSOLIDATE_EVERY,
        "max_selected": C.DEFAULT_MAX_SELECTED,
        "memory_budget": C.DEFAULT_MEMORY_BUDGET,
        "selector": C.DEFAULT_SELECTOR,
        "select_candidates": C.DEFAULT_SELECT_CANDIDATES,
        "max_tool_steps": C.DEFAULT_MAX_TOOL_STEPS,
        "history_token_budget": C.DEFAULT_HISTORY_TOKEN_BUDGET,
        "max_tokens": C.DEFAULT_MAX_TOKENS,
        "lock_timeout": C.DEFAULT_LOCK_TIMEOUT,
        "base_url": None,
        "timeout": C.DEFAULT_TIMEOUT,
        "max_retries": C.DEFAULT_MAX_RETRIES,
        "python_timeout": C.DEFAULT_PYTHON_TIMEOUT,
        "allow_hidden": C.DEFAULT_ALLOW_HIDDEN,
        "history_retention_days": C.DEFAULT_HISTORY_RETENTION_DAYS,
        "history_retention_bytes": C.DEFAULT_HISTORY_RETENTION_BYTES,
        "pending_expiry_days": C.DEFAULT_PENDING_EXPIRY_DAYS,
        "follow_check": C.DEFAULT_FOLLOW_CHECK,
        "mark_missed": C.DEFAULT_MARK_MISSED,
    }
    assert {name: getattr(got, name) for name in expected} == expected
    # The turn's own defaults are the same constants: the two cannot drift apart.
    assert got.user_dir == Path(C.DEFAULT_USER_DIR).expanduser()
    assert SessionConfig.from_settings(got) == SessionConfig(
        model=C.DEFAULT_MODEL, side_model=C.DEFAULT_SIDE_MODEL, user_dir=got.user_dir
    )
    # A waiter outlives the stale window of a dead holder's lock (SPEC §4).
    assert C.DEFAULT_LOCK_TIMEOUT > C.LOCK_STALE_SECONDS


def test_user_dir_off_turns_the_user_scope_off_in_every_layer(tmp_path: Path) -> None:
    # SPEC §11: "off" (any case) in the environment, %config or an argument.
    assert resolve(env={"IPYMEMORY_USER_DIR": "OFF"}, cwd=tmp_path).user_dir is None
    config = IPyMemory()
    config.user_dir = "off"
    assert resolve(config, env={}, cwd=tmp_path).user_dir is None
    assert resolve(overrides={"user_dir": "off"}, env={}, cwd=tmp_path).user_dir is None
    # A relative one is taken from the working directory; ~ is the home directory.
    assert resolve(env={"IPYMEMORY_USER_DIR": "me"}, cwd=tmp_path).user_dir == tmp_path / "me"
    home = resolve(env={"IPYMEMORY_USER_DIR": "~/mine"}, cwd=tmp_path).user_dir
    assert home == Path.home() / "mine"
    # A session built by library code stays in its workspace (no user scope).
    assert SessionConfig().user_dir is None


def test_the_values_issue_9_names() -> None:
    assert (C.DEFAULT_MAX_TOKENS, C.DEFAULT_CONSOLIDATE_THRESHOLD, C.DEFAULT_MAX_SELECTED) == (
        4096,
        10,
        5,
    )
    assert (C.DEFAULT_MAX_INDEX_LINES, C.DEFAULT_MAX_INDEX_BYTES) == (200, 4096)
    assert (C.MAX_RECORD_LINES, C.MAX_RECORD_BYTES) == (200, 4096)
    assert C.DEFAULT_CONSOLIDATE_EVERY == 3 and C.DEFAULT_ALLOW_HIDDEN is False


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"IPYMEMORY_MAX_TOKENS": "lots"}, "IPYMEMORY_MAX_TOKENS: expected an integer, got 'lots'"),
        ({"IPYMEMORY_MAX_TOKENS": "0"}, "IPYMEMORY_MAX_TOKENS: expected an integer >= 1, got 0"),
        (
            {"IPYMEMORY_TIMEOUT": "-1"},
            "IPYMEMORY_TIMEOUT: expected a positive number of seconds, got -1.0",
        ),
        (
            {"IPYMEMORY_TIMEOUT": "nan"},
            "IPYMEMORY_TIMEOUT: expected a positive number of seconds, got nan",
        ),
        ({"IPYMEMORY_MAX_RETRIES": "1.5"}, "IPYMEMORY_MAX_RETRIES: expected an integer, got '1.5'"),
        (
            {"IPYMEMORY_MAX_RETRIES": "-2"},
            "IPYMEMORY_MAX_RETRIES: expected an integer >= 0, got -2",
        ),
        (
            {"IPYMEMORY_COMMIT_MODE": "sometimes"},
            "IPYMEMORY_COMMIT_MODE: expected one of review, auto, off, got 'sometimes'",
        ),
        (
            {"IPYMEMORY_ALLOW_HIDDEN": "maybe"},
            "IPYMEMORY_ALLOW_HIDDEN: expected one of 1, true, yes, on, 0, false, no, off, "
            "got 'maybe'",
        ),
        ({"IPYMEMORY_MODEL": "   "}, "IPYMEMORY_MODEL: expected a non-empty value, got '   '"),
    ],
)
def test_a_bad_environment_value_names_the_variable(
    env: dict[str, str], message: str, tmp_path: Path
) -> None:
    with pytest.raises(MemoryConfigError) as info:
        resolve(env=env, cwd=tmp_path)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"max_tokens": True}, "max_tokens (argument): expected an integer, got True"),
        ({"max_tokens": 0}, "max_tokens (argument): expected an integer >= 1, got 0"),
        ({"timeout": 0}, "timeout (argument): expected a positive number of seconds, got 0.0"),
        ({"commit_mode": "sometimes"}, "commit_mode (argument): expected one of review, auto"),
        ({"directory": ""}, "directory (argument): expected a non-empty value"),
        ({"colour": "blue"}, "unknown setting(s): colour"),
    ],
)
def test_a_bad_argument_is_refused_like_an_environment_value(
    overrides: dict[str, Any], message: str, tmp_path: Path
) -> None:
    with pytest.raises(MemoryConfigError, match="^" + re.escape(message)):
        resolve(overrides=overrides, env={}, cwd=tmp_path)


def test_the_directory_is_made_absolute_and_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got = resolve(overrides={"directory": "sub"}, env={}, cwd=tmp_path)
    assert got.directory == tmp_path / "sub"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve(env={"IPYMEMORY_DIR": "~/x"}, cwd="/").directory == tmp_path / "x"
    # os.environ is what is read when no env is given.
    monkeypatch.setenv("IPYMEMORY_DIR", str(tmp_path / "from-env"))
    assert resolve(cwd="/").directory == tmp_path / "from-env"


def test_make_model_builds_the_client_from_the_settings_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = resolve(
        overrides={"model": "big", "side_model": "small", "timeout": 7.5, "max_retries": 0},
        env={"IPYMEMORY_MAX_TOKENS": "1000"},
        cwd=tmp_path,
    )
    assert isinstance(make_model(settings), NoModel)  # no key: the SDK could not call
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    model = make_model(settings)
    assert isinstance(model, AnthropicModel)
    assert (model.model, model.side_model, model.max_tokens) == ("big", "small", 1000)
    assert (model.timeout, model.max_retries) == (7.5, 0)


def test_anthropic_model_reads_no_ipymemory_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MODEL", "SIDE_MODEL", "MAX_TOKENS", "TIMEOUT", "MAX_RETRIES"):
        monkeypatch.setenv(f"IPYMEMORY_{name}", "1")
    model = AnthropicModel(api_key="k")
    assert (model.model, model.side_model, model.max_tokens) == (
        C.DEFAULT_MODEL,
        C.DEFAULT_SIDE_MODEL,
        C.DEFAULT_MAX_TOKENS,
    )
    assert (model.timeout, model.max_retries) == (C.DEFAULT_TIMEOUT, C.DEFAULT_MAX_RETRIES)


def test_a_session_without_a_model_resolves_settings_as_everywhere(
    workspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert isinstance(AgentSession(workspace).model, NoModel)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "t")
    monkeypatch.setenv("IPYMEMORY_MODEL", "big")
    monkeypatch.setenv("IPYMEMORY_TIMEOUT", "3")
    model = AgentSession(workspace).model
    assert isinstance(model, AnthropicModel)
    assert (model.model, model.timeout) == ("big", 3.0)
    # The session's own config names the model in the same way and wins.
    model = AgentSession(workspace, config=SessionConfig(model="chosen")).model
    assert isinstance(model, AnthropicModel) and model.model == "chosen"
    monkeypatch.setenv("IPYMEMORY_TIMEOUT", "soon")
    with pytest.raises(MemoryConfigError, match="IPYMEMORY_TIMEOUT"):
        AgentSession(workspace)


def test_the_model_key_changes_with_everything_the_client_is_built_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = resolve(env={}, cwd=tmp_path)
    key = model_key(base)
    for f in dataclasses.fields(ModelSettings):
        _, _, configured, _ = SAMPLES[f.name]
        changed = dataclasses.replace(base, **{f.name: configured})
        assert model_key(changed) != key, f.name
    # Settings the client does not depend on leave the key alone.
    assert model_key(dataclasses.replace(base, commit_mode="off", max_selected=1)) == key
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert model_key(base) != key


def test_without_settings_drops_only_ipymemory_variables() -> None:
    env = {"IPYMEMORY_DIR": "d", "IPYMEMORY_MODEL": "m", "PATH": "/bin", "XIPYMEMORY_": "x"}
    assert without_settings(env) == {"PATH": "/bin", "XIPYMEMORY_": "x"}


def _code_strings(path: Path) -> list[str]:
    """String constants in ``path`` that are not docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_only_the_settings_module_names_ipymemory_variables() -> None:
    """An ``IPYMEMORY_*`` name in code (not in prose) outside ipymemory/config.py would be
    a second reader of the settings."""
    package = Path(ipymemory.__file__).parent
    readers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if any(text.startswith("IPYMEMORY_") for text in _code_strings(path))
    )
    assert readers == ["config.py"]


def test_every_turn_setting_reaches_the_session_config(tmp_path: Path) -> None:
    shared = [f.name for f in dataclasses.fields(SessionConfig) if f.name in SETTINGS]
    assert {"model", "side_model", "commit_mode", "python_timeout", "allow_hidden"} <= set(shared)
    env = {env_var(name): SAMPLES[name][0] for name in shared}
    config = SessionConfig.from_settings(resolve(env=env, cwd=tmp_path))
    assert {name: _value(config, name) for name in shared} == {
        name: SAMPLES[name][1] for name in shared
    }
