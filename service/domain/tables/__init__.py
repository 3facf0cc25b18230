"""The table aggregate, pure: state and ``evolve`` (state.py), ``decide`` (decide.py; the lobby's
commands in lobby.py, what its branches share in base.py), what a refusal may show (secrecy.py), the
messages that events cause (notify.py), and replays (replay.py).  Loading and saving go through the
store (``service.store.repository``)."""
