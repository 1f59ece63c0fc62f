"""The on-disk memory store: records, manifest, index, locking and the commit protocol.

``store`` holds :class:`~.store.MemoryStore`, the one writer of a ``.memory/`` set; what
it does is planned or done beside it, module by module: reading the set without a lock
(``reading``), a consolidation's checks and the commit it makes (``consolidating``),
writing a new set up to its commit point (``writing``, over ``durable``), the journal
(``history``, ``journal_sync``), undo and restore (``reversal``), recover (``recovery``),
the record format (``record``, ``names``, ``manifest``, ``index``), the lock (``lock``,
``lock_holder``) and upkeep (``maintenance``)."""
