"""A ``.memory/`` synced with an Anthropic memory store, reviewed both ways (SPEC §13).

Claude Managed Agents sessions mount a memory store and write to it; people work in
notebooks. One record is one memory ``<prefix><name>.md`` holding the record file's
text, and nothing else lives there (no catalog, no state).

* :mod:`.paths` -- the prefix (checked against the store's path rules) and the mapping;
* :mod:`.remote` -- the store through the ``anthropic`` SDK (imported on use);
  preconditions are never retried;
* :mod:`.state` -- what the last sync saw, in ``.memory/sync/``;
* :mod:`.plan` -- the three-way comparison: what moves each way, what conflicts;
* :mod:`.run` -- push, pull (a pending batch screened like another agent's) and status;
* :mod:`.report` -- what a run did, as data for the views;
* :mod:`.summary` -- the local side of ``%memory status`` (no network).
"""

from __future__ import annotations
