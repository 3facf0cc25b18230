"""The write path, command in -> events and outbox: the gateway (every adapter's entry point), the
worker (a loop over its stages: intake, loading and planning, appending, finishing), the index
projection and its rebuild, turn timers and AI seats."""
