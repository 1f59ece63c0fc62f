"""Displayable views of memory: static mime bundles and ipywidgets forms.

Every view renders as text/plain, text/html (all record text escaped) and the JSON
mimetype ``application/vnd.ipymemory.v1+json`` that the JupyterLab extension renders.
Widgets carry the same static bundle next to the widget view.
"""

from __future__ import annotations

from ._static import MIME_TYPE, StaticView
from .batch import BatchView, ConsolidationPlanView
from .check import CheckView
from .error import ErrorView, MessageView
from .history import HistoryChangeView, HistoryDiffView, HistoryView
from .history_widgets import HistoryChangeReview, HistoryWidget
from .manifest import ManifestView
from .record import RecordView
from .review import BatchReview
from .scoped import ScopedView
from .selection import SelectionView
from .status import StatusView
from .widgets import ManifestWidget, ScopedWidget, SelectionWidget

__all__ = [
    "MIME_TYPE",
    "BatchReview",
    "BatchView",
    "CheckView",
    "ConsolidationPlanView",
    "ErrorView",
    "HistoryChangeReview",
    "HistoryChangeView",
    "HistoryDiffView",
    "HistoryView",
    "HistoryWidget",
    "ManifestView",
    "ManifestWidget",
    "MessageView",
    "RecordView",
    "ScopedView",
    "ScopedWidget",
    "SelectionView",
    "SelectionWidget",
    "StaticView",
    "StatusView",
]
