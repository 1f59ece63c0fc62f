"""Screening what gets remembered (SPEC §7): credentials, origin, instructions."""

from __future__ import annotations

from .secrets import SECRET_KINDS, SecretHit, find_secrets, redact

__all__ = ["SECRET_KINDS", "SecretHit", "find_secrets", "redact"]
