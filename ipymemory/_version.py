"""The package version, in a bottom module: the journal records it (``actor.tool``),
and the store must not import the package that imports the store."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
