"""Memory beyond one notebook: a team's memory through git, Claude Code's memory in and out.

* :mod:`~ipymemory.team.setmerge` — the three-way merge of two sets (the rules);
* :mod:`~ipymemory.team.merge_driver` — git's merge drivers for ``manifest.json`` and
  ``MEMORY.md`` (``python -m ipymemory.team.merge_driver``);
* :mod:`~ipymemory.team.gitsetup` — ``ipymemory git setup``: register them in a repository;
* :mod:`~ipymemory.team.claude_code` — import and export Claude Code's auto memory.
"""

from __future__ import annotations
