"""The subcommands of ``ipymemory …`` (the CLI) and ``%memory …`` (the magic), defined once.

Each subcommand is ONE decorated handler in a module of this package::

    @command(
        "show",                                  # the name
        "one memory in full",                    # one-line help (lists, --help)
        arg("name", nargs="?", help="the memory's name"),   # argparse arguments
        section="read",                          # where help lists it
    )
    def handle_show(ctx: Context, args: argparse.Namespace) -> View:
        \"\"\"The longer description shown by --help / %memory help show.\"\"\"
        ...
        return RecordView(...)

The handler gets a :class:`Context` (resolved settings, the store, the model; in a
notebook also the kernel's session) and returns a view (:mod:`ipymemory.views`) or a
widget carrying one. It never prints. User mistakes raise
:class:`~ipymemory.errors.CommandUsageError` (bad or missing argument) or
:class:`~ipymemory.errors.CommandError` (asked for something that is not there);
store and model failures raise their own errors.

Front ends: :mod:`ipymemory.cli` builds argparse subparsers from :data:`COMMANDS` and
prints ``view.cli_text()`` (``cli_json()`` with ``--json``), exiting 0, 1 (a problem
found, the operation failed, a :class:`CommandError`) or 2 (bad usage);
:mod:`ipymemory.notebook.commands` parses the same definitions for ``%memory``, returns
the view for display, and turns both command errors into IPython's ``UsageError``.

**Adding a subcommand** is a one-place change: write the decorated handler in a module
here (a new module is found automatically: every module of this package is imported
below). ``cli=False`` / ``notebook=False`` keeps it out of one front end (e.g. batch
review needs the kernel's session); ``literal_tail="query"`` makes ``%memory`` take
that positional verbatim from the rest of the line.
"""

from __future__ import annotations

import importlib
import pkgutil

from .context import Context, View, static_form
from .spec import COMMANDS, GLOBAL_ARGS, Arg, Command, add_arguments, arg, command, offered

__all__ = [
    "COMMANDS",
    "GLOBAL_ARGS",
    "Arg",
    "Command",
    "Context",
    "View",
    "add_arguments",
    "arg",
    "command",
    "offered",
    "static_form",
]

# Registration: importing a module runs its @command decorators. Sorted, so the order
# (and so the help listing within a section) does not depend on the file system.
_INFRASTRUCTURE = {"common", "context", "spec"}
for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module not in _INFRASTRUCTURE:
        importlib.import_module(f"{__name__}.{_module}")
