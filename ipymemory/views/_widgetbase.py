"""What every ipymemory widget shares: it carries its static bundle along.

A widget's mime bundle holds the widget view *and* the static view (text/plain,
text/html, the ipymemory JSON), so a frontend without the widget manager, or a
saved notebook read by nbconvert, GitHub or VS Code, still shows the content.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ._static import StaticView, esc

__all__ = [
    "StaticBundleBox",
    "block_html",
    "body_toggle",
    "html_block",
    "html_text",
    "note_html",
    "record_label_html",
]


# Inline styles: a widget's HTML does not see the static views' style block.
_STYLES = {
    "ipm-error": "color:#b00020;font-weight:600",
    "ipm-note": "opacity:.75",
    "ipm-del": "color:#b00020",
    "ipm-add": "color:#1b7f3b",
}
_CODE_FONT = "font-family:var(--jp-code-font-family,monospace,monospace)"
# ipywidgets gives HTML content the 28px line height of a control row: text blocks of
# several lines need their own.
_BLOCK = "line-height:1.45;margin:2px 0"


def html_text(text: str, *, tag: str = "div", cls: str | None = None) -> w.HTML:
    """An HTML widget showing ``text`` literally (escaped: record text is untrusted)."""
    style = "white-space:pre-wrap;margin:0;" if tag == "pre" else ""
    style += _STYLES.get(cls or "", "")
    attr = f' class="{cls}"' if cls in _STYLES else ""
    attr += f' style="{style}"' if style else ""
    return w.HTML(value=f"<{tag}{attr}>{esc(text)}</{tag}>")


def block_html(inner_html: str) -> str:
    """Already-escaped HTML in a div with a normal text line height."""
    return f'<div style="{_BLOCK}">{inner_html}</div>'


def html_block(inner_html: str) -> w.HTML:
    """An HTML widget around already-escaped HTML, with a normal text line height."""
    return w.HTML(value=block_html(inner_html))


def note_html(text: str) -> str:
    """``text`` escaped, in the muted note style."""
    return f'<span style="{_STYLES["ipm-note"]}">{esc(text)}</span>'


def record_label_html(name: str, type_: str, description: str, *, struck: bool = False) -> str:
    """The "name (type) — description" label: the name in the code font (an identifier),
    the type muted; ``struck`` crosses the whole label out (a rejected item)."""
    style = "text-decoration:line-through;opacity:.5" if struck else ""
    return (
        f'<span style="{style}"><span style="{_CODE_FONT};font-weight:600">{esc(name)}</span> '
        f"{note_html(f'({type_})')} — {esc(description)}</span>"
    )


def body_toggle(body: str, *, label: str = "body") -> tuple[w.ToggleButton, w.HTML]:
    """A toggle that shows/hides a record body (collapsed at first), set off by a rule
    on its left so it reads as part of the row above."""
    pre = w.HTML(
        value=(
            '<pre style="white-space:pre-wrap;margin:0 0 4px 0;padding:2px 8px;'
            'border-left:3px solid var(--jp-border-color2,#ccc);line-height:1.4">'
            f"{esc(body)}</pre>"
        ),
        layout=w.Layout(display="none", margin="0 0 0 2em"),
    )
    toggle = w.ToggleButton(
        value=False,
        description=label,
        icon="chevron-right",
        tooltip="show the body",
        layout=w.Layout(width="auto"),
    )

    def _flip(change: dict[str, Any]) -> None:
        pre.layout.display = "" if change["new"] else "none"
        toggle.icon = "chevron-down" if change["new"] else "chevron-right"
        toggle.tooltip = "hide the body" if change["new"] else "show the body"

    toggle.observe(_flip, names="value")
    return toggle, pre


class StaticBundleBox(w.VBox):  # type: ignore[misc]
    """A VBox whose mime bundle also carries :meth:`static_view`'s bundle."""

    def static_view(self) -> StaticView:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        data = super()._repr_mimebundle_(**kwargs)
        if data is None:  # no widget view (e.g. closed): the static form alone
            return self.static_view().bundle()
        bundle = self.static_view().bundle()
        bundle.update({k: v for k, v in data.items() if k != "text/plain"})
        return bundle
