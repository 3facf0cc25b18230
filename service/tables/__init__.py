"""The table domain, pure: state and ``evolve`` (state.py), ``decide`` (decide.py), the messages that
events cause (notify.py), and loading/saving through the event store (repository.py)."""
