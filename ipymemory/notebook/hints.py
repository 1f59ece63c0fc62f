"""What to do about a failed model call, said where it shows (issue 43): a refused key
names ``ANTHROPIC_API_KEY``, an unknown model names the setting that chose it."""

from __future__ import annotations

from ..errors import ModelAPIError, ModelNotConfigured

__all__ = ["NO_KEY_HINT", "model_hint"]

NO_KEY_HINT = (
    "Set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a compatible endpoint) in the "
    "kernel's environment, or use ipymemory.notebook.use_model(...)."
)


def model_hint(
    error: BaseException | None, model: str | None, side_model: str | None
) -> str | None:
    """The setting or variable to look at for ``error`` (or what caused it): no key, a
    key the API refused (401, 403), a model it does not know (404); None otherwise.
    ``model`` / ``side_model``: the names the session asked for."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ModelNotConfigured):
            return NO_KEY_HINT
        if isinstance(error, ModelAPIError):
            return _status_hint(error.status_code, model, side_model)
        error = error.__cause__
    return None


def _status_hint(status: int, model: str | None, side_model: str | None) -> str | None:
    asked = f"{_name(model)}; memory: {_name(side_model)}"
    if status == 401:
        return (
            "The API did not accept the key: check ANTHROPIC_API_KEY in the kernel's "
            "environment (and ANTHROPIC_BASE_URL when you use a gateway or proxy)."
        )
    if status == 403:
        return (
            "The key may not use this model or endpoint: check the permissions of "
            f"ANTHROPIC_API_KEY, and the models asked for ({asked})."
        )
    if status == 404:
        return (
            f"The API does not know the model asked for ({asked}): set another with "
            "%config IPyMemory.model = '…' (or "
            "%%agent --model) and %config IPyMemory.side_model = '…'; or "
            "ANTHROPIC_BASE_URL points to the wrong endpoint."
        )
    return None


def _name(model: str | None) -> str:
    return repr(model) if model else "the client's default"
