"""The terminal adapter: ``cinq play`` renders a table's outbox and sends what the player types."""

from adapters.terminal.play import main, play

__all__ = ["main", "play"]
