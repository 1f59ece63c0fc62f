"""Settings: magic argument → ``%config IPyMemory.x`` → ``IPYMEMORY_X`` env → default.

:class:`IPyMemory` is the traitlets configurable behind ``%config IPyMemory`` (and
``c.IPyMemory.x`` in an IPython profile). Its traits default to ``None`` meaning "not
set here", so an environment variable still applies unless ``%config`` set a value;
:func:`resolve` walks the order above and records where each value came from.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from traitlets import Enum, Float, Integer, Unicode
from traitlets.config import LoggingConfigurable

from ._env import parse_int, parse_seconds
from .errors import MemoryConfigError
from .model import AnthropicModel, ModelClient, NoModel
from .model.anthropic import DEFAULT_MAIN_MODEL, DEFAULT_SIDE_MODEL, model_from_env
from .store.lock import DEFAULT_LOCK_TIMEOUT
from .turn.config import COMMIT_MODES, CommitMode, SessionConfig

__all__ = [
    "ENV_PREFIX",
    "IPyMemory",
    "Settings",
    "describe_model",
    "env_var",
    "make_model",
    "resolve",
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
    model = Unicode(
        None, allow_none=True, help=f"Main model of %%agent (default: {DEFAULT_MAIN_MODEL})."
    ).tag(config=True)
    side_model = Unicode(
        None,
        allow_none=True,
        help=f"Model of the memory side-queries (default: {DEFAULT_SIDE_MODEL}).",
    ).tag(config=True)
    commit_mode = Enum(
        list(COMMIT_MODES),
        default_value=None,
        allow_none=True,
        help="What happens to extracted memories: review (wait for you; default), "
        "auto (commit at once) or off (never extract).",
    ).tag(config=True)
    consolidate_threshold = Integer(
        None, allow_none=True, min=1, help="Consolidate when current + extracted ≥ this (10)."
    ).tag(config=True)
    max_selected = Integer(
        None, allow_none=True, min=0, help="Memories injected per turn at most (5)."
    ).tag(config=True)
    max_tool_steps = Integer(
        None, allow_none=True, min=1, help="Model/tool round trips per turn at most (20)."
    ).tag(config=True)
    history_token_budget = Integer(
        None,
        allow_none=True,
        min=1,
        help="Estimated tokens of request history before older turns are summarised (60000).",
    ).tag(config=True)
    max_tokens = Integer(
        None, allow_none=True, min=1, help="max_tokens of each main model call (4096)."
    ).tag(config=True)
    lock_timeout = Float(
        None,
        allow_none=True,
        min=0.0,
        help=f"Seconds to wait for the .memory lock ({DEFAULT_LOCK_TIMEOUT:g}).",
    ).tag(config=True)
    base_url = Unicode(
        None,
        allow_none=True,
        help="Messages-API base URL (default: the SDK's, i.e. ANTHROPIC_BASE_URL or Anthropic).",
    ).tag(config=True)
    timeout = Float(None, allow_none=True, min=0.001, help="Seconds per model request (120).").tag(
        config=True
    )
    max_retries = Integer(
        None, allow_none=True, min=0, help="SDK retries of a failed model request (2)."
    ).tag(config=True)


_TURN_DEFAULTS = SessionConfig()


@dataclass(frozen=True)
class Settings:
    """Resolved settings; ``origin[name]`` says which layer gave each value."""

    directory: Path
    model: str = DEFAULT_MAIN_MODEL
    side_model: str = DEFAULT_SIDE_MODEL
    # The turn's own defaults, so the two never drift apart.
    commit_mode: CommitMode = _TURN_DEFAULTS.commit_mode
    consolidate_threshold: int = _TURN_DEFAULTS.consolidate_threshold
    max_selected: int = _TURN_DEFAULTS.max_selected
    max_tool_steps: int = _TURN_DEFAULTS.max_tool_steps
    history_token_budget: int = _TURN_DEFAULTS.history_token_budget
    max_tokens: int = _TURN_DEFAULTS.max_tokens
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    base_url: str | None = None
    timeout: float = 120.0
    max_retries: int = 2
    origin: Mapping[str, str] = field(default_factory=dict, compare=False)

    def session_config(self) -> SessionConfig:
        """The turn's :class:`SessionConfig` for these settings."""
        return SessionConfig(
            commit_mode=self.commit_mode,
            consolidate_threshold=self.consolidate_threshold,
            max_selected=self.max_selected,
            max_tool_steps=self.max_tool_steps,
            history_token_budget=self.history_token_budget,
            max_tokens=self.max_tokens,
            main_model=self.model,
            side_model=self.side_model,
        )


def _int(minimum: int) -> Callable[[str], object]:
    return lambda text: parse_int(text, minimum)


def _seconds(*, allow_zero: bool) -> Callable[[str], object]:
    return lambda text: parse_seconds(text, allow_zero=allow_zero)


def _commit_mode(text: str) -> object:
    value = text.strip()
    if value not in COMMIT_MODES:
        raise ValueError(f"expected one of {', '.join(COMMIT_MODES)}, got {text!r}")
    return value


def _text(text: str) -> object:
    if not text.strip():
        raise ValueError(f"expected a non-empty value, got {text!r}")
    return text.strip()


_PARSERS: dict[str, Callable[[str], object]] = {
    "directory": _text,
    "model": _text,
    "side_model": _text,
    "commit_mode": _commit_mode,
    "consolidate_threshold": _int(1),
    "max_selected": _int(0),
    "max_tool_steps": _int(1),
    "history_token_budget": _int(1),
    "max_tokens": _int(1),
    "lock_timeout": _seconds(allow_zero=True),
    "base_url": _text,
    "timeout": _seconds(allow_zero=False),
    "max_retries": _int(0),
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
    """Settings from ``overrides`` (magic arguments; None = not given), ``config``,
    ``IPYMEMORY_*`` in ``env`` (default ``os.environ``), then the defaults.

    Raises :class:`MemoryConfigError` naming the variable for a bad environment value.
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
        if given is not None:
            values[name], origin[name] = given, "argument"
            continue
        configured = getattr(config, name) if config is not None else None
        if configured is not None:
            values[name], origin[name] = configured, "%config"
            continue
        var = env_var(name)
        raw = env.get(var)
        if raw is not None and raw != "":
            try:
                values[name] = parse(raw)
            except ValueError as e:
                # Worded like model_from_env's errors: the variable, then the phrase.
                raise MemoryConfigError(f"{var}: {e}") from None
            origin[name] = f"env {var}"
            continue
        origin[name] = "default"
    base = Path(cwd) if cwd is not None else Path.cwd()
    directory = Path(os.path.expanduser(str(values.pop("directory", base))))
    if not directory.is_absolute():
        directory = base / directory
    try:
        return Settings(directory=directory, origin=origin, **values)
    except TypeError as e:  # pragma: no cover - guarded by _PARSERS matching Settings
        raise MemoryConfigError(str(e)) from e


def make_model(settings: Settings) -> ModelClient:
    """``AnthropicModel`` when a key is available (the SDK reads ANTHROPIC_API_KEY and
    ANTHROPIC_BASE_URL itself), else ``NoModel`` (selection then falls back)."""
    # Every value is already resolved, so model_from_env reads no IPYMEMORY_* itself.
    return model_from_env(
        model=settings.model,
        side_model=settings.side_model,
        max_tokens=settings.max_tokens,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        base_url=settings.base_url,
    )


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
