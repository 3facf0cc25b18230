"""Ratings and leaderboards: a projection of finished matches.

- :mod:`service.ratings.model` — pure: what a finished table says about who beat whom (a
  :class:`~service.ratings.model.MatchRecord`), and the rating update (openskill, Plackett–Luce).
- :mod:`service.ratings.store` — the ratings in Redis (keys under one tag ``{ratings}``), applied
  once per match by a compare-and-set script.
- :mod:`service.ratings.projector` — the worker queues a record per finished match; the projector
  rates them in order, each once whatever is redelivered.
- :mod:`service.ratings.rebuild` — ``cinq ratings rebuild``: the same fold over every event stream
  and archive file.
- :mod:`service.ratings.boards` — ``/rating`` and ``/top`` in words.
"""
