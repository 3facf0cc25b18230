"""The terminal adapter: ``cinq play`` renders a table's outbox and sends what the player types."""

from adapters.terminal.play import main, play
from service.ops.running import Adapter

# `cinq play` runs it (`main(words, auto=, lang=)`); it is no role of `cinq serve`.
ADAPTER = Adapter(run=main)

__all__ = ["ADAPTER", "main", "play"]
