"""Tournaments in a group (issue 15): an event-sourced aggregate of its own, beside the tables.

- :mod:`service.tournaments.events` — its events (``tn:{b}:<id>:events``, the same envelope as a
  table's).
- :mod:`service.tournaments.state` — the fold, the standings.
- :mod:`service.tournaments.swiss` — pure: Swiss pairing by standing, AI players filling tables,
  seats rotated, points per table.
- :mod:`service.tournaments.decide` — pure: what a command does (events and messages, or a refusal).
- :mod:`service.tournaments.director` — the IO: reads the tournaments' command stream, appends with
  the tables' compare-and-append script, creates each round's tables as ordinary tables (one seed for
  the round: duplicate deals) and hears back when they finish.
"""
