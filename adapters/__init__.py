"""Adapters: thin translators between a platform and the service (they only parse and render)."""
