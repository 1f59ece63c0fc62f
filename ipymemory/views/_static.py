"""Shared machinery of the static views: the mime bundle and safe HTML building.

Every string that can come from a record, a model, a path or an error message is
untrusted: it reaches HTML only through :func:`esc`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from IPython import get_ipython
from IPython.core.displaypub import DisplayPublisher
from IPython.display import DisplayHandle, display

from .. import _text

if TYPE_CHECKING:
    from ..store.record import MemoryRecord

__all__ = [
    "MIME_TYPE",
    "StaticView",
    "cell",
    "display_bundle",
    "esc",
    "plain_table",
    "record_line",
    "record_rows_html",
    "styled_html",
    "table_head_html",
    "table_rows_html",
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
    ".ipymemory-view .ipm-name{font-family:var(--jp-code-font-family,monospace,monospace);"
    "white-space:nowrap}"
    ".ipymemory-view .ipm-rejected td{text-decoration:line-through;opacity:.55}"
    ".ipymemory-view .ipm-section{margin-top:.5em;font-weight:600}"
    ".ipymemory-view tr.ipm-row-del{background:rgba(176,0,32,.07)}"
    ".ipymemory-view tr.ipm-row-add{background:rgba(27,127,59,.09)}"
    ".ipymemory-view tr.ipm-row-del td:first-child{color:#b00020;font-weight:700}"
    ".ipymemory-view tr.ipm-row-add td:first-child{color:#1b7f3b;font-weight:700}"
    "</style>"
)


def styled_html(inner_html: str, view_name: str = "view") -> str:
    """Already-escaped HTML in a view's div, with the style block its classes need."""
    return f'{_STYLE}<div class="ipymemory-view ipymemory-{esc(view_name)}">{inner_html}</div>'


def display_bundle(bundle: dict[str, Any]) -> DisplayHandle | None:
    """Display a raw mime bundle with a display id; the handle (None outside IPython)."""
    handle = display(bundle, raw=True, display_id=True)  # type: ignore[no-untyped-call]
    return handle if isinstance(handle, DisplayHandle) else None


def update_bundle(handle: DisplayHandle, bundle: dict[str, Any], *, outcome: bool = False) -> None:
    """Replace what ``handle`` shows with ``bundle``. ``outcome``: the decided outcome
    replacing a review; a terminal cannot replace what it printed (it prints every
    update anew), and there what decided it -- a ``%memory`` command -- shows its own
    view, so the outcome is not printed a second time."""
    if outcome and prints_updates_anew():
        return
    handle.update(bundle, raw=True)  # type: ignore[no-untyped-call]


def prints_updates_anew() -> bool:
    """Whether the running shell's display publisher prints each update as a new output:
    IPython's own :class:`DisplayPublisher` does (a terminal IPython); a kernel's and
    ``capture_output``'s subclasses hand updates to a frontend that replaces in place."""
    shell = get_ipython()
    return type(getattr(shell, "display_pub", None)) is DisplayPublisher


def esc(value: object) -> str:
    """``value`` as text, escaped for HTML element content and attribute values."""
    return escape("" if value is None else str(value), quote=True)


# Inline, because JupyterLab's own table rule (right-aligned cells) outranks a class rule.
_CELL_STYLE = ' style="text-align:left;vertical-align:top"'


def cell(inner_html: str, *, header: bool = False, title: str | None = None) -> str:
    """A left-aligned table cell around already-escaped HTML; ``title`` (plain text)
    shows on hover."""
    tag = "th" if header else "td"
    hover = f' title="{esc(title)}"' if title else ""
    return f"<{tag}{_CELL_STYLE}{hover}>{inner_html}</{tag}>"


