"""What every ipymemory widget shares: it carries its static bundle along.

A widget's mime bundle holds the widget view *and* the static view (text/plain,
text/html, the ipymemory JSON), so a frontend without the widget manager, or a
saved notebook read by nbconvert, GitHub or VS Code, still shows the content.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ._static import StaticView, esc

__all__ = ["StaticBundleBox", "body_toggle", "html_text"]


# Inline styles: a widget's HTML does not see the static views' style block.
_STYLES = {
    "ipm-error": "color:#b00020;font-weight:600",
    "ipm-note": "opacity:.75",
    "ipm-del": "color:#b00020",
    "ipm-add": "color:#1b7f3b",
}


def html_text(text: str, *, tag: str = "div", cls: str | None = None) -> w.HTML:
    """An HTML widget showing ``text`` literally (escaped: record text is untrusted)."""
    style = "white-space:pre-wrap;margin:0;" if tag == "pre" else ""
    style += _STYLES.get(cls or "", "")
    attr = f' class="{cls}"' if cls in _STYLES else ""
    attr += f' style="{style}"' if style else ""
    return w.HTML(value=f"<{tag}{attr}>{esc(text)}</{tag}>")


def body_toggle(body: str, *, label: str = "body") -> tuple[w.ToggleButton, w.HTML]:
    """A toggle that shows/hides a record body (collapsed at first)."""
    pre = w.HTML(
        value=f'<pre style="white-space:pre-wrap;margin:0">{esc(body)}</pre>',
        layout=w.Layout(display="none"),
    )
    toggle = w.ToggleButton(
        value=False, description=label, tooltip="show the body", layout=w.Layout(width="auto")
    )

    def _flip(change: dict[str, Any]) -> None:
        pre.layout.display = "" if change["new"] else "none"

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
