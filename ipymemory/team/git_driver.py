"""What git runs for a .memory merge: :mod:`ipymemory.team.merge_driver`, started fast.

``python -m ipymemory.team.merge_driver`` first runs the package's ``__init__``, which
loads the whole notebook and model stack (about a second of a merge, per file). Run by
path (``python .../ipymemory/team/git_driver.py manifest %O %A %B %P``) this script
gives ``ipymemory`` an empty package module first, so only the modules the driver
uses are imported.
"""

from __future__ import annotations

import os
import sys
import types


def _bootstrap() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    # Run as a script, this directory is sys.path[0]: its modules are not top-level names.
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == here:
        del sys.path[0]
    if "ipymemory" not in sys.modules:
        package = types.ModuleType("ipymemory")
        package.__path__ = [os.path.dirname(here)]
        sys.modules["ipymemory"] = package


if __name__ == "__main__":
    _bootstrap()
    from ipymemory.team.merge_driver import main

    sys.exit(main())
