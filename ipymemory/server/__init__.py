"""The jupyter_server extension: an endpoint listing a directory's ``.memory/`` (read
only) and deciding its pending batches.

The package hooks (``ipymemory._jupyter_server_extension_points`` and
``ipymemory._jupyter_labextension_paths``) delegate here. jupyter_server is imported only
when the extension loads, so ``import ipymemory`` does not need it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LABEXTENSION_NAME", "jupyter_server_extension_points", "labextension_paths"]

# The npm package name of labextension/ (its share/jupyter/labextensions/ directory).
LABEXTENSION_NAME = "@ipymemory/labextension"


def jupyter_server_extension_points() -> list[dict[str, str]]:
    """Where jupyter_server finds ``_load_jupyter_server_extension``."""
    return [{"module": "ipymemory.server"}]


def labextension_paths() -> list[dict[str, str]]:
    """The prebuilt lab extension, relative to the ``ipymemory`` package directory."""
    return [{"src": "labextension", "dest": LABEXTENSION_NAME}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from ..config import IPyMemory, resolve
    from ..errors import MemoryConfigError
    from .handlers import setup_handlers

    # The user scope is the one the notebook and the CLI resolve (IPYMEMORY_USER_DIR),
    # c.IPyMemory.user_dir in the server's config first, as the panel's decisions see it.
    try:
        user_dir = resolve(IPyMemory(config=serverapp.config)).user_dir
    except MemoryConfigError as e:
        serverapp.log.warning("ipymemory: %s; the panel shows no user scope", e)
        user_dir = None
    setup_handlers(
        serverapp.web_app,
        serverapp.root_dir,
        None if user_dir is None else str(user_dir),
        serverapp.config,
    )
    serverapp.log.info("ipymemory: memory endpoint enabled (pending batches decidable)")