def record_rows_html(
    rows: Iterable[Mapping[str, Any]],
    columns: Sequence[tuple[str, str]],
    *,
    body_key: str | None = "body",
    row_class: Callable[[Mapping[str, Any]], str | None] | None = None,
    titles: Mapping[str, str] | None = None,
) -> str:
    """An HTML table; a row's ``body`` (if any) goes in a collapsed ``<details>`` under
    its description (the last column if there is none). Names are set in the code font
    (they are identifiers); ``row_class`` may give a row a class (e.g. rejected)."""
    return (
        f"<table>{table_head_html(columns)}<tbody>"
        f"{table_rows_html(rows, columns, body_key=body_key, row_class=row_class, titles=titles)}"
        "</tbody></table>"
    )


def table_head_html(columns: Sequence[tuple[str, str]]) -> str:
    """The ``<thead>`` of :func:`record_rows_html`."""
    return (
        f"<thead><tr>{''.join(cell(esc(label), header=True) for _, label in columns)}</tr></thead>"
    )


def table_rows_html(
    rows: Iterable[Mapping[str, Any]],
    columns: Sequence[tuple[str, str]],
    *,
    body_key: str | None = "body",
    row_class: Callable[[Mapping[str, Any]], str | None] | None = None,
    titles: Mapping[str, str] | None = None,
) -> str:
    """The ``<tr>`` rows of :func:`record_rows_html` (to combine several in one table).
    ``titles`` maps a column to the row key whose text that cell shows on hover."""
    keys = [key for key, _ in columns]
    at = keys.index("description") if "description" in keys else len(keys) - 1
    out = []
    for row in rows:
        texts = [esc(row.get(key, "")) for key in keys]
        if "name" in keys:
            i = keys.index("name")
            texts[i] = f'<span class="ipm-name">{texts[i]}</span>'
        body = row.get(body_key) if body_key else None
        if isinstance(body, str) and body:
            texts[at] += f"<details><summary>body</summary><pre>{esc(body)}</pre></details>"
        hover = titles or {}
        cells = [
            cell(text, title=str(row.get(hover[key], "")) if key in hover else None)
            for key, text in zip(keys, texts, strict=True)
        ]
        cls = row_class(row) if row_class else None
        attr = f' class="{esc(cls)}"' if cls else ""
        out.append(f'<tr data-name="{esc(row.get("name", ""))}"{attr}>{"".join(cells)}</tr>')
    return "".join(out)


def record_line(record: MemoryRecord) -> str:
    """One record as the command line lists it: ``name (type) - description``."""
    return f"{record.name} ({record.type.value}) - {record.description}"


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
        return styled_html(self._html_body(), self.view_name)

    # --- the command line's forms (``ipymemory ...``) ----------------------------------

    def cli_text(self) -> str:
        """What ``ipymemory`` prints: by default the text form; views of record lists
        print one line per record instead (for grep and scripts)."""
        return self.to_text()

    def cli_json(self) -> Any:
        """What ``ipymemory --json`` prints: by default the JSON form."""
        return self.to_json()

    def failure(self) -> str | None:
        """The error that kept this view from showing its content (the command line
        prints it as one line and exits 1), or None."""
        return None

    def found_problem(self) -> bool:
        """True when the view reports a problem found (the command line exits 1)."""
        return False

    def cli_warnings(self) -> tuple[str, ...]:
        """Problems met beside the content shown (a record file that does not load,
        beside the others): the command line prints the content, then each of these as
        an ``ipymemory: error:`` line on stderr, and exits 1."""
        return ()

    def bundle(self) -> dict[str, Any]:
        """The full static bundle (what a saved notebook keeps)."""
        data = self.to_json()
        # Round-trip now so a non-JSON value fails here, not in the kernel's serializer.
        json.dumps(data)
        return {"text/plain": self.plain_text(), "text/html": self.to_html(), MIME_TYPE: data}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self.bundle()

    def plain_text(self) -> str:
        """The text form as shown where a terminal may render it (IPython in a terminal,
        a console): control and format characters escaped (SPEC §7)."""
        return _text.escape(self.to_text(), "terminal")

    def __repr__(self) -> str:
        return self.plain_text()
