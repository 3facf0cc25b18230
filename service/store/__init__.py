"""The store, Redis: key names (keys.py), the Lua scripts (lua/), the event store (event_store.py) and
the table repository over it (repository.py), every table by SCAN (scan.py), the archive file of
trimmed tables (archive.py), streams, consumer groups and leases, the outbox doorbell (doorbell.py),
and bytes to text (decoding.py)."""
