"""The bottom layer of the service: settings (the environment), structured logs and metrics.  It
imports nothing else of the service, so that every other package may use it."""
