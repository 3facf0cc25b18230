"""The store, Redis: key names (keys.py), the Lua scripts (lua/), the event store (event_store.py) and
the table repository over it (repository.py), streams, consumer groups and leases, and bytes to text
(decoding.py)."""
