"""The on-disk memory store: records, manifest, index, locking and the commit protocol."""
