"""Operations: the command line, the operator's commands, the bootstrap (runtime.py), settings, health,
logs, metrics, archive and retention, capacity."""
