"""Shared machinery of the static views: the mime bundle and safe HTML building.

Every string that can come from a record, a model, a path or an error message is
untrusted: it reaches HTML only through :func:`esc`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from IPython.display import DisplayHandle, display

__all__ = [
    "MIME_TYPE",
    "StaticView",
    "cell",
    "display_bundle",
    "esc",
    "plain_table",
    "record_rows_html",
    "update_bundle",
]

MIME_TYPE = "application/vnd.ipymemory.v1+json"

# One small style block per view: no external CSS is needed for the HTML fallback.
_STYLE = (
    "<style>"
    ".ipymemory-view table{border-collapse:collapse;margin:.25em 0}"
    ".ipymemory-view th,.ipymemory-view td{text-align:left;vertical-align:top;"
    "padding:.15em .6em;border-bottom:1px solid rgba(128,128,128,.3)}"
    ".ipymemory-view pre{white-space:pre-wrap;margin:.2em 0}"
    ".ipymemory-view .ipm-error{color:#b00020;font-weight:600}"
    ".ipymemory-view .ipm-note{opacity:.75}"
    ".ipymemory-view .ipm-del{color:#b00020}"
    ".ipymemory-view .ipm-add{color:#1b7f3b}"
    "</style>"
)


def display_bundle(bundle: dict[str, Any]) -> DisplayHandle | None:
    """Display a raw mime bundle with a display id; the handle (None outside IPython)."""
    handle = display(bundle, raw=True, display_id=True)  # type: ignore[no-untyped-call]
    return handle if isinstance(handle, DisplayHandle) else None


def update_bundle(handle: DisplayHandle, bundle: dict[str, Any]) -> None:
    """Replace what ``handle`` shows with ``bundle``."""
    handle.update(bundle, raw=True)  # type: ignore[no-untyped-call]


def esc(value: object) -> str:
    """``value`` as text, escaped for HTML element content and attribute values."""
    return escape("" if value is None else str(value), quote=True)


# Inline, because JupyterLab's own table rule (right-aligned cells) outranks a class rule.
_CELL_STYLE = ' style="text-align:left;vertical-align:top"'


def cell(inner_html: str, *, header: bool = False) -> str:
    """A left-aligned table cell around already-escaped HTML."""
    tag = "th" if header else "td"
    return f"<{tag}{_CELL_STYLE}>{inner_html}</{tag}>"


def record_rows_html(
    rows: Iterable[Mapping[str, Any]],
    columns: Sequence[tuple[str, str]],
    *,
    body_key: str | None = "body",
) -> str:
    """An HTML table; a row's ``body`` (if any) goes in a collapsed ``<details>`` under
    its description (the last column if there is none)."""
    head = "".join(cell(esc(label), header=True) for _, label in columns)
    keys = [key for key, _ in columns]
    at = keys.index("description") if "description" in keys else len(keys) - 1
    out = [f"<table><thead><tr>{head}</tr></thead><tbody>"]
    for row in rows:
        texts = [esc(row.get(key, "")) for key in keys]
        body = row.get(body_key) if body_key else None
        if isinstance(body, str) and body:
            texts[at] += f"<details><summary>body</summary><pre>{esc(body)}</pre></details>"
        cells = [cell(text) for text in texts]
        out.append(f'<tr data-name="{esc(row.get("name", ""))}">{"".join(cells)}</tr>')
    out.append("</tbody></table>")
    return "".join(out)


def plain_table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    """A fixed-width text table (cells are single-line; long cells are cut)."""
    width_cap = 60
    cut = [[_one_line(c, width_cap) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cut:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cut
    )
    return "\n".join(lines)


def _one_line(text: str, cap: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= cap else flat[: cap - 1] + "…"


class StaticView:
    """A displayable object with text/plain, text/html and the ipymemory JSON.

    Subclasses provide :meth:`to_json`, :meth:`to_text` and :meth:`_html_body`.
    """

    view_name = "view"

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_text(self) -> str:
        raise NotImplementedError

    def _html_body(self) -> str:
        raise NotImplementedError

    def to_html(self) -> str:
        return (
            f'{_STYLE}<div class="ipymemory-view ipymemory-{esc(self.view_name)}">'
            f"{self._html_body()}</div>"
        )

    def bundle(self) -> dict[str, Any]:
        """The full static bundle (what a saved notebook keeps)."""
        data = self.to_json()
        # Round-trip now so a non-JSON value fails here, not in the kernel's serializer.
        json.dumps(data)
        return {"text/plain": self.to_text(), "text/html": self.to_html(), MIME_TYPE: data}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self.bundle()

    def __repr__(self) -> str:
        return self.to_text()
