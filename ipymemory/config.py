"""Settings: argument → ``%config IPyMemory.x`` → ``IPYMEMORY_X`` env → default.

The ONE place settings are resolved and the only reader of ``IPYMEMORY_*``; the
defaults are :mod:`ipymemory._constants`. :func:`resolve` walks the order above for
every setting, validates each value with the same rule whatever layer gave it, and
records where each came from (``Settings.origin``). The magics, the CLI and
``AgentSession(model=None)`` all come through here.

:class:`IPyMemory` is the traitlets configurable behind ``%config IPyMemory`` (and
``c.IPyMemory.x`` in an IPython profile). Its traits default to ``None`` meaning "not
set here", so an environment variable still applies unless ``%config`` set a value.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, cast

from traitlets import Bool, Enum, Float, Integer, Unicode
from traitlets.config import LoggingConfigurable

from . import _constants as C
from ._constants import COMMIT_MODES, CommitMode
from ._secrets import redact
from .errors import MemoryConfigError
from .model import AnthropicModel, ModelClient, NoModel
from .model.anthropic import sdk_environment

__all__ = [
    "ENV_PREFIX",
    "IPyMemory",
    "ModelSettings",
    "Settings",
    "default_model",
    "describe_model",
    "env_var",
    "make_model",
    "model_key",
    "parse_int",
    "parse_seconds",
    "resolve",
    "without_settings",
]

ENV_PREFIX = "IPYMEMORY_"


class IPyMemory(LoggingConfigurable):
    """ipymemory settings. Unset (None) options fall back to ``IPYMEMORY_<NAME>``, then
    to the default shown in each help text."""

    directory = Unicode(
        None,
        allow_none=True,
        help="Workspace holding .memory/ (env IPYMEMORY_DIR; default: the kernel's "
        "working directory).",
    ).tag(config=True)
    user_dir = Unicode(
        None,
        allow_none=True,
        help="Directory of the user's own memory, shared across projects: "
        f"<user_dir>/.memory (env IPYMEMORY_USER_DIR; default {C.DEFAULT_USER_DIR}; "
        f"'{C.USER_DIR_OFF}' turns it off).",
    ).tag(config=True)
    model = Unicode(
        None, allow_none=True, help=f"Main model of %%agent (default: {C.DEFAULT_MODEL})."
    ).tag(config=True)
    side_model = Unicode(
        None,
        allow_none=True,
        help=f"Model of the memory side-queries (default: {C.DEFAULT_SIDE_MODEL}).",
    ).tag(config=True)
    commit_mode = Enum(
        list(COMMIT_MODES),
        default_value=None,
        allow_none=True,
        help="What happens to extracted memories: review (wait for you; default), "
        "auto (commit at once) or off (never extract).",
    ).tag(config=True)
    consolidate_threshold = Integer(
        None,
        allow_none=True,
        min=1,
        help=f"Consolidate when current + extracted ≥ this ({C.DEFAULT_CONSOLIDATE_THRESHOLD}).",
    ).tag(config=True)
    consolidate_every = Integer(
        None,
        allow_none=True,
        min=1,
        help="…and at least this many records were added since the last consolidation "
        f"({C.DEFAULT_CONSOLIDATE_EVERY}).",
    ).tag(config=True)
    max_selected = Integer(
        None,
        allow_none=True,
        min=0,
        help=f"Memories injected per turn at most ({C.DEFAULT_MAX_SELECTED}).",
    ).tag(config=True)
    max_tool_steps = Integer(
        None,
        allow_none=True,
        min=1,
        help=f"Model/tool round trips per turn at most ({C.DEFAULT_MAX_TOOL_STEPS}).",
    ).tag(config=True)
    history_token_budget = Integer(
        None,
        allow_none=True,
        min=1,
        help="Estimated tokens of request history before older turns are summarised "
        f"({C.DEFAULT_HISTORY_TOKEN_BUDGET}).",
    ).tag(config=True)
    max_tokens = Integer(
        None,
        allow_none=True,
        min=1,
        help=f"max_tokens of each main model call ({C.DEFAULT_MAX_TOKENS}).",
    ).tag(config=True)
    lock_timeout = Float(
        None,
        allow_none=True,
        min=0.0,
        help=f"Seconds to wait for the .memory lock ({C.DEFAULT_LOCK_TIMEOUT:g}).",
    ).tag(config=True)
    base_url = Unicode(
        None,
        allow_none=True,
        help="Messages-API base URL (default: the SDK's, i.e. ANTHROPIC_BASE_URL or Anthropic).",
    ).tag(config=True)
    timeout = Float(
        None,
        allow_none=True,
        min=0.001,
        help=f"Seconds per model request ({C.DEFAULT_TIMEOUT:g}).",
    ).tag(config=True)
    max_retries = Integer(
        None,
        allow_none=True,
        min=0,
        help=f"SDK retries of a failed model request ({C.DEFAULT_MAX_RETRIES}).",
    ).tag(config=True)
    python_timeout = Float(
        None,
        allow_none=True,
        min=0.001,
        help=f"Seconds one run_python call may take ({C.DEFAULT_PYTHON_TIMEOUT:g}).",
    ).tag(config=True)
    allow_hidden = Bool(
        None,
        allow_none=True,
        help="Let the agent's file tools see hidden paths (.env, .git, .memory, …) (False).",
    ).tag(config=True)
    history_retention_days = Integer(
        None,
        allow_none=True,
        min=0,
        help="gc keeps files that left the set for this many days "
        f"({C.DEFAULT_HISTORY_RETENTION_DAYS}).",
    ).tag(config=True)
    history_retention_bytes = Integer(
        None,
        allow_none=True,
        min=0,
        help=f"…and at most this many bytes of them ({C.DEFAULT_HISTORY_RETENTION_BYTES}).",
    ).tag(config=True)
    pending_expiry_days = Integer(
        None,
        allow_none=True,
        min=1,
        help=f"Undecided batches expire after this many days ({C.DEFAULT_PENDING_EXPIRY_DAYS}).",
    ).tag(config=True)
    background_memory = Bool(
        None,
        allow_none=True,
        help="Run %%agent's memory work on a worker after the cell ends (default: on in a "
        "Jupyter kernel, off in a terminal IPython).",
    ).tag(config=True)


@dataclass(frozen=True)
class ModelSettings:
    """What the model client is built from (also its cache key, with the SDK's env)."""

    model: str
    side_model: str
    max_tokens: int
    timeout: float
    max_retries: int
    base_url: str | None


@dataclass(frozen=True)
class Settings:
    """Resolved settings; ``origin[name]`` says which layer gave each value
    (``argument``, ``%config``, ``env IPYMEMORY_…`` or ``default``)."""

    directory: Path
    #: The user scope's directory (SPEC §11); None: off.
    user_dir: Path | None = None
    model: str = C.DEFAULT_MODEL
    side_model: str = C.DEFAULT_SIDE_MODEL
    commit_mode: CommitMode = C.DEFAULT_COMMIT_MODE
    consolidate_threshold: int = C.DEFAULT_CONSOLIDATE_THRESHOLD
    consolidate_every: int = C.DEFAULT_CONSOLIDATE_EVERY
    max_selected: int = C.DEFAULT_MAX_SELECTED
    max_tool_steps: int = C.DEFAULT_MAX_TOOL_STEPS
    history_token_budget: int = C.DEFAULT_HISTORY_TOKEN_BUDGET
    max_tokens: int = C.DEFAULT_MAX_TOKENS
    lock_timeout: float = C.DEFAULT_LOCK_TIMEOUT
    base_url: str | None = None
    timeout: float = C.DEFAULT_TIMEOUT
    max_retries: int = C.DEFAULT_MAX_RETRIES
    python_timeout: float = C.DEFAULT_PYTHON_TIMEOUT
    allow_hidden: bool = C.DEFAULT_ALLOW_HIDDEN
    history_retention_days: int = C.DEFAULT_HISTORY_RETENTION_DAYS
    history_retention_bytes: int = C.DEFAULT_HISTORY_RETENTION_BYTES
    pending_expiry_days: int = C.DEFAULT_PENDING_EXPIRY_DAYS
    background_memory: bool | None = C.DEFAULT_BACKGROUND_MEMORY  # None: on in a kernel
    origin: Mapping[str, str] = field(default_factory=dict, compare=False)

    def model_settings(self) -> ModelSettings:
        """The part of these settings the model client is built from."""
        return ModelSettings(**self.values_for(ModelSettings))

    def values_for(self, kind: type) -> dict[str, Any]:
        """These settings' values for the fields of dataclass ``kind`` they share with it
        (e.g. the turn's ``SessionConfig.from_settings``)."""
        names = {f.name for f in fields(kind)} & {f.name for f in fields(self)}
        return {name: getattr(self, name) for name in names}


# --- One parser per kind of value ---------------------------------------------------
# Each takes the text of an environment variable or a typed value (an argument,
# %config) and returns the value, or raises ValueError with a phrase (what was
# expected, what was given); resolve() prefixes the variable or layer.


def parse_int(raw: object, minimum: int) -> int:
    """``raw`` (text or an int) as an integer ``>= minimum``."""
    if isinstance(raw, str):
        try:
            value = int(raw.strip())
        except ValueError:
            raise ValueError(f"expected an integer, got {raw!r}") from None
    elif isinstance(raw, int) and not isinstance(raw, bool):
        value = raw
    else:
        raise ValueError(f"expected an integer, got {raw!r}")
    if value < minimum:
        raise ValueError(f"expected an integer >= {minimum}, got {value}")
    return value


def parse_seconds(raw: object, *, allow_zero: bool = False) -> float:
    """``raw`` (text or a number) as a finite number of seconds, positive (or ``>= 0``
    with ``allow_zero``)."""
    if isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            raise ValueError(f"expected a number of seconds, got {raw!r}") from None
    elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
        value = float(raw)
    else:
        raise ValueError(f"expected a number of seconds, got {raw!r}")
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        what = "a number of seconds >= 0" if allow_zero else "a positive number of seconds"
        raise ValueError(f"expected {what}, got {value}")
    return value


def _int(minimum: int) -> Callable[[object], object]:
    return lambda raw: parse_int(raw, minimum)


def _seconds(*, allow_zero: bool) -> Callable[[object], object]:
    return lambda raw: parse_seconds(raw, allow_zero=allow_zero)


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _bool(raw: object) -> object:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in _TRUE + _FALSE:
        return raw.strip().lower() in _TRUE
    raise ValueError(f"expected one of {', '.join(_TRUE + _FALSE)}, got {raw!r}")


def _commit_mode(raw: object) -> object:
    value = raw.strip() if isinstance(raw, str) else raw
    if value not in COMMIT_MODES:
        raise ValueError(f"expected one of {', '.join(COMMIT_MODES)}, got {raw!r}")
    return value


def _text(raw: object) -> object:
    if isinstance(raw, os.PathLike):
        raw = os.fspath(raw)
    if not isinstance(raw, str) or not raw.strip():
        raise ValueError(f"expected a non-empty value, got {raw!r}")
    return raw.strip()


def _user_dir(raw: object) -> object:
    text = _text(raw)
    return None if str(text).lower() == C.USER_DIR_OFF else text


_PARSERS: dict[str, Callable[[object], object]] = {
    "directory": _text,
    "user_dir": _user_dir,
    "model": _text,
    "side_model": _text,
    "commit_mode": _commit_mode,
    "consolidate_threshold": _int(1),
    "consolidate_every": _int(1),
    "max_selected": _int(0),
    "max_tool_steps": _int(1),
    "history_token_budget": _int(1),
    "max_tokens": _int(1),
    "lock_timeout": _seconds(allow_zero=True),
    "base_url": _text,
    "timeout": _seconds(allow_zero=False),
    "max_retries": _int(0),
    "python_timeout": _seconds(allow_zero=False),
    "allow_hidden": _bool,
    "history_retention_days": _int(0),
    "history_retention_bytes": _int(0),
    "pending_expiry_days": _int(1),
    "background_memory": _bool,
}

# Names that differ from IPYMEMORY_<SETTING> (the short one is what users expect).
_ENV_NAMES = {"directory": "IPYMEMORY_DIR"}


def env_var(name: str) -> str:
    """The environment variable of setting ``name``."""
    return _ENV_NAMES.get(name, ENV_PREFIX + name.upper())


def resolve(
    config: IPyMemory | None = None,
    overrides: Mapping[str, object] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
) -> Settings:
    """Settings from ``overrides`` (arguments, e.g. ``--dir``; None = not given),
    ``config`` (``%config IPyMemory``), ``IPYMEMORY_*`` in ``env`` (default
    ``os.environ``), then the defaults. A relative directory is taken from ``cwd``
    (default: the current directory).

    Raises :class:`MemoryConfigError` naming the setting and the layer (for the
    environment, the variable) for an unknown setting or a bad value.
    """
    env = os.environ if env is None else env
    overrides = overrides or {}
    unknown = set(overrides) - set(_PARSERS)
    if unknown:
        raise MemoryConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for name, parse in _PARSERS.items():
        given = overrides.get(name)
        configured = getattr(config, name) if config is not None else None
        raw = env.get(env_var(name))
        if given is not None:
            value, where, label = given, "argument", f"{name} (argument)"
        elif configured is not None:
            value, where, label = configured, "%config", f"IPyMemory.{name}"
        elif raw is not None and raw != "":
            value, where, label = raw, f"env {env_var(name)}", env_var(name)
        else:
            origin[name] = "default"
            continue
        try:
            values[name] = parse(value)
        except ValueError as e:
            raise MemoryConfigError(f"{label}: {e}") from None
        origin[name] = where
    base = Path(cwd) if cwd is not None else Path.cwd()
    directory = _absolute(values.pop("directory", base), base)
    user_dir = values.pop("user_dir", C.DEFAULT_USER_DIR)
    return Settings(
        directory=directory,
        user_dir=None if user_dir is None else _absolute(user_dir, base),
        origin=origin,
        **values,
    )


def _absolute(path: object, base: Path) -> Path:
    """``path`` with ``~`` expanded, taken from ``base`` when relative."""
    out = Path(os.path.expanduser(str(path)))
    return out if out.is_absolute() else base / out


def without_settings(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` minus every ``IPYMEMORY_*`` variable (for a child process that must
    resolve its settings from scratch)."""
    return {k: v for k, v in env.items() if not k.startswith(ENV_PREFIX)}


def make_model(settings: Settings) -> ModelClient:
    """``AnthropicModel`` when the SDK has a key (it reads ANTHROPIC_API_KEY /
    ANTHROPIC_AUTH_TOKEN and ANTHROPIC_BASE_URL itself), else ``NoModel`` (the turn
    then cannot answer; selection falls back)."""
    if not AnthropicModel.is_configured():
        return NoModel()
    m = settings.model_settings()
    return AnthropicModel(
        m.model,
        side_model=m.side_model,
        max_tokens=m.max_tokens,
        timeout=m.timeout,
        max_retries=m.max_retries,
        base_url=m.base_url,
    )


def model_key(settings: Settings) -> tuple[ModelSettings, tuple[str | None, ...]]:
    """What :func:`make_model` depends on: the model settings and the SDK's own
    environment (a key set after the client was made needs a new client)."""
    return settings.model_settings(), sdk_environment()


def default_model(model: str | None = None, side_model: str | None = None) -> ModelClient:
    """The configured model (settings resolved as everywhere, ``model`` /
    ``side_model`` as arguments), for an ``AgentSession`` made without one."""
    return make_model(resolve(overrides={"model": model, "side_model": side_model}))


def setting_rows(settings: Settings) -> tuple[tuple[str, str, str], ...]:
    """Each setting as (name, value, where it came from), in declaration order; values
    as text, credentials in them (a password in ``base_url``) redacted."""
    rows = []
    for f in fields(settings):
        if f.name == "origin":
            continue
        value = getattr(settings, f.name)
        text = "not set" if value is None else redact(str(value))
        if f.name == "background_memory" and value is None:
            text = "on in a Jupyter kernel, else off"  # decided per shell (NotebookState)
        rows.append((f.name, text, settings.origin.get(f.name, "default")))
    return tuple(rows)


def describe_model(model: ModelClient | None) -> str | None:
    """A short label of ``model`` for status views; None when no model is configured."""
    if model is None or isinstance(model, NoModel):
        return None
    name = getattr(model, "model", None)
    kind = type(model).__name__
    if isinstance(model, AnthropicModel):
        client = cast(Any, model)._client
        url = str(getattr(client, "base_url", "") or "")
        return f"{name} (side: {model.side_model}) via {url}" if url else str(name)
    return f"{name} ({kind})" if isinstance(name, str) else kind
