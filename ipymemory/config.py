"""Settings: argument → ``%config IPyMemory.x`` → ``IPYMEMORY_X`` env → default.

The ONE place settings are resolved and the only reader of ``IPYMEMORY_*``; the
defaults are :mod:`ipymemory._constants`. :func:`resolve` walks the order above for
every setting, validates each value with the same rule whatever layer gave it, and
records where each came from (``Settings.origin``). The magics, the CLI and
``AgentSession(model=None)`` all come through here.

Each setting is declared once, as a field of :class:`Settings` whose row (its
:class:`Setting`: kind, help, readers, variable) says everything else: the
``IPyMemory`` trait, the parser :func:`resolve` uses, the check of
``SessionConfig`` and which parts read it. Adding a setting is one row here and its
``DEFAULT_*`` constant.

:class:`IPyMemory` is the traitlets configurable behind ``%config IPyMemory`` (and
``c.IPyMemory.x`` in an IPython profile). Its traits default to ``None`` meaning "not
set here", so an environment variable still applies unless ``%config`` set a value.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, cast

from traitlets import Bool, Enum, Float, Integer, TraitType, Unicode
from traitlets.config import LoggingConfigurable

from . import _constants as C
from ._constants import COMMIT_MODES, CommitMode
from ._secrets import redact
from .errors import MemoryConfigError
from .model import AnthropicModel, ModelClient, NoModel
from .model.anthropic import sdk_environment

__all__ = [
    "COMMIT_MODE_HELP",
    "ENV_PREFIX",
    "SELECTION_RULE",
    "SETTINGS",
    "IPyMemory",
    "ModelSettings",
    "Setting",
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

# How a turn chooses its memories, said once: %%agent?, %memory help select, the
# README's "A turn" and the teaching notebook's section 4 say exactly this
# (tests/test_readme.py checks each holds it). Change it here when the rule changes.
SELECTION_RULE = (
    f"While the whole set fits memory_budget ({C.DEFAULT_MEMORY_BUDGET} estimated tokens) "
    "a turn uses every record, choosing nothing. Past it the keyword ranking fills the "
    f"budget at once: its best max_selected ({C.DEFAULT_MAX_SELECTED}) records, then the "
    "next best while the block fits (selector = keyword, the default); with selector = "
    "model the side model picks at most max_selected of the ranking's best "
    f"select_candidates ({C.DEFAULT_SELECT_CANDIDATES}) instead, one round trip before "
    "the answer."
)
# What each commit mode does, said once (the setting's help, %%agent --commit).
COMMIT_MODE_HELP = (
    "review (extracted memories wait for your decision; the default), auto (committed "
    "at once, except what screening holds for a person) or off (memories are used but "
    "never extracted or written)"
)

# Who reads a setting: the turn (through ``SessionConfig``), the model client
# (``ModelSettings``), the store (the lock wait, the pending files), a command or the
# notebook each time it runs.
Reader = Literal["session", "model", "store", "command", "notebook"]


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
    elif _is_number(raw):
        value = float(cast(float, raw))
    else:
        raise ValueError(f"expected a number of seconds, got {raw!r}")
    if not _seconds_ok(value, allow_zero):
        raise ValueError(f"expected {_seconds_phrase(allow_zero)}, got {value}")
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _seconds_ok(value: float, allow_zero: bool) -> bool:
    return math.isfinite(value) and (value > 0 or (value == 0 and allow_zero))


def _seconds_phrase(allow_zero: bool) -> str:
    return "a number of seconds >= 0" if allow_zero else "a positive number of seconds"


# --- The kinds of setting -------------------------------------------------------------
# A kind gives a setting's trait (what %config accepts), its parser (every layer of
# resolve()) and its check of a typed value (``SessionConfig``, built by library code
# without resolve()): the phrase after "SessionConfig.<name>: ", or None when fine.


@dataclass(frozen=True)
class Kind:
    """How one kind of setting is configured, parsed and checked; this base is
    non-empty text, the kinds below change what differs."""

    def trait(self, help: str) -> TraitType[Any, Any]:
        return Unicode(None, allow_none=True, help=help)

    def parse(self, raw: object) -> object:
        if isinstance(raw, os.PathLike):
            raw = os.fspath(raw)
        if not isinstance(raw, str) or not raw.strip():
            raise ValueError(f"expected a non-empty value, got {raw!r}")
        return raw.strip()

    def check(self, value: object) -> str | None:
        """A session takes None for "the configured one": text is not checked there."""
        return None


@dataclass(frozen=True)
class Text(Kind):
    """Non-empty text (a model name, a URL)."""


@dataclass(frozen=True)
class Location(Kind):
    """A directory, made absolute against the working directory; ``fallback`` when no
    layer sets it (None: the working directory); ``off`` (any case), if given, means
    None."""

    fallback: str | None = None
    off: str | None = None

    def parse(self, raw: object) -> object:
        text = super().parse(raw)
        return None if self.off is not None and str(text).lower() == self.off else text


@dataclass(frozen=True)
class Choice(Kind):
    """One of ``options``."""

    options: tuple[str, ...]

    def trait(self, help: str) -> TraitType[Any, Any]:
        return Enum(list(self.options), default_value=None, allow_none=True, help=help)

    def parse(self, raw: object) -> object:
        value = raw.strip() if isinstance(raw, str) else raw
        if value not in self.options:
            raise ValueError(f"expected one of {', '.join(self.options)}, got {raw!r}")
        return value

    def check(self, value: object) -> str | None:
        if value in self.options:
            return None
        return f"{value!r} is not one of {', '.join(self.options)}"


@dataclass(frozen=True)
class Count(Kind):
    """An integer ``>= minimum``."""

    minimum: int

    def trait(self, help: str) -> TraitType[Any, Any]:
        return Integer(None, allow_none=True, min=self.minimum, help=help)

    def parse(self, raw: object) -> object:
        return parse_int(raw, self.minimum)

    def check(self, value: object) -> str | None:
        if isinstance(value, int) and not isinstance(value, bool) and value >= self.minimum:
            return None
        what = {0: "a non-negative integer", 1: "a positive integer"}.get(
            self.minimum, f"an integer >= {self.minimum}"
        )
        return f"must be {what}, got {value!r}"


@dataclass(frozen=True)
class Seconds(Kind):
    """A finite number of seconds, positive (or ``>= 0`` with ``allow_zero``)."""

    allow_zero: bool = False

    def trait(self, help: str) -> TraitType[Any, Any]:
        return Float(None, allow_none=True, min=0.0 if self.allow_zero else 0.001, help=help)

    def parse(self, raw: object) -> object:
        return parse_seconds(raw, allow_zero=self.allow_zero)

    def check(self, value: object) -> str | None:
        if _is_number(value) and _seconds_ok(float(cast(float, value)), self.allow_zero):
            return None
        return f"must be {_seconds_phrase(self.allow_zero)}, got {value!r}"


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True)
class Flag(Kind):
    """True or False (in text: one of ``_TRUE`` or ``_FALSE``)."""

    def trait(self, help: str) -> TraitType[Any, Any]:
        return Bool(None, allow_none=True, help=help)

    def parse(self, raw: object) -> object:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in _TRUE + _FALSE:
            return raw.strip().lower() in _TRUE
        raise ValueError(f"expected one of {', '.join(_TRUE + _FALSE)}, got {raw!r}")

    def check(self, value: object) -> str | None:
        return None if isinstance(value, bool) else f"must be True or False, got {value!r}"


@dataclass(frozen=True)
class Setting:
    """One setting's row: its kind, the help ``%config IPyMemory`` shows, who reads it
    and its environment variable (default ``IPYMEMORY_<NAME>``)."""

    kind: Kind
    help: str
    readers: frozenset[Reader]
    env: str | None = None


def _row(kind: Kind, help: str, *readers: Reader, env: str | None = None) -> dict[str, Setting]:
    """The metadata of a field of :class:`Settings`: its :class:`Setting` row."""
    return {"setting": Setting(kind, help, frozenset(readers), env)}


# --- The table ------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """Resolved settings; ``origin[name]`` says which layer gave each value
    (``argument``, ``%config``, ``env IPYMEMORY_…`` or ``default``).

    Each field is a setting, its row the table of settings (see the module docstring).
    """

    directory: Path = field(
        metadata=_row(
            Location(),
            "Workspace holding .memory/ (env IPYMEMORY_DIR; default: the kernel's "
            "working directory).",
            "command",
            env="IPYMEMORY_DIR",  # the short name is what users expect
        ),
    )
    #: The user scope's directory (SPEC §11); None: off.
    user_dir: Path | None = field(
        default=None,
        metadata=_row(
            Location(C.DEFAULT_USER_DIR, off=C.USER_DIR_OFF),
            "Directory of the user's own memory, shared across projects: "
            f"<user_dir>/.memory (env IPYMEMORY_USER_DIR; default {C.DEFAULT_USER_DIR}; "
            f"'{C.USER_DIR_OFF}' turns it off).",
            "session",
            "command",
        ),
    )
    model: str = field(
        default=C.DEFAULT_MODEL,
        metadata=_row(
            Text(),
            f"Main model of %%agent (default: {C.DEFAULT_MODEL}).",
            "session",
            "model",
        ),
    )
    side_model: str = field(
        default=C.DEFAULT_SIDE_MODEL,
        metadata=_row(
            Text(),
            f"Model of the memory side-queries (default: {C.DEFAULT_SIDE_MODEL}).",
            "session",
            "model",
        ),
    )
    commit_mode: CommitMode = field(
        default=C.DEFAULT_COMMIT_MODE,
        metadata=_row(
            Choice(COMMIT_MODES),
            f"What happens to extracted memories: {COMMIT_MODE_HELP}.",
            "session",
        ),
    )
    consolidate_threshold: int = field(
        default=C.DEFAULT_CONSOLIDATE_THRESHOLD,
        metadata=_row(
            Count(1),
            f"Consolidate when current + extracted ≥ this ({C.DEFAULT_CONSOLIDATE_THRESHOLD}).",
            "session",
        ),
    )
    consolidate_every: int = field(
        default=C.DEFAULT_CONSOLIDATE_EVERY,
        metadata=_row(
            Count(1),
            "…and at least this many records were added since the last consolidation "
            f"({C.DEFAULT_CONSOLIDATE_EVERY}).",
            "session",
        ),
    )
    max_selected: int = field(
        default=C.DEFAULT_MAX_SELECTED,
        metadata=_row(
            Count(0),
            "Memories a turn chooses from a set over memory_budget: the model selector's "
            "most, the keyword selector's least before it fills the budget "
            f"({C.DEFAULT_MAX_SELECTED}; 0: none).",
            "session",
        ),
    )
    memory_budget: int = field(
        default=C.DEFAULT_MEMORY_BUDGET,
        metadata=_row(
            Count(0),
            "Estimated tokens of memory a turn injects whole, without choosing "
            f"({C.DEFAULT_MEMORY_BUDGET}; 0: always choose).",
            "session",
        ),
    )
    selector: str = field(
        default=C.DEFAULT_SELECTOR,
        metadata=_row(
            Choice(C.SELECTORS),
            "Who chooses when the set does not fit memory_budget: keyword (the keyword "
            "ranking at once: its best max_selected, then more while memory_budget holds "
            "them) or model (the side model picks max_selected of the ranking's best "
            f"candidates: one side-query before the answer) ({C.DEFAULT_SELECTOR}).",
            "session",
        ),
    )
    select_candidates: int = field(
        default=C.DEFAULT_SELECT_CANDIDATES,
        metadata=_row(
            Count(1),
            "Candidates the model selector sees at most, whatever the size of the set "
            f"({C.DEFAULT_SELECT_CANDIDATES}).",
            "session",
        ),
    )
    max_tool_steps: int = field(
        default=C.DEFAULT_MAX_TOOL_STEPS,
        metadata=_row(
            Count(1),
            f"Model/tool round trips per turn at most ({C.DEFAULT_MAX_TOOL_STEPS}).",
            "session",
        ),
    )
    history_token_budget: int = field(
        default=C.DEFAULT_HISTORY_TOKEN_BUDGET,
        metadata=_row(
            Count(1),
            "Estimated tokens of request history before older turns are summarised "
            f"({C.DEFAULT_HISTORY_TOKEN_BUDGET}).",
            "session",
        ),
    )
    max_tokens: int = field(
        default=C.DEFAULT_MAX_TOKENS,
        metadata=_row(
            Count(1),
            f"max_tokens of each main model call ({C.DEFAULT_MAX_TOKENS}).",
            "session",
            "model",
        ),
    )
    lock_timeout: float = field(
        default=C.DEFAULT_LOCK_TIMEOUT,
        metadata=_row(
            Seconds(allow_zero=True),
            f"Seconds to wait for the .memory lock ({C.DEFAULT_LOCK_TIMEOUT:g}).",
            "store",
        ),
    )
    base_url: str | None = field(
        default=None,
        metadata=_row(
            Text(),
            "Messages-API base URL (default: the SDK's, i.e. ANTHROPIC_BASE_URL or Anthropic).",
            "model",
        ),
    )
    #: SPEC §14: the Anthropic memory store ``sync`` uses (its id, not a credential).
    memory_store: str | None = field(
        default=None,
        metadata=_row(
            Text(),
            "Anthropic memory store (memstore_…) that `sync` pushes to and pulls from "
            "(the endpoint and key as for the model).",
            "command",
        ),
    )
    memory_store_prefix: str | None = field(
        default=None,
        metadata=_row(
            Text(),
            f"Path prefix of this scope's memories in the store (default: "
            f"{C.SYNC_PREFIX_ROOT}<project directory name>/, the user scope's "
            f"{C.SYNC_USER_PREFIX}).",
            "command",
        ),
    )
    timeout: float = field(
        default=C.DEFAULT_TIMEOUT,
        metadata=_row(
            Seconds(),
            f"Seconds per model request ({C.DEFAULT_TIMEOUT:g}).",
            "model",
        ),
    )
    max_retries: int = field(
        default=C.DEFAULT_MAX_RETRIES,
        metadata=_row(
            Count(0),
            f"SDK retries of a failed model request ({C.DEFAULT_MAX_RETRIES}).",
            "model",
        ),
    )
    python_timeout: float = field(
        default=C.DEFAULT_PYTHON_TIMEOUT,
        metadata=_row(
            Seconds(),
            f"Seconds one run_python call may take ({C.DEFAULT_PYTHON_TIMEOUT:g}).",
            "session",
        ),
    )
    allow_hidden: bool = field(
        default=C.DEFAULT_ALLOW_HIDDEN,
        metadata=_row(
            Flag(),
            "Let the agent's file tools see hidden paths (.env, .git, .memory, …) (False).",
            "session",
        ),
    )
    history_retention_days: int = field(
        default=C.DEFAULT_HISTORY_RETENTION_DAYS,
        metadata=_row(
            Count(0),
            "gc keeps files that left the set for this many days "
            f"({C.DEFAULT_HISTORY_RETENTION_DAYS}).",
            "command",
        ),
    )
    history_retention_bytes: int = field(
        default=C.DEFAULT_HISTORY_RETENTION_BYTES,
        metadata=_row(
            Count(0),
            f"…and at most this many bytes of them ({C.DEFAULT_HISTORY_RETENTION_BYTES}).",
            "command",
        ),
    )
    pending_expiry_days: int = field(
        default=C.DEFAULT_PENDING_EXPIRY_DAYS,
        metadata=_row(
            Count(1),
            f"Undecided batches expire after this many days ({C.DEFAULT_PENDING_EXPIRY_DAYS}).",
            "store",
        ),
    )
    # None: on in a Jupyter kernel, off elsewhere (decided per shell, NotebookState).
    background_memory: bool | None = field(
        default=C.DEFAULT_BACKGROUND_MEMORY,
        metadata=_row(
            Flag(),
            "Run %%agent's memory work on a worker after the cell ends (default: on in a "
            "Jupyter kernel, off in a terminal IPython).",
            "notebook",
        ),
    )
    follow_check: bool = field(
        default=C.DEFAULT_FOLLOW_CHECK,
        metadata=_row(
            Flag(),
            "After each %%agent answer, check it against the injected feedback and user "
            "memories and say under it when one was not followed (True).",
            "session",
        ),
    )
    mark_missed: bool = field(
        default=C.DEFAULT_MARK_MISSED,
        metadata=_row(
            Flag(),
            "Mark, in the next turn's memories, one the previous answer did not follow, "
            "so the model sees it was missed (True).",
            "session",
        ),
    )
    jupyter_mcp_tools: bool = field(
        default=C.DEFAULT_JUPYTER_MCP_TOOLS,
        metadata=_row(
            Flag(),
            "Register the memory tools on Jupyter's built-in MCP server for jupyter-ai's "
            "chats, each call checked for the server's key; read when the server starts "
            f"({C.DEFAULT_JUPYTER_MCP_TOOLS}).",
            "command",
        ),
    )
    origin: Mapping[str, str] = field(default_factory=dict, compare=False)

    def model_settings(self) -> ModelSettings:
        """The part of these settings the model client is built from."""
        return ModelSettings(**self.read_by("model"))

    def read_by(self, reader: Reader) -> dict[str, Any]:
        """The values of the settings ``reader`` reads, by name (e.g. the turn's
        ``SessionConfig.from_settings``)."""
        return {name: getattr(self, name) for name, s in SETTINGS.items() if reader in s.readers}


#: Every setting's row, by name, in declaration order.
SETTINGS: Mapping[str, Setting] = {
    f.name: f.metadata["setting"] for f in fields(Settings) if "setting" in f.metadata
}


@dataclass(frozen=True)
class ModelSettings:
    """What the model client is built from (also its cache key, with the SDK's env)."""

    model: str
    side_model: str
    max_tokens: int
    timeout: float
    max_retries: int
    base_url: str | None


class IPyMemory(LoggingConfigurable):
    """ipymemory settings. Unset (None) options fall back to ``IPYMEMORY_<NAME>``, then
    to the default shown in each help text."""

    # One trait per row of the table. At class scope locals() is the namespace the
    # (traitlets) metaclass receives, so these are declared traits like any other.
    locals().update({name: s.kind.trait(s.help).tag(config=True) for name, s in SETTINGS.items()})


def env_var(name: str) -> str:
    """The environment variable of setting ``name``."""
    return SETTINGS[name].env or ENV_PREFIX + name.upper()


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
    unknown = set(overrides) - set(SETTINGS)
    if unknown:
        raise MemoryConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for name, setting in SETTINGS.items():
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
            values[name] = setting.kind.parse(value)
        except ValueError as e:
            raise MemoryConfigError(f"{label}: {e}") from None
        origin[name] = where
    base = Path(cwd) if cwd is not None else Path.cwd()
    for name, setting in SETTINGS.items():
        if isinstance(setting.kind, Location):
            path = values.get(name, setting.kind.fallback or base)
            values[name] = None if path is None else _absolute(path, base)
    return Settings(origin=origin, **values)


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
        if f.name == "user_dir" and value is None:
            text = "off"  # its default is a directory: None is only ever "off"
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
