"""Tournaments in a group: an event-sourced aggregate of its own, beside the tables and built as
they are.

- :mod:`service.tournaments.commands` — what is asked, typed once (a pydantic union on the action).
- :mod:`service.tournaments.events` — its events (``tn:{b}:<id>:events``, the same envelope as a
  table's) and their visitor.
- :mod:`service.tournaments.state` — the fold (a visitor), the standings.
- :mod:`service.tournaments.swiss` — pure: Swiss pairing by standing, AI players filling tables,
  seats rotated, points per table.
- :mod:`service.tournaments.decide` — pure: what a command does (events and messages, or a refusal).
- :mod:`service.tournaments.director` — the IO: reads the tournaments' command stream, appends
  through the event store (the tables' compare-and-append), creates each round's tables as ordinary
  tables (one seed for the round: duplicate deals) and hears back when they finish.
"""
