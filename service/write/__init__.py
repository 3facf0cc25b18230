"""The write path, command in -> events and outbox: the gateway (every adapter's entry point), the
worker and its pure planning, the index projection and its rebuild, turn timers and AI seats."""
