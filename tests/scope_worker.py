"""A kernel of one project committing user-wide memories (tests/test_turn_scopes.py).

    python scope_worker.py PROJECT_DIR USER_DIR TAG COUNT

A real IPython InteractiveShell with ipymemory loaded runs COUNT ``%%agent`` turns in
auto mode; each turn's (scripted) extractor proposes one ``user`` item, named after TAG
and the turn, and one ``project`` item. Prints the names it committed, one per line.
"""

from __future__ import annotations

import json
import sys

from IPython.core.interactiveshell import InteractiveShell

from ipymemory import ScriptedModel
from ipymemory.notebook import get_session, use_model


def main() -> None:
    project, user, tag, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "ipymemory")
    shell.run_line_magic("config", f"IPyMemory.directory = {project!r}")
    shell.run_line_magic("config", f"IPyMemory.user_dir = {user!r}")
    shell.run_line_magic("config", "IPyMemory.commit_mode = 'auto'")
    # No consolidation: the test counts what each process added.
    shell.run_line_magic("config", "IPyMemory.consolidate_threshold = 100000")
    shell.run_line_magic("config", "IPyMemory.lock_timeout = 60")
    # No selector call: the script holds the answer and the extractor's reply only.
    shell.run_line_magic("config", "IPyMemory.max_selected = 0")
    printed: set[str] = set()
    for turn in range(count):
        name = f"{tag}-pref-{turn}"
        items = [
            {
                "name": name,
                "type": "user",
                "description": f"{tag} likes option {turn}",
                "body": f"I like option {turn} in {tag}.",
            },
            {
                "name": f"{tag}-fact-{turn}",
                "type": "project",
                "description": f"{tag} project fact {turn}",
                "body": f"Fact {turn} of {tag}.",
            },
        ]
        use_model(ScriptedModel([f"Noted option {turn}.", json.dumps(items)]))
        query = f"I like option {turn} in {tag}. {tag} project fact {turn}."
        shell.run_cell_magic("agent", "", query)
        for batch in get_session().batches:
            for committed in batch.committed:
                if committed not in printed:
                    printed.add(committed)
                    print(committed, flush=True)


if __name__ == "__main__":
    main()
